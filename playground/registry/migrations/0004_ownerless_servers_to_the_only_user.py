"""Servers saved before every server had an owner go to the only user, when there is exactly
one (the usual single-user install); with several users they stay ownerless, shown in the
admin only, as a page can no longer tell whose they are."""
from django.conf import settings
from django.db import migrations


def adopt(apps, schema_editor):
    User = apps.get_model(*settings.AUTH_USER_MODEL.split("."))
    Server = apps.get_model("registry", "Server")
    users = list(User.objects.values_list("pk", flat=True)[:2])
    if len(users) != 1:
        return
    for server in Server.objects.filter(owner__isnull=True):
        name, n = server.name, 2
        while Server.objects.filter(owner_id=users[0], name=name).exists():
            name, n = f"{server.name} ({n})", n + 1
        server.owner_id, server.name = users[0], name
        server.save(update_fields=["owner", "name"])


class Migration(migrations.Migration):
    dependencies = [("registry", "0003_server_owner_names_inherit_env"), migrations.swappable_dependency(settings.AUTH_USER_MODEL)]
    operations = [migrations.RunPython(adopt, migrations.RunPython.noop)]
