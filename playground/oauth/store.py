"""The core's AuthStore over the OAuthRecord model (one row per server and issuer)."""

from __future__ import annotations

from channels.db import database_sync_to_async

from playground.mcp.auth import AuthRecord

from .models import OAuthRecord


class DjangoAuthStore:
    """`server` keys are ignored: a store serves the one registered server it was made for."""

    def __init__(self, server_pk: int) -> None:
        self.server_pk = server_pk

    @database_sync_to_async
    def get(self, server: str, issuer: str) -> AuthRecord | None:
        row = OAuthRecord.objects.filter(server_id=self.server_pk, issuer=issuer).first()
        return AuthRecord.from_dict(row.data) if row else None

    @database_sync_to_async
    def latest(self, server: str) -> AuthRecord | None:
        row = OAuthRecord.objects.filter(server_id=self.server_pk).order_by("-updated").first()
        return AuthRecord.from_dict(row.data) if row else None

    @database_sync_to_async
    def records(self, server: str) -> list[AuthRecord]:
        return [AuthRecord.from_dict(row.data) for row in OAuthRecord.objects.filter(server_id=self.server_pk)]

    @database_sync_to_async
    def put(self, server: str, record: AuthRecord) -> None:
        OAuthRecord.objects.update_or_create(
            server_id=self.server_pk, issuer=record.issuer, defaults={"data": record.to_dict()}
        )

    @database_sync_to_async
    def delete(self, server: str, issuer: str) -> None:
        OAuthRecord.objects.filter(server_id=self.server_pk, issuer=issuer).delete()
