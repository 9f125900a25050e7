"""Sessions recorded before every session had an owner go to the only user, when there is
exactly one; otherwise they stay ownerless, shown in the admin only."""
from django.conf import settings
from django.db import migrations


def adopt(apps, schema_editor):
    User = apps.get_model(*settings.AUTH_USER_MODEL.split("."))
    Session = apps.get_model("transcripts", "Session")
    users = list(User.objects.values_list("pk", flat=True)[:2])
    if len(users) == 1:
        Session.objects.filter(owner__isnull=True).update(owner_id=users[0])


class Migration(migrations.Migration):
    dependencies = [("transcripts", "0005_event_data_no_json_check"), migrations.swappable_dependency(settings.AUTH_USER_MODEL)]
    operations = [migrations.RunPython(adopt, migrations.RunPython.noop)]
