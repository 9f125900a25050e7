"""The server form: JSON fields edited as plain text lines, validated per transport."""

from __future__ import annotations

from typing import Any

from django import forms
from django.http import QueryDict

from playground import security
from playground.mcp.client import LEGACY_VERSIONS, MODERN_VERSIONS
from playground.mcp.replay import diff
from playground.mcp.secrets import mask_env, mask_headers, unmask

from . import interchange
from .command_line import CommandLineError, split_command_line
from .models import Server

_MONO = {"class": "mono", "spellcheck": "false", "autocomplete": "off"}


class ServerForm(forms.ModelForm):
    name = forms.CharField(label="Name", max_length=200, widget=forms.TextInput(attrs={"autofocus": True}))
    transport = forms.ChoiceField(label="Transport", choices=Server.Transport.choices, initial=Server.Transport.STDIO)
    command = forms.CharField(
        label="Command",
        required=False,
        max_length=1000,
        widget=forms.TextInput(attrs=_MONO),
        help_text="The program to start, e.g. npx, uvx, python, or an absolute path. A whole "
        "command line (npx -y @scope/server) is split into the program and its "
        "arguments on save.",
    )
    args = forms.CharField(
        label="Arguments",
        required=False,
        widget=forms.Textarea(attrs={**_MONO, "rows": 4}),
        help_text="One argument per line.",
    )
    env = forms.CharField(
        label="Environment",
        required=False,
        widget=forms.Textarea(attrs={**_MONO, "rows": 3}),
        help_text="One NAME=value per line, added to the default environment (HOME, LOGNAME, "
        "PATH, SHELL, TERM, USER). Secret values show masked: leave them as they are "
        "to keep them.",
    )
    inherit_env = forms.BooleanField(
        label="Inherit the playground's environment",
        required=False,
        help_text="Start the server with every variable of the playground's process, "
        "its own secrets included. Off: the default environment only.",
    )
    apps_enabled = forms.BooleanField(
        label="Render MCP Apps",
        required=False,
        initial=True,
        help_text="Declare the MCP Apps extension (io.modelcontextprotocol/ui) and render a tool's UI below its "
        "Result, in a frame on the sandbox origin. Off: the capability is not declared and no app runs.",
    )
    cwd = forms.CharField(
        label="Working directory", required=False, max_length=1000, widget=forms.TextInput(attrs=_MONO)
    )
    url = forms.CharField(
        label="URL",
        required=False,
        max_length=2000,
        widget=forms.TextInput(attrs={**_MONO, "placeholder": "http://127.0.0.1:3000/mcp"}),
    )
    headers = forms.CharField(
        label="Headers",
        required=False,
        widget=forms.Textarea(attrs={**_MONO, "rows": 3}),
        help_text="One Name: value per line, e.g. Authorization: Bearer …. Secret values "
        "show masked: leave them as they are to keep them.",
    )
    roots = forms.CharField(
        label="Roots",
        required=False,
        widget=forms.Textarea(attrs={**_MONO, "rows": 2}),
        help_text="Answers to the server's roots/list: one URI per line, optionally a name "
        "after a space, e.g. file:///home/me/project Project.",
    )
    era = forms.ChoiceField(label="Era", choices=Server.Era.choices, initial=Server.Era.LEGACY)
    protocol_version = forms.ChoiceField(
        label="Protocol version",
        required=False,
        choices=[("", "The latest of the era")] + [(v, v) for v in MODERN_VERSIONS + LEGACY_VERSIONS],
        help_text="The version offered in initialize (legacy) or asked for in server/discover (modern). "
        "An older one shows how the server treats older clients.",
    )

    replay_ignore = forms.CharField(
        label="Replay ignore rules",
        required=False,
        widget=forms.Textarea(attrs={**_MONO, "rows": 2}),
        help_text="What a replay against this server leaves out of its comparison: one JSON pointer per line, * for "
        "any one segment, ** for any number, e.g. /result/content/*/text for a tool that answers the time.",
    )

    class Meta:
        model = Server
        fields = [
            "name",
            "transport",
            "command",
            "args",
            "env",
            "inherit_env",
            "cwd",
            "url",
            "headers",
            "roots",
            "era",
            "protocol_version",
            "replay_ignore",
            "apps_enabled",
        ]

    # One line per choice saying what it does (the page shows the chosen one's).
    CHOICE_HELP = {
        "transport": {
            "stdio": "stdio: the playground starts the server as a process and talks over its stdin and stdout.",
            "http": "Streamable HTTP: POST to one endpoint (usually …/mcp); answers as JSON or an SSE stream.",
            "sse": "SSE: the deprecated HTTP+SSE transport (2024-11-05): GET an event stream (usually …/sse), "
            "POST to the endpoint it names.",
            "auto": "Auto: try Streamable HTTP, and fall back to HTTP+SSE if the endpoint refuses it.",
        },
        "era": {
            "legacy": "Legacy: the initialize handshake (2024-11-05 to 2025-11-25), what servers speak today.",
            "auto": "Auto: ask server/discover (2026-07-28) first; fall back to initialize if the server does not "
            "know it.",
            "modern": "Modern: 2026-07-28 only: no handshake, server/discover and _meta on every request.",
        },
    }

    data: QueryDict | dict[str, Any]  # as bound (a copy is edited when a command line is split)

    def __init__(self, *args, user=None, **kwargs) -> None:
        """`user`: who saves it (the owner of a new server; PLAYGROUND_STDIO_USERS applies to them)."""
        super().__init__(*args, **kwargs)
        self.user = user
        self.split_message = ""  # what clean() did to a whole command line typed as the command
        for name in self.CHOICE_HELP:
            self.fields[name].widget.attrs["aria-describedby"] = f"{self[name].auto_id}-help"
        # Secrets are never printed back: shown masked, and a mask posted back keeps the stored value.
        self.stored_env, self.stored_headers = dict(self.instance.env or {}), dict(self.instance.headers or {})
        self.shown_env, self.shown_headers = mask_env(self.stored_env), mask_headers(self.stored_headers)
        if self.instance.pk and not self.is_bound:
            self.initial["args"] = interchange.format_arg_lines(self.instance.args)
            self.initial["env"] = interchange.format_env_lines(self.shown_env)
            self.initial["headers"] = interchange.format_header_lines(self.shown_headers)
            self.initial["roots"] = interchange.format_root_lines(self.instance.roots)
            self.initial["replay_ignore"] = "\n".join(self.instance.replay_ignore or [])

    def clean_name(self) -> str:
        name = self.cleaned_data["name"].strip()
        if not name:
            raise forms.ValidationError("A server needs a name.")
        owner = self.instance.owner if self.instance.pk else self.user
        taken = Server.objects.filter(owner=owner, name=name).exclude(pk=self.instance.pk)
        if taken.exists():
            raise forms.ValidationError("You already have a server with this name.")
        return name

    def clean_command(self) -> str:
        return self.cleaned_data["command"].strip()

    def clean_cwd(self) -> str:
        return self.cleaned_data["cwd"].strip()

    def clean_url(self) -> str:
        return self.cleaned_data["url"].strip()

    def clean_args(self) -> list[str]:
        return interchange.parse_arg_lines(self.cleaned_data["args"])

    def clean_env(self) -> dict[str, str]:
        try:
            return unmask(interchange.parse_env_lines(self.cleaned_data["env"]), self.stored_env, self.shown_env)
        except ValueError as exc:
            raise forms.ValidationError(exc.args[0]) from None

    def clean_headers(self) -> dict[str, str]:
        try:
            return unmask(
                interchange.parse_header_lines(self.cleaned_data["headers"]), self.stored_headers, self.shown_headers
            )
        except ValueError as exc:
            raise forms.ValidationError(exc.args[0]) from None

    def clean_roots(self) -> list[dict[str, str]]:
        try:
            return interchange.parse_root_lines(self.cleaned_data["roots"])
        except ValueError as exc:
            raise forms.ValidationError(exc.args[0]) from None

    def clean_replay_ignore(self) -> list[str]:
        try:
            return diff.clean_rules(self.cleaned_data["replay_ignore"].splitlines())
        except diff.RuleError as exc:
            raise forms.ValidationError(str(exc)) from None

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data  # (what ModelForm.clean() returns; typed as maybe None for any form)
        transport = data.get("transport")
        if transport == Server.Transport.STDIO:
            if data.get("command"):
                self._split_command_line(data)
            if not data.get("command"):
                if "command" not in self.errors:
                    self.add_error("command", "A stdio server needs a command.")
            elif "command" not in self.errors:
                try:
                    security.check_stdio_user(self.user)
                    security.check_stdio(data["command"], data.get("env"), data.get("cwd"))
                except security.PolicyError as exc:
                    self.add_error("command", str(exc))
        elif transport in (Server.Transport.HTTP, Server.Transport.SSE, Server.Transport.AUTO):
            url = data.get("url")
            if not url:
                self.add_error("url", "This transport needs a URL.")
            else:
                try:
                    interchange.check_http_url(url)
                except interchange.InterchangeError:
                    self.add_error("url", "Enter an http:// or https:// URL.")
                    return data
                try:
                    security.check_url(url)
                except security.PolicyError as exc:
                    self.add_error("url", str(exc))
        version, era = data.get("protocol_version"), data.get("era")
        if era == Server.Era.LEGACY and version in MODERN_VERSIONS:
            self.add_error(
                "protocol_version", f"{version} has no initialize handshake: choose the modern era (or auto) for it."
            )
        elif era == Server.Era.MODERN and version in LEGACY_VERSIONS:
            self.add_error(
                "protocol_version",
                f"{version} is a legacy version (initialize handshake): choose the legacy era (or auto) for it.",
            )
        return data

    def _split_command_line(self, data: dict[str, Any]) -> None:
        """`npx -y pkg` typed as the command: the program, then its words as arguments (before
        any given), its leading NAME=value words into the environment; said in `split_message`.
        Shown in the form too when it comes back with other errors, so a second save keeps it."""
        try:
            split = split_command_line(data["command"], data.get("args") or [])
        except CommandLineError as exc:
            self.add_error("command", str(exc))
            return
        if split is None:
            return
        data["command"], data["args"] = split.command, split.args
        if split.assigned and "env" in data:
            data["env"] = {**data["env"], **split.assigned}
        self.split_message = split.message
        shown = self.data.copy()
        shown["command"] = split.command
        shown["args"] = interchange.format_arg_lines(split.args)
        if split.assigned:  # typed in this very request: echoed, never a stored secret
            shown["env"] = "\n".join(
                filter(None, [str(self.data.get("env", "")).rstrip(), interchange.format_env_lines(split.assigned)])
            )
        self.data = shown


class ImportForm(forms.Form):
    text = forms.CharField(
        label="Configuration JSON",
        widget=forms.Textarea(attrs={**_MONO, "rows": 16}),
        help_text='A host\'s file: {"mcpServers": {…}} (Claude Desktop, Cursor, Cherry Studio) '
        'or {"servers": {…}} (VS Code).',
    )
    replace = forms.BooleanField(
        label="Replace servers with the same name",
        required=False,
        help_text='Otherwise an imported server whose name is taken gets a suffix like " (2)".',
    )
