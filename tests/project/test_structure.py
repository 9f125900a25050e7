"""The shape of the code, checked: no import cycle anywhere in playground/ (module- or
function-level: a lazy import hides a cycle, it does not remove it), none between the Django
apps, a core (the MCP client, the Model view, the JSON Schema work) that imports neither Django
nor any app; features that plug in without reaching into the live side (the worker, the sockets) or
the core's views, and own their pages; a worker that keeps the session's life and delegates
the rest (the calls, the catalogue, the state strip, the audience, the features)."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

from django.apps import apps as django_apps

from playground.sessions.features import FEATURES

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "playground"


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        if "migrations" in path.parts:
            continue
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        out[name.removesuffix(".__init__")] = path
    return out


def _imports(name: str, path: Path, modules: dict[str, Path], *, typing: bool = False) -> set[str]:
    """Modules of playground/ that `name` imports, at any level (TYPE_CHECKING blocks excluded:
    they never run; with `typing`, every module it names, in TYPE_CHECKING blocks too)."""
    tree = ast.parse(path.read_text())
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if not typing and isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped |= {id(n) for branch in node.body for n in ast.walk(branch)}
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names]
        else:
            continue
        found |= {t for t in targets if (typing or t in modules) and t != name}
    return found


def _graph(*, typing: bool = False) -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(name, path, modules, typing=typing) for name, path in modules.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for node in graph:
        if node not in index:
            visit(node)
    return out


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_module_of_playground_imports_itself_through_others():
    assert _cycles(_graph()) == []


def test_no_two_apps_import_each_other():
    """At app level (playground.sessions, playground.oauth, ...): a cycle there ties two apps
    into one, whatever the modules say."""
    apps: dict[str, set[str]] = {}
    for module, targets in _graph().items():
        app = ".".join(module.split(".")[:2])
        apps.setdefault(app, set()).update(".".join(t.split(".")[:2]) for t in targets)
    for app, targets in apps.items():
        targets.discard(app)
    assert _cycles(apps) == []


# The core: Django-free, so the CLI, the conformance adapter, the worker and the tests use it
# alike. Neither django (nor channels, built on it) nor a Django app, whatever the import's level.
CORE = ("playground.mcp", "playground.modelview", "playground.schema")
DJANGO = ("django", "channels")


def _inside(module: str, packages: Iterable[str]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def _django_in_core(graph: dict[str, set[str]], core: Iterable[str], apps: set[str]) -> dict[str, list[str]]:
    """What the core imports of Django or of an app, at any level: for each module of the core,
    or of playground/ that the core imports (budget, jsonpointer, ...), its Django imports, keyed
    by the chain of imports that reached it."""
    reached = {m: m for m in graph if _inside(m, core)}
    todo = list(reached)
    found: dict[str, list[str]] = {}
    while todo:
        module = todo.pop()
        bad = sorted(t for t in graph[module] if _inside(t, DJANGO) or _inside(t, apps))
        if bad:
            found[reached[module]] = bad
        for target in graph[module]:
            if target in graph and target not in reached and target not in bad:
                reached[target] = f"{reached[module]} -> {target}"
                todo.append(target)
    return found


def test_the_core_check_finds_django_and_apps_however_reached():
    graph = {
        "p.core.a": {"p.core.b", "p.util"},
        "p.core.b": {"json"},
        "p.util": {"p.deep"},
        "p.deep": {"django.conf"},
        "p.core.c": {"p.app.models"},
        "p.app.models": {"django.db"},
        "p.other": {"channels.layers", "p.app"},
    }
    assert _django_in_core(graph, ["p.core"], {"p.app"}) == {
        "p.core.a -> p.util -> p.deep": ["django.conf"],
        "p.core.c": ["p.app.models"],
    }
    graph["p.core.b"].add("channels.layers")
    assert _django_in_core(graph, ["p.core"], {"p.app"})["p.core.b"] == ["channels.layers"]


def test_the_core_imports_no_django_and_no_app():
    apps = {config.name for config in django_apps.get_app_configs() if config.name.startswith("playground.")}
    assert {"playground.sessions", "playground.schemaforms", "playground.registry"} <= apps
    assert not any(_inside(package, apps) for package in CORE)
    graph = _graph(typing=True)
    assert all(any(_inside(m, [package]) for m in graph) for package in CORE)
    assert _django_in_core(graph, CORE, apps) == {}


def test_features_never_reach_into_the_live_side_or_the_views():
    graph = _graph()
    features = [m for m in graph if m.startswith("playground.sessions.features")]
    assert len(features) > len(FEATURES)
    forbidden = {m for m in graph if m.startswith(("playground.sessions.live", "playground.sessions.views"))}
    assert {"playground.sessions.live.worker", "playground.sessions.live.session_socket"} <= forbidden
    assert {m: graph[m] & forbidden for m in features if graph[m] & forbidden} == {}


def test_every_action_and_command_belongs_to_one_feature():
    """Two features taking one action (or one command) would silently shadow each other."""
    from playground.mcp.config import ServerConfig
    from playground.sessions.live.calls import CALLS
    from playground.sessions.live.session_socket import ACTIONS
    from playground.sessions.live.worker import SessionWorker

    core = SessionWorker(1, ServerConfig(transport="stdio", command="true"))._core
    actions = [a for f in FEATURES for a in f.actions]
    commands = [c for f in FEATURES for c in f.actions | f.commands]
    assert len(actions) == len(set(actions)) and not set(actions) & set(ACTIONS)
    assert len(commands) == len(set(commands)) and not set(commands) & (CALLS | set(core))
    assert len({f.name for f in FEATURES}) == len(FEATURES)


def test_a_feature_with_pages_owns_their_routes():
    """sessions/urls.py adds every feature's routes (Feature.get_urls) and names no feature's
    views itself; each route of a feature is a view of that feature's own package."""
    graph = _graph()
    assert {m for m in graph["playground.sessions.urls"] if m.startswith("playground.sessions.features.")} == set()
    owned = 0
    for feature in FEATURES:
        package = feature.__module__.rpartition(".")[0]
        for url in feature.get_urls():
            assert url.callback.__module__.startswith(package + "."), (feature.name, url.name)
            owned += 1
    assert owned >= 7  # Model view's six, the Differences' ignore rules


# The worker keeps the session's lifecycle (start, run, stop, end), the command routing and the
# context its features act through; the rest is its components' (live/calls.py, catalogue.py,
# state_strip.py, audience.py, feature_hub.py). It was 661 lines and 47 methods; 309 when split, 351 once
# `ruff format` wrapped it.
WORKER_LINES = 380
WORKER_METHODS = 25


def test_the_worker_keeps_the_sessions_life_and_delegates_the_rest():
    path = PACKAGE / "sessions" / "live" / "worker.py"
    text = path.read_text()
    worker = next(n for n in ast.parse(text).body if isinstance(n, ast.ClassDef) and n.name == "SessionWorker")
    methods = [n.name for n in worker.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    assert len(text.splitlines()) <= WORKER_LINES
    assert len(methods) <= WORKER_METHODS, methods
