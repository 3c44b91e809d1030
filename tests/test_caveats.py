"""Caveats named in passing (core/extract/caveats.py): the families of shapes each on the real session it came from
and one it must not fire on; resolved later by an edit of the code it names, a prompt that took it up, a report
that it was done, or its saying again; rendered without location, links or code dumps."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

from eywa.core.extract.caveats import _FAMILIES, _PIECES, kind_of
from eywa.core.extract.deterministic import draft
from eywa.core.extract.facts import FACT_PREFIXES, merge_threads
from eywa.core.session import Event, Session, ToolCall

from .test_extractor import corpus_session

T0 = dt.datetime(2026, 12, 1, 10, 18, tzinfo=dt.UTC)


def _threads(session_id: str) -> list[str]:
    return draft(corpus_session(session_id), ZoneInfo("UTC")).open_threads


def _caveats(*events: Event) -> list[str]:
    session = Session(session_id="2257c943-0000-4000-8000-000000000002", agent="codex", cwd="/tmp/widgets",
                      first_ts=T0, last_ts=T0)
    session.events = [Event("user", T0, text="Add a retry limit to the importer"), *events,
                      Event("assistant", T0, text="Updated importer.py.")]
    return [t for t in draft(session, ZoneInfo("UTC")).open_threads if t.startswith("Caveat")]


def _edit(old: str, new: str) -> Event:
    return Event("tool", T0, tool=ToolCall("e1", "Edit", {"file_path": "/tmp/widgets/importer.py", "old_string": old,
                                                         "new_string": new}))


def _said(text: str) -> Event:
    return Event("assistant", T0, text=text)


_LEFT = "The retry limit is not configurable yet; worth fixing separately with a `RetryPolicy` setting."


def test_the_families_name_deferrals_limitations_and_work_left_to_the_person() -> None:
    assert kind_of("Worth fixing separately since the code comment will mislead anyone reading the Go source.") == \
        "deferred"
    assert kind_of("Address P2 items in follow-up PRs if desired (not blocking for this PR)") == "deferred"
    assert kind_of("Limitation: For private forks, you'd pass a PAT via the `token` input.") == "limitation"
    assert kind_of("You may need to reload your IDE window for the changes to take effect.") == "left to the person"
    assert kind_of("If this is a CI-specific issue, you'd need to either update the CI golangci-lint version.") == \
        "left to the person"


def test_the_families_do_not_fire_on_ordinary_text() -> None:
    assert kind_of("Added placeholder text to the search input.") is None
    assert kind_of("You can change the port later in the config file.") is None
    assert kind_of("Tests use a temporary directory which pytest cleans up automatically.") is None
    assert kind_of("I didn't run into any issues with the migration.") is None
    assert kind_of("The build didn't run out of memory this time.") is None
    assert kind_of("We haven't checked in the generated files.") is None
    assert kind_of("The migration is worth it: reads drop from three queries to one.") is None


# One sentence of each family: it is a caveat of that family, and holds a piece the quick substring test looks for.
_ONE_OF_EACH = {
    "unverified": "I haven't run the integration tests against the staging database.",
    "deferred": "Address P2 items in follow-up PRs if desired (not blocking for this PR)",
    "limitation": "The `[0.4.2]` section is a placeholder for the release notes.",
    "temporary": "The temporary script in scripts/probe.py still needs to be removed.",
    "left to the person": "You may need to reload your IDE window for the changes to take effect.",
}


def test_every_family_has_a_sentence_it_names_and_a_piece_that_lets_it_through() -> None:
    assert set(_ONE_OF_EACH) == {name for name, _ in _FAMILIES}
    for name, said in _ONE_OF_EACH.items():
        assert kind_of(said) == name
        assert any(piece in said.lower() for piece in _PIECES), name


def test_a_plural_label_is_left_out_of_a_caveat() -> None:
    assert _caveats(_said("Limitations: the importer skips rows it cannot parse without a warning.")) == [
        "Caveat: the importer skips rows it cannot parse without a warning."]


def test_a_question_or_an_announced_step_is_no_caveat() -> None:
    assert kind_of("Should I fix this separately?") is None
    assert kind_of("Let me fix the comment separately in `checkpoint.go`.") is None


def test_a_deferral_said_mid_session_takes_its_subject_from_its_heading() -> None:
    """ba517c53 (blind label: "... flagged to fix separately and not fixed"): under "Issue 2: Code comment in
    `checkpoint.go` uses 1-based indexing (separate issue)", "Worth fixing separately since ..."."""
    assert _threads("ba517c53-22ac-41fe-8d0b-aad3b421f359") == [
        "Caveat: Code comment in `checkpoint.go` uses 1-based indexing (separate issue): Worth fixing separately since "
        "the code comment will mislead anyone reading the Go source."]


