from django.conf import settings
from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.contrib.staticfiles.views import serve as serve_static
from django.urls import include, path, re_path

from playground.core.login import ThrottledAdminAuthenticationForm, ThrottledAuthenticationForm
from playground.registry import views as registry_views

admin.site.login_form = ThrottledAdminAuthenticationForm

urlpatterns = [
    path("admin/", admin.site.urls),
    path("login/", auth_views.LoginView.as_view(authentication_form=ThrottledAuthenticationForm), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("login/token/<str:token>/", registry_views.token_login, name="token_login"),
    path("", include("playground.sessions.urls")),
    path("", include("playground.oauth.urls")),
    path("", include("playground.registry.urls")),
    path("", include("playground.capture.urls")),
    path("", include("playground.chat.urls")),
    # A local tool run by daphne with DEBUG off: serve static files from the finders ourselves.
    re_path(rf"^{settings.STATIC_URL.strip('/')}/(?P<path>.*)$", serve_static, {"insecure": True}),
]
