from django.urls import path

from .live.session_socket import SessionConsumer
from .live.share_socket import ShareConsumer

# Channels routes its consumers with Django's path() (its documented routing): django-stubs type
# path()'s view as a Django view, where an ASGI application is routed here.
websocket_urlpatterns = [
    path("ws/sessions/<int:session_id>/", SessionConsumer.as_asgi()),  # type: ignore[arg-type]
    path("ws/share/<str:token>/", ShareConsumer.as_asgi()),  # type: ignore[arg-type]  # read-only: live share viewers
]
