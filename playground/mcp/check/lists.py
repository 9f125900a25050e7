"""Pagination (Pagination, both revisions): every list is followed to its end — no repeated
cursor (a loop), no page limit reached, no item listed twice — and what it lists is kept for
the checks that follow."""

from __future__ import annotations

from collections import Counter
from typing import Any

from .context import CheckContext
from .result import FAIL, PASS, SKIP, WARN, Status, clip, worst

# (key, method, the result's array, what names an item, the capability)
LISTS = (
    ("tools", "tools/list", "tools", "name", "tools"),
    ("resources", "resources/list", "resources", "uri", "resources"),
    ("templates", "resources/templates/list", "resourceTemplates", "uriTemplate", "resources"),
    ("prompts", "prompts/list", "prompts", "name", "prompts"),
)


async def run(ctx: CheckContext) -> None:
    for key, method, member, ident, capability in LISTS:
        ctx.lists[key] = []
        if not ctx.advertised(capability):
            await ctx.row(f"pagination: {method}", SKIP, f"the server does not advertise `{capability}`")
            continue
        since = ctx.trace.mark()
        status, reason = await _follow(ctx, key, method, member, ident)
        ctx.list_seqs[key] = ctx.trace.seqs(since, (method,))
        await ctx.row(f"pagination: {method}", status, reason, ctx.list_seqs[key])


async def _follow(ctx: CheckContext, key: str, method: str, member: str, ident: str) -> tuple[Status, str]:
    items: list[Any] = []
    cursor: str | None = None
    seen: set[str] = set()
    pages = 0
    problems: list[tuple[Status, str]] = []
    while True:
        if pages >= ctx.options.max_pages:
            problems.append((FAIL, f"still a nextCursor after {pages} pages: stopped there (a loop?)"))
            break
        answer = await ctx.ask(method, {"cursor": cursor} if cursor is not None else None)
        pages += 1
        if not answer.ok:
            problems.append((FAIL, f"page {pages}: {answer.describe()}"))
            break
        page = answer.result
        batch = page.get(member) if isinstance(page, dict) else None
        if not isinstance(batch, list):
            problems.append((FAIL, f"page {pages} has no `{member}` array"))
            break
        items.extend(batch)
        nxt = page.get("nextCursor")
        if nxt is None:
            break
        if not isinstance(nxt, str):
            problems.append((FAIL, f"page {pages}: nextCursor is {clip(repr(nxt), 60)}, not a string"))
            break
        if nxt == "":
            problems.append((WARN, f"page {pages}: nextCursor is an empty string (omit it at the end of the list)"))
            break
        if nxt in seen:
            problems.append((FAIL, f"page {pages} gave cursor {clip(nxt, 60)!r} again: the pages loop"))
            break
        seen.add(nxt)
        cursor = nxt
    objects = [i for i in items if isinstance(i, dict)]
    if len(objects) < len(items):
        problems.append((FAIL, f"{len(items) - len(objects)} of the {member} are not objects"))
    names: list[str] = [i[ident] for i in objects if isinstance(i.get(ident), str)]
    twice = [n for n, c in Counter(names).items() if c > 1]
    if twice:
        shown = ", ".join(repr(clip(n, 60)) for n in twice[:5]) + (" …" if len(twice) > 5 else "")
        problems.append((FAIL, f"listed more than once ({ident}): {shown}"))
    ctx.lists[key] = objects
    count = f"{len(items)} {member} in {pages} page{'s' if pages != 1 else ''}"
    if not problems:
        return PASS, count + (", every cursor followed" if pages > 1 else "")
    return worst(*(s for s, _ in problems)), count + "; " + "; ".join(text for _, text in problems)
