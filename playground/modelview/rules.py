"""Compatibility rules: what each model API refuses, drops or reads badly in an MCP tool.

The rules are data: `RULES` lists each one with the providers it applies to, its severity,
what it checks, the message a person reads and its sources — the provider's public
documentation, and where the documentation is silent about a refusal the API really makes, a
public report quoting the API's error (`evidence`). Each rule has a test in
tests/modelview/test_rules.py, triggered by a tool of tests/peers/model_view_peer.py.

Severities:
- `error`: the API refuses the whole request (HTTP 400) while this tool is in it;
- `strict`: refused only with OpenAI's `strict: true` (the Responses API's default);
- `warning`: accepted, but part of the definition is dropped or changed on the way;
- `info`: accepted as is; the model is told less than it could be;
- `unchecked`: an `expensive` rule not run, because the schema or the whole catalogue is over
  what this page checks (`Budget`): said, never passed silently.

The rules read what each rendering sends: the Gemini rules the subschemas its conversion kept
(gemini.py, which holds Gemini's subset), the Anthropic rules the `input_schema` sent for a tool
without `inputSchema`, so a rendering and its findings agree.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal

import jsonschema

from playground import jsonpointer
from playground.budget import MODEL_VIEW
from playground.budget import Budget as WorkBudget

from .gemini import GEMINI_FIELDS, GEMINI_FORMATS, GEMINI_QUIET, GEMINI_TRANSLATED, GEMINI_TYPES, Conversion, convert
from .schema import MAX_DEPTH, MAX_NODES, Node, Walk, parent, pointer_get, recursive_refs, ref_problem, types_of, walk

Severity = Literal["error", "strict", "warning", "info", "unchecked"]
Provider = Literal["openai", "anthropic", "gemini"]
PROVIDERS: tuple[Provider, ...] = ("openai", "anthropic", "gemini")
SEVERITIES: tuple[Severity, ...] = ("error", "strict", "warning", "info", "unchecked")

# --- sources ------------------------------------------------------------------------------------
OPENAI_CHAT_TOOLS = "https://platform.openai.com/docs/api-reference/chat/create#chat-create-tools"
OPENAI_RESPONSES_TOOLS = "https://platform.openai.com/docs/api-reference/responses/create#responses-create-tools"
OPENAI_FUNCTION_CALLING = "https://platform.openai.com/docs/guides/function-calling"
OPENAI_STRICT_SUBSET = "https://platform.openai.com/docs/guides/structured-outputs#supported-schemas"
ANTHROPIC_TOOL_USE = "https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use"
ANTHROPIC_MESSAGES_API = "https://docs.anthropic.com/en/api/messages"
GEMINI_FUNCTION_DECLARATION = "https://ai.google.dev/api/caching#FunctionDeclaration"
GEMINI_SCHEMA = "https://ai.google.dev/api/caching#Schema"
GEMINI_FUNCTION_CALLING = "https://ai.google.dev/gemini-api/docs/function-calling"
VERTEX_FUNCTION_DECLARATION = (
    "https://cloud.google.com/vertex-ai/generative-ai/docs/reference/rest/v1/"
    "projects.locations.cachedContents#FunctionDeclaration"
)

# --- the providers' documented subsets ----------------------------------------------------------

# Chat Completions `tools[].function.name`: "a-z, A-Z, 0-9, underscores and dashes, with a
# maximum length of 64" (OPENAI_CHAT_TOOLS).
OPENAI_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
# Anthropic's `tools[].name`: the Messages API reference gives `name` minLength 1, maxLength 128
# (ANTHROPIC_MESSAGES_API), and the API answers "tools.N.custom.name: String should match pattern
# '^[a-zA-Z0-9_-]{1,128}$'" (ANTHROPIC_NAME_EVIDENCE). The tool-use guide (ANTHROPIC_TOOL_USE) has
# shown ^[a-zA-Z0-9_-]{1,64}$, what the API answered until mid-2025: it is not cited for this
# rule, since the API now takes a 100-character name.
ANTHROPIC_NAME = re.compile(r"[a-zA-Z0-9_-]{1,128}")
ANTHROPIC_NAME_EVIDENCE = (
    "https://github.com/home-assistant/core/issues/147760",  # 2025-06, the {1,128} pattern
    "https://github.com/vybestack/llxprt-code/issues/482",  # 2025-11, the same
    "https://github.com/anthropics/claude-code/issues/96152",  # 2026-09, "at most 128 characters"
)
# Gemini API `FunctionDeclaration.name`: "Must be a-z, A-Z, 0-9, or contain underscores, colons,
# dots, and dashes, with a maximum length of 64" (GEMINI_FUNCTION_DECLARATION; some versions of
# that reference said 128). The API itself refuses a name of 65 characters, or one that starts
# with a digit, dot, colon or dash: "Invalid function name. Must start with a letter or an
# underscore. Must be alphameric (a-z, A-Z, 0-9), underscores (_), dots (.), colons (:), or dashes
# (-), with a maximum length of 64" (GEMINI_NAME_EVIDENCE), as the function-calling guide says
# (GEMINI_FUNCTION_CALLING, "Function names should start with a letter or an underscore").
GEMINI_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}")
GEMINI_NAME_EVIDENCE = (
    "https://github.com/google-gemini/gemini-cli/issues/9535",  # 2025-09, the error text, colons included
    "https://github.com/kaitranntt/ccs/issues/25",  # 2025-11, the same
    "https://github.com/dust-tt/dust/pull/28212",  # 2026-06, a leading digit refused
)
# Gemini's Schema: `required` lists property names of its object (GEMINI_SCHEMA: "required[]:
# Required properties of Type.OBJECT"); one naming no property is refused, "parameters.required[0]:
# property is not defined" (GEMINI_REQUIRED_EVIDENCE), where OpenAI and Anthropic accept it.
GEMINI_REQUIRED_EVIDENCE = (
    "https://github.com/continuedev/continue/issues/6305",  # 2025-06, Gemini 2.5 Pro
    "https://github.com/probelabs/probe/issues/569",  # 2026-05, an MCP server's tool
    "https://github.com/iBUHub/AIStudioToAPI/issues/154",  # 2026-05, gemini-3-flash-preview
)
# Vertex AI, parameters: "Parameter names must start with a letter or an underscore and must only
# contain chars a-z, A-Z, 0-9, or underscores with a maximum length of 64" (VERTEX_FUNCTION_DECLARATION).
GEMINI_PARAMETER_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]{0,63}")

# `parameters` at the top level, with or without `strict`: the API answers "schema must have type
# 'object' and not have 'oneOf'/'anyOf'/'allOf'/'enum'/'not' at the top level" (2025; 'const' is
# in the list since 2026: OPENAI_ROOT_EVIDENCE). The references only say `parameters` is "a JSON
# Schema object" (OPENAI_CHAT_TOOLS, OPENAI_FUNCTION_CALLING).
OPENAI_ROOT_REFUSED = ("oneOf", "anyOf", "allOf", "enum", "const", "not")
OPENAI_ROOT_EVIDENCE = (
    "https://github.com/nspady/google-calendar-mcp/issues/39",  # 2025-06, Chat Completions
    "https://github.com/cecli-dev/cecli/issues/281",  # 2025-12
    "https://github.com/langchain-ai/langchainjs/issues/9804",  # an MCP tool through bindTools
    "https://github.com/goruck/home-generative-agent/pull/545",  # 2026-08, the list with 'const'
)
# A root `{"type": "object"}` without `properties` (the MCP spec's own shape for a tool without
# arguments): "Invalid schema for function 'x': In context=(), object schema missing properties",
# from Chat Completions without `strict` too (fast-agent sent none when it met it, and since adds
# "properties": {}, as other clients do: OPENAI_PROPERTIES_EVIDENCE). Documented instead:
# "Omitting `parameters` defines a function with an empty parameter list" (OPENAI_CHAT_TOOLS).
OPENAI_PROPERTIES_EVIDENCE = (
    "https://github.com/evalstate/fast-agent/issues/143",  # 2025-05, tools[1].function.parameters
    "https://github.com/karakeep-app/karakeep/issues/1696",  # 2025-07
    "https://github.com/containers/kubernetes-mcp-server/issues/340",  # 2025-09, {"type":"object"} vs properties: {}
    "https://github.com/spring-projects/spring-ai/issues/4776",  # a tool without arguments
)

# Chat Completions: "A max of 128 functions are supported" (OPENAI_CHAT_TOOLS, `tools`).
OPENAI_MAX_TOOLS = 128

# Structured Outputs' supported subset (OPENAI_STRICT_SUBSET): types string, number, boolean,
# integer, object, array, enum, anyOf; string `pattern` and `format`; number `multipleOf`,
# `maximum`, `exclusiveMaximum`, `minimum`, `exclusiveMinimum`; array `minItems`, `maxItems`;
# definitions (`$defs`) and recursion (`$ref`). "Some type-specific keywords are not yet
# supported" — the API answers "'<keyword>' is not permitted" for the rest (`default`,
# `propertyNames`, `uniqueItems`, `oneOf`, …). `title` and the `$schema`/`$id`/`$comment`
# annotations are accepted.
OPENAI_STRICT_KEYWORDS = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "enum",
        "const",
        "anyOf",
        "description",
        "title",
        "$ref",
        "$defs",
        "definitions",
        "$schema",
        "$id",
        "$comment",
        "pattern",
        "format",
        "multipleOf",
        "maximum",
        "exclusiveMaximum",
        "minimum",
        "exclusiveMinimum",
        "minItems",
        "maxItems",
    }
)
# The keywords through which the strict subset takes subschemas; each subschema it takes has a
# `type` (or is an `anyOf` or a `$ref`): the API answers "In context=('properties', 'x'), schema
# must have a 'type' key" for `{}` and the like (OPENAI_STRICT_TYPE_EVIDENCE). A typeless `enum` or
# `const` is not reported: nothing public says what the API makes of it; nor a typeless `oneOf`,
# `allOf` or `not`, refused as such (openai.strict.keyword: `anyOf` is the fix, and needs no type).
OPENAI_STRICT_SUBSCHEMAS = frozenset({"properties", "items", "anyOf", "$defs", "definitions"})
OPENAI_STRICT_TYPED = frozenset({"type", "anyOf", "$ref", "enum", "const", "oneOf", "allOf", "not"})
OPENAI_STRICT_TYPE_EVIDENCE = (
    "https://github.com/can1357/oh-my-pi/pull/210",  # 2026-02, a function's {"items": {}}
    "https://github.com/SocialGouv/iterion/issues/250",  # 2026-07, a typeless property
)
OPENAI_STRICT_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)
# "A schema may have up to 5000 object properties total, with up to 10 levels of nesting";
# "up to 1000 enum values across all enum properties"; "total string length of all property
# names, definition names, enum values, and const values cannot exceed 120,000 characters".
OPENAI_STRICT_MAX_PROPERTIES = 5000
OPENAI_STRICT_MAX_NESTING = 10
OPENAI_STRICT_MAX_ENUM_VALUES = 1000
OPENAI_STRICT_MAX_STRING_CHARS = 120_000

# Gemini's Schema subset (GEMINI_FIELDS, GEMINI_TYPES, GEMINI_FORMATS, ...): gemini.py, with the
# conversion that keeps to it.


# --- a tool, prepared once for every rule -------------------------------------------------------

Hit = tuple[str, str]  # (where: a JSON pointer into inputSchema, "" = the tool itself; what)


# What one page's Model view checks of a whole catalogue, beyond each schema's own limits
# (schema.MAX_NODES): a server may list thousands of tools.
CATALOGUE_NODES = MODEL_VIEW.steps  # subschemas walked (and converted for Gemini) for the cheap rules
CATALOGUE_CHECKED = (
    5_000  # subschemas validated against the draft 2020-12 meta-schema (~0.2 ms each): one largest schema
)


@dataclass
class Budget:
    """What is left of a catalogue's checks; each tool takes its part in list order. `work`: the
    catalogue's `budget.MODEL_VIEW`, whose output the Gemini renderings spend (inlining a `$ref`
    copies what it names: a doubling chain ending in a large enum made 300 MB of a 1 MB catalogue)."""

    nodes: int = CATALOGUE_NODES
    checked: int = CATALOGUE_CHECKED
    work: WorkBudget = field(default_factory=MODEL_VIEW.budget)


def anthropic_input_schema(tool: dict[str, Any]) -> Any:
    """What Anthropic's rendering sends as `input_schema` (a tool without one: an empty object)."""
    return tool.get("inputSchema", {"type": "object"})


