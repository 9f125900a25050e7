"""Chat in Chromium: add a model provider pointing at the test's model API on loopback, tick a
server, send a message (Ctrl+Enter), see the tool card and the model's answer, which the
scripted model makes from the tool result it received (so it is computed, not written here)."""

from __future__ import annotations

import asyncio
import json
import secrets
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.chat.model_api import Answer, ModelApi, Turn

from .helpers import LiveBrowserTestCase, peer_args

KEY = "sk-browser-" + "x" * 20


def script(turn: Turn) -> Answer:
    if turn.body["messages"][-1].get("content") == "hang please":
        return Answer(tool_calls=[("hang", "{}")])
    if turn.body["messages"][-1].get("content") == "ask my name":
        return Answer(tool_calls=[("ask_name", "{}")])
    if turn.last_tool_result():
        return Answer(text=f"The server echoed back: {turn.last_tool_result()}")
    word = turn.body["messages"][-1]["content"].split()[-1]
    return Answer(text="Calling echo.", tool_calls=[("echo", json.dumps({"text": word.upper()}))])


@pytest.fixture(scope="class")
def model_api(request: pytest.FixtureRequest) -> Iterator[Any]:
    """The model API, served on its own event loop in a thread (the browser test is sync)."""
    loop = asyncio.new_event_loop()
    api = ModelApi(script)
    ready = threading.Event()
    stop = asyncio.Event()

    async def serve() -> None:
        async with api:
            ready.set()
            await stop.wait()

    thread = threading.Thread(target=loop.run_until_complete, args=(serve(),), daemon=True)
    thread.start()
    assert ready.wait(10)
    request.cls.model_api = api
    yield api
    loop.call_soon_threadsafe(stop.set)
    thread.join(10)


