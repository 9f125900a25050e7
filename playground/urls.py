from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from playground.registry import views as registry_views

urlpatterns = [
    path("admin/", admin.site.urls),
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("login/token/<str:token>/", registry_views.token_login, name="token_login"),
    path("", include("playground.registry.urls")),
]
