"""Walking a tool's JSON Schema: every subschema with its JSON pointer, bounded.

A schema is server data: the walk stops at MAX_NODES subschemas and MAX_DEPTH levels (a
hostile schema must not make the page's rendering unbounded), and says so. Everything else
here is linear in what was walked.
"""

from __future__ import annotations

from collections.abc import Container
from dataclasses import dataclass
from typing import Any

from playground.jsonpointer import escape, join, unescape

MAX_NODES = 5000
MAX_DEPTH = 64

# Keywords whose value is one subschema, a list of them, or a map of name -> subschema.
ONE = frozenset(
    {
        "items",
        "additionalProperties",
        "not",
        "if",
        "then",
        "else",
        "contains",
        "propertyNames",
        "unevaluatedItems",
        "unevaluatedProperties",
        "contentSchema",
        "additionalItems",
    }
)
LIST = frozenset({"allOf", "anyOf", "oneOf", "prefixItems", "items"})  # `items` as a list: draft 4-7 tuples
MAP = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})


def pointer_get(document: Any, pointer: str) -> Any:
    """The value at a local reference (`#/$defs/Name`, `#`), or None when it names nothing."""
    if not pointer.startswith("#"):
        return None
    node = document
    for raw in [p for p in pointer[1:].split("/") if p][:MAX_DEPTH]:
        part = unescape(raw)
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node


@dataclass(frozen=True, slots=True)
class Node:
    path: str  # JSON pointer from the schema's root ("" is the root)
    schema: dict[str, Any]
    depth: int  # subschemas above it
    objects: int  # `properties` levels above it


@dataclass
class Walk:
    nodes: list[Node]
    cut: bool  # the walk stopped at a limit


def walk(schema: Any, limit: int = MAX_NODES) -> Walk:
    """Every subschema position that holds an object, depth first, in document order (at most
    `limit` of them)."""
    nodes: list[Node] = []
    stack: list[tuple[str, Any, int, int]] = [("", schema, 0, 0)]
    cut = False
    while stack:
        path, node, depth, objects = stack.pop()
        if not isinstance(node, dict):
            continue
        if len(nodes) >= limit or depth > MAX_DEPTH:
            cut = True
            continue
        nodes.append(Node(path, node, depth, objects))
        children: list[tuple[str, Any, int, int]] = []
        for key, value in node.items():
            where = f"{path}/{escape(key)}"
            if key in ONE and isinstance(value, dict):
                children.append((where, value, depth + 1, objects))
            elif key in LIST and isinstance(value, list):
                children.extend((f"{where}/{i}", v, depth + 1, objects) for i, v in enumerate(value))
            elif key in MAP and isinstance(value, dict):
                nested = objects + 1 if key == "properties" else objects
                children.extend((f"{where}/{escape(str(name))}", v, depth + 1, nested) for name, v in value.items())
        stack.extend(reversed(children))
    return Walk(nodes, cut)


def parent(path: str, walked: Container[str]) -> tuple[str, str]:
    """The subschema holding a walked subschema (not the root), and the keyword it is under: a
    keyword of one subschema (`items`, `not`) is the path's last segment, a map's or list's
    (`properties/x`, `anyOf/0`) the one before (`walked`: every path the walk gave)."""
    head, _, last = path.rpartition("/")
    if head in walked:
        return head, unescape(last)
    owner, _, keyword = head.rpartition("/")
    return owner, unescape(keyword)


def types_of(schema: dict[str, Any]) -> list[str]:
    """The `type` keyword as a list of strings ([] when absent or malformed)."""
    kind = schema.get("type")
    if isinstance(kind, str):
        return [kind]
    if isinstance(kind, list):
        return [k for k in kind if isinstance(k, str)]
    return []


def ref_problem(root: Any, ref: str, recursive: frozenset[str]) -> str:
    """Why a `$ref` cannot be replaced by what it names ("" when it can)."""
    if not ref.startswith("#"):
        return "not a local reference"
    if not isinstance(pointer_get(root, ref), dict):
        return "names nothing in the schema"
    if ref in recursive:
        return "recursive"
    return ""


def ref_path(ref: str) -> str:
    """The walk's path of what a local reference names, as `pointer_get` reads it ("#/a/b" -> "/a/b")."""
    return join(unescape(p) for p in [p for p in ref[1:].split("/") if p][:MAX_DEPTH])


def recursive_refs(root: Any, nodes: list[Node]) -> frozenset[str]:
    """The local references that reach themselves again (inlining them would never end).

    A graph over the walked subschemas: each has an edge to the subschemas inside it, and a
    `$ref` one to what it names (a subschema, or a map of them such as `#/$defs`). A reference
    is recursive when what it names lies on a cycle. Linear in the walk (Tarjan's strongly
    connected components, iteratively), so no schema is too large to answer for."""
    index = {n.path: i for i, n in enumerate(nodes)}
    edges: list[list[int]] = [[] for _ in nodes]
    in_container: dict[str, list[int]] = {}  # "/properties" -> the subschemas of that map
    for i, n in enumerate(nodes):
        if not n.path:
            continue
        parent = n.path.rpartition("/")[0]
        if parent in index:  # `items`, `not`, ...: one subschema
            edges[index[parent]].append(i)
        else:  # `properties/x`, `anyOf/0`, ...: in a map or list
            in_container.setdefault(parent, []).append(i)
            owner = index.get(parent.rpartition("/")[0])
            if owner is not None:
                edges[owner].append(i)
    containers: dict[str, int] = {}
    refs: list[tuple[int, str]] = []
    for i, n in enumerate(nodes):
        ref = n.schema.get("$ref")
        if not isinstance(ref, str) or not ref.startswith("#"):
            continue
        path = ref_path(ref)
        target = index.get(path)
        if target is None and path in in_container:
            if path not in containers:
                containers[path] = len(edges)
                edges.append(list(in_container[path]))
            target = containers[path]
        if target is not None:
            edges[i].append(target)
            refs.append((target, ref))
    cyclic = _on_cycles(edges)
    return frozenset(ref for target, ref in refs if cyclic[target])


def _on_cycles(edges: list[list[int]]) -> list[bool]:
    """Which vertices lie on a cycle (Tarjan's algorithm, without recursion)."""
    count = len(edges)
    order = [-1] * count
    low = [0] * count
    on_stack = [False] * count
    cyclic = [False] * count
    stack: list[int] = []
    counter = 0
    for start in range(count):
        if order[start] != -1:
            continue
        work = [(start, 0)]
        while work:
            vertex, next_edge = work.pop()
            if next_edge == 0:
                order[vertex] = low[vertex] = counter
                counter += 1
                stack.append(vertex)
                on_stack[vertex] = True
            descended = False
            for k in range(next_edge, len(edges[vertex])):
                other = edges[vertex][k]
                if other == vertex:
                    cyclic[vertex] = True
                if order[other] == -1:
                    work.append((vertex, k + 1))
                    work.append((other, 0))
                    descended = True
                    break
                if on_stack[other]:
                    low[vertex] = min(low[vertex], order[other])
            if descended:
                continue
            if low[vertex] == order[vertex]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack[member] = False
                    component.append(member)
                    if member == vertex:
                        break
                if len(component) > 1:
                    for member in component:
                        cyclic[member] = True
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[vertex])
    return cyclic
