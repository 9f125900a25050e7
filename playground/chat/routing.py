from django.urls import path

from .socket import ChatConsumer

websocket_urlpatterns = [
    path("ws/chats/<int:chat_id>/", ChatConsumer.as_asgi()),  # type: ignore[arg-type]
]
