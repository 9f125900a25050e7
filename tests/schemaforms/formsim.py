"""Read rendered form HTML the way a browser does: what it would submit, and its labels.

Used to test render -> submit -> parse round trips without a browser: controls inside <template>
or inside a disabled <fieldset> are not submitted, unchecked checkboxes are not submitted, a
<select> submits its selected (or first) option, a <textarea> its text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser

from django.http import QueryDict

VOID = {"input", "br", "img", "hr", "meta", "link", "source", "wbr", "col", "area", "base"}


@dataclass
class Control:
    tag: str
    attrs: dict[str, str | None]
    disabled: bool
    in_template: bool
    options: list[tuple[str, bool, str]] = field(default_factory=list)  # (value, selected, text)
    text: str = ""


class FormReader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, bool, bool]] = []  # (tag, disabled, in_template)
        self.controls: list[Control] = []
        self.labels: dict[str, str] = {}  # for -> text
        self.legends: list[str] = []
        self.ids: list[str] = []
        self.elements: list[tuple[str, dict]] = []  # every start tag (outside templates)
        self._label: list | None = None
        self._legend: list | None = None
        self._option: list | None = None
        self._current: Control | None = None

    @property
    def disabled(self) -> bool:
        return bool(self.stack) and self.stack[-1][1]

    @property
    def in_template(self) -> bool:
        return bool(self.stack) and self.stack[-1][2]

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        disabled, in_template = self.disabled, self.in_template
        if not in_template:
            self.elements.append((tag, a))
            if "id" in a:
                self.ids.append(a["id"] or "")
        if tag in ("input", "select", "textarea"):
            control = Control(tag, a, disabled or "disabled" in a, in_template)
            self.controls.append(control)
            if tag != "input":
                self._current = control
        elif tag == "option" and self._current is not None:
            self._option = [a.get("value"), "selected" in a, ""]
        elif tag == "label" and not in_template:
            self._label = [a.get("for"), ""]
        elif tag == "legend" and not in_template:
            self._legend = [""]
        if tag not in VOID:
            self.stack.append(
                (tag, disabled or (tag == "fieldset" and "disabled" in a), in_template or tag == "template")
            )

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.handle_endtag(tag)

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if tag == "option" and self._option is not None and self._current is not None:
            value, selected, text = self._option
            self._current.options.append((text if value is None else value, selected, text))
            self._option = None
        elif tag in ("select", "textarea"):
            self._current = None
        elif tag == "label" and self._label is not None:
            target, text = self._label
            if target:
                self.labels.setdefault(target, text)
            self._label = None
        elif tag == "legend" and self._legend is not None:
            self.legends.append(self._legend[0])
            self._legend = None
        while self.stack:
            if self.stack.pop()[0] == tag:
                break

    def handle_data(self, data):
        if self._option is not None:
            self._option[2] += data
        elif self._current is not None and self._current.tag == "textarea":
            self._current.text += data
        if self._label is not None:
            self._label[1] += data
        if self._legend is not None:
            self._legend[0] += data


def read(html: str) -> FormReader:
    reader = FormReader()
    reader.feed(str(html))
    reader.close()
    return reader


def submitted(html: str) -> QueryDict:
    """The form data a browser would submit for this HTML (as a QueryDict)."""
    data = QueryDict(mutable=True)
    for c in read(html).controls:
        name = c.attrs.get("name")
        if not name or c.disabled or c.in_template:
            continue
        if c.tag == "input":
            kind = (c.attrs.get("type") or "text").lower()
            if kind in ("button", "submit", "reset", "image", "file"):
                continue
            if kind in ("checkbox", "radio"):
                if "checked" in c.attrs:
                    data.appendlist(name, c.attrs.get("value") or "on")
                continue
            data.appendlist(name, c.attrs.get("value") or "")
        elif c.tag == "textarea":
            text = c.text[1:] if c.text.startswith("\n") else c.text
            data.appendlist(name, text)
        elif c.tag == "select":
            chosen = [o for o in c.options if o[1]]
            option = chosen[-1] if chosen else (c.options[0] if c.options else None)
            if option is not None:
                data.appendlist(name, option[0])
    return data


def flat(data: QueryDict) -> dict:
    """The same data as a flat dict (one value, or a list for repeated names), like htmx JSON."""
    return {k: (v if len(v) > 1 else v[0]) for k, v in data.lists()}
