"""The Model view of a tool list: every rendering, its token estimate and its findings.

One plain structure, used by the session page's panel, the JSON download and the golden tests.
"""

from __future__ import annotations

from typing import Any

from playground.mcp import jsontext

from . import chatbot, providers, rules, tokens

PROVIDER_LABELS = {"openai": "OpenAI", "anthropic": "Anthropic", "gemini": "Google Gemini"}


def tools_of(catalogue: Any) -> list[dict[str, Any]]:
    """The catalogue's tools that are objects (a server may list anything)."""
    tools = catalogue.get("tools") if isinstance(catalogue, dict) else None
    return [t for t in tools if isinstance(t, dict)] if isinstance(tools, list) else []


def model_view(tools: list[dict[str, Any]], budget: rules.Budget | None = None) -> dict[str, Any]:
    """Computed within one `rules.Budget` for the whole list: bounded, whatever the catalogue."""
    budget = budget or rules.Budget()
    subjects = [rules.Subject.of(tool, budget) for tool in tools]
    names = [s.name for s in subjects]
    targets = []
    for target in providers.TARGETS:
        one = [target.one(s.tool, s) for s in subjects]
        targets.append(
            {
                "id": target.id,
                "provider": target.provider,
                "label": target.label,
                "field": target.field,
                "doc": target.doc,
                "json": target.wrap(one),
                "tokens": {
                    "total": tokens.estimate(target.wrap(one)) if one else 0,
                    "per_tool": [tokens.estimate(item) for item in one],
                },
            }
        )
    found = []
    for provider in rules.PROVIDERS:
        per_tool = [[f.as_dict() for f in rules.check_tool(s.tool, provider, s)] for s in subjects]
        server = [f.as_dict() for f in rules.check_server(tools, provider)]
        counts = {
            severity: sum(1 for fs in [*per_tool, server] for f in fs if f["severity"] == severity)
            for severity in rules.SEVERITIES
        }
        found.append(
            {
                "provider": provider,
                "label": PROVIDER_LABELS[provider],
                "tools": per_tool,
                "server": server,
                "counts": counts,
            }
        )
    text = chatbot.tools_text(tools)
    return {
        "tools": names,
        "token_rule": tokens.RULE,
        "targets": targets,
        "findings": found,
        "chatbot": {"text": text, "tokens": tokens.estimate_text(text)},
    }


def download(view: dict[str, Any]) -> str:
    """The three providers' `tools` values in one JSON document, with the findings (`view`:
    what `model_view(tools)` made)."""
    return (
        jsontext.pretty(
            {
                "token_rule": view["token_rule"],
                **{t["id"]: {"tools": t["json"], "tokens": t["tokens"]["total"]} for t in view["targets"]},
                "findings": {
                    f["provider"]: {
                        "server": f["server"],
                        **{name: fs for name, fs in zip(view["tools"], f["tools"]) if fs},
                    }
                    for f in view["findings"]
                },
                "sdk_simple_chatbot": view["chatbot"]["text"],
            }
        )
        + "\n"
    )
