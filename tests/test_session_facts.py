"""The state a session leaves, read from its actions (core/extract/facts.py, core/extract/commands.py): on the real
Codex CLI and Gemini CLI sessions whose test run is left failing (tests/check_transcripts.py), on the real corpus
sessions each rule came from and on sessions it must not fire on; the LLM handoff keeps the facts; a compaction
summary's frame gives no keywords."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from eywa.core.api import Eywa
from eywa.core.config.settings import load_settings
from eywa.core.extract import commands, facts
from eywa.core.extract.deterministic import draft
from eywa.core.extract.facts import HELD, Facts, facts_in, scratch_repository, session_facts
from eywa.core.extract.llm.prompt import user_content
from eywa.core.extract.terms import weighted_terms
from eywa.core.handoffs.fixed_words import LEFT_OUT
from eywa.core.session import Event, Session, ToolCall
from eywa.core.sources.codex import build_codex_session
from eywa.core.sources.gemini import build_gemini_session

from . import agent_transcripts, check_transcripts
from .conftest import identity
from .fake_anthropic import FakeAnthropic, default_answer
from .test_extractor import corpus_session

UTC = ZoneInfo("UTC")
FAILING = "Tests failing: `python3 -m pytest` last run failed (1 failure): `test_backoff_doubles`"
UNCOMMITTED = "Uncommitted: `retry.py` edited after the last commit"
NOT_PUSHED = "Not pushed: 1 commit on main"  # `commit -q` prints no hash; the branch is `git status`'s


def _agent_session(name: str, path: Path) -> Session:
    build = build_codex_session if name.startswith("codex") else build_gemini_session
    return build("s", [path], identity)[0]


# -- the real Codex CLI and Gemini CLI ------------------------------------------------------------------------
@pytest.mark.parametrize("agent", ["codex", "gemini"])
def test_a_test_run_left_failing_makes_the_handoff_partial_with_a_failing_check_and_the_uncommitted_edit(
        agent: str) -> None:
    session = _agent_session(agent, check_transcripts.fixture_sessions()[agent])
    tests = next(c for c in session.tool_calls if c.input.get("command") == check_transcripts.TESTS)
    assert "1 failed, 1 passed" in tests.output  # the end of its output is kept
    handoff = draft(session, UTC)
    assert handoff.status == "partial"
    assert handoff.open_threads[:2] == [FAILING, UNCOMMITTED]
    assert "Tests: `python3 -m pytest` failed: `test_backoff_doubles`" in handoff.what_happened


def test_a_claude_code_session_left_failing_is_partial_with_the_same_threads() -> None:
    """The real Claude Code, the same scenario (tests/claude_scenarios.py `failing_tests`)."""
    from .claude_harness_regen import FIXTURES, sessions_of

    (session, _), = sessions_of(FIXTURES / "failing-tests")
    handoff = draft(session, UTC)
    assert handoff.status == "partial" and handoff.open_threads[:2] == [FAILING, UNCOMMITTED]


def test_a_plan_file_never_edited_is_a_plan_not_carried_out() -> None:
    """The real Claude Code handed "Implement the following plan:" (tests/claude_scenarios.py `plan_left`)."""
    from .claude_harness_regen import FIXTURES, sessions_of

    (session, _), = sessions_of(FIXTURES / "plan-left")
    handoff = draft(session, UTC)
    assert handoff.open_threads == [
        "Plan not carried out: `test_retry.py` not edited, though the plan lists it to change"]
    assert handoff.status == "partial"


@pytest.mark.parametrize("session_id", ["fe1ffae3-f297-4dc1-9b9d-8a2b49059af7", "38917d7d-9f69-4210-a3b0-eed0a9e97575"])
def test_a_plan_whose_listed_files_were_edited_or_marked_done_leaves_nothing(session_id: str) -> None:
    """fe1ffae3: both files to modify edited ("No changes needed to `setup.go`" is no item); 38917d7d: two items
    marked ✅ DONE, the third edited."""
    assert not any(t.startswith("Plan not") for t in _facts(session_id)[0])


@pytest.mark.slow  # the real Codex and Gemini CLIs
def test_the_pinned_clis_still_write_sessions_left_failing_and_uncommitted(tmp_path: Path) -> None:
    """The real CLIs, run now against the scripted servers (~5 s): the same facts as the committed sessions."""
    check_transcripts.generate(tmp_path / "checks")
    for agent, path in check_transcripts.fixture_sessions(tmp_path / "checks").items():
        assert [t.text for t in session_facts(_agent_session(agent, path)).threads()] == [
            FAILING, UNCOMMITTED, NOT_PUSHED]


@pytest.mark.parametrize("name", ["codex-greeting", "gemini-farewell"])
def test_a_failed_command_that_is_no_check_in_a_session_that_never_committed_leaves_no_fact(name: str) -> None:
    """`ls does-not-exist` fails, files are edited, nothing is committed: the person commits, nothing is left."""
    session = _agent_session(name, agent_transcripts.fixture_sessions()[name])
    facts = session_facts(session)
    assert facts.threads() == [] and facts.runs == []
    assert draft(session, UTC).status == "done"


# -- the readers keep the end of each command's output --------------------------------------------------------
@pytest.mark.parametrize("name", ["codex-greeting", "gemini-farewell", "copilot-greeting", "qwen-greeting"])
def test_every_agents_reader_keeps_a_commands_output_without_its_tools_frame(name: str) -> None:
    from . import more_agent_transcripts

    if name in agent_transcripts.fixture_sessions():
        session = _agent_session(name, agent_transcripts.fixture_sessions()[name])
    else:
        session = more_agent_transcripts.read(more_agent_transcripts.fixture_sessions()[name])
    outputs = [call.output for call in session.tool_calls if call.name == "Bash"]
    assert outputs[0] in ("hello", "bye")
    assert outputs[1].endswith("No such file or directory") and outputs[1].startswith(("ls: ", "cat: "))


def test_claude_code_keeps_the_end_of_a_long_output_where_the_runner_says_how_it_ended() -> None:
    session = corpus_session("60b38d1e-f048-428b-89da-e5dca96614d4")
    lint = [c for c in session.tool_calls if c.input.get("command") == "mise run fmt && mise run lint 2>&1"][-1]
    assert lint.output.endswith("1 issues:\n* nilnesserr: 1\n[lint] ERROR task failed") and len(lint.output) <= 1500


# -- the corpus: each rule on the session it came from, and on one it must not fire on --------------------------
def _facts(session_id: str) -> tuple[list[str], str]:
    session = corpus_session(session_id)
    return [t.text for t in session_facts(session).threads()], draft(session, UTC).status


def test_edits_after_the_sessions_last_commit_are_uncommitted_and_keep_it_partial() -> None:
    threads, status = _facts("ae68c513-db90-451f-940d-804a1d3d0986")
    assert not any("settings.json" in t for t in threads if t.startswith("Uncommitted"))  # left out, never edited
    session = corpus_session("1c38adc0-5071-4382-9e53-de8c30e2265f")
    assert session_facts(session).uncommitted == []  # its only commits are in repositories it made in /tmp


def test_commits_in_a_repository_the_session_made_to_try_something_are_not_its_own() -> None:
    """1c38adc0 (labelled done, nothing open, blind): `cd /tmp && ... git init && git add . && git commit`."""
    assert _facts("1c38adc0-5071-4382-9e53-de8c30e2265f") == ([], "done")


def test_a_git_status_after_the_shell_was_put_back_in_the_project_reads_the_projects_state() -> None:
    """9f26971d (blind label: "The .env-handling fix to both wrapper scripts was left as unstaged changes"): a `cd
    /tmp && ...` experiment, "Shell cwd was reset to" the project, then `git status` there lists both scripts."""
    threads, status = _facts("9f26971d-da0a-46db-b911-e156aad9548e")
    assert [t for t in threads if "uncommitted" in t.lower()] == [
        "Left uncommitted on soph/allow-dogfood-local-dev, unstaged changes: `.gemini/scripts/entire-wrapper.sh`, "
        "`.claude/scripts/entire-wrapper.sh`"]
    assert status == "done"  # never committed: the person commits, a note


def test_the_command_whose_output_says_the_shell_was_put_back_still_ran_where_it_went() -> None:
    """1c38adc0: `cd /tmp && ... git init && ... git commit` prints "Shell cwd was reset to" the project: its
    commit is still the scratch repository's, not the project's."""
    session = corpus_session("1c38adc0-5071-4382-9e53-de8c30e2265f")
    assert any("Shell cwd was reset to" in c.output and "git init" in str(c.input.get("command"))
               for c in session.tool_calls)
    assert session_facts(session).unpushed == {}


def test_a_commit_never_pushed_is_a_note_naming_it_and_its_branch() -> None:
    """ae68c513 (blind label: "Commit 5fddc49c on dipree/entire-wingman was made but not pushed")."""
    threads, status = _facts("ae68c513-db90-451f-940d-804a1d3d0986")
    pushed = [t for t in threads if t.startswith("Not pushed")]
    assert pushed == ["Not pushed: commit 5fddc49c on dipree/entire-wingman"]
    assert status == "done"


def test_a_session_that_pushed_its_commits_has_none_not_pushed() -> None:
    assert not any(t.startswith("Not pushed") for t in _facts("76d407bd-2561-45ef-8cbb-2dc1f9be9bbe")[0])


def test_files_of_a_merge_left_uncommitted_name_the_merge() -> None:
    """da15b15f ran `git merge origin/alex/ent-221-type-consolidation --no-commit --no-ff`, resolved the conflicts and
    never ran `git add` (both blind readers: "The merge of origin/alex/ent-221-type-consolidation was resolved and
    staged but not committed"): the merge is in progress; 2956cee6 committed its merge, then edited: no merge is
    left."""
    threads, status = _facts("da15b15f-a573-4523-abcb-fdd6c9a4e2a2")
    assert "Merge in progress: edits not staged, no `git add` ran: `git add cmd/entire/cli/strategy/" \
        "manual_commit_hooks.go cmd/entire/cli/strategy/phase_wiring_test.go && git commit` (the merge of " \
        "`origin/alex/ent-221-type-consolidation`)" in threads
    assert status == "partial"  # the repository is mid-merge: every blind reader says partial
    threads, _ = _facts("2956cee6-6153-4ba6-ba24-3b7f3257549c")
    assert "Uncommitted: `checkpoint.go`, `state.go` edited after the last commit" in threads
    assert not any("merge of" in t or t.startswith("Merge in progress") for t in threads)


def test_a_merge_that_committed_itself_or_was_aborted_leaves_no_merge() -> None:
    for command, output in (("git merge origin/main", "Merge made by the 'ort' strategy."),
                            ("git merge feature --no-commit && git merge --abort", "")):
        session = Session(session_id="s", agent="claude-code", cwd="/tmp/w")
        session.events = [Event("tool", None, tool=ToolCall("b", "Bash", {"command": command}, output=output))]
        assert session_facts(session).merging == ""
    session = Session(session_id="s", agent="claude-code", cwd="/tmp/w")
    session.events = [Event("tool", None, tool=ToolCall("b", "Bash", {"command": "git merge -m 'sync' origin/main"},
                                                        output="CONFLICT (content): Merge conflict in a.go"))]
    assert session_facts(session).merging == "origin/main"


def test_a_test_run_the_user_stopped_with_a_word_and_never_run_after_is_a_note() -> None:
    """07d86da7: `mise run test:ci` refused ("don't run CI or integration tests, too slow"), `mise run test` after."""
    threads, status = _facts("07d86da7-2e39-4276-a0d5-7b46a85b8750")
    assert threads == ['Not run: `mise run test:ci`, stopped by the user: '
                       '"don\'t run CI or integration tests, too slow."']
    assert status == "done"


def test_a_test_run_refused_without_a_word_is_a_note_with_the_prompt_sent_in_its_place() -> None:
    """d50aed65: `mise run test:ci` refused, then "Commit", and no test run after (both of its blind readers)."""
    threads, status = _facts("d50aed65-f324-43f2-8c95-9edd32b25b32")
    assert 'Not run: `mise run test:ci`, refused by the user, who asked next: "Commit"' in threads
    assert status == "done"


def test_a_refused_run_of_several_checks_leaves_a_note_only_for_the_one_never_run_after() -> None:
    """34b1e2a4: `mise run fmt && mise run lint && mise run test:ci` refused; lint ran after, test:ci never did."""
    threads = _facts("34b1e2a4-8cec-4bb9-94a0-ec9e9c639c8e")[0]
    assert [t for t in threads if t.startswith("Not run: `mise run")] == [
        'Not run: `mise run test:ci`, stopped by the user: "i\'ll take it from here."']


def test_a_session_that_never_committed_whose_git_status_lists_its_edits_leaves_them_uncommitted_as_a_note() -> None:
    """8b418ea5 (blind label: "The changes sit uncommitted on main (help.go untracked, root.go modified,
    commands/help.go deleted)"): the help.go it wrote is among its "Untracked files:", `rm -rf commands` deleted the
    old one, and mise.toml, which it never touched, is modified too."""
    threads, status = _facts("8b418ea5-895d-4ad5-abe8-4489d36e454f")
    assert ("Left uncommitted on main, unstaged changes: `root.go`; new, never added: `cli/help.go`; deleted: "
            "`commands/help.go`; not from this session: `mise.toml`") in threads and status == "done"


def test_a_git_status_of_some_paths_says_nothing_of_the_edits_outside_them() -> None:
    """d19ec7f9 ran `git status docs/generated/` after editing `phase_test.go`, never committed: both are left, the
    .gitignore it wrote in an untracked folder. Inside the paths asked about, a clean status still clears the edit."""
    session = corpus_session("d19ec7f9-dfaf-4c65-a9ad-ab56240f23d8")
    assert session_facts(session).left() == ["Not committed on `alex/ent-221-better-state-tracking-for-sessions`: "
                                             "`phase_test.go`; new, never added: `generated/` (1 file) "
                                             "(no commit in the session)"]
    edits = [ToolCall(path, "Write", {"file_path": f"/work/widgets/{path}"}) for path in ("a.go", "docs/b.md")]
    status = ToolCall("s", "Bash", {"command": "git status docs/ 2>&1"}, output="On branch main\n"
                      "nothing to commit, working tree clean\n")
    assert session_facts(_shell_session(*edits, status)).never_committed == ["a.go"]


def test_edits_a_git_status_lists_as_staged_only_are_left_as_staged_changes_named_by_their_shortest_names() -> None:
    """Two files of one name are told apart by the folder before it; one of its own name by its name alone."""
    edits = [ToolCall(path, "Write", {"file_path": f"/work/widgets/{path}"})
             for path in ("cmd/help.go", "cmd/commands/help.go", "cmd/root.go")]
    status = ToolCall("s", "Bash", {"command": "git status"}, output="On branch main\nChanges to be committed:\n"
                      "\tmodified:   cmd/help.go\n\tmodified:   cmd/commands/help.go\n\tnew file:   cmd/root.go\n")
    threads = [t.text for t in session_facts(_shell_session(*edits, status)).threads()]
    assert threads == ["Left uncommitted on main, staged changes: `cmd/help.go`, `commands/help.go`, `root.go`"]


@pytest.mark.parametrize("commit", ["git add a.py && git commit -am 'Fix'", "git add a.py . && git commit -m 'Fix'",
                                    "git add -A a.py && git commit -m 'Fix'"])
def test_a_commit_that_takes_every_change_leaves_no_edit_uncommitted(commit: str) -> None:
    """`-am` takes the tracked changes a named `git add` left out; `.` or `-A` beside a file stages them all."""
    edits = [ToolCall(path, "Edit", {"file_path": f"/work/widgets/{path}"}) for path in ("a.py", "b.py")]
    made = ToolCall("c", "Bash", {"command": commit}, output="[main 1a2b3c4] Fix\n 2 files changed")
    assert not any(t.text.startswith("Uncommitted") for t in session_facts(_shell_session(*edits, made)).threads())


def test_git_status_says_which_edits_are_left_when_the_person_committed_some_in_between() -> None:
    """setup_test.go was committed by the person: the status lists stanza_test.go only, which is then committed."""
    assert not any(t.startswith("Uncommitted") for t in _facts("c4a6d0ff-2c86-4f56-8509-c4737bcb5768")[0])


def test_a_branch_ahead_of_origin_in_the_sessions_git_status_is_a_note_that_leaves_it_done() -> None:
    threads, status = _facts("8897bd54-16f4-4a28-8e23-cb187c639e40")
    assert threads[-1:] == ["Not pushed: branch ahead of 'origin/dipree/entire-wingman' by 1 commit"]
    assert status == "done"


def test_a_git_status_run_after_the_commit_in_the_same_command_line_gives_the_count() -> None:
    """acdd84ab: `git add ... && git commit ... && git status`: ahead by 1, the commit not counted twice."""
    assert [t for t in _facts("acdd84ab-e724-42c8-925d-420b2a4f1861")[0] if not t.startswith(LEFT_OUT)] == [
        "Not pushed: branch ahead of 'origin/dipree/entire-wingman' by 1 commit"]


def test_a_commit_after_the_last_push_is_not_pushed() -> None:
    assert "Not pushed: 1 commit on alex/fix-gemini-checkpointing after the last push" in _facts(
        "c010174c-a7cd-4bcc-b7d4-61258d6c463f")[0]


def test_a_push_with_git_dash_c_to_the_sessions_own_folder_counts_as_its_push() -> None:
    assert _facts("53ea1606-cf60-417b-928a-068324ecc7b3")[0] == []


def test_a_lint_run_left_failing_is_a_thread() -> None:
    threads, status = _facts("60b38d1e-f048-428b-89da-e5dca96614d4")
    assert "Lint failing: `mise run lint` last run failed" in threads and status == "partial"


def test_a_failed_one_file_lint_covered_by_a_later_passing_lint_is_no_thread() -> None:
    assert not any(t.startswith("Lint failing") for t in _facts("f744aef5-5139-4c21-91e5-3f44ce902105")[0])


def test_a_whole_check_that_failed_and_only_a_narrower_run_of_its_kind_passed_after_is_not_rerun() -> None:
    """ca8cc13b: `mise run lint` failed, then only `golangci-lint run` on two packages passed: a note, not blocking."""
    threads, status = _facts("ca8cc13b-d3df-4615-8f3f-f48a96b1a6f9")
    assert threads[0] == ("Lint not rerun: `mise run lint` failed; only `golangci-lint run "
                          "./cmd/entire/cli/agent/openclaw/ ./cmd/entire/cli/` passed after")
    assert status == "done"


@pytest.mark.parametrize(("session_id", "thread"), [
    ("a7da6a22-facc-4fcd-8bab-f83c87862004",
     "Tests not rerun: `pytest --cov-fail-under=99` failed; only `pytest` passed after"),
])
def test_a_failed_check_is_not_covered_by_a_pass_of_another_suite_or_of_fewer_requirements(
        session_id: str, thread: str) -> None:
    assert thread in _facts(session_id)[0]


def test_a_test_run_refused_for_the_rest_of_its_command_and_run_after_is_no_note() -> None:
    """0a76fbfe: `git stash && mise run test:integration ...; git stash pop` refused ("main is clean": no stash
    needed), then `mise run test:integration` run alone; its 11 failures were fixed and `go test -tags=integration
    ./cmd/entire/cli/integration_test/` passed (blind labels: nothing about the tests left)."""
    facts = session_facts(corpus_session("0a76fbfe-d767-433e-b4b1-a39e044f21e8"))
    assert facts.stopped == {}
    assert facts.not_rerun() == []
    assert not any(t.text.startswith(("Not run", "Tests not rerun")) for t in facts.threads())


@pytest.mark.parametrize("session_id", [
    "f744aef5-5139-4c21-91e5-3f44ce902105",  # a one-file lint failed, then `mise run lint` passed
    "0bdbfa06-acf1-473a-b3e4-6a03313d1d0e",  # `mise run test -- -run TestExplain` failed, then `mise run test` passed
    "12a546d1-83a7-49a6-abba-5400db340b43",  # `pytest -m browser --tb=short` failed, then `pytest -m browser` passed
])
def test_a_failed_check_that_a_later_whole_run_or_the_same_run_passed_is_no_thread(session_id: str) -> None:
    assert session_facts(corpus_session(session_id)).not_rerun() == []


@pytest.mark.parametrize(("command", "part"), [
    ("mise run lint", False), ("go test ./...", False), ("uv run pytest", False), ("mise run test:ci", False),
    ("go test ./cmd/entire/cli/...", True), ("pytest tests/test_x.py::test_y", True), ("pytest -k retry", True),
    ("go test ./pkg -run TestX", True), ("mise run test -- ./redact/...", True), ("npx eslint src/a.ts", True),
])
def test_a_check_on_a_path_package_or_test_name_runs_on_part_of_the_project(command: str, part: bool) -> None:
    assert commands.scoped(command) is part


def test_a_command_that_failed_and_never_ran_through_again_is_a_note_with_its_verdict() -> None:
    """f6833005: the harness step `verify-rewind` printed "✗ FAIL: extra.js ...", the agent called it expected and
    left it; the thread says it failed, so the verdict's own mark is left out."""
    threads, status = _facts("f6833005-7be4-4178-bb37-a0e9feadc36b")
    assert threads == ["Failed, not run again: `test-harness.sh verify-rewind`: extra.js should not exist after "
                       "rewind; the agent said: This is actually expected behavior for auto-commit strategy! The "
                       "`git reset --hard` command does NOT delete untracked files."]
    assert status == "done"


def test_the_agents_verdict_that_a_failure_is_expected_is_said_only_when_its_next_message_says_so() -> None:
    """A reviewer read f6833005's thread without "expected behavior ... `git reset --hard` does NOT delete untracked
    files", said right after; a message that announces a fix, or expects a later pass, says no such verdict."""
    failed = ToolCall("e", "Bash", {"command": "./scripts/e2e.sh verify-login"}, is_error=True,
                      error="Exit code 1\n✗ FAIL: session cookie missing")
    for reply, judged in [
            ("The failure is expected by design: the fixture has no cookie. Let me check the rest.",
             "; the agent said: The failure is expected by design: the fixture has no cookie."),
            ("The cookie is missing. Let me fix the fixture.", ""),
            ("This step is expected to pass once the fixture is seeded.", "")]:
        session = Session(session_id="s", cwd="/work/widgets")
        session.events = [Event("tool", None, tool=failed), Event("assistant", None, text=reply)]
        assert session_facts(session).failed == [("e2e.sh verify-login", "session cookie missing" + judged)], reply
    # a prompt before the agent's next word: what the agent says after answers it, not the failure
    session.events = [Event("tool", None, tool=failed), Event("user", None, text="go on"),
                      Event("assistant", None, text="That is expected.")]
    assert session_facts(session).failed == [("e2e.sh verify-login", "session cookie missing")]


def test_a_failed_command_inside_codexs_shell_wrapper_is_its_own_program() -> None:
    """`bash -lc "..."` wraps every Codex command: a later `bash -lc "ls"` does not run the failed step again."""
    session = Session(session_id="s", agent="codex", cwd="/work/widgets")
    failed = ToolCall("e", "Bash", {"command": "bash -lc './scripts/e2e.sh verify-login 2>&1'"}, is_error=True,
                      error="Exit code 1\n==> login\n✗ FAIL: session cookie missing")
    session.events = [Event("tool", None, tool=failed),
                      Event("tool", None, tool=ToolCall("l", "Bash", {"command": "bash -lc 'ls scripts'"}))]
    assert session_facts(session).failed == [("e2e.sh verify-login", "session cookie missing")]
    session.events.append(Event("tool", None, tool=ToolCall("r", "Bash", {"command": "bash -lc './scripts/e2e.sh "
                                                                                     "verify-login'"})))
    assert session_facts(session).failed == []


def test_a_failed_commands_verdict_is_said_without_the_symbol_before_it() -> None:
    """2cfdacb8: ruby's YAML check failed ("'Psych::Parser#_native_parse': (<unknown>): did not find expected key"),
    and the agent called it expected."""
    assert session_facts(corpus_session("2cfdacb8-9317-430f-8975-0709d2837d1c")).failed == [
        ("ruby -ryaml", "did not find expected key while parsing a block mapping at line…; the agent said: The YAML "
                        "parse error is expected — `${{ }}` template expressions are GitHub Actions-specific and "
                        "confuse standard YAML parsers…")]


@pytest.mark.parametrize("session_id", [
    "37a27d31-4a70-427b-8518-5fad6045d347",  # `git merge` stopped on a conflict, then committed through
    "d64b50bb-125b-4b54-867a-e59841e553d8",  # `/tmp/entire-test enabl`: a usage error of a binary built in /tmp
    "cb2e607c-c758-415a-8b45-c49e4631906a",  # `cd /tmp && coderabbit-extract`: tried outside the repository
    "03a1382e-ecd5-42c4-b3d4-5c659e165904",  # `git cat-file`, `git config`: probes that read
    "1c38adc0-5071-4382-9e53-de8c30e2265f",  # `go run /dev/stdin <<'EOF'`: an experiment fed inline
    "2cfdacb8-9317-430f-8975-0709d2837d1c",  # `python3 -c "import yaml ..."`: no module, the agent turned to ruby
])
def test_a_failed_probe_experiment_scratch_run_missing_tool_or_conflict_committed_through_is_no_note(
        session_id: str) -> None:
    failed = session_facts(corpus_session(session_id)).failed
    assert not any(command.startswith(("git", "entire-test", "coderabbit", "go run", "python3"))
                   for command, _ in failed)


def test_a_build_whose_exit_status_belongs_to_a_later_step_is_not_read_as_failed() -> None:
    """`go build -o bin && bin aaaa`: the binary's usage error is the command's exit status."""
    session = corpus_session("d64b50bb-125b-4b54-867a-e59841e553d8")
    assert not any(run.kind == "build" for run in session_facts(session).runs)


def test_a_pr_description_asked_for_and_given_in_the_last_reply_is_a_pr_not_opened() -> None:
    assert _facts("38917d7d-9f69-4210-a3b0-eed0a9e97575")[0][:1] == [
        "PR not opened: its description was drafted in the last reply"]


def test_a_pr_draft_opening_on_its_title_line_is_said_as_title_and_description() -> None:
    """8b418ea5's last reply is "Title: Move help.go ... # Summary ...": both readers name the title with the
    description ("A PR title and description were drafted but no PR was opened"); 38917d7d's draft has no title."""
    assert "PR not opened: its title and description were drafted in the last reply" in _facts(
        "8b418ea5-895d-4ad5-abe8-4489d36e454f")[0]


def test_a_closing_summary_with_no_pr_in_sight_is_no_pr_draft() -> None:
    """"The fix is complete. Here's a summary of the changes: ## Summary ...": a report, not a PR body."""
    assert not any(t.startswith("PR not opened") for t in _facts("0bdbfa06-acf1-473a-b3e4-6a03313d1d0e")[0])


def test_what_happened_tells_a_check_that_failed_and_the_whole_suite_run_after_it() -> None:
    # 0a76fbfe: `mise run test:integration` failed twice, never run again as itself; the whole integration suite
    # (`go test -tags=integration ./cmd/entire/cli/integration_test/`) passed after the last edit, then `mise run test`:
    # the failed tests passed after
    handoff = draft(corpus_session("0a76fbfe-d767-433e-b4b1-a39e044f21e8"), UTC)
    assert handoff.what_happened[-2:] == [
        "Tests: `TestResume_LocalLogNewerTimestamp_UserConfirmsOverwrite` and 10 more failed on the way, then passed",
        "Checks: `go test -tags=integration ./cmd/entire/cli/integration_test/`, `mise run test`, `mise run lint` "
        "passed after the last edit"]
    assert not any(t.startswith("Tests failing") for t in handoff.open_threads)


def test_a_check_history_is_one_commands_runs_never_another_ones() -> None:
    # ca8cc13b: `mise run test:ci` ran once and passed; the failures were `go test ./.../openclaw/...`'s (no test
    # named: no line), and the lint passes and failures came from four different lint commands
    lines = session_facts(corpus_session("ca8cc13b-d3df-4615-8f3f-f48a96b1a6f9")).happened()
    assert lines == ["Lint: `mise run lint` failed, not run again",
                     "Checks: `golangci-lint run ./cmd/entire/cli/agent/openclaw/ ./cmd/entire/cli/`, `mise run test`, "
                     "`mise run test:ci` passed after the last edit; `go build ./cmd/entire/...` before it",
                     "Tests: `go test ./cmd/entire/cli/agent/openclaw/...` failed, then passed"]
    # 9e44573d: `mise run lint` passed both times it ran; a one-package run without the project's config failed (the
    # last, `go build ./... && mise run lint`, printed "[lint:go] 0 issues.": its build passed too)
    lines = session_facts(corpus_session("9e44573d-4eb8-4de0-8659-418f3c68706d")).happened()
    assert lines == ["Checks: `go build ./...`, `mise run lint` passed after the last edit; "
                     "`go test ./cmd/entire/cli/...` before it"]


def test_a_check_that_failed_on_the_way_is_told_by_its_last_run_not_a_cut_history() -> None:
    """eb4bcc15's build failed twice, passed, failed, passed: its history cut to the last three streaks read
    "passed, then failed, then passed" (reviewer Z: the first build failed). Its last runs first (the tests and lint
    ran after the last edit, the build before it), then one failure fixed, in the issue's "failed, then passed"."""
    lines = session_facts(corpus_session("eb4bcc15-3ff5-4d73-bac5-9bc1d786b2bb")).happened()
    assert lines == ["Checks: `mise run test`, `mise run lint` passed after the last edit; `go build ./...` before it",
                     "Build: `go build ./...` failed, then passed"]
    # e7eb742c: lint failed, passed, failed twice, passed; the tests always passed: both after the last edit
    assert session_facts(corpus_session("e7eb742c-bdac-4824-afdb-20b63ca6b6dd")).happened() == [
        "Checks: `mise run lint`, `mise run test` passed after the last edit",
        "Lint: `mise run lint` failed, then passed"]


def test_tests_that_failed_on_the_way_are_named_and_a_suite_run_only_before_the_last_edit_is_said() -> None:
    """37f83ec9's new tests failed five runs in a row before they passed (reviewer Y: "the 6 new tests failed several
    times", not the path error the old history told); 60b38d1e ran `mise run test:integration` only before its last
    edits to the message (reviewer X)."""
    lines = session_facts(corpus_session("37f83ec9-f2ea-42a9-925e-0d5c105cb6e8")).happened()
    assert lines[0] == "Tests: `test_no_combined_link_with_empty_cache` and 4 more failed on the way, then passed"
    assert session_facts(corpus_session("60b38d1e-f048-428b-89da-e5dca96614d4")).happened()[-1] == (
        "Checks: `mise run test` passed after the last edit; `mise run test:integration` before it")
    # a session whose checks all ran after its last edit and never failed: one line, no history (2b945d54)
    assert session_facts(corpus_session("2b945d54-dd2b-4f60-b3b0-7b0252349003")).happened() == [
        "Checks: `mise run lint`, `mise run test:ci` passed after the last edit"]


def _told(session_id: str, call_id: str) -> list[tuple[str, bool]]:
    """(check, passed) of each check a corpus session's call (its id's end) ran whose verdict it tells."""
    call = next(c for c in corpus_session(session_id).tool_calls if c.id.endswith(call_id))
    found = commands.checks(call.input["command"])
    return [(check.command, ok) for check, ok in commands.verdicts(found, call.output or call.error, call.is_error)]


def test_a_command_line_of_several_checks_gives_the_failure_to_the_one_whose_words_show() -> None:
    # `mise run fmt && mise run lint && mise run test:ci`: lint's `1 issues:` stopped the line, test:ci never ran
    assert _told("030e1e67-6bf0-492d-8bd3-cc3383ec93ab", "m7scfC") == [("mise run lint", False)]
    # ... `&& mise run test:ci 2>&1 | tail -30`: the tests' `FAIL` behind the pipe; lint passed, the line went on
    assert _told("c010174c-a7cd-4bcc-b7d4-61258d6c463f", "ys5LBN") == [("mise run lint", True),
                                                                       ("mise run test:ci", False)]
    # a real failure is still one: `mise run test && mise run lint`, the tests' `--- FAIL`, lint never ran
    assert _told("f736da47-b2ca-4f86-bb32-a1bbe582e464", "tJtjvp") == [("mise run test", False)]


def test_ruff_format_is_no_lint_run_but_its_check_mode_is() -> None:
    assert commands.checks("uv run ruff format") == []
    assert [check.kind for check in commands.checks("ruff format --check .")] == ["lint"]
    # fe869ecb ran `uv run ruff format` ("6 files reformatted"): no lint run passed
    assert not any(run.kind == "lint" for run in session_facts(corpus_session(
        "fe869ecb-c176-478f-9734-7e4b8ef12cff")).runs)


def test_a_check_after_a_step_that_failed_on_an_and_chain_never_ran() -> None:
    # ab8c5aa0 `mise run fmt && mise run test 2>&1`: gofmt's parse errors, `[fmt] ERROR task failed`: no test ran
    assert _told("ab8c5aa0-e11b-4b16-9be3-c470a9483829", "q98jw7") == []
    assert not any(run.command == "mise run test" and not run.passed for run in session_facts(corpus_session(
        "ab8c5aa0-e11b-4b16-9be3-c470a9483829")).runs)
    # the same line that went through passed; a failure in the check's own words is still its own
    assert _told("ab8c5aa0-e11b-4b16-9be3-c470a9483829", "frCQBQ") == [("mise run test", True)]
    found = commands.checks("npm ci && npm test")
    assert commands.verdicts(found, "Tests:       2 failed, 10 passed", True) == [(found[0], False)]
    assert commands.verdicts(found, "npm ERR! code ERESOLVE", True) == []


def test_a_test_run_whose_runner_the_shell_did_not_find_ran_nothing() -> None:
    # a7da6a22 `pytest`: `Exit code 127`, `/bin/bash: line 1: pytest: command not found` (the venv not active)
    assert _told("a7da6a22-facc-4fcd-8bab-f83c87862004", "gZtYxc") == []
    assert _told("a7da6a22-facc-4fcd-8bab-f83c87862004", "7UnpED") == [("pytest", False)]  # a real failure stays
    found = commands.checks("npx jest")
    assert commands.verdicts(found, "sh: jest: command not found", True) == []
    # a test that fails on a file it cannot open is a failure of the run
    assert commands.verdicts(found, "FAIL src/a.test.js\n  ENOENT: No such file or directory, open 'x'", True) == [
        (found[0], False)]


def test_a_test_run_that_only_lists_or_describes_is_no_check() -> None:
    # 37f83ec9 ran `uv run pytest --markers` and `--collect-only` to learn the project's markers: no run
    for command in ("uv run pytest --markers", "uv run pytest --collect-only -m unit", "pytest --co -q",
                    "pytest --help", "go test -list . ./pkg", "npx jest --listTests"):
        assert commands.checks(command) == [], command
    assert [check.kind for check in commands.checks("uv run pytest -m unit --cov")] == ["tests"]
    runs = session_facts(corpus_session("37f83ec9-f2ea-42a9-925e-0d5c105cb6e8")).runs
    assert not any("--markers" in run.command or "--collect-only" in run.command for run in runs)


def test_a_check_that_found_nothing_to_run_has_no_verdict() -> None:
    session = "37f83ec9-f2ea-42a9-925e-0d5c105cb6e8"
    assert _told(session, "Akm3dg") == []  # `pytest -m unit`: `205 deselected / 0 selected`, exit 5
    assert _told(session, "BAkgF3") == []  # `ERROR: file or directory not found: test/...` (the folder was `test/`)
    assert _told(session, "mqTKmn") == []  # ruff's `E902 No such file or directory`
    # go test on packages with no test file, a `-run` matching none, the whole output read: `[no test...]` only
    assert _told("34b1e2a4-8cec-4bb9-94a0-ec9e9c639c8e", "bmfXY5") == []
    assert _told("220c8e1c-18de-4039-8d22-658ecf89acdc", "hx62vs") == []
    # ... but tests that ran beside the deselected ones, or in the part of an output cut off, are a run
    assert _told("12a546d1-83a7-49a6-abba-5400db340b43", "QBvNpK") == [("uv run pytest -m browser", True)]
    assert _told("70c88cff-cb35-404f-a974-2a08bab4e4bc", "nHY3Zd") == [
        ("go test ./cmd/entire/cli/... -run Explain", True)]


def test_a_lint_run_that_loaded_no_package_has_no_verdict() -> None:
    # ca8cc13b named `./cmd/entire/cli/agent/openclaw/...` beside `.go` files: golangci-lint's exit 3, `named files
    # must be .go files`, no issue read; its lint failures with issues stay failures
    session = "ca8cc13b-d3df-4615-8f3f-f48a96b1a6f9"
    assert _told(session, "7JCNgG") == []
    assert _told(session, "rEx4Pu") == [("golangci-lint run ./cmd/entire/cli/agent/openclaw/", False)]
    # f744aef5 linted one file alone: the package's other names undefined, yet issues read, a failure of the run
    assert _told("f744aef5-5139-4c21-91e5-3f44ce902105", "M1YNqo") == [
        ("golangci-lint run ./cmd/entire/cli/strategy/push_common.go", False)]


def test_what_happened_says_the_checks_that_passed_and_the_edits_never_committed() -> None:
    # 2b945d54 fixed a test file, ran lint and `mise run test:ci` (both passed) and never committed: the reviewers
    # wanted both said, and no thread (its readers call such edits nothing open)
    handoff = draft(corpus_session("2b945d54-dd2b-4f60-b3b0-7b0252349003"), UTC)
    assert handoff.what_happened[-2:] == [
        "Checks: `mise run lint`, `mise run test:ci` passed after the last edit",
        "Not committed on `alex/ent-221-phase-aware-git-hooks`: `phase_prepare_commit_msg_test.go` (no commit in the "
        "session)"]
    assert not any(t.startswith(("Uncommitted", "Not committed", "Left uncommitted")) for t in handoff.open_threads)
    # 8897bd54 committed its edits: nothing to say of them beside its commit line
    committed = draft(corpus_session("8897bd54-16f4-4a28-8e23-cb187c639e40"), UTC)
    assert not any(line.startswith(("Not committed", "Edited ")) for line in committed.what_happened)
    assert any(line.startswith("Committed `") for line in committed.what_happened)


def test_what_happened_names_the_branch_the_work_is_on_and_one_the_session_switched_to() -> None:
    # the reviewers of 70c88cff, 569aed7b, 28596a79, 87a7858d wanted the branch the edits were left on: one the session
    # made (`git checkout -b`), one the person switched to mid-session (the records' gitBranch), the one it ran on
    def said(session_id: str) -> list[str]:
        return [line for line in draft(corpus_session(session_id), UTC).what_happened
                if line.startswith(("Not committed", "Switched to", "Committed"))]

    assert said("70c88cff-cb35-404f-a974-2a08bab4e4bc") == [
        "Not committed on new branch `alex/explain-help-for-positional-args`: `explain.go`, `explain_test.go` (no "
        "commit in the session)"]
    assert said("569aed7b-6ead-4790-a3fe-c7028466112c")[-1].startswith("Not committed on `soph/improve-enable`: ")
    assert said("28596a79-6247-4bc2-a031-f5848b31e039")[-1].startswith(
        "Not committed on `20260209-postinstall-and-completions`: ")
    # 79eb9f8a's person switched back after its last edit: the branch of that edit
    assert said("79eb9f8a-232c-4a72-a26b-4b4520ef2152")[-1].startswith("Not committed on `20260209-fish-completions`: ")
    # 0cd9edf7 checked out a PR's branch (`gh pr checkout 68`, a remote branch's local copy: no new one) and changed
    # nothing: the branch it left the person on
    assert said("0cd9edf7-459c-4900-af40-cf2c64dea525") == [
        "Switched to branch `gtrrz-victor/add-token-usage-manual-commit`"]
    # a0bd162f's edits are on main: no branch says more; 7f2fbf27 switched and committed there: its commit line says it
    assert said("a0bd162f-1328-48c5-83bc-c0674aa791ac")[-1].startswith("Not committed: ")
    assert [line.split(",")[0] for line in said("7f2fbf27-0a44-42e3-94a1-4bfb5b48f071")] == [
        "Committed `3b4a17b0` on `fix/enable-agent-flag-missing-value`"]


# -- recognising commands --------------------------------------------------------------------------------------
@pytest.mark.parametrize(("command", "kind"), [
    ("uv run pytest -m unit -v", "tests"), ("go test ./... 2>&1", "tests"), ("pnpm test", "tests"),
    ("cargo clippy --all", "lint"), ("mise run lint", "lint"), ("npx tsc --noEmit", "types"),
    ("go build ./...", "build"), ("go test -c ./e2e -o /dev/null", "build"), ("CI=1 npm run build", "build"),
    ("npx playwright test", "tests"), ("bundle exec rspec", "tests"), ("rake test", "tests"),
    ("uv run ty check", "types"), ("node --test", "tests"), ("python3 test_widget.py", "tests"),
    ("node src/widget.test.js", "tests"), ("./run_tests.sh", "tests"), ("bash scripts/test.sh", "tests"),
    ("ruby widget_test.rb", "tests"), ("ctest --output-on-failure", "tests"), ("pnpm vitest run", "tests"),
    ("npm t", "tests"), ("python manage.py test", "tests"), ("black --check .", "lint"),
    ("prettier --check src", "lint"),
    ("cargo fmt --all -- --check", "lint"), ("isort --check-only .", "lint"), ("vue-tsc --noEmit", "types"),
    ("vendor/bin/phpunit", "tests"), ("./vendor/bin/phpunit --filter testX", "tests"), ("hatch run test", "tests"),
    ("hatch test", "tests"), ("hatch run pytest -x", "tests"), ("pdm run pytest", "tests"), ("rye test", "tests"),
    ("uv run --frozen pytest", "tests"), ("uv run --with pytest pytest -q", "tests"),
    ("uv run --extra dev pytest", "tests"), ("uv run -p 3.12 pytest", "tests"), ("uv run --no-sync pytest", "tests"),
    ("uv run --all-extras pytest tests/", "tests"), ("zig build test", "tests"), ("flutter test", "tests"),
    ("dart test", "tests"), ("sbt test", "tests"), ("lein test", "tests"), ("stack test", "tests"),
    ("cabal test", "tests"), ("npx ava", "tests"), ("gotestsum -- ./...", "tests"),
    ("pre-commit run --all-files", "lint"), ("cmake --build build", "build"), ("bazel build //...", "build"),
    ("ninja -C build", "build"), ("python -m build", "build"), ("python3 -m build --wheel", "build"),
    # a monorepo's workspaces and task runners
    ("pnpm -r test", "tests"), ("pnpm --filter web test", "tests"), ("pnpm -F web lint", "lint"),
    ("pnpm --filter=web run build", "build"), ("yarn workspace api test", "tests"), ("npm -w api run test", "tests"),
    ("turbo run test", "tests"), ("npx turbo run lint --filter=web", "lint"), ("nx test web", "tests"),
    ("npx nx run-many -t test", "tests"), ("nx affected --target=typecheck", "types"),
    # runners run from a virtualenv's or node_modules' programs, or by their path
    (".venv/bin/python -m pytest -q", "tests"), (".venv/bin/pytest tests/", "tests"),
    ("python3.12 -m pytest", "tests"), ("venv/bin/python -m mypy src", "types"), ("node_modules/.bin/jest", "tests"),
    ("./node_modules/.bin/eslint .", "lint"), ("bin/rails test", "tests"), ("bundle exec rails test", "tests"),
    ("xcodebuild test -scheme App", "tests"), ("xcodebuild -scheme App -destination 'name=iPhone 15' test", "tests"),
    ("terraform validate", "lint"), ("tflint --recursive", "lint"), ("helm lint ./chart", "lint"),
    ("for i in 1 2 3; do pnpm test; done", "tests"), ("if true; then cargo test; fi", "tests"),
])
def test_the_common_runners_are_checks(command: str, kind: str) -> None:
    assert [check.kind for check in commands.checks(command)] == [kind]


@pytest.mark.parametrize("command", ["git status", "ls does-not-exist", "cat test_x.py", "echo pytest",
                                     "python3 scripts/gen.py", "node server.js", "vim test_x.py",
                                     "chmod +x run_tests.sh", "git add test_x.py", "black .", "prettier --write .",
                                     "cargo fmt", "python3 -c 'import test_x'", "python manage.py migrate",
                                     "uv run --with requests python x.py", "hatch env create", "pre-commit install",
                                     "cmake -B build", "flutter pub get", "bazel query //...", "ninja --version",
                                     "gotestsum --help", "python -m build --help", "./build.sh", "avahi-browse -a",
                                     "npm install", "pnpm add -D vitest", "turbo run dev", "nx serve web", "bin/dev",
                                     "xcodebuild build -scheme App", "terraform plan", "python -m http.server",
                                     ".venv/bin/pip install -e ."])
def test_other_commands_are_no_checks(command: str) -> None:
    assert commands.checks(command) == []


def test_a_checks_output_says_whether_it_passed_whatever_its_exit_status() -> None:
    assert commands.failed("--- FAIL: TestX (0.01s)\nFAIL\tpkg\t0.2s") is True
    assert commands.failures("--- FAIL: TestX\n--- FAIL: TestY\nFAIL") == 2
    assert commands.failed("12 passed, 0 failed in 1.2s") is False
    assert commands.failed("ok  \tgithub.com/x/y\t0.4s") is False
    assert commands.failed("building...") is None
    # unittest's (a test file run by python), ctest's
    unittest = "F\n======\nFAIL: test_y (test_a.TestA.test_y)\n------\nRan 2 tests in 0.001s\n\nFAILED (failures=1)"
    assert (commands.failed(unittest), commands.failures(unittest), commands.failed_tests(unittest)) == (
        True, 1, ("test_y",))
    assert commands.failed("Ran 2 tests in 0.001s\n\nOK") is False
    assert (commands.failed("67% tests passed, 1 tests failed out of 3"),
            commands.failures("67% tests passed, 1 tests failed out of 3")) == (True, 1)
    assert commands.failed("100% tests passed, 0 tests failed out of 3") is False


# -- the LLM handoff keeps the facts ---------------------------------------------------------------------------
def test_the_prompt_carries_the_facts_after_the_transcript() -> None:
    content = user_content("# Session", projects=["widgets"], candidate_keywords=[], abridged=False,
                           facts=[FAILING, UNCOMMITTED])
    assert f"- {FAILING}\n- {UNCOMMITTED}" in content.split("</transcript>", 1)[1]
    assert "tool calls left" not in user_content("# Session", projects=[], candidate_keywords=[], abridged=False)


def test_an_llm_handoff_that_says_done_keeps_the_facts_and_is_partial(
        env: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    codex = env["home"] / "codex-home"
    shutil.copytree(check_transcripts.FIXTURES / "codex", codex)
    monkeypatch.setenv("EYWA_SOURCES", json.dumps([{"kind": "codex", "path": str(codex)}]))
    server = FakeAnthropic("sk-" + "ant-" + "api03-" + "x" * 60)
    server.answer = lambda request: {**default_answer(request), "status": "done",
                                     "open_threads": ["Add backoff(attempt) to the retry loop"]}
    monkeypatch.setenv("ANTHROPIC_API_KEY", server.api_key)
    monkeypatch.setenv("EYWA_LLM__BASE_URL", server.base_url)
    try:
        eywa = Eywa(load_settings())
        eywa.ingest(llm=False)
        session_id = eywa.store.conn.execute("SELECT session_uuid FROM handoffs").fetchone()[0]
        record = eywa.extract(session_id)
        handoff = record.path.read_text(encoding="utf-8")
        eywa.close()
    finally:
        server.close()
    assert "status: partial" in handoff
    assert f"## Open Threads\n- {FAILING}\n- {UNCOMMITTED}\n- {NOT_PUSHED}\n- Add backoff(attempt) to the retry loop" \
        in handoff
    assert FAILING in server.message_requests[0]["messages"][0]["content"]


def test_a_step_dropped_from_the_todo_list_is_a_fact_an_llm_handoff_keeps() -> None:
    body = "## Open Threads\n- Not done, dropped from the todo list: Write retry tests\n- Question: Which backoff?\n"
    assert facts_in(body) == ["Not done, dropped from the todo list: Write retry tests"]


def test_a_check_not_rerun_and_a_command_failed_are_facts_an_llm_handoff_keeps() -> None:
    body = ("## Open Threads\n- Lint not rerun: `mise run lint` failed; only `golangci-lint run ./a/` passed after\n"
            "- Failed, not run again: `check.sh verify`: ✗ FAIL: x\n- Question: Which backoff?\n")
    assert facts_in(body) == ["Lint not rerun: `mise run lint` failed; only `golangci-lint run ./a/` passed after",
                              "Failed, not run again: `check.sh verify`: ✗ FAIL: x"]


def test_a_commit_left_to_the_person_a_todo_left_in_code_and_a_review_file_are_facts_an_llm_handoff_keeps() -> None:
    body = ("## Open Threads\n- Uncommitted, left for the person to commit: `resume.go`, `paths.go`\n"
            "- Left in `resume.go`: TODO: read the start time from the metadata\n- Question: Which backoff?\n"
            "- Review file left in the repo: `review-01.md`, written by the reviewer subagent\n")
    assert facts_in(body) == ["Uncommitted, left for the person to commit: `resume.go`, `paths.go`",
                              "Left in `resume.go`: TODO: read the start time from the metadata",
                              "Review file left in the repo: `review-01.md`, written by the reviewer subagent"]


def test_a_pr_left_unmerged_and_a_check_left_to_the_person_are_facts_an_llm_handoff_keeps() -> None:
    body = ("## Open Threads\n- Not merged: PR #6 (safe to merge); merging is left to the user\n"
            "- Not run: rebuild and test with the Gemini test repo (left to the user)\n- Question: Which backoff?\n")
    assert facts_in(body) == ["Not merged: PR #6 (safe to merge); merging is left to the user",
                              "Not run: rebuild and test with the Gemini test repo (left to the user)"]


# -- compaction ------------------------------------------------------------------------------------------------
def test_a_compaction_summarys_frame_gives_no_keyword_but_its_content_does() -> None:
    from eywa.core.sources.discovery import file_session, group_sessions, scan_files
    from eywa.core.sources.sessions import read_session

    root = Path(__file__).parent / "fixtures" / "claude-code-2.1.332" / "manual-compaction"
    group = next(iter(group_sessions(scan_files(root), file_session).values()))
    terms = weighted_terms(read_session(group, identity)[0])
    framed = [t for t in terms if any(w in t for w in ("continued", "portion", "primary", "conversation"))]
    assert framed == [] and "iso-weeks" in " ".join(terms)


def test_a_file_the_user_asked_for_as_temporary_and_never_removed_is_a_note() -> None:
    """63784323: "can you write me this into a markdown file? (just a temporary one in the root)"."""
    threads, status = _facts("63784323-7042-4ab8-82b1-3c0b79467bf9")
    assert threads == ["Temporary file still in the repository: `shadow-branch-suffixes.md`"] and status == "done"


def test_a_file_named_like_a_temporary_one_but_not_asked_for_as_one_is_no_note() -> None:
    """e7eb742c writes `cmd/entire/cli/debug.go`, a `debug` command: a feature, not a scratch file."""
    assert not any(t.startswith("Temporary") for t in _facts("e7eb742c-bdac-4824-afdb-20b63ca6b6dd")[0])


def test_a_scratch_file_removed_later_is_no_note() -> None:
    session = Session(session_id="s", agent="codex", cwd="/tmp/widgets")
    session.events = [Event("user", None, text="Try the parser on a sample"),
                      Event("tool", None, tool=ToolCall("w", "Write", {"file_path": "/tmp/widgets/scratch_parse.py"})),
                      Event("tool", None, tool=ToolCall("b", "Bash", {"command": "python3 scratch_parse.py && "
                                                                                  "rm scratch_parse.py"}))]
    assert session_facts(session).temporary == []
    session.events = session.events[:2]
    assert session_facts(session).temporary == ["scratch_parse.py"]


def test_debug_code_written_into_git_hooks_and_never_taken_out_is_a_note() -> None:
    """03a1382e writes md5 checks logging to /tmp/entire-index-debug.log into three git hooks to find what rewrites
    the index, and leaves them there."""
    threads, _ = _facts("03a1382e-ecd5-42c4-b3d4-5c659e165904")
    assert "Temporary debug code still in `prepare-commit-msg`, `post-commit`, `pre-push`: " \
           "`LOG=\"/tmp/entire-index-debug.log\"`" in threads


def test_code_about_debugging_that_the_session_means_to_keep_is_no_debug_note() -> None:
    """e7eb742c adds a `debug` command (`newDebugCmd`), 8c816805 a `logging.Debug` call: features, not debug code."""
    for session_id in ("e7eb742c-bdac-4824-afdb-20b63ca6b6dd", "8c816805-24e2-4871-ac94-e97ce23993c1"):
        assert session_facts(corpus_session(session_id)).debugging == {}


def test_debug_code_a_later_edit_took_out_or_a_checkout_put_back_is_no_note() -> None:
    session = Session(session_id="s", agent="codex", cwd="/tmp/widgets")
    added = ToolCall("e", "Edit", {"file_path": "/tmp/widgets/parse.py", "old_string": "    return rows",
                                   "new_string": '    print("DEBUG: rows", len(rows))\n    return rows'})
    removed = ToolCall("r", "Edit", {"file_path": "/tmp/widgets/parse.py",
                                     "old_string": '    print("DEBUG: rows", len(rows))\n    return rows',
                                     "new_string": "    return rows"})
    session.events = [Event("tool", None, tool=added)]
    assert session_facts(session).debugging == {"parse.py": 'print("DEBUG: rows", len(rows))'}
    session.events = [Event("tool", None, tool=added), Event("tool", None, tool=removed)]
    assert session_facts(session).debugging == {}
    checkout = ToolCall("c", "Bash", {"command": "git checkout -- parse.py"})
    session.events = [Event("tool", None, tool=added), Event("tool", None, tool=checkout)]
    assert session_facts(session).debugging == {}


def test_a_line_marked_debug_or_temp_in_code_is_debug_code_and_a_documents_mention_is_not() -> None:
    session = Session(session_id="s", agent="codex", cwd="/tmp/widgets")

    def write(path: str, content: str) -> Event:
        call = ToolCall("w", "Write", {"file_path": f"/tmp/widgets/{path}", "content": content})
        return Event("tool", None, tool=call)

    session.events = [write("app.js", "run();\nconsole.log('[debug] state', state);\n"),
                      write("sync.py", "retries = 0  # TEMP: remove after the import\n"),
                      write("README.md", "Run with `DEBUG=1 npm start` to see each request.\n"),
                      write("log.py", 'logger.debug("state %s", state)\nlevel = "DEBUG"\n')]
    assert session_facts(session).debugging == {"app.js": "console.log('[debug] state', state);",
                                                "sync.py": "retries = 0  # TEMP: remove after the import"}


def test_debug_code_in_a_scratch_file_in_tmp_is_no_note_even_when_the_sessions_folder_is_unknown() -> None:
    probe = ToolCall("w", "Write", {"file_path": "/tmp/probe/run.py", "content": 'print("DEBUG: rows", rows)\n'})
    for cwd in ("/work/widgets", ""):
        session = Session(session_id="s", agent="claude-code", cwd=cwd, events=[Event("tool", None, tool=probe)])
        assert session_facts(session).debugging == {}
    kept = ToolCall("k", "Write", {"file_path": "/work/widgets/run.py", "content": 'print("DEBUG: rows", rows)\n'})
    session = Session(session_id="s", agent="claude-code", cwd="/work/widgets", events=[Event("tool", None, tool=kept)])
    assert session_facts(session).debugging == {"run.py": 'print("DEBUG: rows", rows)'}


def test_a_go_integration_test_edited_and_never_run_with_the_integration_tests_is_a_note() -> None:
    """2956cee6 edits `integration_test/last_interaction_test.go` in a merge, then runs only `go build` and `go test
    ./cmd/entire/cli/...`, which skip the integration build tag: the test was never compiled after the edit."""
    threads, _ = _facts("2956cee6-6153-4ba6-ba24-3b7f3257549c")
    assert "Integration tests not run after the last edit of `last_interaction_test.go`" in threads


def test_an_integration_test_run_after_the_edit_or_a_python_one_under_pytest_is_no_note() -> None:
    """34de7f83 runs `mise run test:ci` (the integration tests too) after its edits; a7da6a22's Python
    `tests/test_integration.py` runs under a plain `pytest`."""
    for session_id in ("34de7f83-0473-45b7-a94f-53aa41b3108c", "a7da6a22-facc-4fcd-8bab-f83c87862004"):
        assert session_facts(corpus_session(session_id)).integration_left == []
    session = Session(session_id="s", agent="codex", cwd="/tmp/widgets")
    edit = ToolCall("e", "Edit", {"file_path": "/tmp/widgets/e2e/login_test.go", "old_string": "a", "new_string": "b"})
    unit = ToolCall("u", "Bash", {"command": "go test ./..."}, output="ok  widgets 0.1s")
    tagged = ToolCall("t", "Bash", {"command": "go test -tags=e2e ./e2e/..."}, output="ok  widgets/e2e 0.3s")
    session.events = [Event("tool", None, tool=call) for call in (edit, unit)]
    assert session_facts(session).integration_left == ["e2e/login_test.go"]
    session.events.append(Event("tool", None, tool=tagged))
    assert session_facts(session).integration_left == []


def test_a_session_with_no_plan_reads_no_command_for_its_verification_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    def unread(command: str) -> list[commands.Check]:
        raise AssertionError(f"read {command!r} for a plan the session has not")

    monkeypatch.setattr(commands, "checks", unread)
    run = ToolCall("r", "Bash", {"command": "go test ./..."}, output="ok  widgets 0.1s")
    session = Session(session_id="s", agent="codex", cwd="/tmp/widgets", events=[Event("tool", None, tool=run)])
    assert facts._manual_checks_left(session, "", 0) == ([], [])


def test_the_facts_read_each_commands_checks_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The integration tests left are read in the one pass over the calls that reads the check runs."""
    read: list[str] = []
    checks = commands.checks
    monkeypatch.setattr(commands, "checks", lambda command: read.append(command) or checks(command))
    edit = ToolCall("e", "Edit", {"file_path": "/tmp/widgets/e2e/login_test.go", "old_string": "a", "new_string": "b"})
    runs = [ToolCall(f"r{n}", "Bash", {"command": command}, output="ok  widgets 0.1s")
            for n, command in enumerate(("go test ./...", "go vet ./...", "go test -tags=e2e ./e2e/..."))]
    session = Session(session_id="s", agent="codex", cwd="/tmp/widgets",
                      events=[Event("tool", None, tool=call) for call in (edit, *runs)])
    assert session_facts(session).integration_left == []
    assert read == ["go test ./...", "go vet ./...", "go test -tags=e2e ./e2e/..."]


def test_a_commit_the_sessions_git_status_later_shows_in_sync_with_its_upstream_is_not_left_unpushed() -> None:
    session = Session(session_id="s", agent="codex", cwd="/tmp/widgets")
    commit = ToolCall("c", "Bash", {"command": "git commit -am 'Add retry'"}, output="[main 1a2b3c4] Add retry")
    status = ToolCall("s", "Bash", {"command": "git status"},
                      output="On branch main\nYour branch is up to date with 'origin/main'.\n\nnothing to commit")
    session.events = [Event("tool", None, tool=commit)]
    assert [t.text for t in session_facts(session).threads()] == ["Not pushed: commit 1a2b3c4 on main"]
    session.events.append(Event("tool", None, tool=status))
    assert session_facts(session).threads() == []


def test_a_commit_whose_pull_request_was_opened_is_not_left_unpushed() -> None:
    session = Session(session_id="s", agent="codex", cwd="/tmp/widgets")
    session.events = [Event("tool", None, tool=ToolCall("c", "Bash", {"command": "git commit -am 'Add retry'"},
                                                        output="[retry 1a2b3c4] Add retry")),
                      Event("tool", None, tool=ToolCall("p", "Bash", {"command": "gh pr create --fill"},
                                                        output="https://github.com/acme/widgets/pull/7"))]
    assert session_facts(session).threads() == []


def test_a_manual_verification_step_of_the_plan_the_session_ended_on_is_a_note_when_never_run() -> None:
    """ae68c513 (blind label: "The plan's manual verification step was never run; only fmt, lint and test:ci were"):
    its plan's "2. Manual: run `echo ... | go run ...`", then only "commit this"."""
    threads, status = _facts("ae68c513-db90-451f-940d-804a1d3d0986")
    manual = [t for t in threads if t.startswith("Not run: the plan's manual verification step: run `echo")]
    assert len(manual) == 1 and "verify the JSON output" in manual[0] and status == "done"


def test_a_plans_verification_step_is_said_up_to_a_threads_clause_so_what_it_checks_is_kept() -> None:
    """4931d45a's manual step, cut at 12 words before what it checks ("create a session, make changes, commit…", a
    blind reviewer: "stops before what must be checked"), is 23 words: said whole. A longer one is still cut."""
    threads = _facts("4931d45a-d447-44b4-8475-1e6fcfcc28bf")[0]
    assert ("Not run: the plan's manual verification step: create a session, make changes, commit, verify "
            "`transcript_uuid_at_start` and `transcript_lines_at_start` appear in metadata.json on entire/sessions "
            "branch") in threads
    step = "start the server, open the settings page, change the theme, reload, " * 3 + "verify the theme is kept"
    thread, = Facts(manual_left=[step]).threads()
    assert thread.text.endswith("…") and len(thread.text) < 200


def test_a_plans_manual_step_is_no_note_once_a_new_request_followed_the_plan() -> None:
    """d64b50bb: its plan's "Manual test: Run `entire unknowncommand`", then "please update our showSuggestion method
    with this example from brew": new work."""
    assert not any("manual" in t for t in _facts("d64b50bb-125b-4b54-867a-e59841e553d8")[0])


def test_a_server_started_in_the_background_and_never_stopped_is_still_running() -> None:
    # 7acd37a8 starts `pnpm dev` twice in the background and stops only the first (its KillShell of the second names
    # the first's id again); blind label: "A pnpm dev server ... was left running at the end"
    facts = session_facts(corpus_session("7acd37a8-2745-4b58-a8a9-46164b22ad9e"))
    assert facts.running == ["pnpm dev"]
    assert "Still running: `pnpm dev`, started in the background and never stopped" in [t.text for t in facts.threads()]


def test_a_command_moved_to_the_background_for_running_long_is_not_left_running() -> None:
    # cb2e607c's reinstall went to the background by itself (no `run_in_background`) and ended there
    assert session_facts(corpus_session("cb2e607c-c758-415a-8b45-c49e4631906a")).running == []


def test_the_unchecked_test_plan_of_a_drafted_pr_is_not_run() -> None:
    # 38917d7d drafts its PR in the last reply with three "- [ ] Verify ..." boxes it never ran
    facts = session_facts(corpus_session("38917d7d-9f69-4210-a3b0-eed0a9e97575"))
    assert (facts.pr, len(facts.unticked)) == ("drafted", 3)
    # each box is the thread (blind label: "... three manual checks unticked (telemetry off without settings, ...)")
    assert ("Not run: the PR's test plan, 3 checks unticked: telemetry is disabled when settings don't exist; "
            "telemetry is enabled only when explicitly set to `true`; `--no-telemetry` flag still works"
            in [t.text for t in facts.threads()])


def test_an_unticked_test_plan_names_its_first_three_checks_and_counts_the_rest() -> None:
    facts = Facts(pr="created", unticked=["Verify the retry waits", "Check that `--retries 0` disables it",
                                          "Run the CLI by hand", "Test on Windows"])
    assert facts.threads()[-1].text == ("Not run: the PR's test plan, 4 checks unticked: the retry waits; "
                                        "`--retries 0` disables it; Run the CLI by hand (and 1 more)")


def test_a_drafted_pr_with_no_test_plan_leaves_none_unticked() -> None:
    facts = session_facts(corpus_session("8b418ea5-895d-4ad5-abe8-4489d36e454f"))
    assert (facts.pr, facts.unticked) == ("drafted", [])


def _shell_session(*calls: ToolCall) -> Session:
    session = Session(session_id="s", agent="claude-code", cwd="/work/widgets")
    session.events = [Event("tool", None, tool=call) for call in calls]
    return session


def _shell(command: object, error: str | None = None) -> ToolCall:
    return ToolCall(str(id(command)) + (error or ""), "Bash", {"command": command}, is_error=error is not None,
                    error=error or "")


@pytest.mark.parametrize("command", ['""', "'' && ''", None, ["make", "x"]])
def test_a_failed_command_of_no_words_or_of_no_text_names_no_program(command: object) -> None:
    assert session_facts(_shell_session(_shell(command, "Exit code 1\nboom"))).failed == []


def test_a_failed_command_whose_output_says_nothing_is_named_without_an_empty_verdict() -> None:
    threads = [t.text for t in session_facts(_shell_session(_shell("make deploy", "Exit code 2"))).threads()]
    assert threads == ["Failed, not run again: `make deploy`"]


@pytest.mark.parametrize(("command", "error"), [
    ("gh pr view --json url", 'Exit code 1\nno pull requests found for branch "feat"'),
    ("gh pr checks 12", "Exit code 8\nSome checks were not successful"),
    ("gh run view 991 --log-failed", "Exit code 1\nrun 991 is still in progress"),
    ("pip show requests", "Exit code 1\nWARNING: Package(s) not found: requests"),
    ("npm outdated", "Exit code 1\nPackage  Current  Wanted  Latest\nreact  18.2.0  18.3.1  19.0.0"),
    ("npm ls react", "Exit code 1\nnpm error missing: react"),
    ("docker ps --filter name=db", "Exit code 1\nCannot connect to the Docker daemon"),
    ("git ls-remote --exit-code origin feat", "Exit code 2"),
    ("! grep -q TODO src/app.py", "Exit code 1"),
    ("systemctl status nginx", "Exit code 3\nActive: inactive (dead)"),
])
def test_a_failed_probe_of_a_tool_that_reads_is_no_note(command: str, error: str) -> None:
    """Their exit status is the answer (no PR yet, a check pending, a package missing, a match expected absent)."""
    assert session_facts(_shell_session(_shell(command, error))).failed == []


def test_a_failed_step_of_a_tool_that_acts_is_a_note() -> None:
    failed = session_facts(_shell_session(_shell("gh pr merge 12 --squash", "Exit code 1\nPull request is not "
                                                                             "mergeable"))).failed
    assert failed == [("gh pr", "Pull request is not mergeable")]


@pytest.mark.parametrize(("failed", "rerun"), [
    ("python scripts/gen.py --all", "python3 scripts/gen.py --all"),
    ("./scripts/gen.sh --all", "bash scripts/gen.sh --all"),
    ("/work/widgets/bin/tool run", "./bin/tool run"),
    ("node scripts/build.js", "node ./scripts/build.js"),
])
def test_a_failed_command_run_through_later_under_another_spelling_is_no_note(failed: str, rerun: str) -> None:
    session = _shell_session(_shell(failed, "Exit code 1\nError: config missing"), _shell(rerun))
    assert session_facts(session).failed == []


def test_a_failed_script_is_a_note_when_only_another_script_ran_through_after() -> None:
    session = _shell_session(_shell("python3 scripts/gen.py", "Exit code 1\nError: config missing"),
                             _shell("python3 scripts/other.py"))
    assert session_facts(session).failed == [("gen.py", "Error: config missing")]


def _test_run(command: str, passed: bool) -> ToolCall:
    return ToolCall(command + str(passed), "Bash", {"command": command}, is_error=not passed,
                    error="" if passed else "Exit code 1", output="5 passed" if passed else "1 failed, 4 passed")


@pytest.mark.parametrize(("failed", "passed"), [
    ("pytest tests/test_x.py::test_y", "pytest tests/test_x.py"),
    ("go test ./pkg/store -run TestSave", "go test ./pkg/store"),
    ("pytest tests/test_x.py -k retry", "pytest tests/"),
    ("go test ./pkg/store/...", "go test ./pkg/..."),
    ("mise run test:integration", "go test -tags=integration ./cmd/cli/integration_test/"),
    ("go build -tags E2E ./cli/e2e_test/...", "go test -tags e2e -c ./cli/e2e_test/... -o /dev/null"),
    # `python -m`'s `-m` is no marker, nor a virtualenv's path a part of the project
    ("python -m pytest tests/test_x.py", "python -m pytest"),
    (".venv/bin/python -m pytest tests/test_x.py::test_y", ".venv/bin/python -m pytest tests/"),
    ("bin/rails test test/models/user_test.rb", "bin/rails test"),
    ("pnpm --filter web test", "pnpm -r test"),
    ("pnpm --filter web test -- src/a.test.ts", "pnpm --filter web test -- --reporter=dot"),
    # Django's test labels are the folders they name; `manage.py` is the program, no file of the project
    ("python manage.py test shop.tests.test_product_list_queries", "python manage.py test shop"),
    ("pytest shop/tests/test_views.py", "python manage.py test"),
])
def test_a_failed_run_on_a_part_that_a_later_pass_on_a_wider_part_covers_is_rerun(failed: str, passed: str) -> None:
    """A test written red, run alone, then its file passed: the full pass before does not matter."""
    session = _shell_session(_test_run("pytest", True), _test_run(failed, False), _test_run(passed, True))
    assert session_facts(session).not_rerun() == []


@pytest.mark.parametrize(("failed", "passed"), [
    ("pytest tests/test_a.py", "pytest tests/test_b.py"),
    ("pytest tests/test_x.py", "pytest tests/test_x.py::test_y"),
    ("go test ./pkg/...", "go test ./pkg"),
    ("pytest tests/test_x.py", "pytest tests/test_x.py -k retry"),
    ("mise run test:integration", 'mise run test:integration -- -run "TestResume"'),
    ("mise run test:e2e", "mise run test:integration"),
    ("python -m pytest -m slow", "python -m pytest -m fast"),
    ("python manage.py test shop", "python manage.py test shop.tests"),
    ("pnpm --filter web test", "pnpm --filter api test"),
])
def test_a_failed_run_on_a_part_that_only_another_or_a_narrower_part_passed_after_is_not_rerun(
        failed: str, passed: str) -> None:
    session = _shell_session(_test_run(failed, False), _test_run(passed, True))
    assert [(run.command, last.command) for run, last in session_facts(session).not_rerun()] == [(failed, passed)]


def test_a_failed_go_build_of_the_e2e_tests_is_rerun_by_their_test_compile() -> None:
    """35d98d6f: `go build -tags e2e ./cmd/entire/cli/e2e_test/...` failed on names only its `_test.go` files define
    (`go build` skips them); `go test -tags e2e -c` on the same packages compiled them all and passed, twice."""
    assert session_facts(corpus_session("35d98d6f-1ef4-4028-9b65-62628a240453")).not_rerun() == []


def test_a_failed_commands_verdict_of_one_long_word_is_cut_to_a_line_a_phone_shows() -> None:
    (_, said), = session_facts(_shell_session(_shell("./deploy.sh", "Exit code 1\nError:" + "x" * 900))).failed
    assert len(said) <= 120


@pytest.mark.parametrize(("command", "error"), [
    ("test -f config.yaml && ./scripts/run.sh", "Exit code 1"),
    ("grep -q OLD src/a.py && sed -i 's/OLD/NEW/' src/a.py", "Exit code 1"),
    ("ls dist/ && node dist/index.js", "Exit code 2\nls: cannot access 'dist/': No such file or directory"),
])
def test_a_failed_probe_before_the_last_step_is_no_note_of_a_step_that_never_ran(command: str, error: str) -> None:
    assert session_facts(_shell_session(_shell(command, error))).failed == []


def test_a_failed_last_step_after_a_probe_that_passed_is_a_note() -> None:
    failed = session_facts(_shell_session(_shell("ls dist/ && node dist/index.js",
                                                 "Exit code 1\nindex.js\nError: PORT is not set"))).failed
    assert failed == [("index.js", "Error: PORT is not set")]


def test_a_secret_in_a_failed_commands_verdict_or_its_name_is_redacted_in_the_handoff(tmp_path: Path) -> None:
    """The quoted verdict line comes from the command's output, read redacted, as its name from the command."""
    from eywa.core.redaction.scrubber import default_redactor

    secret = "ghp_" + "aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xY2z4A"
    records = [
        {"timestamp": "2026-02-01T10:00:00Z", "type": "session_meta", "payload": {"id": "s", "cwd": "/work/widgets"}},
        {"timestamp": "2026-02-01T10:00:01Z", "type": "response_item",
         "payload": {"type": "function_call", "name": "shell", "call_id": "c1",
                     "arguments": json.dumps({"command": ["bash", "-lc", f"./deploy.sh --token={secret}"]})}},
        {"timestamp": "2026-02-01T10:00:02Z", "type": "response_item",
         "payload": {"type": "function_call_output", "call_id": "c1",
                     "output": f"Exit code: 1\nOutput:\nError: token {secret} was denied"}},
    ]
    path = tmp_path / "rollout.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records), encoding="utf-8")
    session = build_codex_session("s", [path], default_redactor().redact)[0]
    threads = [t.text for t in session_facts(session).threads()]
    assert threads and threads[0].startswith("Failed, not run again: `deploy.sh")
    assert not any(secret in t or secret[:12] in t for t in threads)


def test_a_failed_windows_command_is_named_by_its_program_and_its_verdict_without_the_path() -> None:
    """Copilot CLI's PowerShell: backslashes are a path's, not escapes."""
    error = "Exit code 1\nError: C:\\Users\\me\\app\\x.txt not found"
    session = _shell_session(_shell(r"C:\tools\gen.exe --all", error))
    assert session_facts(session).failed == [("gen.exe --all", "Error: not found")]


@pytest.mark.parametrize("command", [r"Get-ChildItem -Path .\src", r"Test-Path C:\Users\me\app\.env",
                                     r"Select-String -Path src\*.py -Pattern TODO"])
def test_a_failed_powershell_probe_is_no_note(command: str) -> None:
    assert session_facts(_shell_session(_shell(command, "Exit code 1\nCannot find path"))).failed == []


@pytest.mark.parametrize("command", ["bash -lc 'python3 -m pytest'", 'zsh -c "cd widgets && python3 -m pytest"'])
def test_a_check_inside_a_shell_wrapper_is_a_check_not_a_failed_command(command: str) -> None:
    """Older Codex runs each command as `["bash", "-lc", "..."]`: a test run left failing is a failing check."""
    run = ToolCall("t", "Bash", {"command": command}, is_error=True, error="Exit code 1",
                   output="1 failed, 1 passed in 0.02s")
    facts = session_facts(_shell_session(run))
    assert [t.text for t in facts.threads()] == ["Tests failing: `python3 -m pytest` last run failed (1 failure)"]


@pytest.mark.parametrize(("command", "error"), [
    ("git add -A && git commit -m 'wip'", "Exit code 1\nOn branch main\nnothing to commit, working tree clean"),
    ("gh pr create --title x --body y", 'Exit code 1\na pull request for branch "x" into branch "main" already exists'),
    ("rm build/out.txt", "Exit code 1\nrm: cannot remove 'build/out.txt': No such file or directory"),
    ("timeout 10 npm run dev", "Exit code 124"),
])
def test_a_command_whose_end_was_already_reached_or_that_was_stopped_on_purpose_is_no_note(
        command: str, error: str) -> None:
    """Nothing to commit, the PR or file already so, a dev server bounded by `timeout`: nothing is left."""
    assert session_facts(_shell_session(_shell(command, error))).failed == []


def test_a_failed_run_of_a_task_is_named_with_its_task_and_another_tasks_pass_does_not_clear_it() -> None:
    session = _shell_session(_shell("npm run migrate", "Exit code 1\nError: relation \"users\" does not exist"),
                             _shell("npm run build"))
    assert session_facts(session).failed == [("npm run migrate", 'Error: relation "users" does not exist')]


def test_a_command_the_permission_rules_held_is_not_run_not_failed() -> None:
    """2b4ed4c0: `claude -p ...` answered "This command requires approval" and never ran after: open, as not run (its
    `claude --version` probe held too is nothing left)."""
    facts = session_facts(corpus_session("2b4ed4c0-b905-41de-9238-273db3ec737a"))
    assert [t.text for t in facts.threads() if "claude" in t.text] == [
        "Not run: `claude -p`, held by the permission rules"]
    blocked = _shell("make deploy", "make in '~/infra' was blocked. For security, Claude Code may only run in the "
                                    "allowed working directories")
    assert session_facts(_shell_session(blocked, _shell("./deploy.sh", "This command requires approval"))).failed == [
        ("make deploy", HELD), ("deploy.sh", HELD)]
    assert session_facts(_shell_session(blocked, _shell("make deploy"))).failed == []


def test_a_failed_inline_script_of_several_lines_is_an_experiment_not_a_note() -> None:
    """37f83ec9: `uv run python -c "\\nimport ...` scripts (cut mid-quote when stored) that guessed a wrong import were
    named by a line of their code (`print('Without cache`, `html…`)."""
    assert session_facts(corpus_session("37f83ec9-f2ea-42a9-925e-0d5c105cb6e8")).failed == []
    cut = _shell('cd test && uv run python -c "\nfrom app import load\nprint(\'Without cache:\', load())\n# tim…',
                 "Exit code 1\nImportError: cannot import name 'load' from 'app'")
    assert session_facts(_shell_session(cut)).failed == []


def test_a_failed_one_line_inline_script_is_still_a_note() -> None:
    """2cfdacb8's `ruby -ryaml -e '...'` check the agent left failing stays a note."""
    failed = _shell("ruby -ryaml -e 'YAML.load_file(\"ci.yml\")'", "Exit code 1\nPsych::SyntaxError: did not find key")
    assert session_facts(_shell_session(failed)).failed == [("ruby -ryaml", "Psych::SyntaxError: did not find key")]


def test_a_failed_check_rerun_with_its_paths_spelled_from_the_root_is_rerun() -> None:
    """37f83ec9: `pytest test/test_x.py` (run from `test/`: not found), then the same with its absolute path, passed;
    as `ruff check` of one file."""
    assert not any("not rerun" in t for t in _facts("37f83ec9-f2ea-42a9-925e-0d5c105cb6e8")[0])
    session = _shell_session(_test_run("pytest tests/test_x.py", False), _test_run("pytest /work/widgets/tests/", True))
    assert session_facts(session).not_rerun() == []
    session = _shell_session(_test_run("pytest /work/widgets/tests/test_x.py", False), _test_run("pytest tests/", True))
    assert session_facts(session).not_rerun() == []


def test_a_session_at_the_root_folder_compares_its_checks_as_written() -> None:
    """A session whose folder is `/`: a failed `pytest tests/` that a whole `pytest` passed after is rerun (no slash
    of its command taken for the folder's)."""
    session = _shell_session(_test_run("pytest tests/", False), _test_run("pytest", True))
    session.cwd = "/"
    assert session_facts(session).not_rerun() == []


# -- a thread of the closing that restates a fact: said once, in the fact's line ------------------------------------
def test_a_closing_step_that_restates_a_fact_is_folded_into_the_facts_line() -> None:
    """9e953218 closes "Ready to push and deploy!" after two commits it never pushed, 38917d7d offers "Want me to
    create the actual PR using `gh pr create`?" after drafting it (blind readers: "Repeats line ..."): one line each,
    the agent's words kept (the old labels quote them)."""
    pushed = draft(corpus_session("9e953218-585f-4692-89df-9e0747a31c68"), UTC).open_threads
    assert pushed == ['Not pushed: 2 commits on main, the last 2564804; the agent: "Ready to push and deploy!"']
    drafted = draft(corpus_session("38917d7d-9f69-4210-a3b0-eed0a9e97575"), UTC).open_threads
    assert drafted[0] == ("PR not opened: its description was drafted in the last reply; the agent offered to create "
                          "the actual PR using `gh pr create`, no answer")
    assert not any(t.startswith("Agent offered") for t in drafted)


def test_a_closing_that_says_more_than_the_fact_stays_a_line_of_its_own() -> None:
    """a7da6a22's "Ready for `git push` when you want to publish!" leaves the push to the person, which "Not pushed"
    does not say; c010174c's "commit, push, and reply to the bugbot comment" names a reply; 8b418ea5's offer to commit
    stands beside edits its own `git status` showed (a note); 04cd0da1's "Ready to commit?" asks: it stays, the offer
    passed over before it goes."""
    assert "Next: Ready for `git push` when you want to publish!" in draft(
        corpus_session("a7da6a22-facc-4fcd-8bab-f83c87862004"), UTC).open_threads
    assert "Not done: commit, push, and reply to the bugbot comment" in draft(
        corpus_session("c010174c-a7cd-4bcc-b7d4-61258d6c463f"), UTC).open_threads
    assert "Agent offered, not taken: commit these changes" in draft(
        corpus_session("8b418ea5-895d-4ad5-abe8-4489d36e454f"), UTC).open_threads
    assert draft(corpus_session("04cd0da1-dee3-4738-8139-524dfe55de83"), UTC).open_threads == [
        "Uncommitted, left for the person to commit: `paths.go`, `state.go`, `committed.go`, `paths_test.go` "
        "and 2 more", "Question: Ready to commit?"]


def test_an_llm_handoffs_threads_are_no_closing_threads_to_fold() -> None:
    """The LLM path merges the draft's fact lines (kept whole) with threads in its own words: none is folded."""
    fact = "Uncommitted, left for the person to commit: `a.go`; the agent offered to commit these changes, no answer"
    assert facts.merge_threads([fact], ["Commit the retry change once reviewed"]) == [
        fact, "Commit the retry change once reviewed"]
    assert facts_in(f"## Open Threads\n- {fact}\n") == [fact]


def test_a_commit_in_a_repository_made_to_try_something_out_is_no_work_of_the_session() -> None:
    # 1c38adc0: `cd /tmp && ... git init && ... git commit -m "init"` to see how git treats a global ignore file
    handoff = draft(corpus_session("1c38adc0-5071-4382-9e53-de8c30e2265f"), UTC)
    assert not any(line.startswith("Committed: ") for line in handoff.what_happened), handoff.what_happened
    assert scratch_repository('cd /tmp && mkdir t && cd t && git init && git commit -m "init"')
    assert not scratch_repository('git add . && git commit -m "Fix the hook"')


def test_a_rebase_continued_commits_what_its_conflict_held() -> None:
    # cfd57c28 resolved a rebase conflict in `setup.go`, `git add`-ed it and ran `git rebase --continue`: committed,
    # not pushed (both blind readers of the session: "the rebased branch ... was never pushed")
    facts = session_facts(corpus_session("cfd57c28-f61a-42df-8ddf-d99b94586ea3"))
    assert facts.uncommitted == [] and facts.committed
    # its commit line is "[detached HEAD e1a0f76] ...", the branch the rebase updated named after it (fresh2 and agree2
    # readers: "The rebased branch cli-completion-updater (new commit e1a0f76) was never pushed")
    assert [thread.text for thread in facts.threads()] == ["Not pushed: commit e1a0f76 on cli-completion-updater"]
    # a rebase only started, or aborted, commits nothing: the edits after a commit stay uncommitted
    for step in ("git rebase origin/main", "git rebase --abort"):
        edit = ToolCall("e", "Write", {"file_path": "/work/widgets/a.go"})
        made = _shell_session(ToolCall("c", "Bash", {"command": "git commit -am 'Start'"}), edit,
                              ToolCall("r", "Bash", {"command": step}))
        assert session_facts(made).uncommitted == ["a.go"], step


def test_a_commit_on_a_detached_head_names_its_hash_and_no_branch_of_its_own() -> None:
    # a commit on a detached HEAD outside a rebase: its hash, no branch ("detached HEAD" is none)
    made = ToolCall("c", "Bash", {"command": "git commit -am 'Try'"}, output="[detached HEAD 1a2b3c4] Try\n 1 file")
    assert [thread.text for thread in session_facts(_shell_session(made)).threads()] == ["Not pushed: commit 1a2b3c4"]
    made = ToolCall("c", "Bash", {"command": "git commit -am 'Fix'"}, output="[main 1a2b3c4] Fix\n 1 file")
    assert [t.text for t in session_facts(_shell_session(made)).threads()] == ["Not pushed: commit 1a2b3c4 on main"]


def test_a_package_moved_with_mv_and_never_added_reads_new_and_deleted() -> None:
    """ddf36c6d: `mv summarise summarize`: `git status` lists the new package untracked (`git commit -a` deletes it)."""
    threads, _ = _facts("ddf36c6d-77ad-4900-9c50-1ea2c4cd932b")
    said = "; new, never added: `summarize/` (4 files); deleted: `summarise/` (4 files)"
    assert any(t.endswith(said) for t in threads)


def test_edits_never_committed_name_the_pull_request_gh_pr_checkout_switched_to() -> None:
    left = session_facts(corpus_session("847ff7d2-4a55-44d7-a3f5-a3afd89f1ee1")).left()
    assert left[0].startswith("Not committed on `soph/move-clean-to-session-cleanup` (PR #2): ")


def test_a_session_with_no_untracked_nor_deleted_path_keeps_its_plain_line() -> None:
    assert session_facts(corpus_session("775a7e0f-d6d5-47fe-a4c9-61f814abeae3")).left() == [
        "Not committed: `session.go` (no commit in the session)"]
    threads, _ = _facts("2956cee6-6153-4ba6-ba24-3b7f3257549c")
    assert not any("never added" in t or "not from this session" in t for t in threads)


def test_changes_a_git_status_listed_that_a_commit_of_some_paths_left_out_are_a_note() -> None:
    """ae68c513 (agree label: "Unrelated working-tree changes (.entire/settings.json, nolint removals in strategy
    auto_commit.go/manual_commit.go/registry.go ...) were deliberately left uncommitted"): `git status -s` listed them
    beside its own three files, `git add` of those three, then `git commit`. 45ba035c: read off `git diff --stat`."""
    facts = session_facts(corpus_session("ae68c513-db90-451f-940d-804a1d3d0986"))
    assert facts.left_out == [".entire/settings.json", "cmd/entire/cli/strategy/auto_commit.go",
                              "cmd/entire/cli/strategy/manual_commit.go", "cmd/entire/cli/strategy/registry.go"]
    threads, status = _facts("45ba035c-93ee-46e8-b83c-9d8a3a1cb05b")
    assert ("Left out of commit `46815aeb` (`Fix context param shadowing and log file FD leak in parent…`): "
            "`settings.json`") in threads and status == "done"


def test_a_commit_that_took_every_listed_change_or_left_only_untracked_ones_leaves_nothing_out() -> None:
    """2956cee6: a merge's commit takes what its status listed "to be committed", and `git add` named every unstaged
    path; 37a27d31: only `docs/generated/`, untracked before the session began, stayed out of its two commits."""
    for session_id in ("2956cee6-6153-4ba6-ba24-3b7f3257549c", "37a27d31-4a70-427b-8518-5fad6045d347"):
        assert session_facts(corpus_session(session_id)).left_out == []


def test_a_change_put_back_or_listed_clean_after_the_commit_is_no_longer_left_out() -> None:
    diff = _shell_call("git diff --stat", " a.go | 2 +-\n .../b/settings.json | 7 ++++++-\n 2 files changed")
    commit = _shell_call("git add a.go && git commit -m 'Fix a'", "[main 1a2b3c4] Fix a\n 1 file changed")
    assert session_facts(_shell_session(diff, commit)).threads()[0].text == (
        "Left out of commit `1a2b3c4` (`Fix a`): `settings.json`")
    for after in ("git checkout -- b/settings.json", "git status"):
        clean = _shell_call(after, "On branch main\nnothing to commit, working tree clean\n")
        assert session_facts(_shell_session(diff, commit, clean)).left_out == []


def _shell_call(command: str, output: str) -> ToolCall:
    return ToolCall(command, "Bash", {"command": command}, output=output)


def test_a_commit_of_everything_in_another_repository_leaves_the_main_repositorys_left_out_list_alone() -> None:
    """`git commit -a` in ../tools between two commits of some paths here: settings.json stays left out here."""
    diff = _shell_call("git diff --stat",
                       " a.go | 2 +-\n c.go | 2 +-\n .../b/settings.json | 7 ++++++-\n 3 files changed")
    first = _shell_call("git add a.go && git commit -m 'Fix a'", "[main 1a2b3c4] Fix a\n 1 file changed")
    other = _shell_call("git -C ../tools commit -a -m 'Bump'", "[main 5d6e7f8] Bump\n 1 file changed")
    second = _shell_call("git add c.go && git commit -m 'Fix c'", "[main 9a8b7c6] Fix c\n 1 file changed")
    assert session_facts(_shell_session(diff, first, other, second)).left_out == ["b/settings.json"]


def test_an_edit_git_status_lists_as_unmerged_stays_uncommitted() -> None:
    """`git status` is read by one parser: "both modified:" under "Unmerged paths:" is a changed path too."""
    edits = [ToolCall(path, "Write", {"file_path": f"/work/widgets/{path}"}) for path in ("x.go", "y.go")]
    status = _shell_call("git status", "On branch main\nUnmerged paths:\n\tboth modified:   x.go\n\n"
                                       "Changes to be committed:\n\tmodified:   y.go\n")
    assert session_facts(_shell_session(*edits, status)).uncommitted == ["x.go", "y.go"]


@pytest.mark.parametrize(("other", "left"), [("git -C ../tools commit -a -m 'Bump'", ["c.go"]),
                                             ("git -C /work/tools commit -a -m 'Bump'", ["c.go"]),
                                             ("git -C .. commit -a -m 'Bump'", [])])
def test_a_commit_of_everything_in_a_sibling_repository_leaves_the_sessions_edits_uncommitted(
        other: str, left: list[str]) -> None:
    """After a commit here, `git commit -a` in ../tools takes none of this folder's edits; one in the folder above
    (the repository this folder is in) takes them all."""
    edit = ToolCall("e", "Edit", {"file_path": "/work/widgets/c.go", "old_string": "a", "new_string": "b"})
    first = _shell_call("git commit -am 'Fix a'", "[main 1a2b3c4] Fix a\n 1 file changed")
    facts = session_facts(_shell_session(first, edit, _shell_call(other, "[main 5d6e7f8] Bump\n 1 file changed")))
    assert facts.uncommitted == left


def test_edits_left_to_commit_outside_a_merge_stay_a_note() -> None:
    """9667a07f left its rename for the person to commit, no merge run: no merge in progress."""
    threads = draft(corpus_session("9667a07f-c677-4f9d-9b21-da366e5add6a"), ZoneInfo("UTC")).open_threads
    assert any(t.startswith("Uncommitted, left for the person to commit: `common.go`") for t in threads)
    assert not any(t.startswith("Merge in progress:") for t in threads)


def test_a_mise_lint_run_whose_task_says_0_issues_passed() -> None:
    # 45ba035c: `mise run fmt && mise run lint 2>&1 | tail -20` piped (no exit status of lint's), its output
    # "[lint:go] 0 issues.": the lint run passed after the last edit
    runs = session_facts(corpus_session("45ba035c-93ee-46e8-b83c-9d8a3a1cb05b")).runs
    assert any(run.kind == "lint" and run.passed for run in runs)
    # 60b38d1e: "1 issues:\n* nilnesserr: 1\n[lint] ERROR task failed": failed still
    runs = session_facts(corpus_session("60b38d1e-f048-428b-89da-e5dca96614d4")).runs
    assert [run.passed for run in runs if run.kind == "lint"][-1] is False


# terraform's own output of a failed `terraform validate` (v1.11), coloured even into the agent's pipe
_TERRAFORM_FAILED = ("\x1b[31m╷\x1b[0m\x1b[0m\n\x1b[31m│\x1b[0m \x1b[0m\x1b[1m\x1b[31mError: \x1b[0m\x1b[0m\x1b[1m"
                     "Unsupported argument\x1b[0m\n\x1b[31m│\x1b[0m \x1b[0m\n\x1b[31m│\x1b[0m \x1b[0m\x1b[0m  on "
                     'main.tf line 3, in output "x":\n\x1b[31m│\x1b[0m \x1b[0m   3:   \x1b[4mbogus\x1b[0m = 3\x1b[0m\n'
                     "\x1b[31m╵\x1b[0m\x1b[0m")
_TERRAFORM_PASSED = "\x1b[32m\x1b[1mSuccess!\x1b[0m The configuration is valid.\n\x1b[0m"


@pytest.mark.parametrize(("output", "thread"), [
    (_TERRAFORM_FAILED, "Lint failing: `terraform validate` last run failed"), (_TERRAFORM_PASSED, None)])
def test_a_coloured_output_is_read_without_its_colour_codes(tmp_path: Path, output: str, thread: str | None) -> None:
    """A Claude Code session's `terraform validate | tail` (the pipe hides the exit status): the verdict is in the
    words its colour codes split; the output kept has none of them."""
    from eywa.core.sources.claude import subagent_parent
    from eywa.core.sources.discovery import group_sessions, scan_files
    from eywa.core.sources.sessions import read_session

    command, records = "terraform validate | tail -20", []
    for kind, message in (
            ("user", {"role": "user", "content": "Validate the Terraform config"}),
            ("assistant", {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "Bash",
                                                              "input": {"command": command}}]}),
            ("user", {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                                   "content": output, "is_error": False}]})):
        records.append({"type": kind, "message": message, "sessionId": "tf", "cwd": "/work/infra",
                        "uuid": f"u{len(records)}", "timestamp": f"2026-12-01T10:00:0{len(records)}Z"})
    (tmp_path / "tf.jsonl").write_text("".join(json.dumps(record) + "\n" for record in records))
    session = read_session(group_sessions(scan_files(tmp_path), subagent_parent)["tf"], identity)[0]
    assert "\x1b" not in session.tool_calls[0].output
    threads = [t.text for t in session_facts(session).threads()]
    assert threads == ([thread] if thread else [])


