"""A server's OAuth settings: pre-registered client, scopes, redirect mode."""

from __future__ import annotations

from django import forms

from playground.mcp.auth import AuthSettings

from .models import ServerAuth

METHODS = [
    ("", "From the authorization server's metadata"),
    ("client_secret_basic", "client_secret_basic"),
    ("client_secret_post", "client_secret_post"),
    ("none", "none (public client)"),
]


class ServerAuthForm(forms.Form):
    enabled = forms.BooleanField(
        required=False, initial=True, label="Authorize with OAuth 2.1 when the server answers 401"
    )
    client_id = forms.CharField(
        required=False,
        label="Client ID",
        help_text="A pre-registered client; empty: Client ID Metadata Document or Dynamic Client Registration",
    )
    client_secret = forms.CharField(
        required=False,
        label="Client secret",
        widget=forms.PasswordInput(render_value=False),
        help_text="Empty keeps the stored secret",
    )
    clear_secret = forms.BooleanField(required=False, label="Remove the stored secret")
    auth_method = forms.ChoiceField(required=False, choices=METHODS, label="Token endpoint authentication")
    issuer = forms.CharField(
        required=False,
        label="Issuer of the pre-registered client",
        help_text="Its credentials are never sent to another authorization server",
    )
    scopes = forms.CharField(
        required=False, label="Extra scopes", help_text="Space-separated, requested on top of the server's"
    )
    client_metadata_url = forms.URLField(required=False, label="Client ID Metadata Document URL", assume_scheme="https")
    redirect_mode = forms.ChoiceField(choices=ServerAuth.RedirectMode.choices, label="Redirect mode")

    @classmethod
    def initial_for(cls, auth: ServerAuth | None) -> dict:
        s = auth.auth_settings() if auth else AuthSettings()
        return {
            "enabled": s.enabled,
            "client_id": s.client_id,
            "auth_method": s.auth_method,
            "issuer": s.issuer,
            "scopes": " ".join(s.scopes),
            "client_metadata_url": s.client_metadata_url,
            "redirect_mode": auth.redirect_mode if auth else ServerAuth.RedirectMode.BROWSER,
        }

    def apply(self, auth: ServerAuth) -> None:
        d = self.cleaned_data
        old = auth.auth_settings()
        secret = "" if d["clear_secret"] else (d["client_secret"] or old.client_secret)
        auth.settings = AuthSettings(
            enabled=d["enabled"],
            client_id=d["client_id"].strip(),
            client_secret=secret,
            auth_method=d["auth_method"],
            issuer=d["issuer"].strip(),
            scopes=d["scopes"].split(),
            client_metadata_url=d["client_metadata_url"],
        ).to_dict()
        auth.redirect_mode = d["redirect_mode"]
