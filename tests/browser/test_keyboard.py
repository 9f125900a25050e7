"""The session page from the keyboard, in Chromium, on server-everything and the SDK peer
(issue 14): Ctrl/Cmd+Enter sends from any tool form, the JSON editor and the raw composer;
completion suggestions are an ARIA combobox; opening a tool puts the focus in its first field."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from .helpers import LiveBrowserTestCase, peer_args
from .test_workspace import EverythingSession


class KeyboardTests(EverythingSession, LiveBrowserTestCase):
    def test_ctrl_enter_sends_from_a_tool_form_the_json_editor_and_the_raw_composer(self) -> None:
        self.everything()
        page = self.page
        calls = self.transcript().locator('.ev-send[data-method="tools/call"]')
        # Opening the tool puts the focus in its field: type, then Ctrl+Enter.
        self.open_tool("echo")
        page.keyboard.type("typed, not clicked")
        page.keyboard.press("Control+Enter")
        expect(self.result()).to_contain_text("Echo: typed, not clicked")
        expect(calls).to_have_count(1)
        # The JSON editor (Cmd+Enter on a Mac: Meta here).
        form = self.open_tool("get-sum")
        form.get_by_label("JSON", exact=True).check()
        editor = form.get_by_label("arguments (JSON)")
        editor.fill('{"a": 40, "b": 2}')
        editor.press("Meta+Enter")
        expect(self.result()).to_contain_text("The sum of 40 and 2 is 42")
        expect(editor).to_have_value('{"a": 40, "b": 2}')  # no newline typed into it
        # The raw composer, from its params field.
        page.get_by_role("button", name="Raw request").click()
        workspace = page.locator("#workspace")
        expect(workspace.get_by_label("method", exact=True)).to_be_focused()
        page.keyboard.type("tools/call")
        workspace.get_by_label("params (JSON)").fill('{"name": "echo", "arguments": {"message": "raw"}}')
        workspace.get_by_label("params (JSON)").press("Control+Enter")
        expect(self.result()).to_contain_text("Echo: raw")
        expect(calls).to_have_count(3)
        # A plain Enter in a textarea is a new line, not a send (a ping answered after it: anything
        # the Enter had sent would be in the transcript before that ping's line).
        workspace.get_by_label("params (JSON)").press("End")
        workspace.get_by_label("params (JSON)").press("Enter")
        expect(workspace.get_by_label("params (JSON)")).to_have_value(re.compile(r"\n$"))
        self.answered_ping()
        expect(calls).to_have_count(3)
        self.assert_no_js_errors()

    def test_completion_is_an_aria_combobox(self) -> None:
        self.everything()
        page = self.page
        page.locator("#catalogue").get_by_role("button", name="completable-prompt", exact=True).click()
        workspace = page.locator("#workspace")
        department = workspace.get_by_role("combobox", name="department")
        expect(department).to_be_focused()  # the first field, on opening
        expect(department).to_have_attribute("aria-autocomplete", "list")
        expect(department).to_have_attribute("aria-expanded", "false")
        page.keyboard.type("E")
        listbox = workspace.get_by_role("listbox", name="Suggestions")
        expect(listbox.get_by_role("option")).to_have_text(["Engineering"])
        expect(department).to_have_attribute("aria-expanded", "true")
        expect(department).to_have_attribute("aria-controls", "sugg-parg-1-list")
        # Arrow down marks the option (aria-activedescendant); Enter picks it and sends nothing.
        page.keyboard.press("ArrowDown")
        option = listbox.get_by_role("option", name="Engineering")
        expect(option).to_have_attribute("aria-selected", "true")
        expect(department).to_have_attribute("aria-activedescendant", option.get_attribute("id"))
        page.keyboard.press("Enter")
        expect(department).to_have_value("Engineering")
        expect(department).to_have_attribute("aria-expanded", "false")
        expect(workspace.get_by_role("listbox")).to_have_count(0)
        expect(department).to_be_focused()
        self.answered_ping()  # (what the Enter had sent would be in the transcript before it)
        expect(self.transcript().locator('.ev-send[data-method="prompts/get"]')).to_have_count(0)
        department.focus()  # (back from the Ping button)

        # The second field: its options follow the first; arrows move both ways, with wrap-around.
        name = workspace.get_by_role("combobox", name="name")
        page.keyboard.press("Tab")
        expect(name).to_be_focused()
        names = workspace.get_by_role("listbox", name="Suggestions").get_by_role("option")
        expect(names).to_have_text(["Alice", "Bob", "Charlie"])
        page.keyboard.press("ArrowDown")
        page.keyboard.press("ArrowDown")
        expect(names.nth(1)).to_have_attribute("aria-selected", "true")
        expect(names.nth(0)).to_have_attribute("aria-selected", "false")
        page.keyboard.press("ArrowUp")
        page.keyboard.press("ArrowUp")
        expect(names.nth(2)).to_have_attribute("aria-selected", "true")
        self.shot("1-combobox")
        # Escape closes it; it stays closed until the next keystroke.
        page.keyboard.press("Escape")
        expect(names).to_have_count(0)
        expect(name).to_have_attribute("aria-expanded", "false")
        expect(name).not_to_have_attribute("aria-activedescendant", re.compile(".*"))
        page.keyboard.type("C")
        expect(names).to_have_text(["Charlie"])
        page.keyboard.press("ArrowDown")
        page.keyboard.press("Enter")
        expect(name).to_have_value("Charlie")
        # Ctrl+Enter sends, from a combobox too.
        page.keyboard.press("Control+Enter")
        expect(self.result()).to_contain_text("Please promote Charlie to the head of the Engineering team.")
        self.assert_no_js_errors()

    def test_opening_a_tool_moves_the_focus_to_its_first_field(self) -> None:
        """The SDK peer over stdio: a tool with fields, one without, a template."""
        self.log_in()
        command, args = peer_args("stdio")
        self.add_server("SDK peer", command=command, args=args)
        self.connect("add")
        form = self.open_tool("add")
        expect(form.get_by_label("a", exact=True)).to_be_focused()
        form = self.open_tool("hang")  # no arguments: the button, ready for Enter
        expect(form.get_by_role("button", name="Call tool")).to_be_focused()
        form = self.open_tool("echo")
        expect(form.get_by_label("text", exact=True)).to_be_focused()
        self.page.keyboard.type("from the keyboard")
        self.page.keyboard.press("Enter")  # a form's own Enter still sends, as before
        expect(self.result()).to_contain_text("from the keyboard")
        self.page.locator("#catalogue").get_by_role("button", name="item", exact=True).click()
        expect(self.page.locator("#workspace").get_by_label("item_id", exact=True)).to_be_focused()
        self.assert_no_js_errors()
