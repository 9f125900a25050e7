"""The provider form: the key never rendered back (blank keeps the stored one), the base URL
through the address guard's save-time check (loopback allowed as for MCP servers)."""

from __future__ import annotations

from typing import Any

from django import forms

from playground import security

from .models import Provider

_MONO = {"class": "mono", "spellcheck": "false", "autocomplete": "off"}


class ProviderForm(forms.ModelForm):
    api = forms.ChoiceField(label="Provider", choices=Provider.Api.choices)
    base_url = forms.URLField(
        label="Base URL",
        max_length=2000,
        widget=forms.URLInput(attrs=_MONO),
        help_text="OpenAI: https://api.openai.com/v1 · Anthropic: https://api.anthropic.com · "
        "Ollama: http://127.0.0.1:11434/v1",
    )
    api_key = forms.CharField(
        label="API key",
        required=False,
        max_length=2000,
        widget=forms.PasswordInput(attrs=_MONO, render_value=False),
        help_text="Stored on this server, never shown again. Leave blank to keep the stored key.",
    )
    model = forms.CharField(label="Model", max_length=200, widget=forms.TextInput(attrs=_MONO))
    clear_key = forms.BooleanField(label="Remove the stored key", required=False)

    class Meta:
        model = Provider
        fields = ["api", "base_url", "api_key", "model"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.stored_key = self.instance.api_key if self.instance.pk else ""
        if not self.stored_key:
            del self.fields["clear_key"]

    def clean_base_url(self) -> str:
        url = str(self.cleaned_data["base_url"])
        try:
            security.check_url(url)
        except security.PolicyError as exc:
            raise forms.ValidationError(str(exc)) from exc
        return url

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if not data.get("api_key") and not data.get("clear_key"):
            data["api_key"] = self.stored_key
        return data
