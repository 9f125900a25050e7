"""Walking a tool's JSON Schema: every subschema with its JSON pointer, bounded.

A schema is server data: the walk stops at MAX_NODES subschemas and MAX_DEPTH levels (a
hostile schema must not make the page's rendering unbounded), and says so.
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Any

MAX_NODES = 5000
MAX_DEPTH = 64

# Keywords whose value is one subschema, a list of them, or a map of name -> subschema.
ONE = frozenset({"items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames",
                 "unevaluatedItems", "unevaluatedProperties", "contentSchema", "additionalItems"})
LIST = frozenset({"allOf", "anyOf", "oneOf", "prefixItems", "items"})     # `items` as a list: draft 4-7 tuples
MAP = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})


def escape(part: str) -> str:
    """One JSON pointer segment (RFC 6901)."""
    return part.replace("~", "~0").replace("/", "~1")


def pointer_get(document: Any, pointer: str) -> Any:
    """The value at a local reference (`#/$defs/Name`, `#`), or None when it names nothing."""
    if not pointer.startswith("#"):
        return None
    node = document
    for raw in [p for p in pointer[1:].split("/") if p][:MAX_DEPTH]:
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node


@dataclass(frozen=True, slots=True)
class Node:
    path: str                   # JSON pointer from the schema's root ("" is the root)
    schema: dict[str, Any]
    depth: int                  # subschemas above it
    objects: int                # `properties` levels above it


@dataclass
class Walk:
    nodes: list[Node]
    cut: bool                   # the walk stopped at a limit


def walk(schema: Any) -> Walk:
    """Every subschema position that holds an object, depth first, in document order."""
    nodes: list[Node] = []
    stack: list[tuple[str, Any, int, int]] = [("", schema, 0, 0)]
    cut = False
    while stack:
        path, node, depth, objects = stack.pop()
        if not isinstance(node, dict):
            continue
        if len(nodes) >= MAX_NODES or depth > MAX_DEPTH:
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


MAX_REF_TARGETS = 256


def recursive_refs(root: Any, nodes: list[Node]) -> frozenset[str]:
    """The local references that reach themselves again (inlining them would never end). A schema
    naming more than MAX_REF_TARGETS targets counts them all as recursive: the check is quadratic."""
    refs = sorted((n.path, n.schema["$ref"]) for n in nodes
                  if isinstance(n.schema.get("$ref"), str) and n.schema["$ref"].startswith("#"))
    targets = {r for _, r in refs}
    if len(targets) > MAX_REF_TARGETS:
        return frozenset(targets)
    paths = [p for p, _ in refs]
    inside: dict[str, set[str]] = {}
    for target in targets:
        prefix = target[1:]
        start = bisect.bisect_left(paths, prefix)
        inside[target] = {r for p, r in refs[start:bisect.bisect_left(paths, prefix + "0", start)]
                          if p == prefix or p.startswith(prefix + "/")} if prefix else {r for _, r in refs}
    found: set[str] = set()
    for start in targets:
        seen: set[str] = set()
        stack = list(inside.get(start, ()))
        while stack:
            ref = stack.pop()
            if ref == start:
                found.add(start)
                break
            if ref not in seen:
                seen.add(ref)
                stack.extend(inside.get(ref, ()))
    return frozenset(found)
