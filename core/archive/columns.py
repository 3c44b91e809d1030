"""Splits a session's rendered markdown into the full-text columns that retrieval weighs apart.

What the user asked says what a session was about far better than tool lines do (measured on
commits.tsv), so each kind of text gets its own column, and the full-text index (core/index/text_index.py)
scores what the user wrote again on its own. Parsing the archived markdown,
rather than the session, lets `eywa reindex` rebuild exactly the same columns from files alone.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import NamedTuple

from eywa.core.sources import AGENT_NAMES

_TOOL_LINE_RE = re.compile(r"- [A-Za-z_][\w.-]*(?: `|$)")  # what `renderer.tool_line` writes
_CONTEXT_FACTS = ("- branch:", "- title:", "- summary:", "- repository:")
_AGENTS = frozenset(AGENT_NAMES.values())  # the heading of a reply names the agent that wrote it
_EVENT_RE = re.compile(r"### (?:\d\d:\d\d|--:--) (.+)")  # the renderer's heading of each event
_DAY_RE = re.compile(r"## (\d{4}-\d{2}-\d{2})")  # ... and of each day of the session
# Not strftime("%B"): the index must not depend on the machine's locale.
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")


# What `fulltext_columns` extracts, versioned: an index whose columns an older version split is split
# again from the archived markdown on the next ingest (core/ingest/reindex.py, `refresh_fulltext`), so an
# upgrade ranks old sessions like new ones without the user running `eywa reindex`.
FULLTEXT_VERSION = "2"


class FulltextColumns(NamedTuple):
    prompts: str  # what the user wrote
    replies: str  # what the agent (Claude, Codex, Gemini) wrote
    actions: str  # one line per tool call, commands, compaction summaries, subagent runs
    context: str  # branch names, titles, trusted summaries and the days the session ran, in words


def fulltext_columns(markdown: str) -> FulltextColumns:
    prompts: list[str] = []
    replies: list[str] = []
    actions: list[str] = []
    context: list[str] = []
    current: list[str] | None = None
    for line in markdown.splitlines():
        # Only the renderer's own headings switch columns: replies and prompts carry markdown headings
        # of their own ("## Summary"); a prefix test would send the rest of a reply elsewhere or drop it.
        # (All of the renderer's begin with "##": most lines are spared the regexes.)
        if line.startswith("##"):
            if event := _EVENT_RE.fullmatch(line):
                kind = event.group(1)
                current = prompts if kind == "User" else replies if kind in _AGENTS else actions
                if current is actions:
                    actions.append(line[4:])
                continue
            if day := _DAY_RE.fullmatch(line):
                current = None
                if words := _in_words(day.group(1)):
                    context.append(words)
                continue
            if line == "## Subagent runs":
                current = actions
                continue
        if current is None:
            if line.startswith(_CONTEXT_FACTS):
                # `alex/fix-gemini-rewind` -> words the tokenizer can match
                context.append(line.split(":", 1)[1].replace("/", " ").replace("-", " ").replace("_", " "))
            continue
        if current is replies and line.startswith("- ") and _TOOL_LINE_RE.match(line):
            actions.append(line)  # a tool line under Claude's turn
        else:
            current.append(line)
    return FulltextColumns(*("\n".join(part).strip() for part in (prompts, replies, actions, context)))


def _in_words(iso_day: str) -> str:
    """`2023-05-08` -> `8 May 2023`: people recall sessions by date ("what did we do in June 2023")
    and write it in words."""
    try:
        day = dt.date.fromisoformat(iso_day)
    except ValueError:
        return ""
    return f"{day.day} {MONTHS[day.month - 1]} {day.year}"
