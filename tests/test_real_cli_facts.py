"""The handoff a user reads of real Codex CLI, Gemini CLI and Claude Code sessions (and Copilot CLI's and Qwen Code's
for the repository and check facts), one per session fact (tests/fact_transcripts.py, committed under
tests/fixtures/agents-facts/): its open threads, its status and its What Happened say what the session left, from
the tool calls each CLI really wrote."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from eywa.core.extract import commands
from eywa.core.extract.deterministic import draft
from eywa.core.extract.facts import session_facts
from eywa.core.handoffs.model import Handoff
from eywa.core.session import Event, Session, ToolCall
from eywa.core.sources.codex import build_codex_session
from eywa.core.sources.gemini import build_gemini_session

from . import fact_transcripts
from .fact_transcripts import FIXTURES, SCENARIOS, cases, fixture_session


@dataclass(frozen=True)
class Expected:
    threads: tuple[str, ...]  # the open threads, all of them, in order
    status: str
    happened: tuple[str, ...] = ()  # lines What Happened holds


_HASH_RE = re.compile(r"\bcommit [0-9a-f]{7}\b")
_COMMITTED_HASH_RE = re.compile(r"(?<=^Committed `)[0-9a-f]{7}(?=`)")  # What Happened's commit line
EXPECTED = {
    "uncommitted": Expected(("Uncommitted: `widget.py` edited after the last commit",
                             "Not pushed: commit 7cdb0ec on main"), "partial",
                            ("Committed `7cdb0ec` on `main`: Add widget",)),
    "untracked": Expected(("Uncommitted: `widget.py` edited after the last commit; new, never added: `helpers.py`",
                           "Not pushed: commit a3be100 on main"), "partial"),
    "nested-repo": Expected(("Not pushed: commit 74ea25d on main in `vendor/lib`",), "done",
                            ("Committed `74ea25d` on `main`: Add lib",)),
    "unpushed": Expected(("Not pushed: commit 0d6292c on main after the last push",), "done",
                         ("Committed `1c1327b` on `main`, pushed: Add widget", "Committed `0d6292c`: Document widget")),
    "ahead": Expected(("Not pushed: branch ahead of 'origin/main' by 2 commits",), "done"),
    "not-staged": Expected(("Left uncommitted on main, unstaged changes: `widget.py`",), "done"),
    "tests-fixed": Expected((), "done", ("Tests: `test_widget_doubles` failed on the way, then passed",
                                         "Checks: `python3 -m pytest` passed after the last edit")),
    "shell-wrapped": Expected(("Tests failing: `python3 -m pytest` last run failed (1 failure): `test_widget_doubles`",
                               "Not pushed: commit f4297dc on main"), "partial",
                              ("Committed `f4297dc` on `main`: Add widget",
                               "Tests: `python3 -m pytest` failed: `test_widget_doubles`")),
    "long-tests": Expected(("Tests failing: `python3 -m pytest` last run failed (1 failure): `test_widget_doubles`",),
                           "partial",
                           ("Tests: `python3 -m pytest` failed: `test_widget_doubles`",)),
    "lint-failing": Expected(("Lint failing: `ruff check .` last run failed (1 failure)",), "partial",
                             ("Lint: `ruff check .` failed (1)",)),
    "npm-tests-failing": Expected(("Tests failing: `npm test` last run failed (1 failure)",), "partial",
                                  ("Tests: `npm test` failed (1)",)),
    # a test file run by its interpreter, and Node's own runner: before, a failed command of no check, `done`
    "script-tests-failing": Expected(("Tests failing: `python3 test_widget.py` last run failed (1 failure): "
                                      "`test_widget_doubles`",),
                                     "partial", ("Tests: `python3 test_widget.py` failed: `test_widget_doubles`",)),
    "node-test-failing": Expected(("Tests failing: `node --test` last run failed (1 failure)",), "partial",
                                  ("Tests: `node --test` failed (1)",)),
    "types-fixed": Expected((), "done", ("Checks: `mypy widget.py` passed after the last edit",)),
    "build-failing": Expected(("Build failing: `make` last run failed",), "partial", ("Build: `make` failed",)),
    "pr-opened": Expected((), "done", ("Committed `1c1327b` on `add-widget`: Add widget", "Opened PR: Add widget")),
    "todos-left": Expected(("To do: Write a test for widget()", "To do: Document widget in the README"), "partial"),
    "plan-left": Expected(("Plan not carried out: `test_widget.py` not edited, though the plan lists it to change",),
                          "partial"),
    # a further step offered, as a question or not, is a note: the work it follows is done
    "offer-pr": Expected(("Agent offered, no answer: open a PR with `gh pr create`",), "done",
                         ("Committed `1c1327b` on `add-widget`, pushed: Add widget",)),
    "remaining-list": Expected(("Next: Add a test for widget()", "Next: Document widget in the README",
                                "Next: Wire widget into the CLI"), "partial"),
    # "Next steps" name what may follow (core/extract/open_threads.py): one thread each, the session done
    "next-steps": Expected(("Later: Add a test for widget()", "Later: Handle negative sizes"), "done"),
    "pr-drafted": Expected(("PR not opened: its description was written to `pr-description.md`",), "done",
                           ("Committed `1c1327b` on `add-widget`, pushed: Add widget",)),
    "todo-line": Expected(("Next: handle negative sizes in widget()",), "partial"),
    "next-line": Expected(("Next: add backoff(attempt) to the retry loop.",), "partial"),
    "tests-not-run": Expected(("Not run: tests (no test runner in this sandbox)",), "partial"),
}


def _handoff(name: str, agent: str, root: Path = FIXTURES) -> Handoff:
    if agent == "claude":
        from .claude_harness_regen import sessions_of

        (session, _), = sessions_of(root / name / "claude")
    elif agent in ("copilot", "qwen"):
        from .more_agent_transcripts import read

        session = read(fixture_session(name, agent, root))
    else:
        build = build_codex_session if agent == "codex" else build_gemini_session
        session = build("s", [fixture_session(name, agent, root)], str)[0]
    return draft(session, ZoneInfo("UTC"))


def _assert_reads(handoff: Handoff, expected: Expected) -> None:
    if handoff.agent == "qwen":  # Qwen Code adds a Co-authored-by trailer to each commit: the hashes are its own
        handoff.open_threads = [_HASH_RE.sub("commit <hash>", t) for t in handoff.open_threads]
        handoff.what_happened = [_COMMITTED_HASH_RE.sub("<hash>", line) for line in handoff.what_happened]
        expected = replace(expected, threads=tuple(_HASH_RE.sub("commit <hash>", t) for t in expected.threads),
                           happened=tuple(_COMMITTED_HASH_RE.sub("<hash>", line) for line in expected.happened))
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


# The scenarios whose tool forms differ most by agent (every agent's writes, shell wrappers, a polled long run, a
# command's own folder, plan mode, npm): the rest are regenerated by `python -m tests.fact_transcripts`, to keep
# the suite's wall time (~12 s a scenario) within its bound.
DRIFT_CHECKED = ("untracked", "shell-wrapped", "long-tests", "nested-repo", "plan-left", "npm-tests-failing")


def test_the_drift_checked_scenarios_are_scenarios() -> None:
    assert set(DRIFT_CHECKED) <= set(SCENARIOS)


REGENERATIONS = 3  # of a scenario whose Qwen Code session lost a command's output (seen in 4 of 94 runs under load)


def _output_lost(name: str, agent: str, root: Path) -> bool:
    """Under load Qwen Code's shell tool now and then records a command that printed (`git status`, `git commit`) as
    "Output: (empty)", every model request in order: its session then cannot say what the command showed."""
    return agent == "qwen" and "Output: (empty)" in fixture_session(name, agent, root).read_text(encoding="utf-8")


@pytest.mark.slow  # the real CLIs (~10 s a scenario)
@pytest.mark.parametrize("name", DRIFT_CHECKED)
def test_the_pinned_clis_still_write_sessions_whose_handoffs_say_the_same(name: str, tmp_path: Path) -> None:
    fact_transcripts.generate([name], out=tmp_path / "0")
    for agent in SCENARIOS[name].agents:
        root = tmp_path / "0"
        for again in range(1, REGENERATIONS + 1):  # a drift fails at once; only Qwen Code's lost output is rerun
            if not _output_lost(name, agent, root):
                break
            root = tmp_path / str(again)
            fact_transcripts.generate([name], out=root)
        _assert_reads(_handoff(name, agent, root), EXPECTED[name])


# -- the command forms of each agent ---------------------------------------------------------------------------
@pytest.mark.parametrize("wrapped", ["bash -lc 'python3 -m pytest -q'", 'sh -c "python3 -m pytest -q"',
                                     "/bin/zsh -lc 'python3 -m pytest -q'"])
def test_a_check_handed_to_a_shell_whole_is_the_check(wrapped: str) -> None:
    assert [(c.kind, c.command, c.last) for c in commands.checks(wrapped)] == [("tests", "python3 -m pytest", True)]


def test_node_test_runners_summary_says_whether_it_passed_and_how_many_failed() -> None:
    """`node --test` (TAP when not on a terminal, `ℹ` lines on one), as `npm test` runs it in npm-tests-failing."""
    assert (commands.failed("# tests 3\n# pass 2\n# fail 1\n"), commands.failures("# pass 2\n# fail 1")) == (True, 1)
    assert commands.failed("ℹ tests 2\nℹ pass 2\nℹ fail 0\n") is False


def test_a_shell_wrappers_script_is_read_step_by_step() -> None:
    script = "bash -lc 'cd pkg && git add a.py && git commit -m \"Fix a\" && rm old.py'"
    assert [(s.verb, s.args) for s in commands.git_steps(script)] == [("add", "a.py"), ("commit", '-m "Fix a"')]
    assert commands.files_deleted(script) == ["pkg/old.py"]
    assert commands.checks("bash gen.sh") == [] and commands.unwrapped("bash -x -c") == "bash -x -c"


def test_codexs_older_shell_tool_runs_the_script_its_argv_hands_to_bash(tmp_path: Path) -> None:
    """Codex's `shell` tool wrote `["bash", "-lc", script]` and a JSON result; the pinned 0.171 answers "unsupported
    call: shell" (it offers `exec_command`), so this rollout is written here in that older form."""
    runs = [("git add -A && git commit -m 'Add widget'", "[main 1a2b3c4] Add widget\n 1 file changed", 0),
            ("python3 -m pytest -q", "FAILED test_widget.py::test_widget_doubles\n1 failed, 2 passed in 0.1s", 1)]
    records = [{"timestamp": "2026-12-01T10:00:00Z", "type": "session_meta", "payload": {"id": "s", "cwd": "/w"}}]
    for number, (script, output, code) in enumerate(runs):
        records += [{"timestamp": "2026-12-01T10:00:01Z", "type": "response_item",
                     "payload": {"type": "function_call", "name": "shell", "call_id": f"c{number}",
                                 "arguments": json.dumps({"command": ["bash", "-lc", script]})}},
                    {"timestamp": "2026-12-01T10:00:02Z", "type": "response_item",
                     "payload": {"type": "function_call_output", "call_id": f"c{number}", "output": json.dumps(
                         {"output": output, "metadata": {"exit_code": code, "duration_seconds": 0.1}})}}]
    path = tmp_path / "rollout.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    session = build_codex_session("s", [path], str)[0]
    assert [(c.input["command"], c.output, c.is_error) for c in session.tool_calls] == [
        (script, output, bool(code)) for script, output, code in runs]
    assert [t.text for t in session_facts(session).threads()] == [
        "Tests failing: `python3 -m pytest` last run failed (1 failure): `test_widget_doubles`",
        "Not pushed: commit 1a2b3c4 on main"]