def test_findings_worth_fixing_that_a_later_edit_fixed_are_no_caveat() -> None:
    """45ba035c: "Two things are genuinely worth fixing: `hooks.go` — ...; `wingman_spawn_unix.go` — ..." and both
    files were edited next: only its PR reply's deferral is left."""
    assert [t for t in _threads("45ba035c-93ee-46e8-b83c-9d8a3a1cb05b") if not t.startswith(FACT_PREFIXES)] == [
        "Caveat (PR reply): Will add targeted tests in a follow-up if the logic grows more complex."]


def test_a_limitation_the_agent_labelled_is_a_caveat_without_its_label() -> None:
    """2cfdacb8 (blind label: "Private forks need a PAT with read access to the fork passed via the token input")."""
    assert "Caveat: For private forks, you'd pass a PAT via the `token` input that has read access to the fork." in \
        _threads("2cfdacb8-9317-430f-8975-0709d2837d1c")


def test_a_step_left_to_the_person_is_a_caveat() -> None:
    """5ed31c36 (blind label: "The IDE may need reloading before the new config takes effect; not verified")."""
    assert _threads("5ed31c36-bca8-40fd-8d24-f1a1f0af7901") == [
        "Caveat: You may need to reload your IDE window for the changes to take effect.",
        "Caveat: If you have existing URLs that were already wrapped in angle brackets, you'll need to remove those "
        "angle brackets manually to fix the build errors."]


def test_a_condition_the_person_would_need_to_act_on_is_a_caveat() -> None:
    """9e44573d (old label: "If this is a CI-specific issue, you'd need to either update ... or add a revive rule
    exclusion")."""
    assert "Caveat: If this is a CI-specific issue, you'd need to either update the CI golangci-lint version to " \
           "match local, or add a revive rule exclusion in `.golangci.yaml`." in \
           _threads("9e44573d-4eb8-4de0-8659-418f3c68706d")


def test_an_error_the_agent_could_not_reproduce_is_a_caveat() -> None:
    """9e44573d (blind labels of two readers: "The revive var-naming lint error ... is not fixed; it does not
    reproduce locally ..."): asked to fix a CI lint error, it said it does not reproduce and changed nothing that
    stayed."""
    assert "Caveat: The `buildinfo` package name issue doesn't reproduce with the project's lint config — the " \
           "`var-naming` rule from revive isn't triggering locally." in \
           _threads("9e44573d-4eb8-4de0-8659-418f3c68706d")
    assert kind_of("I was unable to reproduce the flaky failure locally.") == "unverified"


def test_a_reproduction_asked_for_or_done_is_no_caveat() -> None:
    """170cebcc wrote issue templates asking for "reproduction steps"; reproducing a bug first is the work."""
    assert kind_of("Bug reports need version, OS, strategy, agent, reproduction steps, logs.") is None
    assert kind_of("I could reproduce the failure with `go test -run TestResume`.") is None
    assert not any("reproduc" in t for t in _threads("170cebcc-4cb9-42aa-a322-6e590fc9db0d"))


def test_a_rebuild_announced_before_its_commands_is_no_caveat() -> None:
    """1c38adc0 (labelled done, nothing open): "You'll need to rebuild the CLI for the fix to take effect:" leads into
    a command, not a list of what is left."""
    assert _threads("1c38adc0-5071-4382-9e53-de8c30e2265f") == []


