from django.urls import path

from .live.session_socket import SessionConsumer
from .live.share_socket import ShareConsumer

websocket_urlpatterns = [
    path("ws/sessions/<int:session_id>/", SessionConsumer.as_asgi()),
    path("ws/share/<str:token>/", ShareConsumer.as_asgi()),      # read-only: live share viewers
]
