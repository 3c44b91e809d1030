"""What ingest writes for both shared trees and the agent fixtures, kept in a folder to compare before and after
a change that must not change it (a move, a rename):

    .venv/bin/python -m tests.output_snapshot /tmp/before      # on the old code
    .venv/bin/python -m tests.output_snapshot /tmp/after       # on the new code
    diff -r /tmp/before /tmp/after                             # empty: byte-identical

Each tree is ingested by `eywa ingest` in a process of its own, into a fresh data directory, with the
deterministic extractor and the clock at 2026-02-17 (the trees' last day); the snapshot keeps its
`handoffs/`, `archive/` and `eywa stats` (the data directory's path and the timings masked).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.conftest import AGENT_FIXTURES, AGENT_HOMES, CORPUS, ROOT

MORE_AGENT_FIXTURES = ROOT / "tests" / "fixtures" / "more-agents"  # Copilot CLI's and Qwen Code's

_VOLATILE = [(re.compile(r"^data directory .*$", re.MULTILINE), "data directory   -"),
             (re.compile(r" in [\d.]+s$", re.MULTILINE), " in -s"),
             (re.compile(r"\(\d+\.\d MB of transcripts\)"), "(- MB of transcripts)")]


def _env(work: Path, projects: Path, sources: list[dict[str, str]]) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items()
            if not k.startswith(("EYWA_", "ANTHROPIC_")) and k not in AGENT_HOMES}
    return {**keep, "HOME": str(work / "home"), "EYWA_DATA_DIR": str(work / "data"),
            "EYWA_PROJECTS_DIR": str(projects), "EYWA_NOW": "2026-02-17", "EYWA_LLM__BACKEND": "deterministic",
            "EYWA_SOURCES": json.dumps(sources), "EYWA_INGEST__SHOW_PROGRESS": "never"}


def _eywa(env: dict[str, str], *args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "eywa.cli.main", *args], env=env, cwd=ROOT, capture_output=True,
                          text=True, timeout=1800)
    if done.returncode != 0:
        raise RuntimeError(f"eywa {' '.join(args)} failed: {done.stderr[-2000:]}")
    return done.stdout


def snapshot(work: Path, projects: Path, sources: list[dict[str, str]], out: Path) -> None:
    env = _env(work, projects, sources)
    _eywa(env, "ingest")
    stats = _eywa(env, "stats")
    for pattern, replacement in _VOLATILE:
        stats = pattern.sub(replacement, stats)
    out.mkdir(parents=True)
    for name in ("handoffs", "archive"):
        if (work / "data" / name).is_dir():
            shutil.copytree(work / "data" / name, out / name)
    (out / "stats.txt").write_text(stats, encoding="utf-8")


def _agent_tree(work: Path, fixtures: Path) -> tuple[Path, list[dict[str, str]]]:
    """Committed agent transcripts laid out as each agent's folder, as tests/conftest.py's `copy_agent_fixtures`
    does (copied in its order, so that a Claude Code session is newer than the runs it started)."""
    projects = work / "projects"
    sources = []
    for folder in sorted(fixtures.iterdir()):
        if folder.name == "claude":
            continue
        home = work / f"{folder.name}-home"
        shutil.copytree(folder, home, copy_function=shutil.copy)
        sources.append({"kind": folder.name, "path": str(home)})
    shutil.copytree(fixtures / "claude", projects, copy_function=shutil.copy)
    return projects, sources


def main(out: Path) -> None:
    if out.exists():
        raise SystemExit(f"{out} exists: give a new folder")
    with tempfile.TemporaryDirectory(prefix="eywa-snapshot-") as scratch:
        for tree in ("entire", "claude-code-log"):
            snapshot(Path(scratch) / tree, CORPUS / tree / "projects", [], out / tree)
        for name, fixtures in (("agents", AGENT_FIXTURES), ("more-agents", MORE_AGENT_FIXTURES)):
            if fixtures.is_dir():
                projects, sources = _agent_tree(Path(scratch) / name, fixtures)
                snapshot(Path(scratch) / name, projects, sources, out / name)
    print(f"wrote {sum(1 for p in out.rglob('*') if p.is_file())} files under {out}")


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve())
