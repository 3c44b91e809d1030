"""The Continue prompt: a ready-to-paste prompt that opens a new Claude Code session on a handoff. The bot
shows it (Continue, inline mode), and it is what a session started by Start or `eywa continue` is given."""

from __future__ import annotations

from collections.abc import Callable

from eywa.core.handoffs.model import parse_sections
from eywa.core.retrieval.recall import HandoffRecord

_SECTIONS = (  # what is left to do first: it is what the new session is for
    ("Open threads", "open_threads", "None recorded."),
    ("What happened", "what_happened", None),
    ("Key files", "key_files", None),
    ("Insights", "insights", None),
)


def _plain_inline(text: str) -> str:
    return text.replace("**", "")


def continue_prompt(record: HandoffRecord, fits: Callable[[str], bool] = lambda _text: True) -> str:
    """The prompt, with as many items a section as `fits` accepts (50, 10, 5, 3, 1, none); the shortest
    form when none fits (the caller cuts it)."""
    sections = parse_sections(record.body)
    projects = ", ".join(record.projects) or "no project"

    def build(limit: int) -> str:
        lines = [f"Continue from my earlier Claude Code session {record.session_id} "
                 f"({record.date.isoformat()}, {projects}): {record.headline}"]
        for title, key, empty in _SECTIONS:
            items = sections[key][:limit]
            if items:
                lines += ["", f"{title}:"] + [f"- {_plain_inline(item)}" for item in items]
            elif empty:
                lines += ["", f"{title}: {empty}"]
        lines += ["", f"Session id: {record.session_id}", f"Handoff file: {record.path}", "",
                  "First check the open threads against the code as it is now, then carry on with them."]
        return "\n".join(lines)

    for limit in (50, 10, 5, 3, 1):
        text = build(limit)
        if fits(text):
            return text
    return build(0)
