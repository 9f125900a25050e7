"""The session page: its owner's only."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

pytestmark = pytest.mark.django_db


def test_other_users_cannot_open_a_session(client, saved):
    get_user_model().objects.create_user("eve", password="pw")
    client.login(username="eve", password="pw")
    assert client.get(reverse("sessions:detail", args=[saved.pk])).status_code == 404
    assert client.get(reverse("sessions:export_jsonl", args=[saved.pk])).status_code == 404