@pytest.mark.usefixtures("model_api")
class ChatTests(LiveBrowserTestCase):
    model_api: ModelApi

    def test_a_model_calls_a_servers_tool_and_answers_from_its_result(self) -> None:
        page = self.page
        self.log_in()
        command, args = peer_args("stdio")
        self.add_server("peer", command=command, args=args)
        # Model providers: add one.
        page.get_by_role("navigation", name="Main").get_by_role("link", name="Chat").click()
        page.get_by_role("link", name="Model providers").click()
        page.get_by_role("link", name="Add provider").click()
        page.get_by_label("Provider").select_option(label="OpenAI-compatible")
        page.get_by_label("Base URL").fill(self.model_api.base_url)
        page.get_by_label("API key").fill(KEY)
        page.get_by_label("Model").fill("scripted-model")
        page.get_by_role("button", name="Save").click()
        expect(page.get_by_role("cell", name="scripted-model", exact=True)).to_be_visible()
        assert KEY not in page.content()
        # Chat: tick the server, pick the model, send with Ctrl+Enter.
        page.get_by_role("navigation", name="Main").get_by_role("link", name="Chat").click()
        page.get_by_role("button", name="New chat").click()
        page.wait_for_load_state("load")
        page.get_by_label("peer").check()
        page.get_by_label("Model", exact=True).select_option(label="scripted-model (OpenAI-compatible)")
        word = "kiwi" + secrets.token_hex(3)
        page.get_by_label("Message").fill(f"please echo {word}")
        page.get_by_label("Message").press("Control+Enter")
        chat = page.get_by_role("region", name="Chat")
        card = chat.get_by_role("article", name="Tool call echo")
        expect(card).to_contain_text("on peer")
        expect(card).to_contain_text("arguments match the inputSchema")
        expect(card).to_contain_text("done")
        # The scripted model upper-cased the word; the server echoed it; the model quoted the echo.
        expect(chat).to_contain_text(f"The server echoed back: {word.upper()}")
        lane = page.get_by_role("region", name="Model lane")
        expect(lane.locator("details.exchange")).to_have_count(2)
        assert KEY not in page.content()
        self.shot("chat")
        # Saved: a reload shows the conversation and links the session.
        page.reload()
        expect(page.get_by_role("region", name="Chat")).to_contain_text(f"The server echoed back: {word.upper()}")
        expect(page.get_by_role("region", name="Chat")).not_to_contain_text(
            'class="chat-msg'
        )  # drawn, not shown as text
        expect(page.get_by_role("link", name="peer (session")).to_be_visible()
        # A tool that asks the person (elicitation/create): the session page's form, in the chat,
        # in this tab and in a second one on the same chat.
        chat = page.get_by_role("region", name="Chat")
        page.get_by_label("Message").fill("ask my name")
        page.get_by_role("button", name="Send").click()
        asked = chat.get_by_role("article", name="Elicitation request from peer")
        expect(asked).to_contain_text("What is your name?")
        expect(asked).to_contain_text("waiting for your answer")
        other = self.context.new_page()
        other.goto(page.url)
        mirrored = other.get_by_role("region", name="Chat").get_by_role("article", name="Elicitation request from peer")
        expect(mirrored.get_by_role("button", name="Accept")).to_be_visible()
        self.shot("chat-elicitation")
        asked.get_by_label("name", exact=True).fill("Grace")
        asked.get_by_role("button", name="Accept").click()
        expect(chat).to_contain_text("The server echoed back: Hello, Grace!")
        expect(asked).to_contain_text("answered (accept)")
        expect(asked.get_by_role("button", name="Accept")).to_have_count(0)  # not answerable twice
        expect(mirrored).to_contain_text("answered (accept)")
        expect(mirrored.get_by_role("button", name="Accept")).to_have_count(0)
        self.assert_no_js_errors()

    def new_chat_with_the_peer(self) -> None:
        """Logged in, the SDK peer registered, a provider for the scripted model, a new chat with
        the peer ticked."""
        page = self.page
        self.log_in()
        command, args = peer_args("stdio")
        self.add_server("peer", command=command, args=args)
        page.goto(self.url("/providers/add/"))
        page.get_by_label("Base URL").fill(self.model_api.base_url)
        page.get_by_label("Model").fill("scripted-model")
        page.get_by_role("button", name="Save").click()
        page.goto(self.url("/chats/"))
        page.get_by_role("button", name="New chat").click()
        page.wait_for_load_state("load")
        page.get_by_label("peer").check()

    def test_stop_cancels_a_running_tool_call(self) -> None:
        page = self.page
        self.new_chat_with_the_peer()
        page.get_by_label("Message").fill("hang please")
        page.get_by_role("button", name="Send").click()
        chat = page.get_by_role("region", name="Chat")
        expect(chat.get_by_role("article", name="Tool call hang")).to_contain_text("running")
        expect(page.get_by_label("Message")).to_have_value("")  # taken: the box is cleared
        # A message sent while the turn runs is refused: the box keeps it.
        page.get_by_label("Message").fill("not now")
        page.get_by_role("button", name="Send").click()
        expect(page.locator("#chat-status")).to_contain_text("A turn is running")
        expect(page.get_by_label("Message")).to_have_value("not now")
        page.get_by_role("button", name="Stop").click()
        expect(chat).to_contain_text("Stopped: the turn and its running tool calls were cancelled")
        expect(chat.get_by_role("article", name="Tool call hang")).to_contain_text("stopped by the user")
        expect(page.get_by_role("button", name="Stop")).to_have_count(0)
        self.assert_no_js_errors()

    def test_a_turn_goes_on_while_its_tab_is_hidden(self) -> None:
        """The person leaves the chat's tab (to look at the session page, say) while a tool waits
        for their answer: the turn is not cancelled by the tab going to the background (htmx
        closes a hidden tab's socket unless told not to), and the answer given on return completes it."""
        page = self.page
        self.new_chat_with_the_peer()
        page.get_by_label("Message").fill("ask my name")
        page.get_by_role("button", name="Send").click()
        chat = page.get_by_role("region", name="Chat")
        asked = chat.get_by_role("article", name="Elicitation request from peer")
        expect(asked).to_contain_text("waiting for your answer")
        for hidden in (True, False):  # the tab goes to the background, then comes back
            page.evaluate(
                """hidden => { Object.defineProperty(document, 'hidden', {configurable: true, get: () => hidden});
                   Object.defineProperty(document, 'visibilityState', {configurable: true,
                     get: () => hidden ? 'hidden' : 'visible'});
                   document.dispatchEvent(new Event('visibilitychange')); }""",
                hidden,
            )
        asked.get_by_label("name", exact=True).fill("Ada")
        asked.get_by_role("button", name="Accept").click()
        expect(chat).to_contain_text("The server echoed back: Hello, Ada!")
        expect(asked).to_contain_text("answered (accept)")
        self.assert_no_js_errors()
