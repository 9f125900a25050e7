"""The request of a view behind `@login_required`: Django's, whose user is then signed in."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.http import HttpRequest


class SignedInRequest(HttpRequest):
    """What such a view is given (a type: the request is Django's own), its `user` a User, never
    the AnonymousUser an HttpRequest's may be."""

    user: User
