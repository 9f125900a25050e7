"""Working with a server, in Chromium, on servers nobody here wrote (issue 14): a slow answer to
a server request keeps the call's result; a task card polls and asks for input on its own;
Form ⇄ JSON keeps the values both ways; error boxes clear; the workspace follows the last
click and remembers a form's values; resource links read in the workspace; Copy everywhere."""

from __future__ import annotations

import json
import re

from playwright.sync_api import Locator, expect

from playground.transcripts.models import Session

from .helpers import EVERYTHING, HttpPeer, LiveBrowserTestCase
from .test_protocol import need_everything

# The call's timeout: the real server has that long before its question and again after the
# answer, room enough on a loaded machine. The "person" answers once the call has waited
# ANSWER_AFTER seconds (the page's own elapsed counter says when): past the moment a clock that
# had not stopped would have run out. Waiting for it is the point, not synchronisation.
CALL_TIMEOUT = 5
ANSWER_AFTER = CALL_TIMEOUT + 2


class EverythingSession:
    """The first steps of most of this issue's tests (test_keyboard.py's too)."""

    def everything(self: LiveBrowserTestCase) -> None:  # type: ignore[misc]
        """Log in, add server-everything over stdio, connect."""
        need_everything()
        self.log_in()
        self.add_server("Everything", command=str(EVERYTHING), args=["stdio"])
        self.connect("echo")


