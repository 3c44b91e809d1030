"""A pull request's review comment the session fixed after it pushed the branch, with no push of the fix and no reply
after it: the comment still waits on the PR (c010174c: cursor[bot]'s comment on PR #342, fixed and committed, never
pushed nor answered). A session that never pushed is left out: its edits are the uncommitted work the session facts
name (core/extract/facts.py), which the first blind readers do not count as open.
"""

from __future__ import annotations

import re

from eywa.core.extract import commands, marks
from eywa.core.extract.said_left import pr_number
from eywa.core.handoffs.fixed_words import REVIEW_REPLY_LEFT
from eywa.core.session import WRITE_TOOLS, Event

# `gh api repos/o/r/pulls/342/comments`, `gh pr view 192 --comments`: the session read the PR's review comments
_FETCHED_RE = re.compile(r"\bgh\s+api\s+\S*?pulls/(\d+)/comments(?!/\d+/replies)\b|"
                         r"\bgh\s+pr\s+view\b(?:(?!\bgh\s|--comments)[^|\n])*+--comments")  # each char read once
# a review bot's comment: its severity on the line under its title ("### Active sessions condense ...\n\n**Medium
# Severity**"), in a pasted comment or in the JSON a fetch printed ("\n" written out)
_SEVERITY_RE = re.compile(r"\b(?:low|medium|high|critical) severity\b", re.IGNORECASE)
_TITLE_CHARS = 120
# "last_body": "### Active sessions ...": a comment's body in the JSON a fetch printed
_JSON_KEY_RE = re.compile(r'^[{\[,\s]*"\w+":\s*"')
# `gh api .../comments/2809055306/replies`, `gh pr comment`, `gh pr review`, a thread resolved: the comment answered
_REPLIED_RE = re.compile(r"/replies\b|\bgh\s+pr\s+(?:comment|review)\b|\bresolveReviewThread\b")
_FILES = 3


def review_reply_left(events: list[Event]) -> list[str]:
    """"Review comment not answered: "<its title>" on PR #N, fixed in `a.go` after the last push; push the fix, then
    reply to or resolve it": the last review comment the session read (fetched, or pasted by the user) when the
    session's own push came before it, edits after it, and no push after the last edit nor reply after it."""
    read, number, title = -1, "", ""
    for index, event in enumerate(events):
        call = event.tool
        command = str(call.input.get("command", "")) if call is not None and call.name == "Bash" else ""
        fetched = _FETCHED_RE.search(command) if call is not None and not call.is_error else None
        pasted = event.kind == "user" and _SEVERITY_RE.search(event.text) is not None
        if fetched is not None or pasted:
            read, number = index, (fetched.group(1) or pr_number([command]) or "") if fetched is not None else ""
            title = _title(event.text if pasted else call.output if call is not None else "") or title
    if read < 0:
        return []
    edited = [(i, str(call.input.get("file_path", ""))) for i in range(read + 1, len(events))
              if (call := events[i].tool) is not None and call.name in WRITE_TOOLS and not call.is_error]
    # the session's own pushes only (a push the user pasted is left to the facts: ea0a65af's blind readers call its
    # later edits open, its first reader did not)
    if not edited or not any(commands.pushed(e.tool) for e in events[:read]) or \
            any(commands.pushed(e.tool) for e in events[edited[-1][0] + 1:]) or \
            any(_replied(e) for e in events[read + 1:]):
        return []
    number = number or pr_number(_said(e) for e in reversed(events[:read])) or ""
    files = list(dict.fromkeys(path.rsplit("/", 1)[-1] for _, path in edited))
    named = marks.counted([f"`{name}`" for name in files], _FILES)
    what = f'"{title}"' if title else "the review comment"
    on = f" on PR #{number}" if number else ""
    return [f"{REVIEW_REPLY_LEFT} {what}{on}, fixed in {named} after the last push; push the fix, then reply to or "
            "resolve it"]


def _title(text: str) -> str:
    """The title of the first review bot's comment in `text`: the last line with words before its severity."""
    severity = _SEVERITY_RE.search(text)
    before = text[max(0, severity.start() - _TITLE_CHARS * 2):severity.start()] if severity is not None else ""
    lines = [_JSON_KEY_RE.sub("", line.strip()).strip(" #*\t\"") for line in before.replace("\\n", "\n").splitlines()]
    title = next((line for line in reversed(lines) if line), "")
    return title if len(title) <= _TITLE_CHARS else ""


def _said(event: Event) -> str:
    """A prompt's words or a command run: where a PR's number is named."""
    call = event.tool
    return event.text if event.kind == "user" else str(call.input.get("command", "")) if call is not None else ""


def _replied(event: Event) -> bool:
    call = event.tool
    return call is not None and call.name == "Bash" and not call.is_error and bool(
        _REPLIED_RE.search(str(call.input.get("command", ""))))