def test_links_and_code_dumps_are_left_out_of_a_caveat() -> None:
    # 8b418ea5: "You may want to delete that one manually: https://linear.app/..."; cc432c40: "... using
    # `syscall.SysProcAttr{CreationFlags: CREATE_NEW_PROCESS_GROUP | DETACHED_PROCESS}`."
    assert any(t.endswith("You may want to delete that one manually")
               for t in _threads("8b418ea5-895d-4ad5-abe8-4489d36e454f"))
    assert [t for t in _threads("cc432c40-914a-4c1a-a972-0103199a736a") if t.startswith("Caveat")] == [
        "Caveat: If Windows support becomes important later, you could implement proper detachment."]


def test_a_caveat_pointing_at_that_one_says_which_one() -> None:
    """8b418ea5: "I also don't see a `delete_document` tool, so I can't clean up the duplicate document I created at
    the project level. You may want to delete that one manually: <link>": with the link left out, "that one" is the
    document the sentence before names last."""
    assert "Caveat: I can't clean up the duplicate document I created at the project level: You may want to delete " \
           "that one manually" in _threads("8b418ea5-895d-4ad5-abe8-4489d36e454f")


def test_a_caveat_naming_what_it_is_about_keeps_its_own_words() -> None:
    """cc432c40's caveat names its subject: no sentence before it joins it."""
    assert [t for t in _threads("cc432c40-914a-4c1a-a972-0103199a736a") if t.startswith("Caveat")] == [
        "Caveat: If Windows support becomes important later, you could implement proper detachment."]


def test_a_caveat_the_user_said_yes_to_and_then_edited_is_resolved() -> None:
    """2956cee6: "Worth documenting as a known limitation though." in a reply of thoughts, answered "yep do it", and
    the edits that followed documented it ("`NormalizeAfterLoad` documents the one-way migration trade-off")."""
    assert kind_of("Worth documenting as a known limitation though.") == "deferred"
    assert not any("known limitation" in t for t in _threads("2956cee6-6153-4ba6-ba24-3b7f3257549c"))


def test_a_caveat_said_again_later_is_one_thread() -> None:
    """22c5d52e: "The `[0.4.2]` section is a placeholder — you can backfill it later ..." mid-session, then "You can
    backfill the `[0.4.2]` section later if you want, ..." last: the last one is the thread."""
    threads = _threads("22c5d52e-9602-4ffe-aaa1-0265b115ef3d")
    assert sum("[0.4.2]" in t for t in threads) == 1


def test_a_caveat_that_says_nothing_on_its_own_is_no_thread() -> None:
    assert _caveats(_said("Not blocking — just worth thinking about.")) == []


def test_a_caveat_left_is_a_thread_and_resolved_later_is_not() -> None:
    assert _caveats(_said(_LEFT)) == ["Caveat: " + _LEFT]
    # a later edit brought in the code it names
    assert _caveats(_said(_LEFT), _edit("MAX_RETRIES = 3", "policy = RetryPolicy(limit=3)")) == []
    # a later prompt took it up and an edit followed
    assert _caveats(_said(_LEFT), Event("user", T0, text="ok, make the retry limit configurable"),
                    _edit("MAX_RETRIES = 3", "MAX_RETRIES = int(os.environ.get('RETRIES', 3))")) == []
    # the reply right after it said yes and an edit followed
    assert _caveats(_said(_LEFT), Event("user", T0, text="yep do it"),
                    _edit("MAX_RETRIES = 3", "MAX_RETRIES = 5")) == []
    # a later report says it was done
    assert _caveats(_said(_LEFT), _said("Made the retry limit configurable through the importer settings.")) == []
    # a prompt that shares its words with no edit after it took nothing up
    assert _caveats(_said(_LEFT), Event("user", T0, text="why is the retry limit fixed?"),
                    _said("It was fixed to keep the importer simple.")) == ["Caveat: " + _LEFT]


def test_a_caveat_whose_sentence_before_a_review_finding_says_is_one_thread() -> None:
    """09a2c705: the review finding "`resolveTranscriptPathFromMetadata` returns empty on non-home paths: If the
    transcript was originally stored outside `$HOME`..." and the caveat read with that sentence: one thread."""
    threads = _threads("09a2c705-b334-4632-b1bf-b68e510ca0b5")
    assert not any(t.startswith("Caveat: If the transcript was originally stored") for t in threads), threads
    assert any(t.startswith("Not fixed (review): `resolveTranscriptPathFromMetadata`") for t in threads), threads