@dataclass
class Subject:
    """One tool as the rules read it: its schema walked once, converted for Gemini once."""

    tool: dict[str, Any]
    schema: Any = None
    walked: Walk = field(default_factory=lambda: Walk([], False))
    recursive: frozenset[str] = frozenset()  # local $refs that reach themselves
    conversion: Conversion = field(default_factory=lambda: Conversion({}))
    limit: int = MAX_NODES  # subschemas this tool could take (less: the catalogue's were spent)
    unchecked: str = ""  # why the expensive rules were not run ("" = they were)

    @classmethod
    def of(cls, tool: dict[str, Any], budget: Budget | None = None) -> Subject:
        """`budget`: the catalogue's, which this tool's walk, conversion and checks take from."""
        schema = tool.get("inputSchema")
        limit = MAX_NODES if budget is None else max(0, min(MAX_NODES, budget.nodes))
        walked = walk(schema, limit)
        recursive = recursive_refs(schema, walked.nodes)
        conversion = convert(schema, recursive, limit, None if budget is None else budget.work)
        subject = cls(tool, schema, walked, recursive, conversion, limit)
        if walked.cut:
            subject.unchecked = subject.cut_reason
        if budget is not None:
            budget.nodes -= max(len(walked.nodes), subject.conversion.used)
            if not walked.cut and isinstance(schema, dict):
                if len(walked.nodes) > budget.checked:
                    subject.unchecked = (
                        f"the catalogue's first {CATALOGUE_CHECKED} subschemas were validated; "
                        f"this tool's {len(walked.nodes)} come after"
                    )
                else:
                    budget.checked -= len(walked.nodes)
        return subject

    @property
    def by_catalogue(self) -> bool:
        """Cut because earlier tools spent the catalogue's budget (not by its own size)."""
        return self.limit < MAX_NODES

    @property
    def cut_reason(self) -> str:
        if self.by_catalogue:
            return (
                f"the catalogue's first {CATALOGUE_NODES} subschemas were checked; this tool's come after "
                f"({len(self.nodes)} looked at, its Gemini rendering cut there too)"
            )
        return f"walked in part: {len(self.nodes)} subschemas, at most {MAX_NODES} and {MAX_DEPTH} levels deep"

    @property
    def name(self) -> str:
        return self.tool["name"] if isinstance(self.tool.get("name"), str) else ""

    @property
    def nodes(self) -> list[Node]:
        return self.walked.nodes

    @cached_property
    def gemini_nodes(self) -> list[Node]:
        """The walked subschemas Gemini's conversion kept (what its rendering sends)."""
        kept = self.conversion.kept
        return [n for n in self.nodes if id(n.schema) in kept]

    def resolve(self, node: dict[str, Any]) -> dict[str, Any]:
        """A `{"$ref": "#/…"}` node's target (local references only), else the node."""
        ref = node.get("$ref")
        target = pointer_get(self.schema, ref) if isinstance(ref, str) else None
        return target if isinstance(target, dict) else node


