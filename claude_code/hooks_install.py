"""`eywa hooks install | uninstall`: merge Eywa's two hooks into Claude Code's settings file.

Everything else in the file is kept as it was (other tools' hooks, permissions, ...); the old file is
backed up beside itself before any write; running install twice changes nothing the second time. A file
that is not valid JSON, or whose `hooks` is not shaped the way Claude Code reads it, is refused untouched.
"""

from __future__ import annotations

import copy
import difflib
import json
import os
import re
import shlex
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

from eywa.core.config.clock import now
from eywa.core.errors import EywaError

DEFAULT_SETTINGS = Path("~/.claude/settings.json")
HOOK_TIMEOUT_SECONDS = 10  # ours take milliseconds; this only caps a wedged disk
# event -> (our subcommand, matcher). Not on "resume": the resumed session already holds its context.
EVENTS: dict[str, tuple[str, str | None]] = {
    "SessionStart": ("session-start", "startup|clear|compact"),
    "SessionEnd": ("session-end", None),
}
_OURS_RE = re.compile(r"(?:\beywa\b|core\.cli).*\bhook\s+session-(?:start|end)\b")


class InstallError(EywaError):
    """The settings file cannot be changed safely; the message says why and what to do."""


def eywa_command() -> list[str]:
    """How to start this very eywa from anywhere: the script beside this interpreter, else on PATH."""
    script = Path(sys.executable).parent / "eywa"
    if script.is_file():
        return [str(script.absolute())]
    found = shutil.which("eywa")
    if found:
        return [str(Path(found).absolute())]
    return [str(Path(sys.executable).absolute()), "-m", "eywa.cli.main"]


def _base(config_path: Path | None) -> list[str]:
    config = ["--config", str(Path(config_path).expanduser().absolute())] if config_path else []
    return [*eywa_command(), *config]


def hook_command(subcommand: str, config_path: Path | None = None) -> str:
    return shlex.join([*_base(config_path), "hook", subcommand])


def mcp_add_line(config_path: Path | None = None) -> str:
    return "claude mcp add --scope user eywa -- " + shlex.join([*_base(config_path), "mcp"])


def is_ours(hook: object) -> bool:
    return isinstance(hook, dict) and isinstance(hook.get("command"), str) and bool(_OURS_RE.search(hook["command"]))


def _desired(config_path: Path | None) -> dict[str, dict]:
    groups = {}
    for event, (subcommand, matcher) in EVENTS.items():
        group: dict[str, object] = {"matcher": matcher} if matcher else {}
        group["hooks"] = [{"type": "command", "command": hook_command(subcommand, config_path),
                           "timeout": HOOK_TIMEOUT_SECONDS}]
        groups[event] = group
    return groups


def _load(path: Path) -> tuple[str | None, dict]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, {}
    except (OSError, UnicodeDecodeError) as exc:
        raise InstallError(f"cannot read {path}: {exc}") from None
    if not text.strip():
        return text, {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InstallError(
            f"{path} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
            f"fix it first (Claude Code cannot read it either), nothing was changed"
        ) from None
    if not isinstance(data, dict):
        raise InstallError(f"{path} holds a JSON {type(data).__name__}, not an object; nothing was changed")
    hooks = data.get("hooks", {})
    if not isinstance(hooks, dict):
        raise InstallError(f"'hooks' in {path} is not an object; nothing was changed")
    for event in EVENTS:
        if not isinstance(hooks.get(event, []), list):
            raise InstallError(f"'hooks.{event}' in {path} is not a list; nothing was changed")
    return text, data


def _groups_with_ours(data: dict, event: str) -> list[dict]:
    return [g for g in data.get("hooks", {}).get(event, [])
            if isinstance(g, dict) and isinstance(g.get("hooks"), list) and any(is_ours(h) for h in g["hooks"])]


def without_eywa(data: dict) -> dict:
    """A copy of the settings with every Eywa hook removed, and the containers that held only them."""
    result = copy.deepcopy(data)
    hooks = result.get("hooks")
    if not isinstance(hooks, dict):
        return result
    for event in EVENTS:
        groups = hooks.get(event)
        if not isinstance(groups, list):
            continue
        kept = []
        for group in groups:
            if isinstance(group, dict) and isinstance(group.get("hooks"), list) and any(map(is_ours, group["hooks"])):
                group["hooks"] = [h for h in group["hooks"] if not is_ours(h)]
                if not group["hooks"]:
                    continue
            kept.append(group)
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]
    if not hooks and "hooks" in data and data["hooks"] != {}:
        del result["hooks"]
    return result


def with_eywa(data: dict, config_path: Path | None = None) -> dict:
    """The settings with exactly one group of Eywa's per event, appended after the other tools' hooks."""
    desired = _desired(config_path)
    if all(_groups_with_ours(data, e) == [g] for e, g in desired.items()):
        return copy.deepcopy(data)  # already installed as wanted: keep the order as it is
    result = without_eywa(data)
    hooks = result.setdefault("hooks", {})
    for event, group in desired.items():
        hooks.setdefault(event, []).append(group)
    return result


def _dump(data: dict) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _write(path: Path, text: str, old_text: str | None) -> Path | None:
    """Back up the old file (if any), then replace it atomically; the backup's path."""
    backup = None
    path.parent.mkdir(parents=True, exist_ok=True)
    if old_text is not None:
        stamp = now().astimezone().strftime("%Y%m%d-%H%M%S")
        backup = path.with_name(f"{path.name}.eywa-backup-{stamp}")
        number = 1
        while backup.exists():  # never overwrite an earlier backup (two changes in one second)
            backup = path.with_name(f"{path.name}.eywa-backup-{stamp}-{number}")
            number += 1
        shutil.copy2(path, backup)
    temp = path.with_name(f".{path.name}.eywa-{os.getpid()}.tmp")
    temp.write_text(text, encoding="utf-8")
    if old_text is not None:
        shutil.copymode(path, temp)
    os.replace(temp, path)
    return backup


def change(action: str, settings_path: Path | None = None, *, config_path: Path | None = None,
           dry_run: bool = False, say: Callable[[str], None] = print) -> int:
    """Install or uninstall; prints what it did (or, with dry_run, the diff it would apply)."""
    path = (settings_path or DEFAULT_SETTINGS).expanduser()
    old_text, data = _load(path)
    new = with_eywa(data, config_path) if action == "install" else without_eywa(data)
    changed = new != data or (old_text is None and action == "install")
    new_text = _dump(new)
    if dry_run:
        if changed:
            diff = difflib.unified_diff((old_text or "").splitlines(keepends=True), new_text.splitlines(keepends=True),
                                        fromfile=str(path), tofile=f"{path} (after eywa hooks {action})")
            say("".join(diff).rstrip("\n"))
        else:
            say(f"no change: {path} already {'has' if action == 'install' else 'lacks'} Eywa's hooks")
    elif not changed:
        say(f"no change: {path} already {'has' if action == 'install' else 'lacks'} Eywa's hooks")
    else:
        backup = _write(path, new_text, old_text)
        done = "installed Eywa's SessionStart and SessionEnd hooks in" if action == "install" else \
            "removed Eywa's hooks from"
        say(f"{done} {path}" + (f" (backup: {backup})" if backup else " (new file)"))
    if action == "install":
        say("For the MCP server (eywa_get, eywa_extract) in every project, run:\n  " + mcp_add_line(config_path))
    else:
        say("To remove the MCP server too: claude mcp remove --scope user eywa")
    return 0