def test_a_caveat_read_with_its_sentence_before_stays_when_no_other_thread_says_it() -> None:
    """63784323: "Detecting that we should "go back" to `-1`: This adds complexity ..."."""
    threads = _threads("63784323-7042-4ab8-82b1-3c0b79467bf9")
    assert any(t.startswith("Caveat: Detecting that we should") for t in threads), threads


def test_a_pr_replys_caveat_reads_as_posted_without_the_shells_escapes() -> None:
    command = ('gh api repos/o/r/pulls/7/comments/9/replies -f body="Good catch. The \\`RetryPolicy\\` setting is not '
               'configurable yet; will add it in a follow-up."')
    reply = Event("tool", T0, tool=ToolCall("b1", "Bash", {"command": command}))
    assert _caveats(reply) == [
        "Caveat (PR reply): The `RetryPolicy` setting is not configurable yet; will add it in a follow-up."]


def test_a_merge_conflict_foreseen_is_a_caveat_without_its_reassurance() -> None:
    """c010174c: comparing two PRs, "There will be minor merge conflicts in `manual_commit_hooks.go` and
    `manual_commit_test.go` but they should be straightforward to resolve ..."; later edits of those files meet no
    conflict."""
    threads = _threads("c010174c-a7cd-4bcc-b7d4-61258d6c463f")
    assert "Caveat: There will be minor merge conflicts in `manual_commit_hooks.go` and `manual_commit_test.go`" \
        in threads, threads


def test_conflicts_met_and_resolved_are_no_caveat() -> None:
    """da15b15f merged and resolved its conflicts ("There's one conflict in `manual_commit_hooks.go` ...")."""
    assert not any("conflict" in t.lower() for t in _threads("da15b15f-a573-4523-abcb-fdd6c9a4e2a2"))


def test_a_conflict_foreseen_is_met_by_a_later_merge_not_by_an_edit() -> None:
    foreseen = "There may be merge conflicts in `importer.py` with the retry branch."
    assert _caveats(_said(foreseen), _edit("MAX_RETRIES = 3", "MAX_RETRIES = 5")) == ["Caveat: " + foreseen]
    merged = Event("tool", T0, tool=ToolCall("b1", "Bash", {"command": "git merge origin/retry"}))
    assert _caveats(_said(foreseen), merged) == []


def test_a_notable_or_catch_line_is_a_caveat_without_its_label() -> None:
    """c4a6d0ff's report: "Notable: `RemoveStanza` leaves a leading blank line ..."; 170cebcc's: "The catch: GitHub
    only loads issue templates from the default branch"."""
    assert any(t.startswith("Caveat: `RemoveStanza` leaves a leading blank line when the stanza is at the beginning")
               for t in _threads("c4a6d0ff-2c86-4f56-8509-c4737bcb5768"))
    assert "Caveat: GitHub only loads issue templates from the default branch (usually `main`)." in \
        _threads("170cebcc-4cb9-42aa-a322-6e590fc9db0d")


def test_a_note_or_a_trade_off_is_no_caveat() -> None:
    """7acd37a8: "Note: ScriptProcessor is still used (deprecated but functional)."; 9667a07f: "The trade-off:"."""
    assert kind_of("Note: ScriptProcessor is still used (deprecated but functional).") is None
    assert not any(t.startswith("Caveat") for t in _threads("7acd37a8-2745-4b58-a8a9-46164b22ad9e"))
    assert not any(t.startswith("Caveat") for t in _threads("9667a07f-c677-4f9d-9b21-da366e5add6a"))


def test_a_pre_existing_bug_found_and_left_is_a_caveat() -> None:
    """60b38d1e: "Pre-existing issue: The lint error in `hooks_geminicli_handlers.go:488` is a bug where `err` is
    printed instead of `initErr`." (no later edit of that file)."""
    threads = _threads("60b38d1e-f048-428b-89da-e5dca96614d4")
    # the lint run failed on it: one line says both, the failure and that it was there before
    assert ("Lint failing: `mise run lint` last run failed; pre-existing: the lint error in "
            "`hooks_geminicli_handlers.go:488` is a bug where `err` is printed instead of `initErr`.") in threads
    assert not any(t.startswith("Caveat") for t in threads), threads


