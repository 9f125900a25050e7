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
- `info`: accepted as is; the model is told less than it could be.

The provider subsets below (GEMINI_FIELDS, GEMINI_FORMATS, OPENAI_STRICT_*) are also what
`providers.py` converts with, so a rendering and its warnings agree.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import jsonschema

from .schema import MAX_DEPTH, MAX_NODES, Node, Walk, escape, pointer_get, recursive_refs, ref_problem, types_of, walk

Severity = Literal["error", "strict", "warning", "info"]
Provider = Literal["openai", "anthropic", "gemini"]
PROVIDERS: tuple[Provider, ...] = ("openai", "anthropic", "gemini")
SEVERITIES: tuple[Severity, ...] = ("error", "strict", "warning", "info")

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
VERTEX_FUNCTION_DECLARATION = ("https://cloud.google.com/vertex-ai/generative-ai/docs/reference/rest/v1/"
                               "projects.locations.cachedContents#FunctionDeclaration")

# --- the providers' documented subsets ----------------------------------------------------------

# Chat Completions `tools[].function.name` and Anthropic's `tools[].name`: "a-z, A-Z, 0-9,
# underscores and dashes, with a maximum length of 64" (OPENAI_CHAT_TOOLS; ANTHROPIC_TOOL_USE
# gives the regex ^[a-zA-Z0-9_-]{1,64}$).
OPENAI_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
ANTHROPIC_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
# Gemini API `FunctionDeclaration.name`: "Must be a-z, A-Z, 0-9, or contain underscores, colons,
# dots, and dashes, with a maximum length of 128" (GEMINI_FUNCTION_DECLARATION).
GEMINI_NAME = re.compile(r"[a-zA-Z0-9_.:-]{1,128}")
# Vertex AI, parameters: "Parameter names must start with a letter or an underscore and must only
# contain chars a-z, A-Z, 0-9, or underscores with a maximum length of 64" (VERTEX_FUNCTION_DECLARATION).
GEMINI_PARAMETER_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]{0,63}")

# Chat Completions: "A max of 128 functions are supported" (OPENAI_CHAT_TOOLS, `tools`).
OPENAI_MAX_TOOLS = 128

# Structured Outputs' supported subset (OPENAI_STRICT_SUBSET): types string, number, boolean,
# integer, object, array, enum, anyOf; string `pattern` and `format`; number `multipleOf`,
# `maximum`, `exclusiveMaximum`, `minimum`, `exclusiveMinimum`; array `minItems`, `maxItems`;
# definitions (`$defs`) and recursion (`$ref`). "Some type-specific keywords are not yet
# supported" — the API answers "'<keyword>' is not permitted" for the rest (`default`,
# `propertyNames`, `uniqueItems`, `oneOf`, …). `title` and the `$schema`/`$id`/`$comment`
# annotations are accepted.
OPENAI_STRICT_KEYWORDS = frozenset({
    "type", "properties", "required", "additionalProperties", "items", "enum", "const", "anyOf",
    "description", "title", "$ref", "$defs", "definitions", "$schema", "$id", "$comment",
    "pattern", "format", "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum",
    "minItems", "maxItems",
})
OPENAI_STRICT_FORMATS = frozenset({"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"})
# "A schema may have up to 5000 object properties total, with up to 10 levels of nesting";
# "up to 1000 enum values across all enum properties"; "total string length of all property
# names, definition names, enum values, and const values cannot exceed 120,000 characters".
OPENAI_STRICT_MAX_PROPERTIES = 5000
OPENAI_STRICT_MAX_NESTING = 10
OPENAI_STRICT_MAX_ENUM_VALUES = 1000
OPENAI_STRICT_MAX_STRING_CHARS = 120_000

# Gemini's `Schema` "represents a select subset of an OpenAPI 3.0 schema object" (GEMINI_SCHEMA):
# these fields, no others. `type` is an enum (STRING, NUMBER, INTEGER, BOOLEAN, ARRAY, OBJECT, NULL);
# `enum` is a list of strings; `anyOf` is its only combinator; there is no `$ref`.
GEMINI_FIELDS = frozenset({
    "type", "format", "title", "description", "nullable", "enum", "maxItems", "minItems", "properties",
    "required", "minProperties", "maxProperties", "minLength", "maxLength", "pattern", "example", "anyOf",
    "propertyOrdering", "default", "items", "minimum", "maximum",
})
GEMINI_TYPES = {"string": "STRING", "number": "NUMBER", "integer": "INTEGER", "boolean": "BOOLEAN",
                "array": "ARRAY", "object": "OBJECT", "null": "NULL"}
