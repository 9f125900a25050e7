from django.urls import path

from . import views

app_name = "capture"

urlpatterns = [
    path("capture/v1/frames", views.upload, name="upload"),
    path("capture/tokens/", views.tokens, name="tokens"),
    path("capture/tokens/create/", views.create, name="create"),
    path("capture/tokens/<int:pk>/revoke/", views.revoke, name="revoke"),
    path("capture/tokens/<int:pk>/rotate/", views.rotate, name="rotate"),
]
