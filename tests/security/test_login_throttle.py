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
    refused = attempt("right-password", address="10.9.9.9")  # another address: the name is throttled
    assert "Too many failed log-ins for this user name" in refused
    LoginFailure.objects.update(at=LoginFailure.objects.first().at - timedelta(minutes=6))  # the window passed
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


@pytest.mark.parametrize("path", ["/login/", "/admin/login/"])
def test_another_unicode_spelling_of_a_locked_name_is_locked_too(dev, path):
    """`ｄev` (a fullwidth d) logs in as `dev`: the form normalises the name (NFKC) before the
    look-up. The failures were counted under the normalised name and the check used the name
    as posted: after `dev` was locked, `ｄev` logged in."""
    dev.is_staff = True
    dev.save()
    assert attempt("right-password", username="ｄev", path=path) == "ok"  # the same account
    for _ in range(FAILURES):
        attempt("wrong", path=path)
    for spelling in ("ｄev", "ｄｅｖ", " dev ", "DEV"):
        assert "Too many failed log-ins for this user name" in attempt(
            "right-password", username=spelling, address="10.9.9.9", path=path
        ), spelling


def test_failures_under_another_spelling_count_for_the_name(dev):
    for _ in range(FAILURES):
        attempt("wrong", username="ｄｅｖ", address="10.3.3.3")
    assert "Too many failed log-ins for this user name" in attempt("right-password", address="10.9.9.9")


@pytest.mark.parametrize("where", ["/login/", "/admin/login/"])
def test_the_loopback_range_is_one_address(dev, where):
    """A local client picks any source address in 127.0.0.0/8 (and ::1, ::ffff:127.x): all one
    address for the limit, or rotating them escapes it."""
    dev.is_staff = True
    dev.save()
    for i in range(FAILURES):
        attempt("wrong", username=f"guess{i}", address=f"127.0.0.{i + 2}", path=where)
    for address in ("127.0.0.1", "127.1.2.3", "::1", "::ffff:127.0.0.99"):
        assert "Too many failed log-ins from this address" in attempt("right-password", address=address, path=where)
    assert attempt("right-password", address="10.2.2.2", path=where) == "ok"


def test_an_ipv6_client_is_its_64(dev):
    """One machine is given a whole /64 to pick addresses from."""
    for i in range(FAILURES):
        attempt("wrong", username=f"guess{i}", address=f"2001:db8:1:2::{i + 1:x}")
    assert "from this address" in attempt("right-password", address="2001:db8:1:2:ffff:ffff:ffff:ffff")
    assert attempt("right-password", address="2001:db8:1:3::1") == "ok"  # another /64


def test_an_ipv4_mapped_address_is_its_ipv4_address(dev):
    for i in range(FAILURES):
        attempt("wrong", username=f"guess{i}", address="::ffff:10.4.4.4")
    assert "from this address" in attempt("right-password", address="10.4.4.4")
