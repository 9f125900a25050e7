"""Failed log-ins are throttled per user name and per client address, on the app's login page
and the admin's; the message says why and for how long."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from playground.core.login import FAILURES
from playground.core.models import LoginFailure

pytestmark = pytest.mark.django_db


@pytest.fixture
def dev():
    return get_user_model().objects.create_user("dev", password="right-password")


def attempt(password: str, username: str = "dev", address: str = "10.1.1.1", path: str = "/login/") -> str:
    response = Client(REMOTE_ADDR=address).post(path, {"username": username, "password": password})
    return "ok" if response.status_code == 302 else response.content.decode()


def test_ten_failures_for_a_name_refuse_even_the_right_password_for_a_while(dev):
    for _ in range(FAILURES):
        assert "correct username and password" in attempt("wrong")
    refused = attempt("right-password", address="10.9.9.9")          # another address: the name is throttled
    assert "Too many failed log-ins for this user name" in refused
    LoginFailure.objects.update(at=LoginFailure.objects.first().at - timedelta(minutes=6))   # the window passed
    assert attempt("right-password") == "ok"


def test_ten_failures_from_an_address_refuse_other_names_from_it(dev):
    for i in range(FAILURES):
        attempt("wrong", username=f"guess{i}")
    assert "Too many failed log-ins from this address" in attempt("right-password")
    assert attempt("right-password", address="10.2.2.2") == "ok"


def test_the_admin_login_is_throttled_too(dev):
    dev.is_staff = True
    dev.save()
    for _ in range(FAILURES):
        attempt("wrong", path="/admin/login/")
    assert "Too many failed log-ins" in attempt("right-password", path="/admin/login/")
