"""Registry tests hash passwords with a fast hasher: PBKDF2 costs ~1 s per user on these machines."""
from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def fast_password_hasher(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