# `format`: "for NUMBER type: float, double; for INTEGER type: int32, int64; for STRING type:
# enum, date-time" (GEMINI_SCHEMA).
GEMINI_FORMATS = {"STRING": frozenset({"enum", "date-time"}), "NUMBER": frozenset({"float", "double"}),
                  "INTEGER": frozenset({"int32", "int64"})}
# JSON Schema keywords the Gemini rendering translates rather than drops ($ref is inlined,
# oneOf becomes anyOf, a one-schema allOf is merged, const becomes a one-value enum, a type
# list becomes a type with `nullable` or an anyOf).
GEMINI_TRANSLATED = frozenset({"$ref", "$defs", "definitions", "oneOf", "allOf", "const"})
# Dropped without a finding: annotations that ask nothing of the model, and
# `additionalProperties: false` (Gemini's Schema has only the listed properties to fill).
GEMINI_QUIET = frozenset({"$schema", "$id", "$comment"})


# --- a tool, prepared once for every rule -------------------------------------------------------

Hit = tuple[str, str]           # (where: a JSON pointer into inputSchema, "" = the tool itself; what)


@dataclass
class Subject:
    """One tool as the rules read it: its schema walked once."""

    tool: dict[str, Any]
    schema: Any = None
    walked: Walk = field(default_factory=lambda: Walk([], False))
    recursive: frozenset[str] = frozenset()     # local $refs that reach themselves

    @classmethod
    def of(cls, tool: dict[str, Any]) -> "Subject":
        schema = tool.get("inputSchema")
        walked = walk(schema)
        return cls(tool, schema, walked, recursive_refs(schema, walked.nodes))

    @property
    def name(self) -> str:
        return self.tool["name"] if isinstance(self.tool.get("name"), str) else ""

    @property
    def nodes(self) -> list[Node]:
        return self.walked.nodes

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
    checks: str                         # what it looks at, for the rules list
    message: str                        # what a person reads next to the tool
    sources: tuple[str, ...]            # the provider's documentation
    find: Callable[[Subject], list[Hit]]
    evidence: tuple[str, ...] = ()      # public reports quoting the API's error, where the docs are silent
    scope: Literal["tool", "server"] = "tool"
    count: Callable[[list[dict[str, Any]]], list[Hit]] | None = None    # server scope


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
        if _is_property(node.path) and not str(s.resolve(node.schema).get("description") or node.schema.get("description")
                                                or "").strip():
            hits.append((node.path, node.path.rsplit("/", 1)[1].replace("~1", "/").replace("~0", "~")))
    return hits


def _too_large(s: Subject) -> list[Hit]:
    return [("", "schema walk stopped at its limit")] if s.walked.cut else []


def _root_not_object(s: Subject) -> list[Hit]:
    schema = s.schema
    if isinstance(schema, dict) and schema.get("type") == "object":
        return []
    kind = schema.get("type") if isinstance(schema, dict) else type(schema).__name__
    return [("", f"root type is {kind!r}" if kind is not None else "root has no type")]


def _arrays_without_items(s: Subject) -> list[Hit]:
    return [(n.path, "array without items") for n in s.nodes
            if "array" in types_of(n.schema) and "items" not in n.schema and "prefixItems" not in n.schema]


def _open_objects(s: Subject) -> list[Hit]:
    return [(n.path, f"additionalProperties is {n.schema.get('additionalProperties', '(absent)')!r}, not false")
            for n in s.nodes if _is_object(n.schema) and n.schema.get("additionalProperties") is not False]


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
    return [(n.path, f"format {n.schema['format']!r}") for n in s.nodes
            if isinstance(n.schema.get("format"), str) and n.schema["format"] not in OPENAI_STRICT_FORMATS]


def _strict_root(s: Subject) -> list[Hit]:
    return [("", "anyOf at the root")] if isinstance(s.schema, dict) and "anyOf" in s.schema else []


def _strict_limits(s: Subject) -> list[Hit]:
    properties = sum(len(_properties(n.schema)) for n in s.nodes)
    nesting = max((n.objects for n in s.nodes), default=0)
    enums = [v for n in s.nodes if isinstance(n.schema.get("enum"), list) for v in n.schema["enum"]]
    chars = sum(len(str(name)) for n in s.nodes for name in _properties(n.schema))
    chars += sum(len(str(name)) for n in s.nodes for key in ("$defs", "definitions")
                 if isinstance(n.schema.get(key), dict) for name in n.schema[key])
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


def _root_combinator(s: Subject) -> list[Hit]:
    found = [k for k in ("oneOf", "allOf", "anyOf") if isinstance(s.schema, dict) and k in s.schema]
    return [("", f"{k} at the top level") for k in found]