def test_a_new_file_git_status_lists_as_untracked_is_left_uncommitted_in_its_short_form_too() -> None:
    session = Session(session_id="s", agent="codex", cwd="/w")
    calls = [ToolCall("c", "Bash", {"command": "git commit -am 'Add widget'"}, output="[main 1a2b3c4] Add widget"),
             ToolCall("e", "Edit", {"file_path": "/w/widget.py"}),
             ToolCall("h", "Write", {"file_path": "/w/helpers.py"}),
             ToolCall("n", "Write", {"file_path": "/w/notes.md"}),
             ToolCall("s", "Bash", {"command": "git status --short"}, output=" M widget.py\n?? helpers.py")]
    session.events = [Event("tool", None, tool=call) for call in calls]
    assert session_facts(session).uncommitted == ["widget.py", "helpers.py"]  # notes.md: committed in between


def test_untracked_files_alone_leave_a_session_that_never_committed_done() -> None:
    """d19ec7f9 (blind label: done, nothing open) wrote docs/generated/.gitignore and printed a `git status` listing
    docs/generated/ as untracked, with no commit of its own: the person commits new files."""
    from .test_extractor import corpus_session

    session = corpus_session("d19ec7f9-dfaf-4c65-a9ad-ab56240f23d8")
    assert session_facts(session).threads() == [] and draft(session, ZoneInfo("UTC")).status == "done"