def test_a_pre_existing_bug_of_another_check_stays_a_caveat() -> None:
    """A failing test run and a pre-existing lint error are two things: the caveat stays its own line."""
    caveat = "Caveat: Pre-existing issue: The lint error in `x.go:488` is a bug"
    assert merge_threads(["Tests failing: `go test ./...` last run failed"], [caveat]) == [
        "Tests failing: `go test ./...` last run failed", caveat]
    assert merge_threads([], [caveat]) == [caveat]


def test_pre_existing_diagnostics_are_no_caveat() -> None:
    """76d407bd: "The LSP diagnostics are pre-existing issues unrelated to this change.": the editor's noise."""
    assert kind_of("The LSP diagnostics are pre-existing issues unrelated to this change.") is None
    assert not any("pre-existing" in t for t in _threads("76d407bd-2561-45ef-8cbb-2dc1f9be9bbe"))


def test_a_finding_judged_lower_risk_and_left_is_a_caveat() -> None:
    """03a1382e: "`calculatePromptAttributionAtStart` at line 936 also calls `worktree.Status()` - same problem
    pattern, but it's only called at session start ..., so it's lower risk."."""
    assert any(t.startswith("Caveat: `calculatePromptAttributionAtStart` at line 936 also calls `worktree.Status()`")
               for t in _threads("03a1382e-ecd5-42c4-b3d4-5c659e165904"))


def test_a_low_priority_label_alone_is_no_caveat() -> None:
    """45ba035c's review: "Low priority." says nothing on its own; "Somewhat valid but low priority:" heads a list."""
    assert not any("priority" in t.lower() for t in _threads("45ba035c-93ee-46e8-b83c-9d8a3a1cb05b"))


def test_a_change_marked_breaking_is_a_caveat_with_what_it_changes() -> None:
    """ddf36c6d's report: "**Settings key (breaking change):**" over "`strategy_options.summarise.enabled` →
    `strategy_options.summarize.enabled`": a lead-in that says it with its list."""
    assert "Caveat: Settings key (breaking change): `strategy_options.summarise.enabled` → " \
        "`strategy_options.summarize.enabled`" in _threads("ddf36c6d-77ad-4900-9c50-1ea2c4cd932b")


def test_breaking_changes_as_the_subject_of_the_work_are_no_caveat() -> None:
    """aa5c5ada wrote tests for a cache's breaking-changes rules ("Breaking Changes Support: Tests exact version
    ...")."""
    assert not any(t.startswith("Caveat") for t in _threads("aa5c5ada-4f1e-4b7f-9d1f-c496b3badde5"))


def test_a_limitation_accepted_anyway_is_a_caveat() -> None:
    """8c00ac51's closing: "(the summarizer only supports JSONL anyway, so it will gracefully skip Gemini
    transcripts)"."""
    assert "Caveat: For Gemini, the full transcript is now passed to the summarizer (the summarizer only supports " \
        "JSONL anyway, so it will gracefully skip Gemini transcripts)." in \
        _threads("8c00ac51-4fbb-417c-ac2b-0fd595a5c296")


def test_anyway_without_a_limitation_is_no_caveat() -> None:
    """4f8c1176: "... and we handle zero time as a fallback anyway:": handled, nothing it cannot do."""
    assert kind_of("Older checkpoints without `StartedAt` will deserialize it as zero time, and we handle zero time "
                   "as a fallback anyway.") is None
    assert not any("anyway" in t for t in _threads("4f8c1176-7025-4530-a860-c6fc4c63a150"))


def test_a_pre_existing_bug_fixed_is_no_caveat() -> None:
    assert kind_of("Also fixed a pre-existing bug in `TestUpdateCommand` where the expected URL didn't match.") is None
    assert kind_of("The lint error in `hooks.go:488` is a pre-existing bug (it prints `err` instead of `initErr`).") \
        == "limitation"


def test_a_warning_after_but_is_kept_and_a_reassurance_cut() -> None:
    assert _caveats(_said("There may be merge conflicts in `importer.py` with the retry branch, but they should be "
                          "straightforward to resolve.")) == \
        ["Caveat: There may be merge conflicts in `importer.py` with the retry branch"]
    left = "The retry limit is not yet tested, but it is easy to miss in review."
    assert _caveats(_said(left)) == ["Caveat: " + left]


