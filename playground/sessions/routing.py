from django.urls import path

from .consumers import SessionConsumer
from .share_live import ShareConsumer

websocket_urlpatterns = [
    path("ws/sessions/<int:session_id>/", SessionConsumer.as_asgi()),
    path("ws/share/<str:token>/", ShareConsumer.as_asgi()),      # read-only: live share viewers
]