@dataclass(frozen=True)
class Rule:
    id: str
    providers: tuple[Provider, ...]
    severity: Severity
    checks: str  # what it looks at, for the rules list
    message: str  # what a person reads next to the tool
    sources: tuple[str, ...]  # the provider's documentation
    find: Callable[[Subject], list[Hit]]
    evidence: tuple[str, ...] = ()  # public reports quoting the API's error, where the docs are silent
    scope: Literal["tool", "server"] = "tool"
    count: Callable[[list[dict[str, Any]]], list[Hit]] | None = None  # server scope
    expensive: bool = False  # not run beyond the budget (Subject.unchecked): said so instead


def _is_object(node: dict[str, Any]) -> bool:
    return "object" in types_of(node) or ("type" not in node and isinstance(node.get("properties"), dict))


def _properties(node: dict[str, Any]) -> dict[str, Any]:
    props = node.get("properties")
    return props if isinstance(props, dict) else {}


def _is_property(path: str) -> bool:
    parts = path.rsplit("/", 2)
    return len(parts) == 3 and parts[1] == "properties"


def _quote(items: list[str], limit: int = 8) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f" (+{len(items) - limit} more)" if len(items) > limit else "")


# --- the checks ---------------------------------------------------------------------------------


def _bad_name(pattern: re.Pattern[str]) -> Callable[[Subject], list[Hit]]:
    def find(s: Subject) -> list[Hit]:
        name = s.name
        return [] if pattern.fullmatch(name) else [("", f"name {name[:80]!r} ({len(name)} characters)")]

    return find


