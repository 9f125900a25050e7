"""Between the pure interchange module and the database: import outcomes and export entries."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db import transaction
from django.http import Http404

from playground import security

from . import interchange
from .models import Server


@dataclass
class ImportOutcome:
    """What happened to one pasted server, for the per-server report on the import page."""

    name: str  # the name in the pasted JSON
    status: str  # "created", "updated" or "skipped"
    server: Server | None = None
    reason: str = ""
    notes: list[str] = field(default_factory=list)


def own_server(user, pk: int) -> Server:
    """The server `pk` if `user` owns it; 404 otherwise (another user's server does not exist)."""
    server = Server.objects.filter(pk=pk, owner=user).first() if user is not None and user.is_authenticated else None
    if server is None:
        raise Http404("no such server")
    return server


def entry_from_server(server: Server) -> interchange.Entry:
    return interchange.Entry(
        name=server.name,
        transport=server.transport,
        command=server.command,
        args=list(server.args or []),
        env=dict(server.env or {}),
        cwd=server.cwd,
        url=server.url,
        headers=dict(server.headers or {}),
    )


def _free_name(name: str, owner) -> str:
    """`name (2)`, `name (3)`, … — the first one not taken (and within the column's length)."""
    n = 2
    while True:
        suffix = f" ({n})"
        candidate = name[: interchange.MAX_NAME - len(suffix)] + suffix
        if not Server.objects.filter(owner=owner, name=candidate).exists():
            return candidate
        n += 1


def _same_settings(server: Server, entry: interchange.Entry) -> bool:
    return entry_from_server(server).settings() == entry.settings()


def policy_check(entry: interchange.Entry, user=None) -> None:
    """The same rules as the server form (who may save stdio servers, the stdio allow-list, the address guard)."""
    if entry.transport == "stdio":
        security.check_stdio_user(user)
        security.check_stdio(entry.command, entry.env, entry.cwd)
    elif entry.url:
        security.check_url(entry.url)


def register_or_reuse(entry: interchange.Entry, owner) -> tuple[Server, bool]:
    """`owner`'s server with exactly these settings (command, arguments, environment and
    directory, or URL, transport and headers), else a new one under a free name; checked as the
    form and the import check (`policy_check`). Returns (server, created)."""
    policy_check(entry, owner)
    for server in Server.objects.filter(owner=owner, transport=entry.transport).order_by("pk"):
        if _same_settings(server, entry):
            return server, False
    taken = Server.objects.filter(owner=owner, name=entry.name).exists()
    name = _free_name(entry.name, owner) if taken else entry.name
    return Server.objects.create(name=name, owner=owner, **entry.settings()), True


@transaction.atomic
def import_servers(result: interchange.ParseResult, *, replace: bool, owner=None) -> list[ImportOutcome]:
    """Create or update `owner`'s servers; never lose one on a name clash (update only when
    `replace`, and only the owner's own: another user's names are not even looked at)."""
    outcomes: list[ImportOutcome] = []
    for entry in result.entries:
        notes = list(entry.notes)
        try:
            policy_check(entry, owner)
        except security.PolicyError as exc:
            outcomes.append(ImportOutcome(entry.name, "skipped", reason=str(exc), notes=notes))
            continue
        existing = Server.objects.filter(owner=owner, name=entry.name).first()
        if existing is not None and _same_settings(existing, entry):
            outcomes.append(
                ImportOutcome(entry.name, "skipped", existing, "Already registered with the same settings.", notes)
            )
            continue
        if existing is not None and replace:
            for key, value in entry.settings().items():
                setattr(existing, key, value)
            existing.save()
            outcomes.append(ImportOutcome(entry.name, "updated", existing, notes=notes))
            continue
        name = entry.name
        if existing is not None:
            name = _free_name(entry.name, owner)
            notes.insert(0, f"A server named {entry.name!r} exists: created as {name!r}.")
        server = Server.objects.create(name=name, owner=owner, **entry.settings())
        outcomes.append(ImportOutcome(entry.name, "created", server, notes=notes))
    for rejected in result.rejected:
        outcomes.append(ImportOutcome(rejected.name, "skipped", reason=rejected.reason))
    return outcomes
