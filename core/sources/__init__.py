"""The agents whose transcripts Eywa reads: one plug-in module each under core/sources/, registered in `AGENTS`.

An entry names the agent (its kind, as settings and front matter say it), what a person calls it, its module
(which exposes `AGENT`, an `AgentSource`: core/sources/plugin.py) and where it writes by default. The
folders are here, not in the module, because the hooks and `eywa get` resolve the settings' `sources` list
without loading any reader (this package stays free of pydantic, orjson and the readers).

A source is one folder of one agent's transcripts: (kind, path, enabled). The settings hold a list of them
(core/config/settings.py, and core/config/light.py for the hooks); every registered agent not in the list is
read from its default folder; a list may add more folders of any kind (another machine's copies, say).
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from eywa.core.sources.plugin import AgentSource


class Home(NamedTuple):
    """An agent's folder: the first of `env` that is set, else `fallback`; then `sub` under it. No env and no
    fallback: Claude Code's, the `projects_dir` setting."""

    env: tuple[str, ...] = ()
    fallback: str = ""
    sub: str = ""


class Registered(NamedTuple):
    kind: str  # as the settings, the front matter and `--agent` name it
    name: str  # as a person reads it (renders, the bot)
    module: str  # under eywa.core.sources, exposing AGENT
    home: Home


CLAUDE_CODE = "claude-code"
CODEX = "codex"
GEMINI = "gemini"
# The one list of agents: adding one is its module and a line here.
AGENTS: tuple[Registered, ...] = (
    Registered(CLAUDE_CODE, "Claude", "claude", Home()),
    Registered(CODEX, "Codex", "codex", Home(("CODEX_HOME",), "~/.codex")),
    Registered(GEMINI, "Gemini", "gemini", Home(("GEMINI_CLI_HOME",), "~", ".gemini")),
    Registered("copilot", "Copilot", "copilot", Home(("COPILOT_HOME",), "~/.copilot")),
    Registered("qwen", "Qwen", "qwen", Home(("QWEN_RUNTIME_DIR", "QWEN_HOME"), "~/.qwen")),
)
KINDS = tuple(entry.kind for entry in AGENTS)
# What each agent is called where a person reads it (renders, the bot).
AGENT_NAMES = {entry.kind: entry.name for entry in AGENTS}
_BY_KIND = {entry.kind: entry for entry in AGENTS}


class Source(NamedTuple):
    kind: str  # one of KINDS
    path: Path
    enabled: bool = True
    machine: str = ""  # the machine whose transcripts these are: this one's, or a spoke's (core/machines/spokes.py)


def _entry(kind: str) -> Registered:
    try:
        return _BY_KIND[kind]
    except KeyError:
        raise ValueError(f"unknown source kind {kind!r}: use one of {', '.join(KINDS)}") from None


def default_path(kind: str, projects_dir: Path) -> Path:
    """The folder an agent writes by default, as the CLI itself resolves it (Claude Code's is `projects_dir`)."""
    home = _entry(kind).home
    if not home.env and not home.fallback:
        return projects_dir
    base = next((value for name in home.env if (value := os.environ.get(name, "").strip())), home.fallback)
    return Path(base).expanduser() / home.sub


def agent(kind: str) -> AgentSource:
    """The plug-in of an agent (its module loaded on first use)."""
    return importlib.import_module(f"eywa.core.sources.{_entry(kind).module}").AGENT


def resolve_sources(listed: list[tuple[str, Path | None, bool]], projects_dir: Path) -> tuple[Source, ...]:
    """The configured list with each missing path filled in, and every agent the list does not name
    appended, on: `[{kind: codex, enabled: false}]` turns Codex off and keeps the others."""
    named = {kind for kind, _, _ in listed}
    resolved = [Source(kind, path.expanduser() if path is not None else default_path(kind, projects_dir), enabled)
                for kind, path, enabled in listed]
    resolved += [Source(kind, default_path(kind, projects_dir)) for kind in KINDS if kind not in named]
    return tuple(resolved)
