from django.urls import path

from . import views

app_name = "chat"

urlpatterns = [
    path("chats/", views.chats, name="chats"),
    path("chats/<int:pk>/", views.chat, name="chat"),
    path("chats/<int:pk>/share/", views.share_create, name="share_create"),
    path("chats/<int:pk>/export.json", views.export, name="export"),
    path("chats/<int:pk>/share/<str:token>/revoke/", views.share_revoke, name="share_revoke"),
    path("chat-share/<str:token>/", views.share, name="share"),
    path("chat-share/<str:token>/export.json", views.share_export, name="share_export"),
    path("providers/", views.providers, name="providers"),
    path("providers/add/", views.provider_form, name="provider_add"),
    path("providers/<int:pk>/", views.provider_form, name="provider_edit"),
    path("providers/<int:pk>/delete/", views.provider_delete, name="provider_delete"),
]
