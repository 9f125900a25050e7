from django.urls import path

from . import http_proxy, views

app_name = "capture"

urlpatterns = [
    path("capture/v1/frames", views.upload, name="upload"),
    path("capture/v1/http/<int:server_id>/<str:token>/", http_proxy.http_capture, name="http"),
    path("capture/v1/http/<int:server_id>/<str:token>/<path:rest>", http_proxy.http_capture, name="http_below"),
    path("capture/tokens/", views.tokens, name="tokens"),
    path("capture/tokens/create/", views.create, name="create"),
    path("capture/tokens/<int:pk>/revoke/", views.revoke, name="revoke"),
    path("capture/tokens/<int:pk>/rotate/", views.rotate, name="rotate"),
]