@pytest.mark.parametrize(("agent", "where"), [("claude-code", " in `vendor/lib`"), ("codex", ""), ("gemini", ""),
                                              ("qwen", "")])
def test_a_cd_lasts_for_later_shell_calls_only_in_claude_codes_shell(agent: str, where: str) -> None:
    """Claude Code's Bash tool keeps one shell: a `cd` stays for the calls after it. Codex and Gemini CLI (and Qwen
    Code, its fork) start each command in a fresh shell, in the session's folder."""
    session = Session(session_id="s", agent=agent, cwd="/w")
    calls = [ToolCall("c", "Bash", {"command": "cd vendor/lib"}),
             ToolCall("m", "Bash", {"command": "git commit -am 'Add lib'"}, output="[main 74ea25d] Add lib"),
             ToolCall("o", "Bash", {"command": "cd /w/docs && git commit -am 'Add docs'"},
                      output="[main 1a2b3c4] Add docs")]
    session.events = [Event("tool", None, tool=call) for call in calls]
    assert [t.text for t in session_facts(session).threads()] == [
        f"Not pushed: commit 74ea25d on main{where}", "Not pushed: commit 1a2b3c4 on main in `docs`"]


def _exec_rollout(folder: Path, *runs: tuple[str, str, str]) -> Session:
    """A Codex rollout of `exec_command` calls (and `write_stdin` polls of a process still running): (tool, its
    command or the polled process's session id, the output Codex returned)."""
    records = [{"timestamp": "2026-12-01T10:00:00Z", "type": "session_meta", "payload": {"id": "s", "cwd": "/w"}}]
    for number, (tool, argument, output) in enumerate(runs):
        arguments = {"cmd": argument} if tool == "exec_command" else {"session_id": int(argument), "chars": ""}
        records += [{"timestamp": "2026-12-01T10:00:01Z", "type": "response_item",
                     "payload": {"type": "function_call", "name": tool, "call_id": f"c{number}",
                                 "arguments": json.dumps(arguments)}},
                    {"timestamp": "2026-12-01T10:00:02Z", "type": "response_item",
                     "payload": {"type": "function_call_output", "call_id": f"c{number}",
                                 "output": f"Chunk ID: 0{number}\nWall time: 0.25 seconds\n{output}"}}]
    path = folder / "rollout.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    return build_codex_session("s", [path], str)[0]


