"""Field tree -> HTML, through the templates in templates/schemaforms/.

Every server string reaches the templates as plain data and is escaped there; this module never
marks anything safe itself (child HTML is the SafeString output of our own templates). Names encode
the path (`args.address.city`, `args.items.1.qty`); ids follow the DOM path, which also carries
the branch of a oneOf (`.~b1`) so that ids stay unique where two branches share a name. Reserved
`~` segments mark helper controls: `.~null` (null checkbox), `.~branch` (branch selector),
`.~present` (the field was rendered), `.~i` (array item placeholder inside a <template>).
"""

from __future__ import annotations

import datetime as dt
import re
import time
from dataclasses import dataclass
from dataclasses import field as dc_field
from typing import Any, cast

from django.template.loader import get_template
from django.utils.safestring import SafeString

from playground.budget import FORM, Budget, Limits, OverBudget
from playground.schema import DEADLINE, MISSING, Field, build_fields, canon, json_root, json_type, matches

ITEM_PLACEHOLDER = "~i"
# What drawing costs in the budget's steps (a subschema built, ~1.5 µs): a field ~100 µs in Django's
# templates, an option of a select or a checkbox group ~15-25 µs.
FIELD_STEPS = 50
OPTION_STEPS = 10
_NESTING = frozenset({"object", "array", "choice"})  # templates holding other fields' HTML
DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
TIME_RE = re.compile(r"^\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?$")


def render_form(
    schema: Any, *, prefix: str = "args", values: Any = None, errors: list[dict] | None = None, limits: Limits = FORM
) -> SafeString:
    """The HTML of the fields for `schema` (no <form> tag).

    `values` pre-fills the inputs (the arguments object); without it, schema defaults are used.
    `errors` ({path, message} as returned by validate_arguments) are shown next to their fields;
    errors whose path matches no field are shown at the top. Building and drawing the fields each
    take a budget of `limits`: past it, the form is one JSON field that says why (a schema of
    twelve nested arrays of `minItems: 50` asks for 50^12 inputs).
    """
    label = _root_label(schema)
    root = build_fields(schema, label=label, limits=limits)
    value = MISSING if values is None else values
    state = _State(prefix=prefix, root_schema=schema, errors=_index_errors(errors), budget=limits.budget())
    try:
        html = state.field(root, prefix, prefix, value, defaults=values is None, root=True)
    except OverBudget as exc:
        state = _State(prefix=prefix, root_schema=schema, errors=_index_errors(errors), budget=limits.budget())
        html = state.field(
            json_root(label, f"the schema is {exc.reason}", over_budget=True),
            prefix,
            prefix,
            value,
            defaults=values is None,
            root=True,
        )
    leftovers = [m for path, msgs in state.errors.items() if path not in state.used for m in msgs]
    return _render(
        "schemaforms/form.html",
        {
            "prefix": prefix,
            "body": html,
            "leftover_errors": leftovers,
        },
    )


def _render(template: str, context: dict[str, Any]) -> SafeString:
    """One of our templates, by the Django engine: a SafeString (django-stubs type get_template()
    for any engine, whose render() may give a plain str)."""
    return cast(SafeString, get_template(template).render(context))


def _root_label(schema: Any) -> str:
    if isinstance(schema, dict) and isinstance(schema.get("title"), str) and schema["title"].strip():
        return schema["title"][:200]
    return "arguments"


def _index_errors(errors: list[dict] | None) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for error in errors or []:
        if isinstance(error, dict):
            out.setdefault(str(error.get("path", "")), []).append(str(error.get("message", "")))
    return out


def _value_text(value: Any) -> str:
    """How a JSON value is shown in a text-like input."""
    if value is MISSING or value is None:
        return ""
    if isinstance(value, str):
        return value
    return canon(value)


def datetime_local_value(value: str) -> str | None:
    """An RFC 3339 date-time as a datetime-local value in UTC, or None if it does not fit."""
    try:
        parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return None
    if parsed.tzinfo is not None:
        parsed = parsed.astimezone(dt.UTC).replace(tzinfo=None)
    text = parsed.isoformat(timespec="milliseconds" if parsed.microsecond else "seconds")
    return text if parsed.microsecond % 1000 == 0 else None


