"""Splits a session's rendered markdown into the full-text columns that retrieval weighs apart.

What the user asked says what a session was about far better than tool lines do (measured on
commits.tsv), so each kind of text gets its own FTS5 column and weight. Parsing the archived markdown,
rather than the session, lets `eywa reindex` rebuild exactly the same columns from files alone.
"""

from __future__ import annotations

import re
from typing import NamedTuple

_TOOL_LINE_RE = re.compile(r"- [A-Za-z_][\w.-]*(?: `|$)")  # what `renderer.tool_line` writes
_CONTEXT_FACTS = ("- branch:", "- title:", "- summary:")


class FulltextColumns(NamedTuple):
    prompts: str  # what the user wrote
    replies: str  # what Claude wrote
    actions: str  # one line per tool call, commands, compaction summaries, subagent runs
    context: str  # branch names, titles and trusted summaries


def fulltext_columns(markdown: str) -> FulltextColumns:
    prompts: list[str] = []
    replies: list[str] = []
    actions: list[str] = []
    context: list[str] = []
    current: list[str] | None = None
    for line in markdown.splitlines():
        if line.startswith("### "):
            kind = line.rsplit(" ", 1)[-1]
            current = prompts if kind == "User" else replies if kind == "Claude" else actions
            if current is actions:
                actions.append(line[4:])
            continue
        if line.startswith("## "):
            current = actions if line == "## Subagent runs" else None
            continue
        if current is None:
            if line.startswith(_CONTEXT_FACTS):
                # `alex/fix-gemini-rewind` -> words the tokenizer can match
                context.append(line.split(":", 1)[1].replace("/", " ").replace("-", " ").replace("_", " "))
            continue
        if current is replies and _TOOL_LINE_RE.match(line):
            actions.append(line)  # a tool line under Claude's turn
        else:
            current.append(line)
    return FulltextColumns(*("\n".join(part).strip() for part in (prompts, replies, actions, context)))