_FAILED = "Process exited with code 1\nOutput:\nFAILED test_widget.py::test_widget_doubles\n1 failed, 2 passed in 0.1s"
_PASSED = "Process exited with code 0\nOutput:\n3 passed in 0.1s"
_RUNNING = "Process running with session ID 73022\nOutput:\n"


def test_a_codex_run_never_polled_to_its_end_neither_passes_nor_fails(tmp_path: Path) -> None:
    """Codex's `exec_command` returns "Process running with session ID N" when the command outlives its yield time;
    only a `write_stdin` poll gives its exit. With none that does, the run's outcome is unknown: it clears no earlier
    failure and is no green run of its own."""
    failing = ["Tests failing: `python3 -m pytest` last run failed (1 failure): `test_widget_doubles`"]
    cases = [  # (the calls, the threads, whether each run counted passed)
        ([("exec_command", "python3 -m pytest", _FAILED), ("exec_command", "python3 -m pytest", _RUNNING)],
         failing, [False]),
        ([("exec_command", "python3 -m pytest", _FAILED), ("exec_command", "python3 -m pytest", _RUNNING),
          ("write_stdin", "73022", _RUNNING)], failing, [False]),  # polled, still running
        ([("exec_command", "python3 -m pytest", _RUNNING)], [], []),
        ([("exec_command", "python3 -m pytest", _FAILED), ("exec_command", "python3 -m pytest", _RUNNING),
          ("write_stdin", "73022", _PASSED)], [], [False, True]),  # polled to its end: it passed
    ]
    for number, (runs, threads, passed) in enumerate(cases):
        folder = tmp_path / str(number)
        folder.mkdir()
        facts = session_facts(_exec_rollout(folder, *runs))
        assert ([t.text for t in facts.threads()], [run.passed for run in facts.runs]) == (threads, passed), runs


def test_a_qwen_session_that_lost_a_commands_output_is_told_from_a_drift(tmp_path: Path) -> None:
    assert not any(_output_lost(name, agent, FIXTURES) for name, agent in cases())  # the committed sessions are whole
    lost = fixture_session("untracked", "qwen").read_text(encoding="utf-8").replace(
        "Command: git status\\nDirectory: (root)\\nOutput: On branch main", "Command: git status\\nDirectory: (root)\\n"
        "Output: (empty)", 1)
    assert lost != fixture_session("untracked", "qwen").read_text(encoding="utf-8")
    chats = tmp_path / "untracked" / "qwen" / "projects" / "p" / "chats"
    chats.mkdir(parents=True)
    (chats / "s.jsonl").write_text(lost, encoding="utf-8")
    assert _output_lost("untracked", "qwen", tmp_path) and not _output_lost("untracked", "codex", FIXTURES)
