from django.urls import path

from . import views

app_name = "oauth"

urlpatterns = [
    path("oauth/callback/", views.callback, name="callback"),
    path("servers/<int:pk>/oauth/", views.server_settings, name="settings"),
    path("servers/<int:pk>/oauth/forget/", views.forget, name="forget"),
    path("sessions/<int:pk>/authorization/", views.authorization, name="authorization"),
    path("sessions/<int:pk>/authorization/steps/", views.authorization_steps, name="steps"),
    path("sessions/<int:pk>/authorization/<str:action>/", views.token_action, name="token_action"),
]