def _no_description(s: Subject) -> list[Hit]:
    description = s.tool.get("description")
    return [] if isinstance(description, str) and description.strip() else [("", "no description")]


def _undescribed_parameters(s: Subject) -> list[Hit]:
    hits = []
    for node in s.nodes:
        if (
            _is_property(node.path)
            and not str(s.resolve(node.schema).get("description") or node.schema.get("description") or "").strip()
        ):
            hits.append((node.path, jsonpointer.unescape(node.path.rsplit("/", 1)[1])))
    return hits


def _too_large(s: Subject) -> list[Hit]:
    return [("", s.cut_reason)] if s.walked.cut or (s.conversion.exhausted and s.by_catalogue) else []


def _root_type(schema: Any) -> list[Hit]:
    if isinstance(schema, dict) and schema.get("type") == "object":
        return []
    kind = schema.get("type") if isinstance(schema, dict) else type(schema).__name__
    return [("", f"root type is {kind!r}" if kind is not None else "root has no type")]


def _openai_parameters(s: Subject) -> Any:
    """What OpenAI's renderings send as `parameters` (None: left out, for a tool without inputSchema)."""
    return s.schema if "inputSchema" in s.tool else None


def _openai_root_without_properties(s: Subject) -> list[Hit]:
    root = _openai_parameters(s)
    missing = isinstance(root, dict) and root.get("type") == "object" and "properties" not in root
    return [("", 'type "object" without properties')] if missing else []


def _openai_root_not_object(s: Subject) -> list[Hit]:
    """A tool without `inputSchema` is sent without `parameters`: a function without arguments."""
    return _root_type(s.schema) if "inputSchema" in s.tool else []


def _anthropic_root_not_object(s: Subject) -> list[Hit]:
    return _root_type(anthropic_input_schema(s.tool))


def _arrays_without_items(nodes: list[Node]) -> list[Hit]:
    return [
        (n.path, "array without items")
        for n in nodes
        if "array" in types_of(n.schema) and "items" not in n.schema and "prefixItems" not in n.schema
    ]


def _gemini_arrays_without_items(s: Subject) -> list[Hit]:
    """`prefixItems` is no `items` to Gemini's conversion (it keeps a schema `items` only)."""
    return [
        (n.path, "array without items")
        for n in s.gemini_nodes
        if "array" in types_of(n.schema) and not isinstance(n.schema.get("items"), dict)
    ]


def _open_objects(s: Subject) -> list[Hit]:
    return [
        (n.path, f"additionalProperties is {n.schema.get('additionalProperties', '(absent)')!r}, not false")
        for n in s.nodes
        if _is_object(n.schema) and n.schema.get("additionalProperties") is not False
    ]


def _optional_properties(s: Subject) -> list[Hit]:
    hits = []
    for n in s.nodes:
        listed = n.schema.get("required")
        required = listed if isinstance(listed, list) else []
        optional = [name for name in _properties(n.schema) if name not in required]
        if optional:
            hits.append((n.path, "not required: " + _quote(optional)))
    return hits


def _strict_keywords(s: Subject) -> list[Hit]:
    hits = []
    for n in s.nodes:
        refused = [k for k in n.schema if k not in OPENAI_STRICT_KEYWORDS]
        if refused:
            hits.append((n.path, _quote(refused)))
    return hits


def _strict_formats(s: Subject) -> list[Hit]:
    return [
        (n.path, f"format {n.schema['format']!r}")
        for n in s.nodes
        if isinstance(n.schema.get("format"), str) and n.schema["format"] not in OPENAI_STRICT_FORMATS
    ]


def _strict_untyped(s: Subject) -> list[Hit]:
    """Subschemas the strict subset takes (the root aside: openai.root-object) without a type; those
    under a keyword it refuses are that keyword's finding (openai.strict.keyword, additionalProperties)."""
    walked = {n.path for n in s.nodes}
    taken = {"": True}
    hits = []
    for n in s.nodes:
        if not n.path:
            continue
        owner, keyword = parent(n.path, walked)
        taken[n.path] = taken.get(owner, False) and keyword in OPENAI_STRICT_SUBSCHEMAS
        if taken[n.path] and not OPENAI_STRICT_TYPED & n.schema.keys():
            hits.append((n.path, "no type"))
    return hits


