from django import template

register = template.Library()


@register.inclusion_tag("sessions/_server_sessions.html", takes_context=True)
def server_sessions(context, server):
    """The Connect button and the past sessions of one server."""
    return {"server": server, "sessions": server.sessions.all()[:20], "csrf_token": context.get("csrf_token")}