def _not_draft_2020_12(s: Subject) -> list[Hit]:
    if not isinstance(s.schema, (dict, bool)):
        return [("", "not a JSON object")]
    if s.walked.cut:
        return []                        # too large to check here: the walk's own note says so
    try:
        jsonschema.Draft202012Validator.check_schema(s.schema)
    except jsonschema.SchemaError as exc:
        where = "".join("/" + escape(str(p)) for p in exc.path)
        return [(where, exc.message[:300])]
    except Exception as exc:  # noqa: BLE001 - a hostile schema is reported, never raised
        return [("", f"could not be checked: {exc}"[:300])]
    return []


def _gemini_dropped(s: Subject) -> list[Hit]:
    hits = []
    for n in s.nodes:
        dropped = [k for k, v in n.schema.items() if k not in GEMINI_FIELDS and k not in GEMINI_TRANSLATED
                   and k not in GEMINI_QUIET and not (k == "additionalProperties" and v is False)]
        if dropped:
            hits.append((n.path, _quote(dropped)))
    return hits


def _gemini_formats(s: Subject) -> list[Hit]:
    hits = []
    for n in s.nodes:
        fmt = n.schema.get("format")
        if not isinstance(fmt, str):
            continue
        kinds = [GEMINI_TYPES.get(t) for t in types_of(n.schema) if t != "null"]
        if not any(fmt in GEMINI_FORMATS.get(k or "", frozenset()) for k in kinds):
            hits.append((n.path, f"format {fmt!r} on {'/'.join(types_of(n.schema)) or 'untyped'}"))
    return hits


def _gemini_refs(s: Subject) -> list[Hit]:
    return [(n.path, f"$ref {n.schema['$ref']!r}") for n in s.nodes
            if isinstance(n.schema.get("$ref"), str) and not ref_problem(s.schema, n.schema["$ref"], s.recursive)]


def _gemini_unresolvable_refs(s: Subject) -> list[Hit]:
    hits = []
    for n in s.nodes:
        ref = n.schema.get("$ref")
        if isinstance(ref, str) and (why := ref_problem(s.schema, ref, s.recursive)):
            hits.append((n.path, f"$ref {ref!r}: {why}"))
    return hits


def _gemini_unions(s: Subject) -> list[Hit]:
    hits = []
    for n in s.nodes:
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
    for n in s.nodes:
        values = n.schema.get("enum")
        if isinstance(values, list) and not all(isinstance(v, str) for v in values):
            hits.append((n.path, "enum " + _quote([repr(v)[:40] for v in values], 5)))
        if "const" in n.schema and not isinstance(n.schema["const"], str):
            hits.append((n.path, f"const {n.schema['const']!r}"[:80]))
    return hits


def _gemini_empty_objects(s: Subject) -> list[Hit]:
    return [(n.path, "object without properties") for n in s.nodes
            if n.path and "object" in types_of(n.schema)
            and not _properties(n.schema) and "$ref" not in n.schema]


def _gemini_parameter_names(s: Subject) -> list[Hit]:
    hits = []
    for n in s.nodes:
        bad = [str(name) for name in _properties(n.schema) if not GEMINI_PARAMETER_NAME.fullmatch(str(name))]
        if bad:
            hits.append((n.path, _quote([repr(b)[:66] for b in bad])))
    return hits


ALL: tuple[Provider, ...] = PROVIDERS