class WorkspaceTests(EverythingSession, LiveBrowserTestCase):
    def server_request(self) -> Locator:
        return self.page.get_by_role("region", name="Server request")

    def wait_past_the_timeout(self) -> None:
        """Until the call has waited ANSWER_AFTER seconds (its in-flight card counts the time)."""
        inflight = self.page.locator("#inflight .inflight")
        expect(inflight.get_by_text("waiting for your answer")).to_be_visible()
        expect(inflight.get_by_text("the timeout waits too")).to_be_visible()
        waited = self.page.wait_for_function(
            """s => { const el = document.querySelector('#inflight .inflight .elapsed');
                      return !el ? 'the call ended first' : parseFloat(el.textContent) >= s && 'waited'; }""",
            arg=ANSWER_AFTER,
            timeout=30_000,
        )
        assert waited.json_value() == "waited", f"the call ended before the answer: {self.result().text_content()}"

    # The timeout waits for the person ---------------------------------------------------------

    def test_a_slow_answer_to_an_elicitation_keeps_the_result_over_stdio(self) -> None:
        """server-everything over stdio: no link between the elicitation and the call on the
        wire; the call in flight waits anyway, and its result arrives after a slow answer."""
        self.everything()
        form = self.open_tool("trigger-elicitation-request")
        form.get_by_label("timeout (s)").fill(str(CALL_TIMEOUT))
        form.get_by_role("button", name="Call tool").click()
        card = self.server_request()
        expect(card).to_contain_text("Please provide inputs for the following fields:")
        expect(card).to_contain_text("its timeout waits for your answer")
        self.wait_past_the_timeout()
        card.get_by_label("name", exact=True).fill("Ada Lovelace")
        card.get_by_label("email", exact=True).fill("ada@example.org")
        self.shot("1-answered-late")
        card.get_by_role("button", name="Accept").click()
        result = self.result()
        expect(result).to_contain_text("User provided the requested information")
        expect(result).to_contain_text("Ada Lovelace")
        expect(result).not_to_contain_text("timed out")
        log = self.transcript()
        expect(
            log.locator('.ev-note[data-method="info"]').filter(has_text=f"waited past its {CALL_TIMEOUT} s timeout")
        ).to_have_count(1)
        expect(log.locator('.ev-send[data-method="notifications/cancelled"]')).to_have_count(0)
        self.assert_no_js_errors()

    def test_slow_answers_over_streamable_http_in_both_eras(self) -> None:
        """The SDK peer: legacy, an elicitation on the call's own stream; modern, an
        input_required round. Both answered after the call's timeout had gone by."""
        peer = HttpPeer()
        self.addCleanup(peer.stop)
        self.log_in()
        self.add_server("SDK legacy", transport="Streamable HTTP", url=peer.url)
        self.connect("ask_name")
        form = self.open_tool("ask_name")
        form.get_by_label("timeout (s)").fill(str(CALL_TIMEOUT))
        form.get_by_role("button", name="Call tool").click()
        card = self.server_request()
        expect(card).to_contain_text("What is your name?")
        self.wait_past_the_timeout()
        card.get_by_label("name", exact=True).fill("Grace")
        card.get_by_role("button", name="Accept").click()
        expect(self.result()).to_contain_text("Hello, Grace!")
        self.end_sessions()

        self.add_server("SDK modern", transport="Streamable HTTP", url=peer.url, era="Modern")
        self.connect("greet")
        form = self.open_tool("greet")
        form.get_by_label("timeout (s)").fill(str(CALL_TIMEOUT))
        form.get_by_role("button", name="Call tool").click()
        card = self.server_request()
        expect(card).to_contain_text("input_required round 1")
        self.wait_past_the_timeout()
        card.get_by_label("name", exact=True).fill("Ada")
        self.shot("1-modern-answered-late")
        card.get_by_role("button", name="Accept").click()
        expect(self.result()).to_contain_text("Hello, Ada!")
        expect(self.result()).not_to_contain_text("timed out")
        self.assert_no_js_errors()

    # Tasks --------------------------------------------------------------------------------------

    def test_a_task_card_polls_and_asks_for_input_on_its_own(self) -> None:
        """server-everything's research task: the card polls tasks/get at the server's pace, and
        when the task needs a clarification its question appears with no click on Get result."""
        self.everything()
        page = self.page
        form = self.open_tool("simulate-research-query")
        form.get_by_label("topic", exact=True).fill("tides")
        form.get_by_label("ambiguous", exact=True).check()
        form.get_by_role("button", name="Call tool").click()
        card = page.get_by_role("region", name="Task")
        expect(card).to_be_visible()
        expect(card).to_contain_text("from tools/call simulate-research-query")
        expect(card).to_contain_text("polled every 1 s (the server's pollInterval: 1000 ms)")
        # The clarification, asked through tasks/result, which the card called by itself.
        question = self.server_request()
        expect(question).to_contain_text("could have multiple interpretations")
        expect(card).to_have_attribute("data-status", "input_required")
        expect(card.locator(".badge")).to_have_text("input_required")
        expect(card).to_contain_text("waiting for tasks/result: the server's questions come with it")
        self.shot("1-task-asks")
        question.get_by_label("interpretation", exact=True).select_option(label="Historical perspective")
        question.get_by_role("button", name="Accept").click()
        # The result, fetched with no click, and the card at rest.
        expect(self.result()).to_contain_text("# Research Report: tides (historical)", timeout=30_000)
        expect(card).to_have_attribute("data-status", "completed")
        expect(card).to_contain_text("not polling")
        expect(card.get_by_role("button", name="Cancel task")).to_have_count(0)
        card.scroll_into_view_if_needed()
        self.shot("2-task-done")
        log = self.transcript()
        polls = log.locator('.ev-send[data-method="tasks/get"]')
        assert polls.count() >= 2
        # (the recorded milliseconds since the session started; the line shows the time of day)
        times = [float(t) for t in polls.locator(".t").evaluate_all("els => els.map(e => e.dataset.ms)")]
        assert all(b - a >= 950 for a, b in zip(times, times[1:])), times  # pollInterval 1000 ms
        expect(log.locator('.ev-send[data-method="tasks/result"]')).to_have_count(1)
        expect(log.locator('.ev-recv[data-method="notifications/tasks/status"]').first).to_be_attached()
        # Dismissed, the card goes, and nothing polls any more.
        card.get_by_role("button", name="Dismiss").click()
        expect(card).to_have_count(0)
        self.assert_no_js_errors()

    # Form ⇄ JSON ------------------------------------------------------------------------------

    def test_form_and_json_keep_the_values_both_ways(self) -> None:
        self.everything()
        page = self.page
        form = self.open_tool("gzip-file-as-resource")
        form.get_by_label("name", exact=True).fill("notes.gz")
        form.get_by_label("outputType", exact=True).select_option("resource")
        form.get_by_label("JSON", exact=True).check()
        editor = form.get_by_label("arguments (JSON)")
        assert json.loads(editor.input_value()) == {
            "name": "notes.gz",
            "outputType": "resource",
            "data": "https://raw.githubusercontent.com/modelcontextprotocol/servers/refs/heads/main/README.md",
        }
        # The editor is as wide as the form, its label above it.
        label_box = form.locator("label[for=arguments-json]").bounding_box()
        editor_box = editor.bounding_box()
        form_box = form.bounding_box()
        assert label_box["y"] + label_box["height"] <= editor_box["y"] + 1, (label_box, editor_box)
        assert editor_box["width"] >= form_box["width"] - 4, (editor_box, form_box)
        self.shot("1-json-1440")

        # Edited JSON comes back into the form.
        editor.fill(
            json.dumps({"name": "data.gz", "data": "data:text/plain;base64,aGVsbG8=", "outputType": "resourceLink"})
        )
        form.get_by_label("Form", exact=True).check()
        expect(form.get_by_label("name", exact=True)).to_have_value("data.gz")
        expect(form.get_by_label("data", exact=True)).to_have_value("data:text/plain;base64,aGVsbG8=")
        expect(form.get_by_label("outputType", exact=True)).to_have_value("resourceLink")
        preview = json.loads(page.locator("[data-params-preview]").text_content())
        assert preview["arguments"] == {
            "name": "data.gz",
            "data": "data:text/plain;base64,aGVsbG8=",
            "outputType": "resourceLink",
        }

        # JSON that does not parse blocks the switch and says why; the text stays as written.
        form.get_by_label("JSON", exact=True).check()
        editor.fill('{"name": "broken.gz", ')
        form.get_by_label("Form", exact=True).click()  # (refused: the radio goes back to JSON)
        alert = form.get_by_role("alert")
        expect(alert).to_contain_text("this JSON does not parse")
        expect(form.get_by_label("JSON", exact=True)).to_be_checked()
        expect(editor).to_be_visible()
        expect(editor).to_have_value('{"name": "broken.gz", ')
        self.shot("2-json-error")
        # A value the form cannot hold blocks it too, naming it.
        editor.fill('{"name": "x.gz", "extra": 1}')
        expect(alert).to_have_count(0)  # it parses now: the error is gone
        form.get_by_label("Form", exact=True).click()
        expect(form.get_by_role("alert")).to_contain_text("the form cannot hold /extra")
        expect(form.get_by_label("JSON", exact=True)).to_be_checked()
        editor.fill('{"name": "x.gz", "data": "data:text/plain;base64,aGVsbG8=", "outputType": "resource"}')
        form.get_by_label("Form", exact=True).check()
        expect(form.get_by_label("name", exact=True)).to_have_value("x.gz")
        expect(form.get_by_role("alert")).to_have_count(0)

        # At 800 px the editor still fills its column and nothing runs out of it.
        form.get_by_label("JSON", exact=True).check()
        page.set_viewport_size({"width": 800, "height": 900})
        editor_box, form_box = editor.bounding_box(), form.bounding_box()
        assert editor_box["width"] >= form_box["width"] - 4
        work = page.locator(".work-col")
        assert work.evaluate("c => c.scrollWidth <= c.clientWidth"), "the workspace overflows its column at 800 px"
        self.shot("3-json-800")
        page.set_viewport_size({"width": 1440, "height": 900})
        form.get_by_role("button", name="Call tool").click()
        expect(self.result()).to_contain_text("x.gz")
        self.assert_no_js_errors()

    # Error boxes ------------------------------------------------------------------------------

    def test_error_boxes_clear_once_the_thing_succeeds(self) -> None:
        self.everything()
        page = self.page
        workspace = page.locator("#workspace")
        # Arguments the schema refuses, then fixed.
        form = self.open_tool("get-sum")
        form.get_by_label("JSON", exact=True).check()
        form.get_by_label("arguments (JSON)").fill('{"a": "two", "b": 3}')
        form.get_by_role("button", name="Call tool").click()
        expect(form.get_by_role("alert")).to_contain_text("do not match the input schema")
        form.get_by_label("arguments (JSON)").fill('{"a": 2, "b": 3}')
        form.get_by_role("button", name="Call tool").click()
        expect(self.result()).to_contain_text("The sum of 2 and 3 is 5")
        expect(form.get_by_role("alert")).to_have_count(0)
        # The raw composer: params that are not JSON, then an exact frame that goes out.
        page.get_by_role("button", name="Raw request").click()
        workspace.get_by_label("method", exact=True).fill("tools/list")
        workspace.get_by_label("params (JSON)").fill("{")
        workspace.get_by_role("button", name="Send").click()
        expect(workspace.get_by_role("alert")).to_contain_text("params is not valid JSON")
        workspace.get_by_label("exact frame").fill('{"jsonrpc": "2.0", "id": "e-1", "method": "ping"}')
        workspace.get_by_role("button", name="Send").click()
        expect(self.result()).to_contain_text("raw")
        expect(workspace.get_by_role("alert")).to_have_count(0)
        self.assert_no_js_errors()

    # The workspace follows the last click -----------------------------------------------------

    def test_the_workspace_follows_the_last_click_and_remembers_values(self) -> None:
        self.everything()
        page = self.page
        catalogue = page.locator("#catalogue")
        workspace = page.locator("#workspace")
        form = self.open_tool("echo")
        form.get_by_label("message", exact=True).fill("remember me")
        expect(self.tool_button("echo")).to_have_attribute("aria-current", "true")
        form.get_by_role("button", name="Call tool").click()
        expect(self.result()).to_contain_text("Echo: remember me")

        # A form clicked before htmx processed it (right after its swap, on a busy machine) still
        # sends over the websocket: the browser's own submit would reload the page (a GET of it
        # with the form's fields) and lose the call. The same form, put in by hand, is such a one.
        url = page.url
        marker = page.evaluate("() => { window.notReloaded = true; return window.notReloaded; }")
        unprocessed = page.evaluate("""() => { const ws = document.getElementById('workspace');
            ws.innerHTML = ws.innerHTML; return !document.getElementById('tool-form')._htmx; }""")
        assert marker and unprocessed
        form = page.locator("#workspace form#tool-form")
        form.get_by_label("message", exact=True).fill("before htmx")
        form.get_by_role("button", name="Call tool").click()
        expect(self.result()).to_contain_text("Echo: before htmx")
        assert page.url == url and page.evaluate("() => window.notReloaded === true")

        # A resource replaces the tool form; it is read as it opens.
        resource = catalogue.get_by_role("button", name="architecture.md", exact=True)
        resource.click()
        expect(workspace.locator("#tool-form")).to_have_count(0)
        expect(workspace.get_by_role("heading", name="architecture.md")).to_be_visible()
        expect(self.result()).to_contain_text("demo://resource/static/document/architecture.md")
        expect(resource).to_have_attribute("aria-current", "true")
        expect(self.tool_button("echo")).not_to_have_attribute("aria-current", re.compile(".*"))
        expect(catalogue.locator("[aria-current]")).to_have_count(1)
        self.shot("1-resource")
        # A prompt replaces it in turn; the old result goes with the old item.
        prompt = catalogue.get_by_role("button", name="args-prompt", exact=True)
        prompt.click()
        expect(workspace.get_by_role("heading", name=re.compile("args-prompt"))).to_be_visible()
        expect(workspace.get_by_role("heading", name="architecture.md")).to_have_count(0)
        expect(self.result()).to_have_text("Results appear here.")
        expect(prompt).to_have_attribute("aria-current", "true")
        workspace.get_by_label("city", exact=True).fill("Lisbon")
        workspace.get_by_role("button", name="Get prompt").click()
        expect(self.result()).to_contain_text("Lisbon")

        # Back to echo: what was typed is there again; the prompt's too, after a reload.
        form = self.open_tool("echo")
        expect(form.get_by_label("message", exact=True)).to_have_value("before htmx")
        # A field the person goes into while those values are being put back is not swapped from
        # under them: what they type then is what is sent. The page's request for the restored
        # fields is held until the field has the focus.
        remembered = self.open_tool("get-sum")
        remembered.get_by_label("a", exact=True).fill("1")
        remembered.get_by_label("b", exact=True).fill("2")
        self.open_tool("echo")
        held: list = []
        page.route("**/tool/fields/", lambda route: held.append(route))
        self.tool_button("get-sum").click()
        form = page.locator("#workspace form#tool-form[data-tool=get-sum]")
        expect(form).to_have_attribute("aria-busy", "true")
        form.get_by_label("a", exact=True).click()
        held[0].continue_()
        expect(form).not_to_have_attribute("aria-busy", "true")
        page.unroute("**/tool/fields/")
        form.get_by_label("a", exact=True).press_sequentially("7")
        form.get_by_label("b", exact=True).fill("8")
        form.get_by_role("button", name="Call tool").click()
        expect(self.result()).to_contain_text("The sum of 7 and 8 is 15.")
        form = self.open_tool("echo")
        json_form = self.open_tool("get-sum")
        json_form.get_by_label("JSON", exact=True).check()
        json_form.get_by_label("arguments (JSON)").fill('{"a": 1, "b": "not yet"}')
        page.reload()
        expect(page.get_by_role("status")).to_have_text("connected")
        json_form = self.open_tool("get-sum")
        expect(json_form.get_by_label("JSON", exact=True)).to_be_checked()
        expect(json_form.get_by_label("arguments (JSON)")).to_have_value('{"a": 1, "b": "not yet"}')
        catalogue.get_by_role("button", name="args-prompt", exact=True).click()
        expect(workspace.get_by_label("city", exact=True)).to_have_value("Lisbon")
        self.assert_no_js_errors()

    def test_a_resource_link_reads_that_resource_in_the_workspace(self) -> None:
        self.everything()
        form = self.open_tool("get-resource-links")
        form.get_by_label("count", exact=True).fill("2")
        form.get_by_role("button", name="Call tool").click()
        result = self.result()
        link = result.get_by_role("link", name="demo://resource/dynamic/text/2")
        expect(link).to_be_visible()
        self.shot("1-links")
        link.click()
        workspace = self.page.locator("#workspace")
        expect(workspace.locator(".resource-uri")).to_contain_text("demo://resource/dynamic/text/2")
        expect(workspace).to_contain_text("Not in the server's resources list")
        expect(result).to_contain_text("Resource 2: This is a plaintext resource")
        read = self.transcript().locator('.ev-send[data-method="resources/read"]')
        expect(read).to_have_count(1)
        expect(read).to_contain_text("demo://resource/dynamic/text/2")
        # "Read resource" reads it again.
        workspace.get_by_role("button", name="Read resource").click()
        expect(read).to_have_count(2)
        self.shot("2-link-read")
        self.assert_no_js_errors()

    # Copy -----------------------------------------------------------------------------------

    def test_copy_buttons_on_json_blocks_results_and_transcript_lines(self) -> None:
        self.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=self.live_server_url)
        self.everything()
        page = self.page
        form = self.open_tool("get-structured-content")
        form.get_by_label("location", exact=True).select_option("Chicago")
        form.get_by_role("button", name="Call tool").click()
        result = self.result()
        expect(result).to_contain_text("matches outputSchema")

        # The Result: all of it, as JSON.
        copied = json.loads(self.copy(result.locator("header").get_by_role("button", name="Copy")))
        assert copied["structuredContent"]["conditions"] and "content" in copied
        # Each block: its own text.
        structured = result.locator("h4 ~ .copyable").first
        assert json.loads(self.copy(structured.get_by_role("button", name="Copy"))) == copied["structuredContent"]
        text = self.copy(result.locator(".content-text .copyable").first.get_by_role("button", name="Copy"))
        assert text == copied["content"][0]["text"]
        # The tool form's JSON blocks.
        input_schema = page.locator("#workspace details", has_text="inputSchema")
        input_schema.locator("summary").click()
        schema = json.loads(self.copy(input_schema.get_by_role("button", name="Copy")))
        assert schema["properties"]["location"]["enum"] == ["New York", "Chicago", "Los Angeles"]
        params = json.loads(self.copy(page.locator(".params-preview").get_by_role("button", name="Copy")))
        assert params == {"name": "get-structured-content", "arguments": {"location": "Chicago"}}

        # A transcript line: the message it carries; the line does not open for it.
        request, _ = self.exchange("tools/call")
        request.hover()
        message = json.loads(self.copy(request.get_by_role("button", name="Copy")))
        assert message["method"] == "tools/call" and message["params"]["arguments"] == {"location": "Chicago"}
        expect(request).not_to_have_attribute("open", "")
        # Every line has one, named "Copy"; the transcript's text filter does not see it.
        # (one query each: lines that arrive meanwhile cannot make two counts differ)
        expect(self.transcript().locator("#transcript-lines > .ev").first).to_be_attached()
        expect(self.transcript().locator("#transcript-lines > .ev:not(:has(> summary > button.copy))")).to_have_count(0)
        page.get_by_placeholder("Filter the whole session").fill("copy")
        expect(self.transcript().locator("#transcript-lines > .ev:visible")).to_have_count(0)
        page.get_by_placeholder("Filter the whole session").fill("")
        # The server's instructions, whole.
        instructions = page.locator("#session-state details.instructions")
        instructions.locator("summary").click()
        assert self.copy(instructions.get_by_role("button", name="Copy")) == Session.objects.get().instructions
        # Every block on the page has its Copy.
        expect(page.locator(".work-col pre.json").first).to_be_attached()
        self.assert_every_block_copies()
        self.shot("1-copy")
        self.assert_no_js_errors()
