from django.urls import path

from . import views

app_name = "chat"

urlpatterns = [
    path("chats/", views.chats, name="chats"),
    path("chats/<int:pk>/", views.chat, name="chat"),
    path("providers/", views.providers, name="providers"),
    path("providers/add/", views.provider_form, name="provider_add"),
    path("providers/<int:pk>/", views.provider_form, name="provider_edit"),
    path("providers/<int:pk>/delete/", views.provider_delete, name="provider_delete"),
]
