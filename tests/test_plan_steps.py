"""The steps of a plan a session carried out that no edit or command stands behind (core/extract/plan_steps.py), and
the plan's verification steps naming a command never run (core/extract/facts.py): on the real sessions each rule came
from, on real sessions whose plan was carried out whole, and on plans of any agent written here."""

from __future__ import annotations

from zoneinfo import ZoneInfo

from eywa.core.extract.deterministic import draft
from eywa.core.extract.plan_steps import last_plan, steps_left, steps_of
from eywa.core.session import Event, Session, ToolCall

from .test_extractor import corpus_session

UTC = ZoneInfo("UTC")
PLAN = """Implement the following plan:

# Add a dry run to the migrator

## Context

The migrator writes at once; people want to see what it would do.

## Changes

### 1. Add a `--dry-run` flag to `migrate.py`
### 2. Add unit tests for the parser
### 3. Update the README
### 4. Run the migration on staging

## Verification

- Run `pytest`
"""


def _session(agent: str, *events: Event, todos: list[dict] | None = None) -> Session:
    session = Session(session_id="s", agent=agent, cwd="/tmp/widgets")
    session.events = [Event("user", None, text=PLAN), *events]
    session.todos = todos or []
    return session


def _edit(path: str, text: str = "") -> Event:
    return Event("tool", None, tool=ToolCall("e", "Edit", {"file_path": f"/tmp/widgets/{path}", "new_string": text}))


def _bash(command: str) -> Event:
    return Event("tool", None, tool=ToolCall("b", "Bash", {"command": command}, output="ok"))


def _left(session: Session) -> list[str]:
    return steps_left(session, *last_plan(session))


def test_a_plans_steps_are_its_numbered_changes_not_its_context_or_verification() -> None:
    assert [step for step, _ in steps_of(PLAN)] == [
        "Add a `--dry-run` flag to `migrate.py`", "Add unit tests for the parser", "Update the README",
        "Run the migration on staging"]


def test_steps_with_no_edit_or_command_behind_them_are_open_threads_for_any_agent() -> None:
    for agent in ("claude-code", "codex", "gemini"):
        session = _session(agent, _edit("migrate.py", 'parser.add_argument("--dry-run")'),
                           _edit("tests/test_parser.py", "def test_parse(): ..."), _bash("pytest"))
        assert _left(session) == ["Update the README", "Run the migration on staging"], agent
        threads = draft(session, UTC).open_threads
        assert "Plan step not done: Update the README" in threads, (agent, threads)
        assert "Plan step not done: Run the migration on staging" in threads, (agent, threads)


def test_a_step_is_done_by_a_test_file_a_document_a_command_run_or_a_completed_todo() -> None:
    session = _session("codex", _edit("migrate.py", "DRY_RUN = True  # --dry-run"), _edit("test_migrate.py"),
                       _edit("README.md"), todos=[{"content": "Run the migration on staging", "status": "completed"}])
    assert _left(session) == []
    session = _session("gemini", _edit("migrate.py", "--dry-run"), _edit("migrate_test.py"), _edit("docs/usage.md"),
                       _bash("python migrate.py --env staging"))
    assert _left(session) == []


def test_a_plan_dropped_whole_or_followed_by_a_new_request_leaves_no_step() -> None:
    assert _left(_session("claude-code", _bash("ls"))) == []  # no edit: the plan was not taken up
    assert _left(_session("claude-code", _edit("migrate.py", "--dry-run"))) == []  # most of it left: dropped
    session = _session("claude-code", _edit("migrate.py", "--dry-run"), _edit("test_parser.py"),
                       Event("user", None, text="actually, let's rename the migrator to upgrade.py first"))
    assert _left(session) == []


def test_the_plans_step_no_edit_carried_out_is_named() -> None:
    """8c816805 (blind label: "Plan step 3 (resolve the filter command to an absolute path) was not implemented"): its
    plan's "### 3. Use absolute path for filter command"; the edits added only the logging of steps 1 and 2."""
    threads = draft(corpus_session("8c816805-24e2-4871-ac94-e97ce23993c1"), UTC).open_threads
    assert "Plan step not done: Use absolute path for filter command" in threads


def test_a_plan_carried_out_whole_names_no_step() -> None:
    """e5933dce (blind: nothing open): 15 steps rewriting one document in one Write; fe1ffae3 (blind: nothing open):
    7 steps over two files, each step's names in the edits; ddf36c6d: the list it announced before renaming
    `summarise` to `summarize`, whose "3. Update function/variable names and comments" names nothing an edit shows."""
    for session_id in ("e5933dce-dc0c-4367-9158-04a9eadedc83", "fe1ffae3-f297-4dc1-9b9d-8a2b49059af7",
                       "ddf36c6d-77ad-4900-9c50-1ea2c4cd932b"):
        threads = draft(corpus_session(session_id), UTC).open_threads
        assert not any(t.startswith(("Plan step not done", "Not run: the plan")) for t in threads), threads


def test_a_verification_step_naming_a_command_never_run_is_not_run() -> None:
    """8c816805 (blind label: "The plan's end-to-end check (new session with a secret, commit, inspect logs and
    entire/sessions for redaction) was not run"): its plan's "4. Verify `git show entire/sessions/...` has redacted
    secrets"; the session ran only fmt, lint and test."""
    threads = draft(corpus_session("8c816805-24e2-4871-ac94-e97ce23993c1"), UTC).open_threads
    assert any(t.startswith("Not run: the plan's verification step: Verify `git show") for t in threads), threads


