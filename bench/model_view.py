"""The Model view of big catalogues, through its views as daphne runs them: how long the panel
takes (first request, then again), and how long the database thread — the one every live
session's saves go through — is held meanwhile (the longest wait of a no-op database call made
every 5 ms during the request).

    .venv/bin/python bench/model_view.py [TOOLSxPROPERTIES ...]      (default: 2000x50 10x4900)
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ["DJANGO_SETTINGS_MODULE"] = "playground.settings"
WORK = Path(tempfile.mkdtemp(prefix="playground-modelview-"))
os.environ["PLAYGROUND_SQLITE_PATH"] = str(WORK / "db.sqlite3")
os.environ["PLAYGROUND_LOG_LEVEL"] = "WARNING"
os.environ.pop("DATABASE_URL", None)

import django

django.setup()

from channels.db import database_sync_to_async
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import AsyncClient
from django.urls import reverse

from playground.transcripts.models import Session

settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]  # (the test client's host)


def catalogue(tools: int, properties: int) -> dict:
    return {
        "tools": [
            {
                "name": f"tool_{i}",
                "description": "A tool.",
                "inputSchema": {
                    "type": "object",
                    "required": ["p0"],
                    "properties": {
                        f"p{j}": {"type": "string", "description": "A parameter."} for j in range(properties)
                    },
                },
            }
            for i in range(tools)
        ]
    }


async def request(client: AsyncClient, url: str) -> tuple[float, float]:
    """(seconds to the response, longest wait of a database call meanwhile)."""
    longest = 0.0
    done = False

    async def ping() -> None:
        nonlocal longest
        while not done:
            started = time.perf_counter()
            await database_sync_to_async(lambda: None)()
            longest = max(longest, time.perf_counter() - started)
            await asyncio.sleep(0.005)

    pinger = asyncio.create_task(ping())
    started = time.perf_counter()
    response = await client.get(url)
    took = time.perf_counter() - started
    done = True
    await pinger
    assert response.status_code == 200, response.status_code
    return took, longest


async def main(sizes: list[tuple[int, int]]) -> None:
    await database_sync_to_async(call_command)("migrate", verbosity=0)
    user = await database_sync_to_async(get_user_model().objects.create_user)("bench", password="pw")
    client = AsyncClient()
    await client.aforce_login(user)
    for tools, properties in sizes:
        session = await database_sync_to_async(Session.objects.create)(
            server_name="bench", owner=user, status="ended", catalogue=catalogue(tools, properties)
        )
        url = reverse("sessions:model_view", args=[session.pk])
        first, held_first = await request(client, url)
        again, held_again = await request(client, url)
        print(
            f"{tools} tools x {properties} properties: panel {first:.2f} s (database thread held at most "
            f"{held_first:.2f} s), again {again:.2f} s (held {held_again:.2f} s)"
        )


if __name__ == "__main__":
    given = [arg.split("x") for arg in sys.argv[1:]] or [["2000", "50"], ["10", "4900"]]
    asyncio.run(main([(int(t), int(p)) for t, p in given]))