def _strict_limits(s: Subject) -> list[Hit]:
    properties = sum(len(_properties(n.schema)) for n in s.nodes)
    nesting = max((n.objects for n in s.nodes), default=0)
    enums = [v for n in s.nodes if isinstance(n.schema.get("enum"), list) for v in n.schema["enum"]]
    chars = sum(len(str(name)) for n in s.nodes for name in _properties(n.schema))
    chars += sum(
        len(str(name))
        for n in s.nodes
        for key in ("$defs", "definitions")
        if isinstance(n.schema.get(key), dict)
        for name in n.schema[key]
    )
    chars += sum(len(v) for v in enums if isinstance(v, str))
    chars += sum(len(n.schema["const"]) for n in s.nodes if isinstance(n.schema.get("const"), str))
    hits = []
    if properties > OPENAI_STRICT_MAX_PROPERTIES:
        hits.append(("", f"{properties} object properties (limit {OPENAI_STRICT_MAX_PROPERTIES})"))
    if nesting > OPENAI_STRICT_MAX_NESTING:
        hits.append(("", f"{nesting} levels of nesting (limit {OPENAI_STRICT_MAX_NESTING})"))
    if len(enums) > OPENAI_STRICT_MAX_ENUM_VALUES:
        hits.append(("", f"{len(enums)} enum values (limit {OPENAI_STRICT_MAX_ENUM_VALUES})"))
    if chars > OPENAI_STRICT_MAX_STRING_CHARS:
        hits.append(("", f"{chars} characters of names and values (limit {OPENAI_STRICT_MAX_STRING_CHARS})"))
    return hits


def _too_many_tools(tools: list[dict[str, Any]]) -> list[Hit]:
    return [("", f"{len(tools)} tools (limit {OPENAI_MAX_TOOLS})")] if len(tools) > OPENAI_MAX_TOOLS else []


def _root_keywords(refused: tuple[str, ...], schema: Callable[[Subject], Any]) -> Callable[[Subject], list[Hit]]:
    """Keywords an API refuses at the top level of the schema it is sent (`schema(subject)`)."""

    def find(s: Subject) -> list[Hit]:
        root = schema(s)
        return [("", f"{k} at the top level") for k in refused if isinstance(root, dict) and k in root]

    return find


def _not_draft_2020_12(s: Subject) -> list[Hit]:
    schema = anthropic_input_schema(s.tool)
    if not isinstance(schema, (dict, bool)):
        return [("", "not a JSON object")]
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as exc:
        where = jsonpointer.join(exc.path)
        return [(where, exc.message[:300])]
    except Exception as exc:
        return [("", f"could not be checked: {exc}"[:300])]
    return []


def _gemini_dropped(s: Subject) -> list[Hit]:
    hits = []
    for n in s.gemini_nodes:
        dropped = [
            k
            for k, v in n.schema.items()
            if k not in GEMINI_FIELDS
            and k not in GEMINI_TRANSLATED
            and k not in GEMINI_QUIET
            and not (k == "additionalProperties" and v is False)
        ]
        if dropped:
            hits.append((n.path, _quote(dropped)))
    return hits


def _gemini_formats(s: Subject) -> list[Hit]:
    hits = []
    for n in s.gemini_nodes:
        fmt = n.schema.get("format")
        if not isinstance(fmt, str):
            continue
        kinds = [GEMINI_TYPES.get(t) for t in types_of(n.schema) if t != "null"]
        if not any(fmt in GEMINI_FORMATS.get(k or "", frozenset()) for k in kinds):
            hits.append((n.path, f"format {fmt!r} on {'/'.join(types_of(n.schema)) or 'untyped'}"))
    return hits


def _gemini_refs(s: Subject) -> list[Hit]:
    return [
        (n.path, f"$ref {n.schema['$ref']!r}")
        for n in s.gemini_nodes
        if isinstance(n.schema.get("$ref"), str) and not ref_problem(s.schema, n.schema["$ref"], s.recursive)
    ]


def _gemini_unresolvable_refs(s: Subject) -> list[Hit]:
    hits = []
    for n in s.gemini_nodes:
        ref = n.schema.get("$ref")
        if isinstance(ref, str) and (why := ref_problem(s.schema, ref, s.recursive)):
            hits.append((n.path, f"$ref {ref!r}: {why}"))
    too_deep = s.conversion.too_deep
    hits += [
        (n.path, f"inlined more than {MAX_DEPTH} levels deep: left empty there")
        for n in s.nodes
        if id(n.schema) in too_deep
    ]
    if s.conversion.too_large:
        hits.append(("", f"its rendering is {s.conversion.too_large}: the rest is left empty"))
    elif s.conversion.exhausted and not s.walked.cut and not s.by_catalogue:  # (else schema-size says it)
        hits.append(("", f"inlining its $refs makes more than {MAX_NODES} subschemas: the rest is left empty"))
    return hits


