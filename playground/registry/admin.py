from django.contrib import admin

from .models import Server


@admin.register(Server)
class ServerAdmin(admin.ModelAdmin):
    list_display = ("name", "transport", "era", "updated")
    search_fields = ("name", "command", "url")
