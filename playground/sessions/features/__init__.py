"""The registry of a live session's side features, in the order their parts appear on the page.

To add a feature: write its module here (a `Feature` subclass, see base.py), its templates
under templates/sessions/features/, and list its class below. The worker, the consumer, the
session page and sessions/urls.py (a feature's own pages: `get_urls()`) find it through this list.
A feature with pages of its own is a package, as model_view/ and replay/ are: the feature, its
views, and what both use.
"""

from __future__ import annotations

from .apps import Apps
from .auto_refresh import AutoRefresh
from .base import ALL, Feature
from .check import Check
from .completion import Completion
from .counts import NotificationCounts
from .feed import Feed
from .input_rounds import InputRounds
from .listen import Listen
from .logging import Logging
from .model_view.feature import ModelView
from .oauth import Authorization
from .replay.feature import Replay
from .roots import Roots
from .schema_lint import SchemaLint
from .server_requests import ServerRequests
from .subscriptions import Subscriptions
from .tasks import Tasks
from .timeout import Timeout

FEATURES: tuple[type[Feature], ...] = (
    AutoRefresh,
    Timeout,
    Feed,
    Subscriptions,
    Listen,
    Logging,
    NotificationCounts,
    Roots,
    Completion,
    InputRounds,
    ServerRequests,
    Tasks,
    Authorization,
    SchemaLint,
    Check,
    Replay,
    ModelView,
    Apps,
)

BY_NAME: dict[str, type[Feature]] = {f.name: f for f in FEATURES}
# Page action -> the feature that takes it; worker command -> the feature that handles it.
BY_ACTION: dict[str, type[Feature]] = {action: f for f in FEATURES for action in f.actions}
BY_COMMAND: dict[str, type[Feature]] = {**BY_ACTION, **{c: f for f in FEATURES for c in f.commands}}

__all__ = ["ALL", "BY_ACTION", "BY_COMMAND", "BY_NAME", "FEATURES", "Feature"]
