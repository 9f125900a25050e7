from __future__ import annotations

from typing import Any

import anyio
import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from playground.capture.entries import stdio_entry
from playground.capture.models import CaptureToken
from playground.registry.models import Server

from .helpers import ENV_SECRET, SDK_SERVER, host_exchange


@pytest.fixture(scope="session")
def exchange() -> list[dict[str, Any]]:
    """A real host's exchange with a real server, as a capture's records (made once)."""
    return anyio.run(host_exchange)


@pytest.fixture
def owner(db: Any) -> tuple[Any, Server, str]:
    """(user, their SDK server with a secret in its env, a capture token's value)."""
    user = get_user_model().objects.create_user("alice", password="pw")
    server = Server.objects.create(
        owner=user, name="sdk", command=SDK_SERVER[0], args=SDK_SERVER[1:], env={"API_TOKEN": ENV_SECRET}
    )
    _token, plain = CaptureToken.issue(user, "laptop")
    return user, server, plain


@pytest.fixture
def watch_entry(owner: tuple[Any, Server, str], live_server: Any) -> dict[str, Any]:
    """The host config entry the Watch a host region gives for the owner's server, pointing at a
    running playground (for an end-to-end test with the real capture)."""
    _user, server, plain = owner
    return stdio_entry(server, live_server.url, plain)


@pytest.fixture
def browser_of(owner: tuple[Any, Server, str]) -> Client:
    client = Client()
    client.force_login(owner[0])
    return client