RULES: tuple[Rule, ...] = (
    # Every provider ------------------------------------------------------------------------
    Rule("description", ALL, "warning", "the tool has a description",
         "No description: the model decides whether and how to call the tool from its name alone.",
         (OPENAI_FUNCTION_CALLING, ANTHROPIC_TOOL_USE, GEMINI_FUNCTION_DECLARATION), _no_description),
    Rule("schema-size", ALL, "warning", f"at most {MAX_NODES} subschemas, {MAX_DEPTH} levels deep",
         f"Too large to check whole: only the first {MAX_NODES} subschemas were looked at (every provider "
         "limits schema size; OpenAI documents its limits for strict mode).",
         (OPENAI_STRICT_SUBSET,), _too_large),
    Rule("parameter-description", ALL, "info", "each property has a description",
         "Properties without a description: the model sees only their names.",
         (OPENAI_FUNCTION_CALLING, ANTHROPIC_TOOL_USE, GEMINI_FUNCTION_CALLING), _undescribed_parameters),
    # OpenAI (Chat Completions and Responses) --------------------------------------------------
    Rule("openai.name", ("openai",), "error", "name matches ^[a-zA-Z0-9_-]{1,64}$",
         "Name refused: OpenAI takes a-z, A-Z, 0-9, _ and - only, at most 64 characters.",
         (OPENAI_CHAT_TOOLS, OPENAI_RESPONSES_TOOLS), _bad_name(OPENAI_NAME)),
    Rule("openai.root-object", ("openai",), "error", "parameters has type \"object\" at its root",
         "Refused: `parameters` must be a JSON Schema of type \"object\".",
         (OPENAI_CHAT_TOOLS, OPENAI_FUNCTION_CALLING), _root_not_object,
         evidence=("https://github.com/browserbase/stagehand/issues/1159",)),
    Rule("openai.array-items", ("openai",), "error", "every array schema has items",
         "Refused: \"array schema missing items\".",
         (OPENAI_FUNCTION_CALLING,), _arrays_without_items,
         evidence=("https://github.com/mark3labs/mcphost/issues/35", "https://github.com/apify/apify-mcp-server/issues/36")),
    Rule("openai.tool-count", ("openai",), "error", "at most 128 tools in one request",
         "Refused: Chat Completions supports at most 128 functions in one request.",
         (OPENAI_CHAT_TOOLS,), lambda s: [], scope="server", count=_too_many_tools),
    Rule("openai.strict.additional-properties", ("openai",), "strict", "every object sets additionalProperties: false",
         "With strict: true, every object must set additionalProperties to false.",
         (OPENAI_STRICT_SUBSET, OPENAI_FUNCTION_CALLING), _open_objects),
    Rule("openai.strict.required", ("openai",), "strict", "every property is listed in required",
         "With strict: true, every property must be required (an optional one is a union with null).",
         (OPENAI_STRICT_SUBSET, OPENAI_FUNCTION_CALLING), _optional_properties),
    Rule("openai.strict.keyword", ("openai",), "strict", "only keywords of the Structured Outputs subset",
         "With strict: true, keywords outside the supported subset are refused (\"is not permitted\").",
         (OPENAI_STRICT_SUBSET,), _strict_keywords,
         evidence=("https://github.com/dotnet/extensions/issues/6266", "https://github.com/can1357/oh-my-pi/issues/209")),
    Rule("openai.strict.format", ("openai",), "strict", "string formats among the supported ones",
         "With strict: true, only the formats date-time, time, date, duration, email, hostname, ipv4, ipv6 and uuid.",
         (OPENAI_STRICT_SUBSET,), _strict_formats),
    Rule("openai.strict.root-anyof", ("openai",), "strict", "no anyOf at the root",
         "With strict: true, the root must be an object, not anyOf.",
         (OPENAI_STRICT_SUBSET,), _strict_root),
    Rule("openai.strict.limits", ("openai",), "strict", "schema size within the strict limits",
         "With strict: true, the schema is over a size limit (properties, nesting, enum values or characters).",
         (OPENAI_STRICT_SUBSET,), _strict_limits),
    # Anthropic -------------------------------------------------------------------------------
    Rule("anthropic.name", ("anthropic",), "error", "name matches ^[a-zA-Z0-9_-]{1,64}$",
         "Name refused: Anthropic takes a-z, A-Z, 0-9, _ and - only, at most 64 characters.",
         (ANTHROPIC_TOOL_USE,), _bad_name(ANTHROPIC_NAME)),
    Rule("anthropic.root-object", ("anthropic",), "error", "input_schema has type \"object\"",
         "Refused: `input_schema` must have type \"object\".",
         (ANTHROPIC_MESSAGES_API,), _root_not_object),
    Rule("anthropic.root-combinator", ("anthropic",), "error", "no oneOf, allOf or anyOf at the top level",
         "Refused: \"input_schema does not support oneOf, allOf, or anyOf at the top level\".",
         (ANTHROPIC_TOOL_USE,), _root_combinator,
         evidence=("https://github.com/anthropics/claude-code/issues/5973",
                   "https://github.com/mobile-next/mobile-mcp/issues/344")),
    Rule("anthropic.draft-2020-12", ("anthropic",), "error", "input_schema is valid JSON Schema draft 2020-12",
         "Refused: \"JSON schema is invalid. It must match JSON Schema draft 2020-12\".",
         (ANTHROPIC_TOOL_USE,), _not_draft_2020_12,
         evidence=("https://github.com/anthropics/claude-code/issues/7365",)),
    # Google Gemini -----------------------------------------------------------------------------
    Rule("gemini.name", ("gemini",), "error", "name matches ^[a-zA-Z0-9_.:-]{1,128}$",
         "Name refused: Gemini takes a-z, A-Z, 0-9, _ . : and - only, at most 128 characters.",
         (GEMINI_FUNCTION_DECLARATION,), _bad_name(GEMINI_NAME)),
    Rule("gemini.keyword", ("gemini",), "warning", "keywords of Gemini's Schema subset",
         "Dropped: Gemini's Schema (an OpenAPI 3.0 subset) has no such field; sent as is, the request is refused "
         "(\"Unknown name\").",
         (GEMINI_SCHEMA,), _gemini_dropped),
    Rule("gemini.format", ("gemini",), "warning", "formats Gemini documents for the type",
         "Dropped: Gemini documents only enum and date-time for strings, float and double for numbers, "
         "int32 and int64 for integers.",
         (GEMINI_SCHEMA,), _gemini_formats),
    Rule("gemini.ref", ("gemini",), "warning", "$ref/$defs (no references in Gemini's Schema)",
         "Inlined: Gemini's Schema has no $ref or $defs, so each reference is replaced by what it names.",
         (GEMINI_SCHEMA,), _gemini_refs),
    Rule("gemini.ref-unresolvable", ("gemini",), "error", "$ref that cannot be inlined",
         "Cannot be expressed: a recursive, remote or dangling $ref has no Gemini equivalent (left empty).",
         (GEMINI_SCHEMA,), _gemini_unresolvable_refs),
    Rule("gemini.union", ("gemini",), "warning", "unions (type lists, oneOf, allOf)",
         "Changed: Gemini's only union is anyOf (nullable for null); oneOf loses its exclusivity, allOf is dropped.",
         (GEMINI_SCHEMA,), _gemini_unions),
    Rule("gemini.enum", ("gemini",), "warning", "enum and const values are strings",
         "Dropped: Gemini's enum holds strings only.",
         (GEMINI_SCHEMA,), _gemini_enums),
    Rule("gemini.object-properties", ("gemini",), "error", "nested objects declare properties",
         "Refused: an OBJECT must declare its properties (a free-form map cannot be expressed).",
         (GEMINI_SCHEMA, GEMINI_FUNCTION_CALLING), _gemini_empty_objects),
    Rule("gemini.array-items", ("gemini",), "error", "every array schema has items",
         "Refused: an ARRAY needs `items`.",
         (GEMINI_SCHEMA,), _arrays_without_items),
    Rule("gemini.parameter-name", ("gemini",), "warning", "property names match ^[a-zA-Z_][a-zA-Z0-9_]{0,63}$",
         "Property names outside letters, digits and underscores (starting with a letter or _): Vertex AI "
         "documents them as refused.",
         (VERTEX_FUNCTION_DECLARATION,), _gemini_parameter_names),
)