def test_a_long_caveat_loses_its_aside_before_its_reason() -> None:
    """03a1382e: "... but it's only called at session start (not during a git hook), so it's lower risk." was cut
    after the aside, losing why it was left; 8c00ac51's caveat fits whole and keeps its parenthesis."""
    assert ("Caveat: `calculatePromptAttributionAtStart` at line 936 also calls `worktree.Status()` - same problem "
            "pattern, but it's only called at session start, so it's lower risk.") in _threads(
        "03a1382e-ecd5-42c4-b3d4-5c659e165904")
    assert any(t.startswith("Caveat: For Gemini, the full transcript is now passed to the summarizer (the summarizer")
               for t in _threads("8c00ac51-4fbb-417c-ac2b-0fd595a5c296"))


def _written(path: str, content: str, old: str = "") -> Event:
    from eywa.core.sources.comments import comment_blocks, written

    arguments = {"file_path": path, "old_string": old, "new_string": content} if old else \
        {"file_path": path, "content": content}
    return Event("tool", T0, tool=ToolCall("w1", "Edit" if old else "Write", arguments,
                                           comments=comment_blocks(written(arguments), 10)))


def _left_in_code(*events: Event) -> list[str]:
    from eywa.core.extract.caveats import left_in_code

    return left_in_code(list(events))


def test_a_todo_the_agent_wrote_into_code_is_left_with_what_for_now_says() -> None:
    # dev and agree b50aaf5c: "// TODO: Extract file changes ..." deep in a long handler, past its first ten comments
    assert "Left in `hooks_opencode_handlers.go`: TODO: Extract file changes from subagent transcript if available; " \
           "For now, we don't have file changes at task completion" in _threads("b50aaf5c-3ef3-472b-8d5e-75bb89ac3fe1")


def test_an_imperfect_fallback_in_code_is_left_with_the_sentence_that_says_of_what() -> None:
    # fresh2 4f8c1176: the comment before says what the "(if imperfect)" path is; of its own sentence, the clause
    assert _left_in_code(*corpus_session("4f8c1176-7025-4530-a860-c6fc4c63a150").events) == [
        "Left in `resume.go`: Use zero time as fallback since we don't have StartedAt from metadata; for Gemini this "
        "produces a usable (if imperfect) path"]


def test_a_fallback_by_design_in_code_is_nothing_left() -> None:
    # dev f8e05984 writes "Fallback to CWD if not in a git repo (e.g., during tests)": a design, nothing undone
    assert not [t for t in _threads("f8e05984-93e4-45b7-b638-e6f011442db9") if t.startswith("Left in")]
    code = "".join(f"# Step {n} reads its input from the one before.\nstep_{n}()\n" for n in range(12))
    assert _left_in_code(_written("/r/steps.py", code + "# Fall back to the cache when offline\nload()\n")) == []


def test_a_todo_past_the_first_comments_of_a_write_is_kept_and_a_later_edit_can_take_it_out() -> None:
    code = "".join(f"# Step {n} reads its input from the one before.\nstep_{n}()\n" for n in range(12))
    todo = "# TODO: retry the upload when the network drops\nupload()\n"
    assert _left_in_code(_written("/r/steps.py", code + todo)) == [
        "Left in `steps.py`: TODO: retry the upload when the network drops"]
    assert _left_in_code(_written("/r/steps.py", code + todo),
                         _written("/r/steps.py", "upload_with_retry()\n", old=todo)) == []
    assert _left_in_code(_written("/r/NOTES.md", "# TODO: later\n\nSome notes.\n")) == []  # a heading, no comment


def test_a_todo_a_codex_patch_adds_is_left_in_its_file() -> None:
    from eywa.core.redaction.scrubber import default_redactor
    from eywa.core.sources.codex import patch_calls

    patch = ("*** Begin Patch\n*** Update File: src/auth.py\n@@\n-x = 1\n"
             "+# TODO: read the token from the keyring\n+x = 2\n*** End Patch\n")
    calls = patch_calls("c1", patch, "/r", default_redactor().redact)
    assert _left_in_code(*[Event("tool", T0, tool=call) for call in calls]) == [
        "Left in `auth.py`: TODO: read the token from the keyring"]


