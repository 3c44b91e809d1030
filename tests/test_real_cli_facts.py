"""The handoff a user reads of real Codex CLI and Gemini CLI sessions, one per session fact (tests/fact_transcripts.py,
committed under tests/fixtures/agents-facts/): its open threads, its status and its What Happened say what the
session left, from the tool calls each CLI really wrote."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from eywa.core.extract.deterministic import draft
from eywa.core.handoffs.model import Handoff
from eywa.core.sources.codex import build_codex_session
from eywa.core.sources.gemini import build_gemini_session

from . import fact_transcripts
from .fact_transcripts import FIXTURES, SCENARIOS, cases, fixture_session


@dataclass(frozen=True)
class Expected:
    threads: tuple[str, ...]  # the open threads, all of them, in order
    status: str
    happened: tuple[str, ...] = ()  # lines What Happened holds


EXPECTED = {
    "uncommitted": Expected(("Uncommitted: `widget.py` edited after the last commit",
                             "Not pushed: commit 7cdb0ec on main"), "partial", ("Committed: Add widget",)),
    "unpushed": Expected(("Not pushed: commit 0d6292c on main after the last push",), "done",
                         ("Committed: Add widget", "Committed: Document widget")),
    "ahead": Expected(("Not pushed: branch ahead of 'origin/main' by 2 commits",), "done"),
    "not-staged": Expected(("Uncommitted changes on main (its `git status`): `widget.py`",), "done"),
    "tests-fixed": Expected((), "done", ("Tests: `python3 -m pytest` failed (1), then passed",)),
    "lint-failing": Expected(("Lint failing: `ruff check .` last run failed (1 failure)",), "partial",
                             ("Lint: `ruff check .` failed (1)",)),
    "todos-left": Expected(("To do: Write a test for widget()", "To do: Document widget in the README"), "partial"),
    "offer-pr": Expected(("Offered: open a PR with `gh pr create`",), "partial", ("Committed: Add widget",)),
    "remaining-list": Expected(("Next: Add a test for widget()", "Next: Document widget in the README",
                                "Next: Wire widget into the CLI"), "partial"),
    "todo-line": Expected(("Next: handle negative sizes in widget()",), "partial"),
}


def _handoff(name: str, agent: str, root: Path = FIXTURES) -> Handoff:
    build = build_codex_session if agent == "codex" else build_gemini_session
    session = build("s", [fixture_session(name, agent, root)], str)[0]
    return draft(session, ZoneInfo("UTC"))


def _assert_reads(handoff: Handoff, expected: Expected) -> None:
    assert (tuple(handoff.open_threads), handoff.status) == (expected.threads, expected.status)
    assert [line for line in expected.happened if line not in handoff.what_happened] == [], handoff.what_happened
    rendered = handoff.to_markdown()  # what the user reads
    assert f"\nstatus: {expected.status}\n" in rendered
    assert all(f"\n- {line}\n" in rendered for line in (*expected.threads, *expected.happened))


@pytest.mark.parametrize(("name", "agent"), cases())
def test_the_handoff_of_a_real_cli_session_says_what_it_left(name: str, agent: str) -> None:
    _assert_reads(_handoff(name, agent), EXPECTED[name])


def test_every_scenario_has_its_expected_handoff() -> None:
    assert set(EXPECTED) == set(SCENARIOS)


@pytest.mark.slow  # the real Codex and Gemini CLIs, every scenario (~30 s)
def test_the_pinned_clis_still_write_sessions_whose_handoffs_say_the_same(tmp_path: Path) -> None:
    fact_transcripts.generate(out=tmp_path)
    for name, agent in cases():
        _assert_reads(_handoff(name, agent, tmp_path), EXPECTED[name])
