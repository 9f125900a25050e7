"""JSON Schema, the way a server's schemas are read here: no Django, usable from the client core
(the server check, the schema lint), the forms (`playground.schemaforms`) and the registry alike.

- The field tree (`_field_tree`): a schema -> a tree of `Field`s that depends on the schema only,
  built within a budget; `MISSING` is "no value" (not JSON null).
- Validation (`_validation`): jsonschema in the schema's dialect (`validator_class`), with the
  bundled meta-schemas only (`SPECIFICATIONS`: no remote `$ref` is fetched).
- Bounded checks (`_sandbox`): `validate_arguments` / `avalidate_arguments` / `matches` check a
  value against a server's schema within `DEADLINE` seconds, in a child process when the check
  is not small; one that does not finish is "not checked", never "valid".
- Patterns (`_linear_regex`): `regex_search` runs a schema's `pattern` in linear time (RE2);
  `PatternNotChecked` when only a backtracking engine could run it.

The modules behind this API are private: import from `playground.schema`.
"""

from __future__ import annotations

from ._field_tree import MISSING, Field, build_fields, canon, json_root, json_type
from ._linear_regex import PatternNotChecked, regex_search
from ._sandbox import DEADLINE, avalidate_arguments, matches, validate_arguments
from ._validation import SPECIFICATIONS, validator_class

__all__ = [
    "DEADLINE",
    "MISSING",
    "SPECIFICATIONS",
    "Field",
    "PatternNotChecked",
    "avalidate_arguments",
    "build_fields",
    "canon",
    "json_root",
    "json_type",
    "matches",
    "regex_search",
    "validate_arguments",
    "validator_class",
]
