"""The agents whose transcripts Eywa reads, and where each keeps them by default.

A source is one folder of one agent's transcripts: (kind, path, enabled). The settings hold a list of them
(core/config/settings.py, and core/config/light.py for the hooks), the three defaults on; a list may add more
folders of any kind (another machine's copies, say). Kept free of pydantic: the hooks import it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

CLAUDE_CODE = "claude-code"
CODEX = "codex"
GEMINI = "gemini"
KINDS = (CLAUDE_CODE, CODEX, GEMINI)
# What each agent is called where a person reads it (renders, the bot).
AGENT_NAMES = {CLAUDE_CODE: "Claude", CODEX: "Codex", GEMINI: "Gemini"}


class Source(NamedTuple):
    kind: str  # one of KINDS
    path: Path
    enabled: bool = True
    machine: str = ""  # the machine whose transcripts these are: this one's, or a spoke's (core/machines/spokes.py)


def default_path(kind: str, projects_dir: Path) -> Path:
    """The folder an agent writes by default: Claude Code's is `projects_dir`; Codex's `$CODEX_HOME` (else
    ~/.codex), Gemini CLI's `$GEMINI_CLI_HOME/.gemini` (else ~/.gemini), as the CLIs themselves resolve them."""
    if kind == CLAUDE_CODE:
        return projects_dir
    if kind == CODEX:
        home = os.environ.get("CODEX_HOME", "").strip()
        return Path(home).expanduser() if home else Path("~/.codex").expanduser()
    if kind == GEMINI:
        home = os.environ.get("GEMINI_CLI_HOME", "").strip()
        return (Path(home).expanduser() if home else Path.home()) / ".gemini"
    raise ValueError(f"unknown source kind {kind!r}: use one of {', '.join(KINDS)}")


def resolve_sources(listed: list[tuple[str, Path | None, bool]], projects_dir: Path) -> tuple[Source, ...]:
    """The configured list with each missing path filled in, and every default kind the list does not
    name appended, on: `[{kind: codex, enabled: false}]` turns Codex off and keeps the other two."""
    named = {kind for kind, _, _ in listed}
    resolved = [Source(kind, path.expanduser() if path is not None else default_path(kind, projects_dir), enabled)
                for kind, path, enabled in listed]
    resolved += [Source(kind, default_path(kind, projects_dir)) for kind in KINDS if kind not in named]
    return tuple(resolved)
