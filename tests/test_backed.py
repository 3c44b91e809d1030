"""What Happened says only changes the session's own actions back (core/extract/backed.py): not a review's account of
an existing commit, a fix proposed, an answer's guess, nor a plan's step another session did; on the real corpus
sessions the blind reviewers flagged and on sessions whose changes it must keep."""

from __future__ import annotations

from zoneinfo import ZoneInfo

from eywa.core.extract.deterministic import draft

from .test_extractor import corpus_session

UTC = ZoneInfo("UTC")


def _happened(session_id: str) -> list[str]:
    return draft(corpus_session(session_id), UTC).what_happened


def test_a_reviewed_commits_rename_is_not_the_sessions() -> None:
    # 9667a07f reviewed commit e94d271 (the rename is in it); its only edit was `contentSb73` -> `sb`
    assert not any("EnsureMetadataGitignore" in line for line in _happened("9667a07f-c677-4f9d-9b21-da366e5add6a"))


def test_a_fix_proposed_and_an_answers_guess_are_not_done() -> None:
    # 03a1382e: "The fix — set `gc.auto=0`" (the user: "no don't set it"); a learning question's "If the migration:
    # - Restructured the directory layout" (the session restructured nothing)
    happened = _happened("03a1382e-ecd5-42c4-b3d4-5c659e165904")
    assert not any("gc.auto" in line or "Restructured the directory layout" in line for line in happened)
    assert any(line.startswith("Added the worktree GC corruption issue") for line in happened)  # its own write


def test_a_plans_done_step_of_another_session_is_not_said() -> None:
    # 38917d7d's plan marked telemetry.go "✅ DONE" (session ad64798f); this one edited telemetry.go only later
    happened = _happened("38917d7d-9f69-4210-a3b0-eed0a9e97575")
    assert "Changed condition to disable telemetry when nil" not in happened
    assert "Added timing instrumentation to both methods" in happened  # its own telemetry.go edits


def test_changes_the_session_made_are_kept() -> None:
    # 4ec443d0 created its test transcript with a shell command naming the folder (the file by a variable)
    assert any(line.startswith("Created `~/.claude/projects/-tmp-entire-test-repo/")
               for line in _happened("4ec443d0-063b-4de3-8ede-e35160c2c1de"))


def test_a_rebased_commits_change_is_no_headline() -> None:
    # cfd57c28 resolved the conflicts of rebasing b6ff09d onto 50cf262: "HEAD (50cf262): Simplified
    # `isCompletionConfigured`, ..." is the other branch's change, neither its What Happened nor its headline
    handoff = draft(corpus_session("cfd57c28-f61a-42df-8ddf-d99b94586ea3"), UTC)
    assert "isCompletionConfigured" not in handoff.headline
    assert not any("isCompletionConfigured" in line for line in handoff.what_happened)
    # 03a1382e's own report ("Added the worktree GC corruption issue ...") stays its headline
    assert draft(corpus_session("03a1382e-ecd5-42c4-b3d4-5c659e165904"), UTC).headline == \
        "Add the worktree GC corruption issue with root cause"
