"""The admin shows every server, to staff only, and saves them through the server form: the
same policy checks (stdio allow-list, run-changing variables, address guard, who may save
stdio servers) and the same masked secrets as the page."""

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from .forms import ServerForm
from .models import Server


@admin.register(Server)
class ServerAdmin(admin.ModelAdmin):
    form = ServerForm
    list_display = ("name", "owner", "transport", "era", "updated")
    list_filter = ("transport", "owner")
    search_fields = ("name", "command", "url")

    def get_form(
        self, request: HttpRequest, obj: Server | None = None, change: bool = False, **kwargs: Any
    ) -> type[ServerForm]:
        form = super().get_form(request, obj, change, **kwargs)
        assert issubclass(form, ServerForm)  # (made from `self.form`)

        def __init__(self: ServerForm, *args: Any, **kw: Any) -> None:
            form.__init__(self, *args, user=request.user, **kw)

        # the policy applies to the staff member saving it (a subclass made here: its base is made per request)
        return type("WithUser", (form,), {"__init__": __init__})

    def save_model(self, request, obj, form, change):
        if obj.owner_id is None:
            obj.owner = request.user
        super().save_model(request, obj, form, change)