BY_ID: dict[str, Rule] = {rule.id: rule for rule in RULES}


# --- applying them ------------------------------------------------------------------------------

MAX_HITS_SHOWN = 6


@dataclass(frozen=True)
class Finding:
    rule: str
    severity: Severity
    message: str
    where: tuple[str, ...]          # JSON pointers into inputSchema ("" = the tool itself)
    details: tuple[str, ...]
    more: int = 0                   # hits left out

    def as_dict(self) -> dict[str, Any]:
        rule = BY_ID[self.rule]
        return {"rule": self.rule, "severity": self.severity, "message": self.message, "where": list(self.where),
                "details": list(self.details), "more": self.more, "sources": list(rule.sources + rule.evidence)}


SHOWN_CHARS = 200          # of one place or detail (a server's names may be megabytes)


def finding(rule: Rule, hits: list[Hit]) -> Finding:
    shown = hits[:MAX_HITS_SHOWN]
    return Finding(rule.id, rule.severity, rule.message, tuple(w[:SHOWN_CHARS] for w, _ in shown),
                   tuple(d[:SHOWN_CHARS] for _, d in shown), len(hits) - len(shown))


def check_tool(tool: dict[str, Any], provider: Provider, subject: Subject | None = None) -> list[Finding]:
    """What `provider` makes of one tool: a finding per rule that hits, errors first."""
    subject = subject or Subject.of(tool)
    found = []
    for rule in RULES:
        if rule.scope == "tool" and provider in rule.providers and (hits := rule.find(subject)):
            found.append(finding(rule, hits))
    return sorted(found, key=lambda f: SEVERITIES.index(f.severity))


def check_server(tools: list[dict[str, Any]], provider: Provider) -> list[Finding]:
    """Findings about the whole tool list (limits on how many tools one request takes)."""
    return [finding(rule, hits) for rule in RULES
            if rule.scope == "server" and provider in rule.providers and rule.count and (hits := rule.count(tools))]