def _gemini_unions(s: Subject) -> list[Hit]:
    hits = []
    for n in s.gemini_nodes:
        kinds = [t for t in types_of(n.schema) if t != "null"]
        if len(kinds) > 1:
            hits.append((n.path, f"type {types_of(n.schema)} becomes anyOf"))
        if isinstance(n.schema.get("oneOf"), list):
            hits.append((n.path, "oneOf becomes anyOf (more than one may match)"))
        if isinstance(n.schema.get("allOf"), list) and len(n.schema["allOf"]) > 1:
            hits.append((n.path, f"allOf of {len(n.schema['allOf'])} schemas is dropped"))
    return hits


def _gemini_enums(s: Subject) -> list[Hit]:
    hits = []
    for n in s.gemini_nodes:
        values = n.schema.get("enum")
        if isinstance(values, list) and not all(isinstance(v, str) for v in values):
            hits.append((n.path, "enum " + _quote([repr(v)[:40] for v in values], 5)))
        if "const" in n.schema and not isinstance(n.schema["const"], str):
            hits.append((n.path, f"const {n.schema['const']!r}"[:80]))
    return hits


def _gemini_empty_objects(s: Subject) -> list[Hit]:
    return [
        (n.path, "object without properties")
        for n in s.gemini_nodes
        if n.path and "object" in types_of(n.schema) and not _properties(n.schema) and "$ref" not in n.schema
    ]


def _gemini_parameter_names(s: Subject) -> list[Hit]:
    hits = []
    for n in s.gemini_nodes:
        bad = [str(name) for name in _properties(n.schema) if not GEMINI_PARAMETER_NAME.fullmatch(str(name))]
        if bad:
            hits.append((n.path, _quote([repr(b)[:66] for b in bad])))
    return hits


def _gemini_required_undefined(s: Subject) -> list[Hit]:
    """`required` names each property of the object Gemini is sent (a `$ref`'s target's, once
    inlined); an object without properties is gemini.object-properties's, or not sent at all."""
    hits = []
    for n in s.gemini_nodes:
        listed = n.schema.get("required")
        defined = {**_properties(s.resolve(n.schema)), **_properties(n.schema)}
        if isinstance(listed, list) and defined:
            missing = [str(name) for name in listed if isinstance(name, str) and name not in defined]
            if missing:
                hits.append((n.path, "not in properties: " + _quote([repr(m)[:66] for m in missing])))
    return hits


ALL: tuple[Provider, ...] = PROVIDERS