@dataclass
class _State:
    prefix: str
    root_schema: Any
    errors: dict[str, list[str]]
    budget: Budget
    used: set[str] = dc_field(default_factory=set)
    # Picking branches by validation may take the deadline of one check for the whole form: a
    # form of many choices against a costly schema must not hold its view for each of them.
    check_until: float = dc_field(default_factory=lambda: time.monotonic() + DEADLINE)

    def rel(self, name: str) -> str:
        return name[len(self.prefix) + 1 :] if name.startswith(self.prefix + ".") else ""

    def base_context(self, f: Field, name: str, dom: str, *, idx: str | None, root: bool, bare: bool) -> dict:
        rel = self.rel(name) if not root else ""
        errs = self.errors.get(rel, []) if not bare else []
        if errs:
            self.used.add(rel)
        wattrs = [("data-sf-kind", f.kind), ("data-sf-name", name), ("data-sf-id", dom)]
        if f.key is not None:
            wattrs.append(("data-sf-key", f.key))
        if f.required:
            wattrs.append(("data-sf-required", ""))
        if f.nullable:
            wattrs.append(("data-sf-nullable", ""))
        if f.format:
            wattrs.append(("data-sf-format", f.format))
        if root:
            wattrs.append(("data-sf-root", ""))
        help_title = f.title if f.title and f.title != f.label else ""
        has_help = bool(help_title or f.description or f.json_fallback or f.pattern)
        described = " ".join(x for x in (f"id_{dom}.~help" if has_help else "", f"id_{dom}.~err" if errs else "") if x)
        return {
            "f": f,
            "name": name,
            "dom": dom,
            "id": f"id_{dom}",
            "label": f.label,
            "idx": idx,
            "wattrs": wattrs,
            "help_title": help_title,
            "has_help": has_help,
            "described": described,
            "errors": errs,
            "root": root,
            "bare": bare,
            "show_required": f.required and not root and not f.is_item,
        }

    def field(
        self,
        f: Field,
        name: str,
        dom: str,
        value: Any,
        *,
        defaults: bool,
        idx: str | None = None,
        root: bool = False,
        bare: bool = False,
    ) -> SafeString:
        self.budget.spend(FIELD_STEPS + OPTION_STEPS * len(f.options))
        if value is MISSING and defaults and f.default is not MISSING:
            value = f.default
        ctx = self.base_context(f, name, dom, idx=idx, root=root, bare=bare)
        ctx["is_null"] = f.nullable and value is None
        if f.nullable and value is None:
            value = MISSING
        renderer = getattr(self, "k_" + f.kind)
        template, extra = renderer(f, name, dom, value, defaults)
        ctx.update(extra)
        html = _render(f"schemaforms/{template}.html", ctx)
        if template not in _NESTING:
            self.budget.emit(len(html))  # (a nesting one's children were counted as they were drawn)
        return html

    # -- kinds ------------------------------------------------------------------------------
    def k_string(self, f: Field, name, dom, value, defaults):
        text = _value_text(value)
        input_type = f.input_type
        if text and input_type == "datetime-local":
            local = datetime_local_value(text)
            input_type, text = ("datetime-local", local) if local else ("text", text)
        elif (
            text
            and input_type == "date"
            and not DATE_RE.fullmatch(text)
            or text
            and input_type == "time"
            and not TIME_RE.fullmatch(text)
        ):
            input_type = "text"
        attrs = list(f.attrs.items()) if input_type == f.input_type else []
        return "input", {"input_type": input_type, "value": text, "iattrs": attrs, "native_required": f.required}

    def k_number(self, f: Field, name, dom, value, defaults):
        text = "" if isinstance(value, bool) else _value_text(value)
        return "input", {
            "input_type": "number",
            "value": text,
            "iattrs": list(f.attrs.items()),
            "native_required": f.required,
        }

    k_integer = k_number

    def k_boolean(self, f: Field, name, dom, value, defaults):
        return "checkbox", {"checked": value is True, "control_value": "true"}

    def k_null(self, f: Field, name, dom, value, defaults):
        checked = value is None or (value is MISSING and f.required)
        return "checkbox", {"checked": checked, "control_value": "null"}

    def k_const(self, f: Field, name, dom, value, defaults):
        return "const", {"value": _value_text(f.const) if f.const is not None else "null", "const_json": canon(f.const)}

    def k_enum(self, f: Field, name, dom, value, defaults):
        chosen = canon(value) if value is not MISSING else None
        options = [{"o": o, "selected": o.json == chosen} for o in f.options]
        return "select", {
            "options": options,
            "placeholder": chosen is None or not any(o["selected"] for o in options) or not f.required,
            "native_required": f.required,
        }

    def k_multiselect(self, f: Field, name, dom, value, defaults):
        chosen = {canon(v) for v in value} if isinstance(value, list) else set()
        options = [{"o": o, "checked": o.json in chosen, "i": i} for i, o in enumerate(f.options)]
        return "multiselect", {"options": options}

    def k_json(self, f: Field, name, dom, value, defaults):
        import json

        text = "" if value is MISSING else json.dumps(value, indent=2, ensure_ascii=False, default=str)
        return "json", {"value": text}

    def k_object(self, f: Field, name, dom, value, defaults):
        values = value if isinstance(value, dict) else {}
        children = []
        for child in f.children:
            child_value = values.get(child.key, MISSING)
            children.append(
                self.field(child, f"{name}.{child.seg}", f"{dom}.{child.seg}", child_value, defaults=defaults)
            )
        return "object", {"children": children}

    def k_array(self, f: Field, name, dom, value, defaults):
        assert f.item is not None
        items = value if isinstance(value, list) else []
        if value is MISSING and f.required and "data-sf-min" in f.attrs:
            items = [MISSING] * min(int(f.attrs["data-sf-min"]), 50)
        rendered = [self.item(f.item, name, dom, str(i), v, defaults) for i, v in enumerate(items)]
        template = self.item(f.item, name, dom, ITEM_PLACEHOLDER, MISSING, True)
        return "array", {"items": rendered, "item_template": template}

    def item(self, item: Field, name: str, dom: str, index: str, value: Any, defaults: bool):
        html = self.field(item, f"{name}.{index}", f"{dom}.{index}", value, defaults=defaults, idx=index)
        return _render("schemaforms/array_item.html", {"index": index, "body": html, "item_name": f"{name}.{index}"})

    def k_choice(self, f: Field, name, dom, value, defaults):
        selected = self.pick_branch(f, value)
        branches = []
        for i, branch in enumerate(f.branches):
            branch_value = value if i == selected else MISSING
            html = self.field(
                branch.field,
                name,
                f"{dom}.~b{i}",
                branch_value,
                defaults=defaults or i != selected,
                idx=None,
                bare=True,
            )
            branches.append({"i": i, "label": branch.label, "selected": i == selected, "html": html})
        return "choice", {"branches": branches}

    def pick_branch(self, f: Field, value: Any) -> int:
        """The branch a value belongs to: discriminator, then validation, then JSON type."""
        if value is MISSING:
            return 0
        if f.discriminator and isinstance(value, dict) and f.discriminator in value:
            wanted = canon(value[f.discriminator])
            for i, branch in enumerate(f.branches):
                if branch.discriminator_value is not MISSING and canon(branch.discriminator_value) == wanted:
                    return i
        for i, branch in enumerate(f.branches):
            if branch.field.kind != "json" and matches(
                self.root_schema, branch.schema, value, self.check_until - time.monotonic()
            ):
                return i
        kind = json_type(value)
        for i, branch in enumerate(f.branches):
            bkind = branch.field.kind
            if (
                bkind == kind
                or (bkind == "number" and kind == "integer")
                or (bkind in ("array", "multiselect") and kind == "array")
            ):
                return i
        for i, branch in enumerate(f.branches):
            if branch.field.kind == "json":
                return i
        return 0
