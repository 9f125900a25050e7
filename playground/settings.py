"""Settings for MCP Playground. Embedded defaults (SQLite, in-memory channel layer);
environment variables switch to PostgreSQL (DATABASE_URL) and Redis (REDIS_URL)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    return default if value is None else value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


SECRET_KEY = os.environ.get("PLAYGROUND_SECRET_KEY") or os.environ.get("DJANGO_SECRET_KEY") or "dev-insecure-change-me"
DEBUG = env_bool("PLAYGROUND_DEBUG", False)
ALLOWED_HOSTS = env_list("PLAYGROUND_ALLOWED_HOSTS", "127.0.0.1,localhost,[::1]")
CSRF_TRUSTED_ORIGINS = env_list("PLAYGROUND_CSRF_TRUSTED_ORIGINS")
# Origins besides the app's own (scheme, host and port of the page) whose pages may open the
# session websocket, e.g. https://playground.example.org behind a TLS proxy.
PLAYGROUND_TRUSTED_ORIGINS = env_list("PLAYGROUND_TRUSTED_ORIGINS")
# MCP Apps run in a frame on another origin that serves nothing but the sandbox page
# (playground/core/sandbox.py): a host name (the page's scheme and port on that name: the
# page on 127.0.0.1:8000 frames localhost:8000, another site, without its cookies) or a whole
# origin (https://apps-sandbox.example.org, behind a proxy routed to this process). Requests to
# it get the sandbox page or a redirect, never the playground. Empty: MCP Apps are off.
PLAYGROUND_APPS_SANDBOX = os.environ.get("PLAYGROUND_APPS_SANDBOX", "localhost").strip()

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "playground.core",
    "playground.registry",
    "playground.schemaforms",
    "playground.transcripts",
    "playground.sessions",
    "playground.oauth",
    "playground.capture",
    "playground.chat",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "playground.core.csp.ContentSecurityPolicyMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "playground.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

ASGI_APPLICATION = "playground.asgi.application"

# Database: SQLite by default; DATABASE_URL (e.g. postgres://user@127.0.0.1:5432/db) switches.
if os.environ.get("DATABASE_URL"):
    import dj_database_url

    DATABASES = {"default": dj_database_url.parse(os.environ["DATABASE_URL"], conn_max_age=0)}
    if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
        # Pooled (psycopg_pool), as Django advises under ASGI instead of persistent connections:
        # Channels closes a thread's connection after each database call, and a new one for
        # every transcript save took a quarter of its time. A connection per thread at work
        # (a request's, the database thread's, the search indexer's); waiting past `timeout`
        # for one is an error, not a hang.
        DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {"min_size": 1, "max_size": 20, "timeout": 10}
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": os.environ.get("PLAYGROUND_SQLITE_PATH", str(BASE_DIR / "db.sqlite3")),
            # WAL: readers (pages, replays) no longer wait for the worker's transcript writes, and
            # a commit appends to the log instead of syncing the database twice (synchronous=NORMAL
            # is safe against crashes in WAL mode; only a power cut may lose the last commits).
            # Kept open: Channels' database thread would otherwise reopen it for every batch.
            # The log is checkpointed into the database (with its sync) every 10,000 pages
            # (~40 MB) rather than 1,000: in a flood, a commit's share fell from ~6 to ~2 us a row.
            "CONN_MAX_AGE": 600,
            "OPTIONS": {
                "timeout": 20,
                "transaction_mode": "IMMEDIATE",
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA wal_autocheckpoint=10000;",
            },
            # A file, not memory: workers write from threads while tests read, and shared-cache
            # in-memory SQLite fails such overlaps at once ("table is locked") instead of waiting.
            "TEST": {"NAME": os.environ.get("PLAYGROUND_TEST_SQLITE_PATH") or str(BASE_DIR / ".test-db.sqlite3")},
        }
    }

# Channel layer: in-memory by default; REDIS_URL switches to channels_redis (with the in-process
# inboxes of sessions/live/layers.py for the channels of one process).
# Capacity is raised: a full channel drops group messages silently (the database is the truth).
# The socket timeout must outlast channels_redis' blocking pop (5 s): redis-py 8 reads with a
# 5 s timeout by default, and the two raced, so an idle tab's consumer died (websocket 1011).
REDIS_SOCKET_TIMEOUT = 30
CHANNEL_LAYERS: dict[str, dict[str, Any]]
if os.environ.get("REDIS_URL"):
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "playground.sessions.live.layers.RedisInboxChannelLayer",
            "CONFIG": {
                "hosts": [{"address": os.environ["REDIS_URL"], "socket_timeout": REDIS_SOCKET_TIMEOUT}],
                "capacity": 5000,
                "expiry": 60,
                "prefix": os.environ.get("PLAYGROUND_REDIS_PREFIX", "asgi"),
            },
        }
    }
else:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "playground.sessions.live.layers.DirectInMemoryChannelLayer",
            "CONFIG": {"capacity": 5000},
        }
    }

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / ".staticfiles"

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# The app serves on loopback unless told otherwise (docs/configuration.md: binding elsewhere).
PLAYGROUND_BIND = os.environ.get("PLAYGROUND_BIND", "127.0.0.1")
PLAYGROUND_PORT = int(os.environ.get("PLAYGROUND_PORT", "8000"))
# Per-request timeout (seconds) for MCP requests, reset by progress.
PLAYGROUND_REQUEST_TIMEOUT = float(os.environ.get("PLAYGROUND_REQUEST_TIMEOUT", "60"))
# Frames larger than this are recorded truncated, with their real size (delivery is unaffected).
PLAYGROUND_MAX_FRAME_BYTES = int(os.environ.get("PLAYGROUND_MAX_FRAME_BYTES", "1000000"))
# Under a flood, each transcript fragment sent to a page carries at most this many lines; the
# rest are counted in a "N more events (see export)" marker (the database keeps them all).
PLAYGROUND_PAGE_MAX_LINES = int(os.environ.get("PLAYGROUND_PAGE_MAX_LINES", "200"))
PLAYGROUND_PAGE_KEEP_LINES = int(os.environ.get("PLAYGROUND_PAGE_KEEP_LINES", "5000"))

# Hosted mode (see playground/security.py). stdio servers run commands on this machine.
PLAYGROUND_ALLOW_STDIO = env_bool("PLAYGROUND_ALLOW_STDIO", True)
PLAYGROUND_STDIO_COMMANDS = env_list("PLAYGROUND_STDIO_COMMANDS")  # empty: any command
# Who may save or start stdio servers: "all" logged-in users (single-user local use) or "staff".
PLAYGROUND_STDIO_USERS = os.environ.get("PLAYGROUND_STDIO_USERS", "all").strip().lower()
if PLAYGROUND_STDIO_USERS not in ("all", "staff"):
    raise ImproperlyConfigured(f"PLAYGROUND_STDIO_USERS must be 'all' or 'staff', not {PLAYGROUND_STDIO_USERS!r}")
# HTTP targets: loopback is the main use of a local tool; private, link-local and cloud
# metadata addresses are refused unless allowed (checked on save and on every connection).
PLAYGROUND_HTTP_ALLOW_LOOPBACK = env_bool("PLAYGROUND_HTTP_ALLOW_LOOPBACK", True)
PLAYGROUND_HTTP_ALLOW_PRIVATE = env_bool("PLAYGROUND_HTTP_ALLOW_PRIVATE", False)

# Durability: a worker touches its session's heartbeat every N seconds; a live session whose
# heartbeat is older than 3N has lost its worker (its process died) and is marked ended.
PLAYGROUND_HEARTBEAT_SECONDS = float(os.environ.get("PLAYGROUND_HEARTBEAT_SECONDS", "10"))
# A live session that no tab and no share viewer has shown for this long ends (its server process
# with it); 0 keeps sessions until they are stopped. Sessions busy on their own (a replay or a
# server check running) are not idle.
PLAYGROUND_IDLE_MINUTES = float(os.environ.get("PLAYGROUND_IDLE_MINUTES", "30"))

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("PLAYGROUND_LOG_LEVEL", "WARNING")},
}
