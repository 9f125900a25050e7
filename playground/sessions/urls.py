from django.urls import path

from .views import check_form as check_views, curl as wire_views, replay_form as replay_views, retry, search as search_page, session_page as views, workspace

app_name = "sessions"

urlpatterns = [
    path("servers/<int:server_pk>/connect/", views.connect, name="connect"),
    path("servers/<int:server_pk>/check/", check_views.check_form, name="check_form"),
    path("sessions/<int:pk>/", views.detail, name="detail"),
    path("search/", search_page.search, name="search"),
    path("sessions/<int:pk>/tool/", views.tool_form, name="tool_form"),
    path("sessions/<int:pk>/prompt/", views.prompt_form, name="prompt_form"),
    path("sessions/<int:pk>/template/", views.template_form, name="template_form"),
    path("sessions/<int:pk>/raw/", views.raw_form, name="raw_form"),
    path("sessions/<int:pk>/resource/", workspace.resource_view, name="resource_view"),
    path("sessions/<int:pk>/tool/fields/", workspace.tool_fields, name="tool_fields"),
    path("sessions/<int:pk>/share/", views.share, name="share"),
    path("sessions/<int:pk>/replay/", replay_views.replay, name="replay"),
    path("sessions/<int:pk>/differences/ignore/", replay_views.differences_ignore, name="differences_ignore"),
    path("sessions/<int:pk>/retry/", retry.retry, name="retry"),
    path("sessions/<int:pk>/export.jsonl", views.export_jsonl, name="export_jsonl"),
    path("sessions/<int:pk>/export.json", views.export_json, name="export_json"),
    path("sessions/<int:pk>/export.har", wire_views.export_har, name="export_har"),
    path("sessions/<int:pk>/model-view/", wire_views.model_view, name="model_view"),
    path("sessions/<int:pk>/model-view/result/", wire_views.model_view_result, name="model_view_result"),
    path("sessions/<int:pk>/model-view.json", wire_views.model_view_json, name="model_view_json"),
    path("sessions/<int:pk>/curl/<int:seq>/", wire_views.curl_command, name="curl"),
    path("share/<str:token>/", views.share_page, name="share_page"),
    path("share/<str:token>/revoke/", views.revoke, name="revoke"),
    path("share/<str:token>/export.jsonl", views.share_jsonl, name="share_jsonl"),
    path("share/<str:token>/export.json", views.share_json, name="share_json"),
    path("share/<str:token>/export.har", wire_views.share_har, name="share_har"),
    path("share/<str:token>/model-view.json", wire_views.share_model_view_json, name="share_model_view_json"),
    path("share/<str:token>/model-view/", wire_views.share_model_view, name="share_model_view"),
    path("share/<str:token>/model-view/result/", wire_views.share_model_view_result, name="share_model_view_result"),
    path("share/<str:token>/curl/<int:seq>/", wire_views.share_curl_command, name="share_curl"),
]
