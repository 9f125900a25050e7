"""The HTML a live session's pages get: out-of-band fragments built once (transcript lines, the
Result, the core regions), every server value escaped on the way in (html.py)."""