def test_a_verification_step_a_later_check_of_the_kind_it_names_in_words_stands_for_is_run() -> None:
    """4f8c1176: "Check that `entire resume` works correctly for Claude sessions by verifying the resume integration
    tests pass", and the session ran `mise run test:integration` (ok) after its edits: no verification left; 48f428f9's
    `goreleaser release --snapshot` never ran: still named."""
    threads = draft(corpus_session("4f8c1176-7025-4530-a860-c6fc4c63a150"), UTC).open_threads
    assert not any(t.startswith("Not run: the plan") for t in threads), threads
    threads = draft(corpus_session("48f428f9-72d8-40b2-9594-953019809473"), UTC).open_threads
    assert any(t.startswith("Not run: the plan's verification step (and 1 more): Run `goreleaser") for t in threads)


def test_the_plan_is_a_proposal_the_user_approved_or_a_list_announced_right_before_the_edits() -> None:
    """ee6078de: "## What Needs to Change" with numbered headings, then "Let's implement this."; ddf36c6d: "Now I'll
    make all the US English changes. I'll: 1. Rename ...", then its edits."""
    session = corpus_session("ee6078de-2c4f-428e-b137-aafce7251a7a")
    plan, after = last_plan(session)
    assert session.events[after].text == "Let's implement this."
    assert [step for step, _ in steps_of(plan)][:2] == ["Add `Branch` field to `CommittedMetadata` struct",
                                                         "Add `Branch` field to `WriteCommittedOptions`"]
    plan, _ = last_plan(corpus_session("ddf36c6d-77ad-4900-9c50-1ea2c4cd932b"))
    assert [step for step, _ in steps_of(plan)] == [
        "Rename the `summarise` directory to `summarize`", "Update package declarations and imports",
        "Update function/variable names and comments"]


def test_a_request_for_tests_the_session_ended_on_with_no_test_file_written_is_an_open_thread() -> None:
    """60b38d1e ends on "add test that checks this new way of handling session conflicts" while a subagent still
    explores (blind label: "The user's last request, a test for the new session-start conflict handling ..., was
    never written"); 5dd7775c asks to "add tests" and writes them; 23986045 pastes "Consider adding tests ..." again
    after writing them; 5e231473 asks for Gemini tests in a review comment, then goes on to other requests."""
    threads = draft(corpus_session("60b38d1e-f048-428b-89da-e5dca96614d4"), UTC).open_threads
    # its next sentence is a clause of it ("Which only happens at session start hook"): joined as one
    assert ("Tests asked for, none written: add test that checks this new way of handling session conflicts, which "
            "only happens at session start hook") in threads
    for session_id in ("5dd7775c-3161-4ad5-bf25-eb59a6ffa8e6", "23986045-ec24-48ac-8531-832bf31b9053",
                       "5e231473-1e70-45c5-9c18-6510ac844c99"):
        threads = draft(corpus_session(session_id), UTC).open_threads
        assert not any(t.startswith("Tests asked for") for t in threads), session_id


def test_a_request_for_tests_is_answered_by_a_test_file_of_any_agent_or_names_no_test_plan() -> None:
    asked = Event("user", None, text="Fix the parser. Please add tests for the empty input.")
    edit = Event("tool", None, tool=ToolCall("e", "Edit", {"file_path": "/tmp/widgets/parse.py"}))
    test = Event("tool", None, tool=ToolCall("t", "Write", {"file_path": "/tmp/widgets/tests/test_parse.py"}))
    for agent in ("claude-code", "codex", "gemini"):
        left = Session(session_id="s", agent=agent, cwd="/tmp/widgets", events=[asked, edit])
        assert draft(left, UTC).open_threads == [
            "Tests asked for, none written: Please add tests for the empty input."], agent
        done = Session(session_id="s", agent=agent, cwd="/tmp/widgets", events=[asked, edit, test])
        assert draft(done, UTC).open_threads == [], agent
    for prompt in ("Write a PR description with a test plan.", "Fix the parser; we need to test this manually."):
        said = Event("user", None, text=prompt)
        assert draft(Session(session_id="s", cwd="/tmp/widgets", events=[said, edit]), UTC).open_threads == [], prompt


def test_tests_asked_for_are_left_to_a_refused_plan_of_those_tests() -> None:
    """3ae3ab59 asked "we need to add unit test to check ..." and the user refused the plan "Add Unit Tests for
    CLIVersion in Metadata": one thread, the plan's (it names the first test), not the request again."""
    threads = draft(corpus_session("3ae3ab59-52bc-413d-ad30-02b165c91785"), UTC).open_threads
    assert any(t.startswith("Plan not approved: Add Unit Tests for CLIVersion") for t in threads), threads
    assert not any(t.startswith("Tests asked for, none written") for t in threads), threads
    # no plan refused (60b38d1e): the request for tests stays
    threads = draft(corpus_session("60b38d1e-f048-428b-89da-e5dca96614d4"), UTC).open_threads
    assert any(t.startswith("Tests asked for, none written: add test that checks") for t in threads), threads
