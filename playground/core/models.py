"""Failed log-ins, kept a few minutes: the throttle (core/login.py) counts them per user name
and per client address. In the database, so every process of a scaled-out install sees them."""

from __future__ import annotations

from django.db import models


class LoginFailure(models.Model):
    username = models.CharField(max_length=150, db_index=True)  # login.username_key: NFKC, case-folded
    address = models.CharField(max_length=64, db_index=True)  # login.address_key: loopback one, IPv6 its /64
    at = models.DateTimeField(auto_now_add=True, db_index=True)
