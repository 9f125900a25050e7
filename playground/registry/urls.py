from django.urls import path

from . import views

app_name = "registry"

urlpatterns = [
    path("", views.home, name="home"),
    path("servers/add/", views.add, name="add"),
    path("servers/import/", views.import_view, name="import"),
    path("servers/export/", views.export_all, name="export_all"),
    path("servers/<int:pk>/", views.detail, name="detail"),
    path("servers/<int:pk>/edit/", views.edit, name="edit"),
    path("servers/<int:pk>/delete/", views.delete, name="delete"),
    path("servers/<int:pk>/export/", views.export_one, name="export"),
]
