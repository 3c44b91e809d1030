"""The real corpus in ../shared/corpus (both trees), read in place."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from eywa.core.archive.renderer import Renderer
from eywa.core.sources.claude import read_meta, subagent_parent
from eywa.core.sources.claude.builder import build_session
from eywa.core.sources.discovery import group_sessions, scan_files
from eywa.core.sources.sessions import is_transcript

from .conftest import CORPUS, ROOT, identity

GOLDEN = Path(__file__).parent / "golden"
GOLDEN_SESSIONS = {
    "4f8c1176-7025-4530-a860-c6fc4c63a150": "compaction, 2.1.39",
    "ef958aa1-0e93-49f0-bb71-150f63befcd1": "2.1.x subagents folder with meta.json",
    "4379d1bf-ccb1-414e-a856-9791b73f3af2": "1.0.x with images",
}


def build_all():
    files = scan_files(CORPUS)
    groups = group_sessions(files, subagent_parent)
    sessions = {}
    for sid, group in sorted(groups.items()):
        subagents = [(f.path, f.role, read_meta(f)) for f in group.subagents]
        sessions[sid] = build_session(sid, [f.path for f in group.main], subagents, identity)
    return files, sessions


@pytest.fixture(scope="module")
def corpus():
    return build_all()


def test_every_file_of_both_trees_is_read_with_counts(corpus) -> None:
    files, sessions = corpus
    assert len(files) == 252
    assert {f.role for f in files} == {"main", "agent-file", "subagents-dir"}
    kept = {sid: s for sid, (s, _) in sessions.items() if is_transcript(s)}
    assert len(kept) == 183
    assert len(sessions) - len(kept) == 21  # empty files and orphans of nothing but Warmup stubs
    assert sum(1 for s in kept.values() if s.orphan) == 1
    assert sum(len(s.subagents) for s in kept.values()) == 13
    all_stats = [st for _, stats in sessions.values() for st in stats.values()]
    assert sum(st.bad_lines for st in all_stats) == 1
    assert sum(st.multi_record for st in all_stats) == 1
    assert sum(st.lines for st in all_stats) > 26000


def test_entire_tree_has_153_sessions(corpus) -> None:
    _, sessions = corpus
    entire = [s for s, _ in sessions.values() if s.source_files and "/entire/" in s.source_files[0]]
    assert len([s for s in entire if is_transcript(s)]) == 153


def test_rendering_matches_golden_files(corpus) -> None:
    _, sessions = corpus
    renderer = Renderer(ZoneInfo("UTC"))
    for sid in GOLDEN_SESSIONS:
        expected = (GOLDEN / f"{sid}.md").read_text(encoding="utf-8")
        assert renderer.render(sessions[sid][0]) == expected, sid


def test_rendering_twice_gives_identical_bytes(corpus) -> None:
    _, sessions = corpus
    session = sessions["ef958aa1-0e93-49f0-bb71-150f63befcd1"][0]
    assert Renderer(ZoneInfo("UTC")).render(session) == Renderer(ZoneInfo("UTC")).render(session)


def _render_in_process(tz: str) -> bytes:
    script = (
        "import sys; from zoneinfo import ZoneInfo; from tests.test_corpus import build_all, GOLDEN_SESSIONS;"
        "from eywa.core.archive.renderer import Renderer; _, s = build_all();"
        "sys.stdout.buffer.write(b''.join(Renderer(ZoneInfo('Europe/Paris')).render(s[k][0]).encode()"
        " for k in sorted(GOLDEN_SESSIONS)))"
    )
    env = {**os.environ, "TZ": tz}
    return subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, check=True,
                          capture_output=True).stdout


@pytest.mark.slow  # both trees ingested twice, in processes of their own
def test_machine_time_zone_does_not_change_the_bytes() -> None:
    assert _render_in_process("UTC") == _render_in_process("Asia/Tokyo") == _render_in_process("America/Los_Angeles")


def test_configured_display_zone_moves_the_clock(corpus) -> None:
    _, sessions = corpus
    session = sessions["4f8c1176-7025-4530-a860-c6fc4c63a150"][0]
    utc = Renderer(ZoneInfo("UTC")).render(session)
    sydney = Renderer(ZoneInfo("Australia/Sydney")).render(session)
    assert "2026-02-12 04:15 UTC" in utc and "2026-02-12 15:15 Australia/Sydney" in sydney


def test_rendered_markdown_has_tool_lines_and_no_thinking(corpus) -> None:
    _, sessions = corpus
    text = Renderer(ZoneInfo("UTC")).render(sessions["4f8c1176-7025-4530-a860-c6fc4c63a150"][0])
    assert "Context compacted (auto, 167,361 tokens before)" in text
    assert "\n- Edit `" in text or "\n- Read `" in text
    assert "\"thinking\"" not in text and "EpAx" not in text
