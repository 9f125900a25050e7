"""The live side's pages: the core's (views/), then every feature's own (`Feature.get_urls()`)."""

from django.urls import path

from .features import FEATURES
from .views import (
    arrive,
    check_form,
    connect,
    curl,
    exports,
    live,
    replay_form,
    retry,
    search,
    session_page,
    share,
    transcript_chunks,
    workspace,
)

app_name = "sessions"

urlpatterns = [
    path("servers/<int:server_pk>/connect/", connect.connect, name="connect"),
    path("arrive/", arrive.arrive, name="arrive"),
    path("live/", live.live_list, name="live"),
    path("sessions/<int:pk>/stop/", live.stop, name="stop"),
    path("servers/<int:server_pk>/check/", check_form.check_form, name="check_form"),
    path("sessions/<int:pk>/", session_page.detail, name="detail"),
    path("search/", search.search, name="search"),
    path("sessions/<int:pk>/lines/", transcript_chunks.owner_lines, name="lines"),
    path("sessions/<int:pk>/find/", transcript_chunks.owner_find, name="find"),
    path("sessions/<int:pk>/tool/", workspace.tool_form, name="tool_form"),
    path("sessions/<int:pk>/prompt/", workspace.prompt_form, name="prompt_form"),
    path("sessions/<int:pk>/template/", workspace.template_form, name="template_form"),
    path("sessions/<int:pk>/raw/", workspace.raw_form, name="raw_form"),
    path("sessions/<int:pk>/resource/", workspace.resource_view, name="resource_view"),
    path("sessions/<int:pk>/tool/fields/", workspace.tool_fields, name="tool_fields"),
    path("sessions/<int:pk>/share/", share.share, name="share"),
    path("sessions/<int:pk>/replay/", replay_form.replay, name="replay"),
    path("sessions/<int:pk>/retry/", retry.retry, name="retry"),
    path("sessions/<int:pk>/export.jsonl", exports.export_jsonl, name="export_jsonl"),
    path("sessions/<int:pk>/export.json", exports.export_json, name="export_json"),
    path("sessions/<int:pk>/export.har", exports.export_har, name="export_har"),
    path("sessions/<int:pk>/curl/<int:seq>/", curl.curl_command, name="curl"),
    path("share/<str:token>/", share.share_page, name="share_page"),
    path("share/<str:token>/revoke/", share.revoke, name="revoke"),
    path("share/<str:token>/lines/", transcript_chunks.share_lines, name="share_lines"),
    path("share/<str:token>/find/", transcript_chunks.share_find, name="share_find"),
    path("share/<str:token>/export.jsonl", exports.share_jsonl, name="share_jsonl"),
    path("share/<str:token>/export.json", exports.share_json, name="share_json"),
    path("share/<str:token>/export.har", exports.share_har, name="share_har"),
    path("share/<str:token>/curl/<int:seq>/", curl.share_curl_command, name="share_curl"),
    *(url for feature in FEATURES for url in feature.get_urls()),
]