@pytest.mark.parametrize(("commands_run", "left"), [
    (["git stash push -u -m wip", "go test ./..."], "git stash push -u -m wip"),
    (["git stash", "go test ./...", "git stash pop"], ""),
    (["git stash && mise run lint; git stash pop"], ""),
    (["git stash", "git stash list", "git stash apply"], ""),
    (["git stash", "git stash drop"], ""),  # dropped on purpose: nothing to restore
])
def test_a_stash_no_later_pop_or_apply_took_back_is_a_note(commands_run: list[str], left: str) -> None:
    session = _shell_session(*(_shell(command) for command in commands_run))
    threads = [t.text for t in session_facts(session).threads()]
    assert threads == ([f"Stashed, not restored: `{left}`"] if left else [])


def test_a_stash_with_nothing_to_save_or_refused_leaves_none() -> None:
    """53ea1606's `git stash && git checkout main ...` printed "No local changes to save"; a refused stash ran none."""
    empty = ToolCall("s1", "Bash", {"command": "git stash"}, output="No local changes to save")
    refused = ToolCall("s2", "Bash", {"command": "git stash"}, is_error=True, rejected=True,
                       error="The user doesn't want to proceed with this tool use.")
    for call in (empty, refused):
        assert session_facts(_shell_session(call)).stashed == ""
