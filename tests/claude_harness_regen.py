"""Regenerate the harness transcripts with the pinned Claude Code and show what Eywa makes of them.

    .venv/bin/python -m tests.claude_harness_regen [--render-only] [SCENARIO ...]

Runs each scenario of tests/claude_scenarios.py with the real CLI (tests/agent_clis pins the version)
against the scripted model, in a throwaway HOME in a fresh temporary folder whose path the transcripts then
name as /tmp/eywa-harness (tests/tools.py `map_paths`: paths stay the same from one run to the next, and two
runs never share a folder), and writes:
- tests/fixtures/claude-code-<version>/<scenario>/: what the CLI wrote under ~/.claude/projects, with the
  long strings and lists of its request bookkeeping records (api-request-blob, api-request-shape, api-request,
  attachment) cut to a note of their length: the records stay, as written, only lighter;
- tests/golden/claude-code-<version>/<scenario>.md and .handoff.md: Eywa's render and deterministic handoff.
It prints the diff of each render and handoff against the newest other version's (or this version's
previous files), and the records and fields the reader did not know. Upgrading the pin: change
tests/agent_clis/package.json and its lock, run this, read the diff, fix the reader, run it again.
`--render-only` runs no CLI: it remakes the golden files from the committed transcripts (after a change to
the renderer or the extractor).
"""

from __future__ import annotations

import difflib
import json
import shutil
import sys
from pathlib import Path
from zoneinfo import ZoneInfo

from eywa.core.archive.renderer import Renderer
from eywa.core.extract.deterministic import draft
from eywa.core.session import Session
from eywa.core.sources.claude import read_meta, subagent_parent
from eywa.core.sources.claude.builder import build_session
from eywa.core.sources.discovery import group_sessions, scan_files
from eywa.core.sources.jsonl import ReadStats
from eywa.core.sources.sessions import is_transcript
from tests.claude_harness import CLI_VERSION, ClaudeCode, ScriptedModel
from tests.claude_scenarios import SCENARIOS
from tests.tools import map_paths, stand_in

TESTS = Path(__file__).resolve().parent
FIXTURES = TESTS / "fixtures" / f"claude-code-{CLI_VERSION}"
GOLDEN = TESTS / "golden" / f"claude-code-{CLI_VERSION}"
COMMITTED_ROOT = Path("/tmp/eywa-harness")  # the folder the committed transcripts name (never written to)
BULK_TYPES = {"api-request-blob", "api-request-shape", "api-request", "attachment"}
KEEP_CHARS = 600


def lighter(value: object) -> object:
    """A bookkeeping record with each string over KEEP_CHARS, and each list over four times that, replaced by
    a note of its length."""
    if isinstance(value, str) and len(value) > KEEP_CHARS:
        return f"[{len(value)} characters left out by tests/claude_harness_regen.py]"
    if isinstance(value, dict):
        return {key: lighter(item) for key, item in value.items()}
    if isinstance(value, list):
        size = len(json.dumps(value))
        return [lighter(item) for item in value] if size <= 4 * KEEP_CHARS else \
            f"[a list of {len(value)} items, {size} characters, left out by tests/claude_harness_regen.py]"
    return value


def copy_transcripts(projects: Path, target: Path) -> None:
    shutil.rmtree(target, ignore_errors=True)
    for source in sorted(projects.rglob("*")):
        if not source.is_file() or "memory" in source.relative_to(projects).parts:
            continue
        destination = target / source.relative_to(projects)
        destination.parent.mkdir(parents=True, exist_ok=True)
        if source.suffix != ".jsonl":
            shutil.copy2(source, destination)
            continue
        lines = []
        for line in source.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            lines.append(json.dumps(lighter(record) if record.get("type") in BULK_TYPES else record,
                                    ensure_ascii=False, separators=(",", ":")))
        destination.write_text("\n".join(lines) + "\n", encoding="utf-8")


