"""The admin shows every server, to staff only, and saves them through the server form: the
same policy checks (stdio allow-list, run-changing variables, address guard, who may save
stdio servers) and the same masked secrets as the page."""
from django.contrib import admin

from .forms import ServerForm
from .models import Server


@admin.register(Server)
class ServerAdmin(admin.ModelAdmin):
    form = ServerForm
    list_display = ("name", "owner", "transport", "era", "updated")
    list_filter = ("transport", "owner")
    search_fields = ("name", "command", "url")

    def get_form(self, request, obj=None, change=False, **kwargs):
        form = super().get_form(request, obj, change, **kwargs)

        class WithUser(form):  # the policy applies to the staff member saving it
            def __init__(self, *args, **kw):
                super().__init__(*args, user=request.user, **kw)

        return WithUser

    def save_model(self, request, obj, form, change):
        if obj.owner_id is None:
            obj.owner = request.user
        super().save_model(request, obj, form, change)
