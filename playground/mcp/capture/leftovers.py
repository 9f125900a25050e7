"""Spill files an earlier capture kept (the playground was unreachable when its server ended),
delivered: by `--capture-import FILE`, and by every later capture on its own once its first
upload reached the playground, so nothing waits for someone to remember the command.

A file is claimed by renaming it (`<id>.jsonl.delivering-<pid>`): two captures starting at once
never deliver the same file, and a claim whose process died is taken over. Re-sending records
the playground already has is safe (it dedupes by capture and `i`). A file the playground refused
(a 4xx: another playground's, another token's) is set aside as `<id>.jsonl.refused`, said once:
every later capture would otherwise post it again, for ever. One it could not be reached for (no
answer, a 5xx) is given back for a later capture."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from . import say
from .uploader import MAX_BATCH, Poster, refusal

CLAIM = ".delivering-"
REFUSED = ".refused"  # a file the playground refused: no capture takes it again (claim() skips it)


@dataclass
class Delivery:
    delivered: int = 0
    skipped: int = 0  # records the playground would not take (413 for one record)
    session: object = None
    error: str = ""  # why it stopped; the file is kept
    unreachable: bool = False  # no answer, or a 5xx (else: it refused these records: a 4xx)


def deliver(path: Path, poster: Poster) -> Delivery:
    """Post the file's records in batches of at most 4 MB, read as they go; remove it once all
    are delivered."""
    done = Delivery()
    with path.open("rb") as file:
        for batch in _batches(file):
            try:
                status, answer = poster.post(b"".join(batch))
            except Exception as exc:
                done.error, done.unreachable = f"could not reach the playground: {exc}", True
                return done
            if status == 413 and len(batch) == 1:
                done.skipped += 1
            elif status != 200:
                done.error = refusal(status, answer, poster.url.geturl()) or f"the playground answered {status}"
                done.unreachable = status >= 500
                return done
            else:
                done.delivered += len(batch)
                done.session = answer.get("session", done.session)
    path.unlink()
    return done


def _batches(file: IO[bytes]) -> Iterator[list[bytes]]:
    batch: list[bytes] = []
    size = 0
    for line in file:
        if not line.strip():
            continue
        if batch and size + len(line) > MAX_BATCH:
            yield batch
            batch, size = [], 0
        batch.append(line if line.endswith(b"\n") else line + b"\n")
        size += len(batch[-1])
    if batch:
        yield batch


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def claim(folder: Path) -> Iterator[Path]:
    """The folder's left files, each renamed to this process's claim first (oldest first);
    claims of processes that died are taken over."""
    try:
        names = list(folder.iterdir())
    except OSError:
        return
    dated = []
    for path in names:
        try:
            dated.append((path.stat().st_mtime, path))
        except OSError:  # claimed (renamed) by another capture meanwhile
            continue
    for _mtime, path in sorted(dated):
        name = path.name
        if CLAIM in name:
            base, _, pid = name.rpartition(CLAIM)
            if not pid.isdigit() or _alive(int(pid)):
                continue
        elif name.endswith(".jsonl"):
            base = name
        else:
            continue
        mine = path.with_name(f"{base}{CLAIM}{os.getpid()}")
        try:
            path.rename(mine)
        except OSError:  # another capture claimed it first
            continue
        yield mine


def release(path: Path) -> None:
    """Give a claimed file back (not delivered): the next capture tries it again."""
    base = path.name.rpartition(CLAIM)[0]
    try:
        path.rename(path.with_name(base))
    except OSError:
        pass


def set_aside(path: Path) -> Path | None:
    """A claimed file the playground refused, renamed so that no later capture claims it again
    (None if it could not be renamed: it is then given back)."""
    aside = path.with_name(path.name.rpartition(CLAIM)[0] + REFUSED)
    try:
        path.rename(aside)
    except OSError:
        release(path)
        return None
    return aside


def deliver_in_background(folder: Path, base: str, token: str, reached: threading.Event) -> threading.Thread:
    """Once this capture's own upload has reached the playground (`reached`), deliver what
    earlier captures left in `folder`; one stderr line for each file delivered."""

    def run() -> None:
        reached.wait()
        try:
            poster = Poster(base, token)
        except ValueError:
            return
        for path in claim(folder):
            done = deliver(path, poster)
            name = path.name.rpartition(CLAIM)[0]
            if done.unreachable:
                release(path)  # (a later capture tries it again)
                break  # the playground went away
            if done.error:  # refused (a file kept for another playground or token): the next one
                aside = set_aside(path)
                if aside is not None:
                    say(
                        f"{done.error}: an earlier capture's {name} was not delivered ({done.delivered} records "
                        f"taken), set aside as {aside.name}; no capture will send it again "
                        f"(by hand: manage.py mcp --capture-import {aside} --capture BASE_URL)"
                    )
                continue
            say(f"delivered {done.delivered} records an earlier capture kept in {name} (session {done.session})")
        poster.close()

    thread = threading.Thread(target=run, name="capture-leftovers", daemon=True)
    thread.start()
    return thread