def sessions_of(folder: Path) -> list[tuple[Session, dict[str, ReadStats]]]:
    """The sessions of one scenario's projects folder, as ingest builds them (nothing redacted: our own text)."""
    groups = group_sessions(scan_files(folder), subagent_parent)
    built = []
    for sid, group in sorted(groups.items()):
        subagents = [(f.path, f.role, read_meta(f)) for f in group.subagents]
        session, stats = build_session(sid, [f.path for f in group.main], subagents, lambda text: text)
        if is_transcript(session):
            built.append((session, stats))
    return built


def eywa_view(folder: Path) -> tuple[str, str]:
    """(render, handoff) of a scenario's session, as the golden files hold them."""
    sessions = sessions_of(folder)
    if len(sessions) != 1:
        raise ValueError(f"{folder}: {len(sessions)} sessions, one expected")
    session = sessions[0][0]
    return Renderer(ZoneInfo("UTC")).render(session), draft(session, ZoneInfo("UTC")).to_markdown()


def _previous_golden() -> Path:
    others = sorted(p for p in GOLDEN.parent.glob("claude-code-*") if p.is_dir() and p != GOLDEN)
    return others[-1] if others else GOLDEN


def _diff(old: Path, new_text: str, label: str) -> str:
    old_text = old.read_text(encoding="utf-8") if old.exists() else ""
    return "".join(difflib.unified_diff(old_text.splitlines(True), new_text.splitlines(True), str(old), label))


def run_scenario(name: str, root: Path, target: Path) -> list[str]:
    """Run scenario `name` with the real CLI in a fresh HOME under `root` and copy what it wrote into
    `target` (made lighter); the prompts the script did not know."""
    model = ScriptedModel()
    try:
        claude = ClaudeCode(root, model)
        SCENARIOS[name](claude, model)
    finally:
        model.close()
    copy_transcripts(claude.projects_dir, target)
    return model.unscripted


def _run_committed(name: str) -> list[str]:
    """`run_scenario` into the committed fixtures, their paths naming COMMITTED_ROOT."""
    with stand_in(COMMITTED_ROOT) as root:
        unscripted = run_scenario(name, root / name, FIXTURES / name)
        map_paths(FIXTURES / name, root, COMMITTED_ROOT)
    return unscripted


def regenerate(names: list[str], *, render_only: bool = False) -> None:
    previous = GOLDEN if render_only else _previous_golden()
    GOLDEN.mkdir(parents=True, exist_ok=True)
    for name in names:
        unscripted = [] if render_only else _run_committed(name)
        if unscripted:
            print(f"{name}: unscripted prompts answered 'Done.': {[p[:80] for p in unscripted]}")
        render, handoff = eywa_view(FIXTURES / name)
        for suffix, text in ((".md", render), (".handoff.md", handoff)):
            print(_diff(previous / f"{name}{suffix}", text, f"{GOLDEN.name}/{name}{suffix}"), end="")
            (GOLDEN / f"{name}{suffix}").write_text(text, encoding="utf-8")
    unknown: dict[str, int] = {}
    for folder in sorted(p for p in FIXTURES.iterdir() if p.is_dir()):
        for _, stats in sessions_of(folder):
            for file_stats in stats.values():
                for key, count in file_stats.unknown_types.items():
                    unknown[key] = unknown.get(key, 0) + count
    print(f"records the reader does not know, all harness transcripts of {CLI_VERSION}: "
          + (", ".join(f"{k} {v}" for k, v in sorted(unknown.items())) or "none"))


if __name__ == "__main__":
    render_only = "--render-only" in sys.argv[1:]
    chosen = [arg for arg in sys.argv[1:] if arg != "--render-only"] or list(SCENARIOS)
    missing = [name for name in chosen if name not in SCENARIOS]
    if missing:
        sys.exit(f"unknown scenario(s) {', '.join(missing)}; known: {', '.join(SCENARIOS)}")
    regenerate(chosen, render_only=render_only)
