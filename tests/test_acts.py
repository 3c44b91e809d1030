"""Decisions read from what the session did, with the reason the agent gave right before the act
(core/extract/acts.py): files staged for a commit apart from others changed, files put back as committed; each on the
real session it came from and on one it must not fire on."""

from __future__ import annotations

from datetime import UTC

from eywa.core.extract.acts import acted_choices
from eywa.core.extract.deterministic import draft
from eywa.core.session import Event, Session, ToolCall

from .test_extractor import corpus_session


def _bash(command: str, output: str = "") -> Event:
    return Event("tool", None, tool=ToolCall(command, "Bash", {"command": command}, output=output))


def _session(said: str, *acts: Event) -> Session:
    """A session that shows two files changed, then says `said`, then does `acts`."""
    return Session("s", cwd="/r", events=[
        Event("user", None, text="commit this"), _bash("git status -s", " M a.go\n M b.go"),
        Event("assistant", None, text=said), *acts])


def test_files_staged_apart_from_others_changed_with_the_reason_said_is_a_choice() -> None:
    # ae68c513: `git status` lists the strategy files and settings.json changed, the agent says why it leaves them and
    # stages the three hook files (its label: "Staged only the three hook files, leaving unrelated strategy and
    # settings changes out of the commit."); the files left out are its Open Threads line's, named there only
    line = ("Staged only `hooks.go`, `hooks_claudecode_handlers.go`, `hooks_test.go` for the commit, left the rest "
            "out: The diff shows some unrelated changes in the strategy files (removing `//nolint:ireturn` comments) "
            "and `.entire/settings.json`.")
    session = corpus_session("ae68c513-db90-451f-940d-804a1d3d0986")
    assert [text for _, text in acted_choices(session)] == [line]
    handoff = draft(session, UTC)
    assert line in handoff.insights
    assert "\n".join([*handoff.insights, *handoff.open_threads]).count("registry.go") == 1


def test_a_left_out_note_with_no_choice_said_beside_it_stays_the_one_line_naming_the_files() -> None:
    # 45ba035c: `git diff --stat` listed settings.json, the commit took the rest, no reason said: no choice, the note
    handoff = draft(corpus_session("45ba035c-93ee-46e8-b83c-9d8a3a1cb05b"), UTC)
    assert not any(line.startswith("Staged only") for line in handoff.insights)
    assert ("Left out of commit `46815aeb` (`Fix context param shadowing and log file FD leak in parent…`): "
            "`settings.json`") in handoff.open_threads


def test_files_staged_apart_with_no_reason_said_are_no_choice() -> None:
    # 37a27d31 commits three files and leaves `generated/` out, saying only "All tests pass. Now committing and
    # pushing.": a step, no choice named
    assert acted_choices(corpus_session("37a27d31-4a70-427b-8518-5fad6045d347")) == []
    staged = [_bash("git add a.go"), _bash("git commit -m 'Fix a'")]
    assert acted_choices(_session("All tests pass. Let me commit.", *staged)) == []
    assert [text for _, text in acted_choices(_session("`b.go` holds unrelated debug output.", *staged))] == [
        "Staged only `a.go` for the commit, left the rest out: `b.go` holds unrelated debug output."]
    # a change a later commit took: named on the line, no Open Threads line names it
    later = [*staged, _bash("git add b.go"), _bash("git commit -m 'Log b'")]
    assert [text for _, text in acted_choices(_session("`b.go` holds unrelated debug output.", *later))] == [
        "Staged only `a.go` for the commit, left `b.go` out: `b.go` holds unrelated debug output."]
    # everything staged, or the commit takes every change (`-a`): nothing left out
    assert acted_choices(_session("`b.go` is unrelated.", _bash("git add a.go b.go"), _bash("git commit -m x"))) == []
    assert acted_choices(_session("`b.go` is unrelated.", _bash("git add a.go"), _bash("git commit -am x"))) == []
    assert acted_choices(_session("`b.go` is unrelated.", _bash("git add a.go && git add ."),
                                  _bash("git commit -m x"))) == []


def test_files_put_back_as_committed_with_the_reason_said_is_a_choice() -> None:
    # ca8cc13b: `mise run fmt` stripped nolint comments from files the work did not touch; the agent says so and runs
    # `git checkout cmd/entire/cli/strategy/` (its label: "Revert strategy files after mise run fmt stripped their
    # existing nolint:ireturn comments, rather than keep unrelated changes.")
    assert [text for _, text in acted_choices(corpus_session("ca8cc13b-d3df-4615-8f3f-f48a96b1a6f9"))] == [
        "Reverted `strategy/`: The `gofmt` run removed the `nolint:ireturn` comments from the strategy files. Those "
        "are pre-existing nolint comments I shouldn't have touched."]


def test_a_branch_checked_out_is_no_revert() -> None:
    # 7f2fbf27: "We need to switch to the PR branch." then `git checkout fix/enable-agent-flag-missing-value`
    assert acted_choices(corpus_session("7f2fbf27-0a44-42e3-94a1-4bfb5b48f071")) == []
    reason = "The formatter touched `b.go` by mistake."
    assert acted_choices(_session(reason, _bash("git checkout fix/retry-limit"))) == []
    assert acted_choices(_session(reason, _bash("git checkout -b fix/b.go"))) == []
    assert [text for _, text in acted_choices(_session(reason, _bash("git restore b.go")))] == [
        "Reverted `b.go`: The formatter touched `b.go` by mistake."]
    assert acted_choices(_session(reason, _bash("git restore --staged b.go"))) == []


def test_review_agents_launched_side_by_side_are_how_the_review_was_split() -> None:
    # 70fc6d83: two `reviewer` subagents in one message (both its readers: "Ran two reviewer agents in parallel with
    # different focuses"); d88bceb6 names each kind, and 847ff7d2 the reason said before them
    assert "Ran two review agents in parallel" in \
        [text for _, text in acted_choices(corpus_session("70fc6d83-147d-4fdf-b015-bd67eeb11883"))]
    assert any(text.startswith("Ran seven review agents in parallel: git history analyzer, pattern recognition")
               for _, text in acted_choices(corpus_session("d88bceb6-bb3a-4ae8-9405-d67d19950a46")))
    assert any(text.endswith("(Since this is a Go CLI project, I'll skip the Rails-specific reviewers and focus on the "
                             "relevant ones)")
               for _, text in acted_choices(corpus_session("847ff7d2-4a55-44d7-a3f5-a3afd89f1ee1")))


def test_research_agents_or_one_reviewer_are_no_review_split() -> None:
    # 170cebcc ran two research agents side by side (bug report and feature request templates): no review, no line
    assert not any(text.startswith("Ran ") for _, text in
                   acted_choices(corpus_session("170cebcc-4cb9-42aa-a322-6e590fc9db0d")))
    reviewer = Event("tool", None, tool=ToolCall("t", "Task", {"subagent_type": "reviewer"}))
    one = Session("s", cwd="/r", events=[Event("assistant", None, text="Let me get a review."), reviewer])
    assert acted_choices(one) == []


def test_review_agents_a_session_ends_on_are_still_how_the_review_was_split() -> None:
    reviewers = [Event("tool", None, tool=ToolCall(f"t{n}", "Task", {"subagent_type": kind}))
                 for n, kind in enumerate(("review:security-sentinel", "review:performance-oracle"))]
    ended = Session("s", cwd="/r", events=[Event("assistant", None, text="Launching the reviews."), *reviewers])
    assert acted_choices(ended) == [(1, "Ran two review agents in parallel: security sentinel, performance oracle")]
