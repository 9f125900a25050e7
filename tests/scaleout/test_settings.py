"""DATABASE_URL and REDIS_URL switch the project from its embedded defaults (SQLite, the
in-memory channel layer); the settings module is read afresh under each environment. The tests
that need the services skip without them, or fail where the environment says they run."""

from __future__ import annotations

import runpy
import socket
from pathlib import Path

import pytest
from channels.layers import InMemoryChannelLayer
from channels_redis.core import RedisChannelLayer
from django.utils.module_loading import import_string

from tests import services

SETTINGS = Path(__file__).resolve().parents[2] / "playground" / "settings.py"


def settings_with(monkeypatch, **env: str) -> dict:
    for name in ("DATABASE_URL", "REDIS_URL", "PLAYGROUND_REDIS_PREFIX"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return runpy.run_path(str(SETTINGS))


def test_embedded_defaults(monkeypatch):
    s = settings_with(monkeypatch)
    assert s["DATABASES"]["default"]["ENGINE"] == "django.db.backends.sqlite3"
    backend = import_string(s["CHANNEL_LAYERS"]["default"]["BACKEND"])
    assert issubclass(backend, InMemoryChannelLayer)  # Channels' in-memory layer (sessions/layers.py)


def test_postgresql_and_redis_from_the_environment(monkeypatch):
    s = settings_with(
        monkeypatch,
        DATABASE_URL="postgres://postgres@127.0.0.1:5432/team",
        REDIS_URL="redis://127.0.0.1:6379/3",
        PLAYGROUND_REDIS_PREFIX="team",
    )
    db = s["DATABASES"]["default"]
    assert (db["ENGINE"], db["NAME"], db["HOST"], db["PORT"]) == (
        "django.db.backends.postgresql",
        "team",
        "127.0.0.1",
        5432,
    )
    # Pooled (psycopg_pool), as Django advises under ASGI, not persistent.
    assert db["CONN_MAX_AGE"] == 0 and db["OPTIONS"]["pool"]["max_size"] > 1
    layer_config = s["CHANNEL_LAYERS"]["default"]
    backend = import_string(layer_config["BACKEND"])
    assert issubclass(backend, RedisChannelLayer)  # channels_redis (with sessions/live/layers.py's inboxes)
    layer = backend(**layer_config["CONFIG"])
    pool = layer.create_pool(0)
    assert layer.prefix == "team" and pool.connection_kwargs["db"] == 3
    # A blocking pop lasts brpop_timeout seconds: a socket timeout no longer than that killed
    # idle consumers (redis-py 8 reads with a 5 s timeout unless told otherwise).
    assert pool.connection_kwargs["socket_timeout"] > layer.brpop_timeout


def test_a_missing_service_skips_the_test_or_fails_it_where_services_are_required(monkeypatch):
    with socket.socket() as bound:  # a port of this machine nothing listens on
        bound.bind(("127.0.0.1", 0))
        port = bound.getsockname()[1]
        monkeypatch.setitem(services.ADDRESSES, "redis", ("127.0.0.1", port))
        monkeypatch.delenv(services.REQUIRED, raising=False)
        with pytest.raises(pytest.skip.Exception, match=f"^redis is not listening on 127.0.0.1:{port}$"):
            services.check(["redis"])
        monkeypatch.setenv(services.REQUIRED, "1")
        with pytest.raises(pytest.fail.Exception, match="PLAYGROUND_REQUIRE_SERVICES=1"):
            services.check(["redis"])
    assert "export PLAYGROUND_REQUIRE_SERVICES=1" in (SETTINGS.parents[1] / ".ci" / "run").read_text()