RULES: tuple[Rule, ...] = (
    # Every provider ------------------------------------------------------------------------
    Rule(
        "description",
        ALL,
        "info",
        "the tool has a description",
        "No description: the model decides whether and how to call the tool from its name alone.",
        (OPENAI_FUNCTION_CALLING, ANTHROPIC_TOOL_USE, GEMINI_FUNCTION_DECLARATION),
        _no_description,
    ),
    Rule(
        "schema-size",
        ALL,
        "warning",
        f"at most {MAX_NODES} subschemas, {MAX_DEPTH} levels deep",
        f"Too large to check whole: the rules looked at part of this schema only (at most {MAX_NODES} subschemas "
        f"a tool, {CATALOGUE_NODES} a catalogue; every provider limits schema size, OpenAI documents its limits "
        "for strict mode).",
        (OPENAI_STRICT_SUBSET,),
        _too_large,
    ),
    Rule(
        "parameter-description",
        ALL,
        "info",
        "each property has a description",
        "Properties without a description: the model sees only their names.",
        (OPENAI_FUNCTION_CALLING, ANTHROPIC_TOOL_USE, GEMINI_FUNCTION_CALLING),
        _undescribed_parameters,
    ),
    # OpenAI (Chat Completions and Responses) --------------------------------------------------
    Rule(
        "openai.name",
        ("openai",),
        "error",
        "name matches ^[a-zA-Z0-9_-]{1,64}$",
        "Name refused: OpenAI takes a-z, A-Z, 0-9, _ and - only, at most 64 characters.",
        (OPENAI_CHAT_TOOLS, OPENAI_RESPONSES_TOOLS),
        _bad_name(OPENAI_NAME),
    ),
    Rule(
        "openai.root-object",
        ("openai",),
        "error",
        'parameters has type "object" at its root',
        'Refused: `parameters` must be a JSON Schema of type "object".',
        (OPENAI_CHAT_TOOLS, OPENAI_FUNCTION_CALLING),
        _openai_root_not_object,
        evidence=("https://github.com/browserbase/stagehand/issues/1159",),
    ),
    Rule(
        "openai.root-combinator",
        ("openai",),
        "error",
        "no oneOf, anyOf, allOf, enum, const or not at the top level",
        'Refused: `parameters` must have type "object" and no oneOf, anyOf, allOf, enum, const or not at the '
        "top level (with or without strict).",
        (OPENAI_CHAT_TOOLS, OPENAI_FUNCTION_CALLING),
        _root_keywords(OPENAI_ROOT_REFUSED, _openai_parameters),
        evidence=OPENAI_ROOT_EVIDENCE,
    ),
    Rule(
        "openai.root-properties",
        ("openai",),
        "error",
        "a root object declares properties",
        'Refused: "object schema missing properties" (with or without strict). For a tool without arguments, '
        'clients add "properties": {} or leave `parameters` out.',
        (OPENAI_CHAT_TOOLS,),
        _openai_root_without_properties,
        evidence=OPENAI_PROPERTIES_EVIDENCE,
    ),
    Rule(
        "openai.array-items",
        ("openai",),
        "error",
        "every array schema has items",
        'Refused: "array schema missing items".',
        (OPENAI_FUNCTION_CALLING,),
        lambda s: _arrays_without_items(s.nodes),
        evidence=(
            "https://github.com/mark3labs/mcphost/issues/35",
            "https://github.com/apify/apify-mcp-server/issues/36",
        ),
    ),
    Rule(
        "openai.tool-count",
        ("openai",),
        "error",
        "at most 128 tools in one request",
        "Refused: Chat Completions supports at most 128 functions in one request.",
        (OPENAI_CHAT_TOOLS,),
        lambda s: [],
        scope="server",
        count=_too_many_tools,
    ),
    Rule(
        "openai.strict.additional-properties",
        ("openai",),
        "strict",
        "every object sets additionalProperties: false",
        "With strict: true, every object must set additionalProperties to false.",
        (OPENAI_STRICT_SUBSET, OPENAI_FUNCTION_CALLING),
        _open_objects,
    ),
    Rule(
        "openai.strict.required",
        ("openai",),
        "strict",
        "every property is listed in required",
        "With strict: true, every property must be required (an optional one is a union with null).",
        (OPENAI_STRICT_SUBSET, OPENAI_FUNCTION_CALLING),
        _optional_properties,
    ),
    Rule(
        "openai.strict.keyword",
        ("openai",),
        "strict",
        "only keywords of the Structured Outputs subset",
        'With strict: true, keywords outside the supported subset are refused ("is not permitted").',
        (OPENAI_STRICT_SUBSET,),
        _strict_keywords,
        evidence=("https://github.com/dotnet/extensions/issues/6266", "https://github.com/can1357/oh-my-pi/issues/209"),
    ),
    Rule(
        "openai.strict.format",
        ("openai",),
        "strict",
        "string formats among the supported ones",
        "With strict: true, only the formats date-time, time, date, duration, email, hostname, ipv4, ipv6 and uuid.",
        (OPENAI_STRICT_SUBSET,),
        _strict_formats,
    ),
    Rule(
        "openai.strict.type",
        ("openai",),
        "strict",
        "every subschema has a type (or is anyOf or $ref)",
        "With strict: true, every property, item, anyOf branch and definition needs a `type` "
        "(\"schema must have a 'type' key\").",
        (OPENAI_STRICT_SUBSET,),
        _strict_untyped,
        evidence=OPENAI_STRICT_TYPE_EVIDENCE,
    ),
    Rule(
        "openai.strict.limits",
        ("openai",),
        "strict",
        "schema size within the strict limits",
        "With strict: true, the schema is over a size limit (properties, nesting, enum values or characters).",
        (OPENAI_STRICT_SUBSET,),
        _strict_limits,
    ),
    # Anthropic -------------------------------------------------------------------------------
    Rule(
        "anthropic.name",
        ("anthropic",),
        "error",
        "name matches ^[a-zA-Z0-9_-]{1,128}$",
        "Name refused: Anthropic takes a-z, A-Z, 0-9, _ and - only, at most 128 characters.",
        (ANTHROPIC_MESSAGES_API,),
        _bad_name(ANTHROPIC_NAME),
        evidence=ANTHROPIC_NAME_EVIDENCE,
    ),
    Rule(
        "anthropic.root-object",
        ("anthropic",),
        "error",
        'input_schema has type "object"',
        'Refused: `input_schema` must have type "object".',
        (ANTHROPIC_MESSAGES_API,),
        _anthropic_root_not_object,
    ),
    Rule(
        "anthropic.root-combinator",
        ("anthropic",),
        "error",
        "no oneOf, allOf or anyOf at the top level",
        'Refused: "input_schema does not support oneOf, allOf, or anyOf at the top level".',
        (ANTHROPIC_TOOL_USE,),
        _root_keywords(("oneOf", "allOf", "anyOf"), lambda s: anthropic_input_schema(s.tool)),
        evidence=(
            "https://github.com/anthropics/claude-code/issues/5973",
            "https://github.com/mobile-next/mobile-mcp/issues/344",
        ),
    ),
    Rule(
        "anthropic.draft-2020-12",
        ("anthropic",),
        "error",
        "input_schema is valid JSON Schema draft 2020-12",
        'Refused: "JSON schema is invalid. It must match JSON Schema draft 2020-12".',
        (ANTHROPIC_TOOL_USE,),
        _not_draft_2020_12,
        evidence=("https://github.com/anthropics/claude-code/issues/7365",),
        expensive=True,
    ),
    # Google Gemini -----------------------------------------------------------------------------
    Rule(
        "gemini.name",
        ("gemini",),
        "error",
        "name matches ^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$",
        "Name refused: Gemini takes a-z, A-Z, 0-9, _ . : and - only, starting with a letter or _, at most 64 "
        "characters.",
        (GEMINI_FUNCTION_DECLARATION, GEMINI_FUNCTION_CALLING),
        _bad_name(GEMINI_NAME),
        evidence=GEMINI_NAME_EVIDENCE,
    ),
    Rule(
        "gemini.keyword",
        ("gemini",),
        "warning",
        "keywords of Gemini's Schema subset",
        "Dropped: Gemini's Schema (an OpenAPI 3.0 subset) has no such field; sent as is, the request is refused "
        '("Unknown name").',
        (GEMINI_SCHEMA,),
        _gemini_dropped,
    ),
    Rule(
        "gemini.format",
        ("gemini",),
        "warning",
        "formats Gemini documents for the type",
        "Dropped: Gemini documents only enum and date-time for strings, float and double for numbers, "
        "int32 and int64 for integers.",
        (GEMINI_SCHEMA,),
        _gemini_formats,
    ),
    Rule(
        "gemini.ref",
        ("gemini",),
        "warning",
        "$ref/$defs (no references in Gemini's Schema)",
        "Inlined: Gemini's Schema has no $ref or $defs, so each reference is replaced by what it names.",
        (GEMINI_SCHEMA,),
        _gemini_refs,
    ),
    Rule(
        "gemini.ref-unresolvable",
        ("gemini",),
        "error",
        "$ref that cannot be inlined",
        "Cannot be expressed: a recursive, remote or dangling $ref, or one that inlined would go past the "
        "conversion's limits, has no Gemini equivalent (left empty).",
        (GEMINI_SCHEMA,),
        _gemini_unresolvable_refs,
    ),
    Rule(
        "gemini.union",
        ("gemini",),
        "warning",
        "unions (type lists, oneOf, allOf)",
        "Changed: Gemini's only union is anyOf (nullable for null); oneOf loses its exclusivity, allOf is dropped.",
        (GEMINI_SCHEMA,),
        _gemini_unions,
    ),
    Rule(
        "gemini.enum",
        ("gemini",),
        "warning",
        "enum and const values are strings",
        "Dropped: Gemini's enum holds strings only.",
        (GEMINI_SCHEMA,),
        _gemini_enums,
    ),
    Rule(
        "gemini.object-properties",
        ("gemini",),
        "error",
        "nested objects declare properties",
        "Refused: an OBJECT must declare its properties (a free-form map cannot be expressed).",
        (GEMINI_SCHEMA, GEMINI_FUNCTION_CALLING),
        _gemini_empty_objects,
    ),
    Rule(
        "gemini.required-undefined",
        ("gemini",),
        "error",
        "required names only declared properties",
        'Refused: a `required` entry names no property of its object ("property is not defined").',
        (GEMINI_SCHEMA,),
        _gemini_required_undefined,
        evidence=GEMINI_REQUIRED_EVIDENCE,
    ),
    Rule(
        "gemini.array-items",
        ("gemini",),
        "error",
        "every array schema has items",
        "Refused: an ARRAY needs `items`.",
        (GEMINI_SCHEMA,),
        _gemini_arrays_without_items,
    ),
    Rule(
        "gemini.parameter-name",
        ("gemini",),
        "warning",
        "property names match ^[a-zA-Z_][a-zA-Z0-9_]{0,63}$",
        "Property names outside letters, digits and underscores (starting with a letter or _): Vertex AI "
        "documents them as refused.",
        (VERTEX_FUNCTION_DECLARATION,),
        _gemini_parameter_names,
    ),
)