def test_a_todo_in_code_the_agents_reply_quotes_is_one_thread() -> None:
    # fresh2 20b81bf8: the reply pastes "// TODO: Verify edit_file and save_file ...", which its types.go edit wrote
    threads = _threads("20b81bf8-77cd-4205-8ac9-727b573a70e4")
    assert [t for t in threads if "Verify edit_file" in t] == [
        "TODO: Verify edit_file and save_file with original author - may not be real tool names"]


def test_an_item_of_a_list_of_guesses_is_no_caveat() -> None:
    # fresh2 20b81bf8: "this could be: 1. The model attempting to call a non-existent tool (known issue) 2. ..."
    threads = _threads("20b81bf8-77cd-4205-8ac9-727b573a70e4")
    assert not [t for t in threads if "known issue" in t]
    # fresh2 ddf36c6d: a lead-in that names a change ("Settings key (breaking change):") keeps its list's items
    assert [t for t in _threads("ddf36c6d-77ad-4900-9c50-1ea2c4cd932b") if "breaking change" in t]


def test_a_caveat_loses_its_note_lead_as_it_loses_a_limitation_label() -> None:
    # Codex and Gemini open a caveat with "Note:": the thread already says "Caveat:"
    said = Event("assistant", T0, text="Note: the retry limit is untested against the staging importer.")
    assert _caveats(said) == ["Caveat: the retry limit is untested against the staging importer."]
    # a sentence that only holds the word is no caveat
    assert _caveats(Event("assistant", T0, text="Note: the retry limit is now read from the config file.")) == []


def test_a_remark_the_agent_flags_is_a_caveat_without_its_flag_and_resolved_later_is_not() -> None:
    """midway_q 1, midway_r 1 and 10 (bench/scripted): "Something to be aware of: these counters live in each node's
    own ETS table", "Worth flagging: ...", "A limit on what this proves: ..."; the words that flag it go."""
    flagged = "Worth flagging: `importer.py` retries forever when the server answers 503, and nothing caps it."
    assert _caveats(_said(flagged)) == [
        "Caveat: `importer.py` retries forever when the server answers 503, and nothing caps it."]
    assert _caveats(_said("Something to be aware of: these retries run on every worker, not once per cluster.")) == [
        "Caveat: The retries run on every worker, not once per cluster."]
    assert kind_of("A limit on what this proves: the dev database has 42k rows, production has millions.")
    # a remark flagged, then settled by a later edit of the file it names, is no caveat, nor a note with no flag
    assert _caveats(_said(flagged), _edit("while True:", "for _ in range(5):")) == []
    assert kind_of("Worth a look, the importer is faster now.") is None


def test_a_deferral_is_not_undone_by_the_edits_of_the_change_it_was_left_out_of() -> None:
    """midway_q 22: "I'm not switching the allocator in this change; it touches every allocation in `main.zig`": the
    same turn's edits of `main.zig` are the change, not the switch; midway_d 32: the edit that wrote the TODO it
    names. Code it names written later, or an edit after the person asked for it, still resolves it."""
    put_off = "I'm not switching `RetryPolicy` in this change; it touches every call in `importer.py`."
    assert _caveats(_said(put_off), _edit("a = 1", "a = 2")) == ["Caveat: " + put_off]
    assert _caveats(_said(put_off), _edit("MAX_RETRIES = 3", "policy = RetryPolicy(limit=3)")) == []
    assert _caveats(_said(put_off), Event("user", T0, text="ok do the switch now"), _edit("a = 1", "a = 2")) == []
    todo = "Left a `// TODO: honor Retry-After on 429` in `importer.py` to handle later."
    assert _caveats(_said(todo), _edit("send()", "send()  // TODO: honor Retry-After on 429")) == ["Caveat: " + todo]


def test_a_scratch_thing_said_deleted_is_no_cleanup_left() -> None:
    """midway_u 25's report: "The scratch script I used to dump the test order is deleted; ...": done, as "was
    deleted" is."""
    assert kind_of("The scratch script I used to dump the test order is deleted; only the two test files changed.") \
        is None
    assert kind_of("I added a scratch script to dump the test order; I will delete it before merging.") == "temporary"
