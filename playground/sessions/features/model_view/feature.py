"""Model view: the server's tools as the OpenAI, Anthropic and Gemini APIs receive them, each
rule they break, a token estimate, and the last tool result as a model reads it.

The panel is rendered by this feature's own pages (views.py, its routes in `get_urls`) from the
saved catalogue and transcript (panel.py); both the session page and a share page fetch it; a
live session only tells its tabs to fetch it again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.urls import URLPattern, path, reverse

from playground.mcp.secrets import Redactor

from ...fragments.html import oob
from ...protocol import FeatureEvent
from ..base import Feature, render
from . import views

if TYPE_CHECKING:
    from playground.transcripts.models import Session


class ModelView(Feature):
    """The panel's content is fetched by the page (`model_view_panel`, `model_view_result`):
    the worker renders nothing, on the relay path or elsewhere; when the catalogue changes it
    sends the small loader that makes each tab fetch the panel again (and so does a snapshot:
    a tab reconnecting may have missed a change)."""

    name = "model_view"
    panel_template = "sessions/features/model_view_panel.html"
    share_template = "sessions/features/model_view_share.html"
    scripts = ("model_view.js",)  # fetches the panel when it is opened

    @classmethod
    def get_urls(cls) -> list[URLPattern]:
        return [
            path("sessions/<int:pk>/model-view/", views.model_view, name="model_view"),
            path("sessions/<int:pk>/model-view/result/", views.model_view_result, name="model_view_result"),
            path("sessions/<int:pk>/model-view.json", views.model_view_json, name="model_view_json"),
            path("share/<str:token>/model-view.json", views.share_model_view_json, name="share_model_view_json"),
            path("share/<str:token>/model-view/", views.share_model_view, name="share_model_view"),
            path("share/<str:token>/model-view/result/", views.share_model_view_result, name="share_model_view_result"),
        ]

    @classmethod
    def share_context(cls, session: Session, redact: Redactor, token: str) -> dict[str, Any] | None:
        """The panel as on the owner's page, fetched (computed once per catalogue, off the
        database thread: views.share_model_view), masked as the share page is."""
        return {
            "model_view_url": reverse("sessions:share_model_view", args=[token]),
            "model_view_result_url": reverse("sessions:share_model_view_result", args=[token]),
        }

    @classmethod
    def page_context(cls, session: Session) -> dict[str, Any]:
        return {
            "model_view_url": reverse("sessions:model_view", args=[session.pk]),
            "model_view_result_url": reverse("sessions:model_view_result", args=[session.pk]),
        }

    def on_catalogue(self) -> None:
        self.ctx.spawn("model-view", self.publish(self._loader()))

    def _loader(self) -> dict[str, Any]:
        url = reverse("sessions:model_view", args=[self.ctx.session_id])
        return {
            "html": oob("model-view", "outerHTML", render("sessions/features/model_view_loader.html", {"url": url}))
        }

    def snapshot(self) -> list[FeatureEvent]:
        return [self.event(self._loader())]
