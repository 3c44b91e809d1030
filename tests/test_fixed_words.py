"""The extractor's fixed words (core/handoffs/fixed_words.py): what the full-text index leaves out of a handoff, the
session's own words kept."""

from __future__ import annotations

from zoneinfo import ZoneInfo

from eywa.core.extract.deterministic import draft
from eywa.core.handoffs.fixed_words import session_words

from .test_extractor import corpus_session


def test_the_index_holds_a_real_handoff_without_the_fixed_words_the_extractor_wrote() -> None:
    # 00ef13bd: "Asked: ...", "Checks: `go test ...` passed after the last edit; `go build ./...` before it",
    # "Not committed: `common.go`, `common_test.go` (no commit in the session)": read as the extractor writes them now
    body = draft(corpus_session("00ef13bd-99a1-4001-a829-09985a069ab2"), ZoneInfo("UTC")).body
    assert "Not committed:" in body and "(no commit in the session)" in body and "passed after the last edit" in body
    held = session_words(body)
    for fixed in ("Asked:", "Checks:", "Not committed:", "no commit in the session", "passed after the last edit",
                  "before it"):
        assert fixed not in held, fixed
    for own in ("following commits to the entire/checkpoints/v1 branch", "`go build ./...`", "`common_test.go`",
                "`go test ./cmd/entire/cli/strategy/ -run TestGetGitAuthorFromRepo`"):
        assert own in held, own


def test_a_label_word_in_the_sessions_own_sentence_is_kept() -> None:
    body = ("# Fix the retry loop\n\n## What Happened\n- Tests: `go test ./...` failed (2), not run again\n"
            "- Before the retry, the loop ran before it.\n\n## Open Threads\n- Next (manual): check the retry\n")
    assert session_words(body).split() == [
        "#", "Fix", "the", "retry", "loop", "##", "What", "Happened", "-", "`go", "test", "./...`", "failed", "(2),",
        "not", "run", "again", "-", "Before", "the", "retry,", "the", "loop", "ran", "before", "it.", "##", "Open",
        "Threads", "-", "(manual):", "check", "the", "retry"]


def test_the_branch_and_tests_lines_lose_their_fixed_words_and_keep_the_branch_and_the_names() -> None:
    body = ("## What Happened\n- Tests added: `TestRetry`, `TestBackoff`; renamed: `TestOld` → `TestNew`\n"
            "- Tests renamed: `TestA` → `TestB`\n"
            "- Not committed on new branch `alex/retry`: `retry.go` (no commit in the session)\n"
            "- Switched to branch `main`\n")
    assert session_words(body).split() == [
        "##", "What", "Happened", "-", "`TestRetry`,", "`TestBackoff`;", "renamed:", "`TestOld`", "→", "`TestNew`",
        "-", "`TestA`", "→", "`TestB`", "-", "on", "new", "branch", "`alex/retry`:", "`retry.go`", "-", "branch",
        "`main`"]


def test_a_merge_threads_fixed_words_are_left_out_and_its_command_kept() -> None:
    body = ("## Open Threads\n- Merge in progress: edits not staged, no `git add` ran: `git add a.go && git commit` "
            "(the merge of `main`)\n")
    assert session_words(body).split() == [
        "##", "Open", "Threads", "-", "`git", "add", "a.go", "&&", "git", "commit`", "(the", "merge", "of", "`main`)"]