BY_ID: dict[str, Rule] = {rule.id: rule for rule in RULES}


# --- applying them ------------------------------------------------------------------------------

MAX_HITS_SHOWN = 6


@dataclass(frozen=True)
class Finding:
    rule: str
    severity: Severity
    message: str
    where: tuple[str, ...]  # JSON pointers into inputSchema ("" = the tool itself)
    details: tuple[str, ...]
    more: int = 0  # hits left out

    def as_dict(self) -> dict[str, Any]:
        rule = BY_ID[self.rule]
        return {
            "rule": self.rule,
            "severity": self.severity,
            "message": self.message,
            "where": list(self.where),
            "details": list(self.details),
            "more": self.more,
            "sources": list(rule.sources + rule.evidence),
        }


SHOWN_CHARS = 200  # of one place or detail (a server's names may be megabytes)


def finding(rule: Rule, hits: list[Hit]) -> Finding:
    shown = hits[:MAX_HITS_SHOWN]
    return Finding(
        rule.id,
        rule.severity,
        rule.message,
        tuple(w[:SHOWN_CHARS] for w, _ in shown),
        tuple(d[:SHOWN_CHARS] for _, d in shown),
        len(hits) - len(shown),
    )


NOT_CHECKED = "Not checked: this page checks a bounded amount of each catalogue, so this rule was not run here."


def check_tool(tool: dict[str, Any], provider: Provider, subject: Subject | None = None) -> list[Finding]:
    """What `provider` makes of one tool: a finding per rule that hits, errors first; an
    expensive rule past the budget is an `unchecked` finding, never a silent pass."""
    subject = subject or Subject.of(tool)
    found = []
    for rule in RULES:
        if rule.scope != "tool" or provider not in rule.providers:
            continue
        if rule.expensive and subject.unchecked:
            found.append(Finding(rule.id, "unchecked", NOT_CHECKED, ("",), (subject.unchecked[:SHOWN_CHARS],)))
        elif hits := rule.find(subject):
            found.append(finding(rule, hits))
    return sorted(found, key=lambda f: SEVERITIES.index(f.severity))


def check_server(tools: list[dict[str, Any]], provider: Provider) -> list[Finding]:
    """Findings about the whole tool list (limits on how many tools one request takes)."""
    return [
        finding(rule, hits)
        for rule in RULES
        if rule.scope == "server" and provider in rule.providers and rule.count and (hits := rule.count(tools))
    ]
