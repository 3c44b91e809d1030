"""Decisions and root causes read from Claude's words (core/extract/insights.py), on real corpus sessions
where one shows the rule, and on single sentences where the corpus has none."""

from __future__ import annotations

import re
from functools import cache
from unittest import mock

import pytest

from eywa.core.extract import insights as insights_rules
from eywa.core.extract.claude_words import sentences
from eywa.core.extract.directions import directions
from eywa.core.extract.insights import (
    _HEDGE_RE,
    BEFORE_EDIT,
    CLOSING,
    FOLLOWED,
    REPORTED,
    WRITTEN,
    Insight,
    _hedged,
    agent_texts,
    changes_in,
    chosen,
    closing_lines,
    commit_reasons,
    findings_before_edits,
    insights,
    insights_in,
    lint_steps,
    steps_on_findings,
    topic_of,
    turn_reports,
    user_directions,
    written_reasons,
)
from eywa.core.session import Event, Session, ToolCall
from eywa.core.sources.comments import written
from eywa.core.sources.common import tool_call

from .conftest import CORPUS, identity
from .test_extractor import corpus_session


def kinded(item: Insight) -> str:
    """The insight with its kind, as the rules tell it (the handoff's line leaves the kind to the text's words)."""
    head = f"{item.kind}: {item.topic}" if item.topic else item.kind
    return f"**{head}** -- {item.text}"


@cache
def session_insights(prefix: str) -> tuple[str, ...]:
    return tuple(map(kinded, chosen(corpus_session(prefix))))


def lines_of(text: str) -> list[str]:
    return [kinded(item) for item in insights_in(sentences(text))]


def stated(session_id: str) -> list[str]:
    """Every insight the rules read in the session's messages, before the few are chosen."""
    messages = agent_texts(corpus_session(session_id))
    return [kinded(item) for _, text in messages for item in insights_in(sentences(text))]


def test_a_key_fix_stated_is_a_root_cause_named_for_its_code() -> None:
    assert ("**Root cause: replace** -- The key fix was adding `replace` - that's what was missing and causing your "
            "shadow branch not to be created.") in stated("20b81bf8-77cd-4205-8ac9-727b573a70e4")


def test_a_report_label_of_the_kind_leaves_the_text_and_the_code_names_the_topic() -> None:
    assert ("**Root cause: FileModificationTools** -- The `FileModificationTools` list in `types.go` was missing "
            "the `replace` tool that Gemini CLI uses for file edits.") in session_insights(
        "20b81bf8-77cd-4205-8ac9-727b573a70e4")


def test_the_reason_of_claudes_own_act_is_a_decision_not_a_root_cause() -> None:
    found = session_insights("20b81bf8-77cd-4205-8ac9-727b573a70e4")
    assert any(line.startswith("**Decision** -- I removed them because") for line in found)
    assert not any(line.startswith("**Root cause") and "I removed them" in line for line in found)


def test_a_guess_said_aloud_is_no_root_cause() -> None:
    found = session_insights("20b81bf8-77cd-4205-8ac9-727b573a70e4")
    assert not any("The issue is likely" in line for line in found)
    assert lines_of("I think the issue is that `StepsCount` isn't being set for uncommitted checkpoints.") == []


def test_the_approach_of_a_plan_carried_out_is_a_decision() -> None:
    """The session began with "Implement the following plan:": the plan Claude wrote is its own words."""
    assert ("**Decision: buildinfo** -- Create a `buildinfo` package to hold `Version`/`Commit` (breaking the "
            "import cycle).") in session_insights("3ae3ab59-52bc-413d-ad30-02b165c91785")


def test_sentences_under_a_design_decisions_heading_are_decisions() -> None:
    assert any(line.startswith("**Decision** -- The agent and strategy dropdowns are the Entire-specific additions")
               for line in session_insights("170cebcc-4cb9-42aa-a322-6e590fc9db0d"))


def test_a_report_label_naming_a_concept_is_the_topic() -> None:
    assert ("**Decision: Type-safe approach** -- Type-safe approach: Uses `isinstance()` to check if the entry is "
            "a `SessionCacheData` object") in session_insights("b45ad5d8-81fb-4bcb-baba-19d9f503d731")


def test_existing_code_found_for_reuse_is_kept() -> None:
    assert ("**Found: GetAgent()** -- There's a `GetAgent()` function in `config.go` that returns the configured "
            "or detected agent.") in session_insights("130d7b7e-5801-4345-9bd6-f32fd9b8429b")


def test_a_short_statement_of_intent_reads_with_the_sentence_after_it() -> None:
    assert ("**Decision** -- The intent is permanent unification. The whole point of this branch was to eliminate "
            "the duplicate struct and the tedious conversion functions.") in session_insights(
        "2956cee6-6153-4ba6-ba24-3b7f3257549c")


def test_that_way_alone_leaves_its_choice_to_the_sentence_before() -> None:
    """04cd0da1's "That way we explain purpose without committing to implementation details ...": the choice it gives
    the reason of is not on the line (a blind reader judged 9e953218's such line false: its approach was dropped)."""
    assert not any("That way we explain purpose" in line
                   for line in session_insights("04cd0da1-dee3-4738-8139-524dfe55de83"))


def test_keeping_existing_code_because_it_is_fine_is_a_decision() -> None:
    assert ("**Decision: fileExists** -- For our use case, a backup file will never be a directory, so the "
            "existing `fileExists` is fine.") in session_insights("fe1ffae3-f297-4dc1-9b9d-8a2b49059af7")


def test_code_judged_fit_for_a_use_is_a_decision_to_leave_it() -> None:
    assert ("**Decision** -- The non-interactive mode (with `--strategy` flag) still auto-redirects to local settings "
            "with an info message, which is appropriate for scripted usage.") in session_insights(
        "569aed7b-6ead-4790-a3fe-c7028466112c")
    assert lines_of("The current retry count is fine for now, we can tune it later.") == []  # for now: no verdict
    assert lines_of("Is the default timeout fine for the CI runners?") == []


def test_a_change_made_for_backwards_compatibility_gives_its_reason() -> None:
    assert ("**Decision: tokenizer.html** -- Added redirect in next.config.js to redirect `/tokenizer.html` → "
            "`/tokenizer/` for backwards compatibility") in session_insights("9e953218-585f-4692-89df-9e0747a31c68")
    # what the code keeps for compatibility, no change made: no decision
    assert lines_of("The old flag still exists for backwards compatibility with scripts.") == []


def test_a_cause_stated_twice_is_kept_once() -> None:
    found = session_insights("3de3ff10-2c78-4b94-b22f-f8ffb14305f6")
    assert sum("old naming format" in line for line in found) == 1
    # the step taken on it says the cause and what was done on it, ranked with the choices
    assert found[0].startswith("**Decision: Reset** -- Fix the tests, since the tests are creating shadow branches")


@pytest.mark.parametrize("prefix", ["847ff7d2-4a55-44d7-a3f5-a3afd89f1ee1", "2cfdacb8-9317-430f-8975-0709d2837d1c",
                                    "00ef13bd-99a1-4001-a829-09985a069ab2", "3de3ff10-2c78-4b94-b22f-f8ffb14305f6"])
def test_topics_are_never_a_path_with_lines_a_shell_variable_or_punctuation(prefix: str) -> None:
    """These sessions once gave `**Decision: cmd/entire/cli/strategy/cleanup.go:94-97**`, `**Root cause: $1**`,
    `**Root cause: ..**`, `**Decision: common.go:294**` and `**Root cause: entire/<short-hash>**`."""
    found = session_insights(prefix)
    assert found
    for line in found:
        head = re.match(r"\*\*([^*]+)\*\*", line)
        assert head, line
        topic = head.group(1).partition(": ")[2]
        assert not re.search(r":\d|^\$|[<>]", topic) and (not topic or re.search(r"[A-Za-z]{2}", topic)), line


def test_topics_prefer_an_identifier_over_a_literal_a_file_or_a_variable() -> None:
    assert topic_of("The test uses `string` values but `state.LastCheckpointID` is now `id.CheckpointID`.") == \
        "state.LastCheckpointID"
    assert topic_of("The pre-push hook gets `$1` = the remote name (e.g., `origin`), and `pushSessionsBranchCommon` "
                    "pushes `entire/checkpoints/v1` to that same remote.") == "pushSessionsBranchCommon"
    assert topic_of("Unnecessary nil slice check `cmd/entire/cli/strategy/cleanup.go:94-97`") == "cleanup.go"
    assert topic_of("The change at `common.go:294` now calls `GetGitAuthorFromRepo(repo)`.") == "GetGitAuthorFromRepo()"
    assert topic_of("The `..` check is insufficient because a symlink would pass it.") == ""


def test_a_plain_sentence_is_named_for_its_subject_never_for_a_clause() -> None:
    assert topic_of("The problem is a corrupted index file in this worktree.") == "corrupted index file"
    assert topic_of("The org-level settings override repo settings.") == "org-level settings"
    assert topic_of("The issue is clear now.") == ""
    assert topic_of("Actually, that's outside the scope of this change.") == ""
    assert topic_of("We need to update it because the cache is stale.") == ""


def test_a_verdict_label_is_no_topic() -> None:
    assert lines_of("The cleanest fix: make the test create the directory itself with `os.MkdirAll` before "
                    "writing.") == ["**Decision: os.MkdirAll** -- The cleanest fix: make the test create the "
                                    "directory itself with `os.MkdirAll` before writing."]
    assert lines_of("Better approach: use the cached session file rather than regenerating it.") == [
        "**Decision** -- Better approach: use the cached session file rather than regenerating it."]
    assert topic_of("Used `patch.object()` instead of assigning to `browser.query_one`.",
                    "Fixed query_one shadowing") == "patch.object()"


def test_a_sentence_announcing_a_list_is_no_insight() -> None:
    assert lines_of("There are two categories of failing tests because of the rename:") == []
    assert lines_of("The method is Unix-only because of this specific line:") == []


def test_praise_of_the_result_is_no_decision_but_a_comparison_is() -> None:
    assert lines_of("The code is cleaner, more maintainable, and follows consistent patterns across both "
                    "handlers.") == []
    assert lines_of("Option 2 is cleaner architecturally but requires more changes.") == [
        "**Decision** -- Option 2 is cleaner architecturally but requires more changes."]
    found = session_insights("89488521-e2e7-4d97-bc02-38197efdddc8")
    assert found and not any("The code is cleaner and more maintainable" in line for line in found)


def test_a_fix_reported_under_a_bug_label_is_what_was_done_not_a_root_cause() -> None:
    assert lines_of("Bug fix: Fixed potential nil pointer dereference in OpenCode stop handler") == []


def test_the_fix_chosen_is_a_decision() -> None:
    assert any(line.startswith("**Decision: InitEntire** -- The fix is to add `.entire` to `.git/info/exclude`")
               for line in session_insights("0a76fbfe-d767-433e-b4b1-a39e044f21e8"))


def test_a_fact_set_against_the_belief_it_corrects_is_found() -> None:
    assert ("**Found: bytes** -- The `bytes` identifier is being used as a type conversion, but `bytes` is the "
            "imported package, not a type.") in stated("768de5d6-9fad-475b-8a4f-dfa7ddc01bb0")
    assert lines_of("Those diagnostics are pre-existing, not from my changes.") == []
    assert lines_of("The lint warnings come from the generated code, not related to my changes.") == []


def test_thinking_aloud_is_no_decision() -> None:
    found = session_insights("00ef13bd-99a1-4001-a829-09985a069ab2")
    assert found and not any("I also need to unset" in line for line in found)
    assert lines_of("I can directly check the filter states instead of looping through items.") == []


def test_the_sentence_after_understanding_the_issues_is_their_root_cause() -> None:
    assert ("**Root cause** -- The tests expect custom error messages printed to stderr, but the command is "
            "returning plain errors.") in stated("1ecba475-5b18-4058-a0cb-e87703f6f792")


def test_a_step_on_a_finding_takes_the_place_of_the_finding_kept_alone() -> None:
    # ab8c5aa0: "The "too long" test failed because the regex matches the first 12 characters of a longer string. Let
    # me make the regex stricter ...": the cause and what was done on it, one line
    found = session_insights("ab8c5aa0-e11b-4b16-9be3-c470a9483829")
    assert (
        "**Decision** -- Make the regex stricter by requiring the ID to be followed by whitespace or end of string, "
        "since the \"too long\" test failed because the regex matches the first 12 characters of a longer "
        "string.") in found
    assert sum("too long" in line for line in found) == 1


def test_a_step_on_a_finding_whose_edit_the_user_refused_is_no_decision() -> None:
    # 1ecba475: "Let me update the reset command to follow the error handling pattern", its edit refused: "fix the
    # test, the code is right"; the person's word alone (the diagnosis they overruled goes too)
    assert session_insights("1ecba475-5b18-4058-a0cb-e87703f6f792") == (
        "**Decision** -- At the user's request: fix the test, the code is right.",)
    # f6833005: "Let me simplify the test harness to just commit what exists", refused ("why not adding
    # .entire/.gitignore?"): not taken, so no decision even with places free; the step taken instead keeps its place
    lines = session_insights("f6833005-7be4-4178-bb37-a0e9feadc36b")
    assert not any("Simplify the test harness" in line for line in lines), lines
    assert any(line.endswith("-- Fix `setupAgentHooksNonInteractive` to also create the gitignore, since the issue "
                              "is that `entire enable --agent` doesn't create it (only the interactive enable does).")
               for line in lines), lines


def test_a_finding_that_is_the_agents_own_step_leaves_the_step_with_its_reason_alone() -> None:
    # ca8cc13b: "Actually, let me just keep the error return for API consistency but suppress the lint warning", the
    # sentence before it "But for API consistency with the Gemini pattern, I'll add nolint comments." (a candidate: its
    # place in the handoff, the last, goes to the files reverted, tests/test_acts.py)
    with mock.patch.object(insights_rules, "MAX_INSIGHTS", insights_rules.MAX_INSIGHTS + 1):
        lines = session_insights("ca8cc13b-d3df-4615-8f3f-f48a96b1a6f9")
    assert "**Decision** -- Keep the error return for API consistency but suppress the lint warning." in lines
    assert not any("I'll add nolint comments" in line for line in lines), lines


def test_what_is_kept_since_it_is_fine_is_a_decision() -> None:
    assert any(line.startswith("**Decision** -- Since this test is about reading git config for commit author "
                               "resolution") for line in session_insights("e59f0f58-7444-45a2-81a4-d280e6fb0430"))


def test_the_fix_was_doing_something_is_a_decision_named_for_its_code() -> None:
    assert any(line.startswith("**Decision: InitializeSession** -- The fix was updating")
               for line in session_insights("2b945d54-dd2b-4f60-b3b0-7b0252349003"))


def test_a_change_reported_with_its_reason_is_a_decision() -> None:
    assert any(line.startswith("**Decision: legacyCompletionComment** -- The `legacyCompletionComment` constant "
                               "was inlined") and "since the purpose" in line
               for line in session_insights("c4a6d0ff-2c86-4f56-8509-c4737bcb5768"))
    assert lines_of("Added the retry to the sender so that every message gets it.") == [
        "**Decision** -- Added the retry to the sender so that every message gets it."]
    assert lines_of("Added the retry to the sender and a test for it.") == []


def test_the_side_a_merge_resolution_took_is_a_decision() -> None:
    assert ("**Decision** -- The resolution should take the incoming stanza approach but keep HEAD's UX "
            "improvements (shell name in prompt, \"already configured\" message).") in session_insights(
        "cfd57c28-f61a-42df-8ddf-d99b94586ea3")
    assert any(line.startswith("**Decision: session.Transition** -- Conflict 1: Kept our phase transition code")
               for line in session_insights("da15b15f-a573-4523-abcb-fdd6c9a4e2a2"))


def test_a_step_to_take_is_no_fact_found() -> None:
    assert lines_of("Add a test that reproduces the original bug: the check should return true for it, not "
                    "false.") == []
    assert not any(line.startswith("**Found") and "Add a test" in line
                   for line in session_insights("c010174c-a7cd-4bcc-b7d4-61258d6c463f"))


def test_a_fix_said_to_work_is_no_decision() -> None:
    assert lines_of("The fix is working - down from ~800ms to ~135ms consistently after the first run.") == []


def test_a_yes_i_can_reply_is_an_offer_not_a_decision() -> None:
    found = session_insights("645ea3df-c4e9-44bc-b333-22c9893c32c5")
    assert not any("Yes, I can refactor" in line for line in found), found
    # an answer that states a fact and its merit stays
    assert "**Decision** -- Yes, GoReleaser Pro supports GitHub Apps which is better for organizations." in \
        session_insights("48f428f9-72d8-40b2-9594-953019809473")


def test_a_list_of_pros_and_cons_is_no_decision() -> None:
    # "Build from Source (Current approach)": "Transparency - Users can audit ...", "Slow install - ..."
    found = session_insights("48f428f9-72d8-40b2-9594-953019809473")
    assert not any(label in line for line in found for label in ("Transparency", "Smaller repo", "Homebrew preferred"))
    # a listed item with a cue of its own stays a decision
    assert any("since `LastCheckpointID` is now" in line
               for line in session_insights("34de7f83-0473-45b7-a94f-53aa41b3108c"))


def test_one_recommendation_said_again_in_other_words_is_kept_once() -> None:
    found = session_insights("595f7a87-dd6e-4eb7-943a-b2b009259be7")
    recommendations = [line for line in found if "test secrets" in line]
    assert len(recommendations) == 1
    assert "I'd suggest putting test secrets in a dedicated test file" in recommendations[0]
    assert not any(line.startswith("**Decision** -- Something like") for line in found)


def test_two_different_fixes_of_one_session_are_both_kept() -> None:
    found = session_insights("c3afafd7-9a94-4316-80d3-ad6f8a1e4d80")
    assert any("`paths.SummaryFileName`" in line for line in found), found


def test_a_change_made_to_match_existing_code_is_a_decision() -> None:
    # "I changed it to `fmt.Sprintf` ..., matching the pattern used in the `ShadowBranchConflictError` handler"
    assert any("matching the pattern used in the `ShadowBranchConflictError` handler" in line
               for line in session_insights("7744721d-0ad2-4529-8b08-3b18561c6c36"))
    assert lines_of("Updated the test to check the new output.") == []


def test_a_choice_judged_appropriate_for_its_reason_is_a_decision() -> None:
    assert any(line.endswith("Since telemetry is best-effort, a no-op is appropriate for unsupported platforms.")
               for line in session_insights("cc432c40-914a-4c1a-a972-0103199a736a"))
    assert lines_of("The output format is appropriate.") == []


def test_a_session_rich_in_decisions_keeps_the_approach_it_finally_took() -> None:
    # two root causes and three decisions before it: the approach finally taken was cut at four; it states more than
    # ten causes, choices and changes with their reasons: `MAX_INSIGHTS` kept
    found = insights(corpus_session("9e953218-585f-4692-89df-9e0747a31c68"))
    assert len(found) == insights_rules.MAX_INSIGHTS == 10
    assert any("rewrites instead of dynamic base detection" in line for line in found), found


def test_a_session_with_few_decisions_gains_none_from_the_higher_cap() -> None:
    assert len(insights(corpus_session("2b945d54-dd2b-4f60-b3b0-7b0252349003"))) == 1


def test_an_approach_announced_with_its_purpose_or_the_alternative_set_aside_is_a_decision() -> None:
    """The handoff's line states the approach without the words that announce it ("I'll", "Let me")."""
    found = [line.split("** -- ")[-1] for line in insights(corpus_session("4e836284-4a0a-44a1-acb3-38c68db78007"))]
    # ("I'll add a helper function ...": its "Update to use `cmd.CommandPath()` ..." the session took back later)
    assert any(line.startswith("Add a helper function to make the command string testable") for line in found)


def test_a_choice_said_instead_reads_with_what_it_sets_aside_in_the_sentence_before() -> None:
    found = [line.split("** -- ")[-1] for line in insights(corpus_session("768de5d6-9fad-475b-8a4f-dfa7ddc01bb0"))]
    assert ("Using `fmt.Sprintf` for slice comparison is clunky. Use `slices.Equal` instead — cleaner and available in "
            "Go 1.25.") in found
    # "instead of a list" names what it sets aside: the choice reads alone
    alone = "Let me use a set instead of a list for the lookups, so each check is constant time."
    assert lines_of(f"The loop is slow on large inputs. {alone}") == [f"**Decision** -- {alone}"]


def test_a_step_announced_before_what_it_shows_is_no_decision() -> None:
    # "Let me use the test data instead:" introduces the command after it
    found = insights(corpus_session("37f83ec9-f2ea-42a9-925e-0d5c105cb6e8"))
    assert not any("Let me use the test data instead" in line for line in found)


def texts(session_id: str) -> list[str]:
    """The handoff's insight lines without their topic."""
    return [line.split("** -- ", 1)[-1] for line in insights(corpus_session(session_id))]


def test_the_line_leaves_the_kind_to_the_text_and_keeps_the_topic() -> None:
    found = insights(corpus_session("20b81bf8-77cd-4205-8ac9-727b573a70e4"))
    assert found[0].startswith("The `FileModificationTools` list in `types.go` was")  # its topic said once
    assert any(line.startswith("**replace** -- The key fix was adding `replace`") for line in found), found
    assert not any(line.startswith(("**Decision", "**Root cause", "**Found")) for line in found)


def test_a_further_root_cause_only_fills_a_place_the_decisions_leave_free() -> None:
    # two places used of eight: the second cause is the reason of the choice its label names ("reuse the pattern in
    # trailers, since trailers already imports id")
    # (a comment the session wrote that says why fills a place after it)
    # (the first cause, "The "too long" test failed ...", is said by the step taken on it: this one is the cause kept)
    found = [item for item in chosen(corpus_session("ab8c5aa0-e11b-4b16-9be3-c470a9483829"))
             if item.strength != WRITTEN]
    assert found[0].cause and found[0].text.startswith("The `trailers` package already imports `checkpoint/id`")
    # nine choices stated: the root cause takes only the place they leave ("Both approaches use ..." read alone is none)
    found = chosen(corpus_session("63784323-7042-4ab8-82b1-3c0b79467bf9"))
    causes = [item.text for item in found if item.cause]
    assert causes == ['The real issue is: we fundamentally cannot detect a "dismiss".'], causes


def test_a_further_root_cause_comes_after_the_decisions() -> None:
    found = chosen(corpus_session("20b81bf8-77cd-4205-8ac9-727b573a70e4"))
    further = next(i for i, item in enumerate(found) if item.text.startswith("The key fix was adding `replace`"))
    assert found[0].cause and found[further].cause
    assert max(i for i, item in enumerate(found) if item.kind == "Decision") < further


def test_a_report_line_with_its_reason_is_a_decision() -> None:
    # "Replaced `os.Chdir()` with `t.Chdir()` which handles cleanup automatically": what it replaced and why
    assert "Replaced `os.Chdir()` with `t.Chdir()` which handles cleanup automatically" in texts(
        "34b1e2a4-8cec-4bb9-94a0-ec9e9c639c8e")
    assert lines_of("Replaced `os.Chdir()` with `t.Chdir()` in the three tests.") == []


def test_a_change_to_code_the_session_wrote_with_what_it_set_aside_is_a_decision() -> None:
    found = chosen(corpus_session("97007e37-53bd-4456-9a49-c0f8081081a7"))
    assert any(item.text == "`CapitalizeFirst(s)` - Capitalizes first rune, not first byte" for item in found)
    # a session that wrote no code: nothing said of code is a change it made
    assert all(item.strength >= 0 for item in chosen(corpus_session("70fc6d83-147d-4fdf-b015-bd67eeb11883")))


def test_a_change_reported_naming_code_the_session_wrote_is_a_decision_not_a_list_of_files() -> None:
    found = texts("34b1e2a4-8cec-4bb9-94a0-ec9e9c639c8e")
    assert any(line.startswith("`mergeJSON` - Added strict validation at the start") for line in found)
    # "Deleted `start.go`, `start_test.go`, `integration_test/start_test.go`": files touched, no choice
    assert not any(line.startswith("Deleted `start.go`") for line in texts("4555072a-e039-4937-b6ea-dcb86152dd55"))


def test_changes_reported_without_a_reason_are_two_at_most() -> None:
    # a docs session reporting each of its additions (`TokenUsage` field, type, format example, step 6)
    found = chosen(corpus_session("189d8afc-493f-49af-b59e-6a1ee9676a6e"))
    assert sum(item.strength == REPORTED for item in found) == 2


def test_a_change_announced_naming_code_the_session_then_wrote_is_a_decision_without_its_announcing_words() -> None:
    assert "Create a shared `stringutil` package that both cli and strategy can import." in texts(
        "97007e37-53bd-4456-9a49-c0f8081081a7")
    # "I need to add the missing imports (`os/exec` and `path/filepath`)", "Add tests for ...": chores
    found = texts("5dd7775c-3161-4ad5-bf25-eb59a6ffa8e6")
    assert not any("missing imports" in line or line.startswith("Add tests") for line in found)


def test_a_case_the_code_meets_is_no_change_made() -> None:
    # "But if `SaveChanges`/`SaveTaskCheckpoint` are called before that completes ..., they try to preserve ..."
    assert not any(line.startswith("But if") for line in texts("b25a8b6e-b748-4911-bc05-dfa90cd63948"))


def test_what_named_code_only_does_is_a_finding() -> None:
    assert "The `commands/` directory only contains `help.go`." in texts("8b418ea5-895d-4ad5-abe8-4489d36e454f")
    # "The `encoding/json` import is already in place.": no limit of the code
    assert not any("already in place" in line for line in texts("eb4bcc15-3ff5-4d73-bac5-9bc1d786b2bb"))


def test_the_commit_bodies_the_session_wrote_give_its_reasons() -> None:
    found = texts("45ba035c-93ee-46e8-b83c-9d8a3a1cb05b")
    assert ("Rename 'context' parameter to 'additionalContext' in hook response functions to avoid shadowing the "
            "imported context package.") in found
    assert not any("Co-Authored-By" in line for line in found)
    # a body's list of files ("- settings/settings.go (the dedicated package)"): too short to give a reason
    assert not any(line.startswith("settings/settings.go") for line in texts("15a48867-a078-4afc-afaa-c00798fc36e8"))


def test_two_lines_sharing_half_their_words_are_one_insight() -> None:
    # "Add detection for rebase (and cherry-pick/revert ...) at the start of `PrepareCommitMsg`" and "Add a function
    # to detect rebase/cherry-pick/revert state and check it early in `PrepareCommitMsg`"
    found = texts("5dd7775c-3161-4ad5-bf25-eb59a6ffa8e6")
    assert sum("cherry-pick/revert" in line and "PrepareCommitMsg" in line for line in found) == 1


def test_code_judged_right_as_it_is_with_its_reason_is_a_decision() -> None:
    # "The other two occurrences ... don't need fixing because they immediately overwrite ...": a choice to leave them
    found = session_insights("b6b83817-c584-4561-86a0-bd4f974e7274")
    assert any(line.startswith("**Decision") and "don't need fixing because" in line for line in found)
    assert any("is reasonable since the review will be retried" in line
               for line in texts("8897bd54-16f4-4a28-8e23-cb187c639e40"))
    assert any("were already fixed in the latest PR commits" in line
               for line in texts("e5fcdc73-b9fc-4991-b532-6bf8440fd12d"))
    # a verdict without its reason is praise, no choice
    assert lines_of("The current error handling in `hooks.go` is reasonable.") == []


def test_a_change_announced_with_its_reason_is_a_decision() -> None:
    assert ("I should also document the transcript position tracking in the UserPromptSubmit section, since that's "
            "where it's captured.") in texts("189d8afc-493f-49af-b59e-6a1ee9676a6e")
    # "To keep the test maintainable and pass linting checks, I created two helper functions:" leads into its list
    assert "To keep the test maintainable and pass linting checks, I created two helper functions." in texts(
        "ee6078de-2c4f-428e-b137-aafce7251a7a")
    # "Now I need to remove the unused import since ...": a chore; a check with its reason: no change
    assert not any("unused import" in line for line in texts("89488521-e2e7-4d97-bc02-38197efdddc8"))
    assert lines_of("Let me check the hook logs since the test failed twice in a row.") == []


def test_a_change_made_for_better_something_is_said_with_its_reason() -> None:
    found = texts("4379d1bf-ccb1-414e-a856-9791b73f3af2")
    assert any("for better spacing" in line for line in found)
    assert not any(line.startswith("I've added margin-bottom") for line in found)  # the lead, said without a reason


def test_an_approach_leading_into_a_list_with_what_it_sets_aside_is_a_decision() -> None:
    assert ("Rewrite the tokenizer display to use proper HTML ruby elements instead of CSS display properties for "
            "better browser compatibility.") in texts("b25638d7-b104-4f06-a797-70ac33d069ed")


def test_two_options_weighed_or_one_judged_out_of_proportion_is_a_decision() -> None:
    assert ("The false negative (creating unnecessary new suffix when user just added a comment) is less harmful than "
            "the false positive (mixing incompatible work).") in texts("63784323-7042-4ab8-82b1-3c0b79467bf9")
    assert ("Failing the whole write feels too aggressive for what's essentially a best-effort dedup check."
            in texts("76d407bd-2561-45ef-8cbb-2dc1f9be9bbe"))
    assert lines_of("The new parser in `parse.go` is more complex and slower to start.") == []


def test_a_recommendation_said_plainly_is_a_decision() -> None:
    # 22c5d52e: "I recommend the Keep a Changelog format — it's the closest thing to an industry standard."
    found = session_insights("22c5d52e-9602-4ffe-aaa1-0265b115ef3d")
    assert any("I recommend the Keep a Changelog format" in line for line in found)


def test_a_recommended_step_reported_as_past_is_no_decision() -> None:
    assert lines_of("The reviewer recommended tests. Tests were added.") == []


def test_a_step_announced_on_the_finding_before_it_is_one_decision_with_its_reason() -> None:
    # "Local has a single rename commit while the remote has the wrapper script changes. Let me reset to the remote
    # branch to work on the actual PR code."
    assert ("Reset to the remote branch to work on the actual PR code, since local has a single rename commit while "
            "the remote has the wrapper script changes.") in texts("e5fcdc73-b9fc-4991-b532-6bf8440fd12d")
    assert [item.text for item in steps_on_findings(sentences(
        "The linter found duplication between the two tests. Let me refactor to a table-driven test."))] == [
        "Refactor to a table-driven test, since the linter found duplication between the two tests."]


def test_what_the_agent_says_it_sees_before_a_step_is_the_steps_reason() -> None:
    # b50aaf5c: "I see there's already a `taskToolInput` type and helper function in hooks.go. Let me fix the duplicate
    # and use the existing code." (both its readers: reused the existing helper, dropped the duplicate)
    assert ("Fix the duplicate and use the existing code, since there's already a `taskToolInput` type and helper "
            "function in hooks.go.") in texts("b50aaf5c-3ef3-472b-8d5e-75bb89ac3fe1")
    assert [item.text for item in steps_on_findings(sentences(
        "I see that `load_sessions` still calls it. Let me keep the import at module level."))] == [
        "Keep the import at module level, since `load_sessions` still calls it."]


def test_what_the_agent_sees_that_is_no_clause_gives_a_step_no_reason() -> None:
    # cb2e607c: "I see the issue - Hatchling needs to be told ...", 768de5d6: "I see 4 spots with `strings.Contains`
    # and one with a loose `len` check. Let me replace them all ...": a thing seen, no finding said
    for session_id in ("cb2e607c-c758-415a-8b45-c49e4631906a", "768de5d6-9fad-475b-8a4f-dfa7ddc01bb0"):
        assert not any(", since the issue" in line or ", since 4 spots" in line for line in texts(session_id))
    assert steps_on_findings(sentences("I see the conflict markers and some duplicate lines. Let me fix both "
                                       "functions.")) == []


def test_no_step_joins_a_status_a_reply_or_a_step_that_names_nothing() -> None:
    # "The fix is complete and all tests pass. Let me create a summary of what was fixed": where the work stands
    assert not any(item.strength == FOLLOWED for item in chosen(corpus_session("b5f6af67-9cd0-42bb-8323-9ac99badee2d")))
    assert steps_on_findings(sentences("Yes, I have access to LSP tools for Go. Let me use them.")) == []
    assert steps_on_findings(sentences("The comment says output goes to `/dev/null`, but `nil` inherits the parent's "
                                       "file descriptors. Let me fix this.")) == []


def test_a_prompt_that_redirects_the_work_and_an_edit_carried_out_is_a_choice_at_the_users_request() -> None:
    # after the agent's comparison of Gemini and Claude Code: "let's first fix the bug with CWD"
    assert "At the user's request: let's first fix the bug with CWD." in texts("f8e05984-93e4-45b7-b638-e6f011442db9")
    # "thinking again: let's completely remove the start command", after it was hidden: the lead words go
    assert "At the user's request: let's completely remove the start command." in texts(
        "4555072a-e039-4937-b6ea-dcb86152dd55")


def test_no_choice_at_the_users_request_from_a_question_an_approval_or_the_first_request() -> None:
    # "now, what should we do re: findSessionIndex?", "yep let's do it": a question, an approval of the agent's plan
    found = [item.text for _, item in user_directions(corpus_session("76d407bd-2561-45ef-8cbb-2dc1f9be9bbe"))]
    assert not any("findSessionIndex" in text or "let's do it" in text for text in found)
    # the first prompt is the task itself, not a redirection ("... launches the session HTML page rather than
    # regenerating it")
    assert not any("rather than" in item.text
                   for _, item in user_directions(corpus_session("89488521-e2e7-4d97-bc02-38197efdddc8")))


def _directed(prompt: str) -> list[str]:
    """What user_directions reads in `prompt`, the second of a session, when an edit follows it."""
    edit = Event("tool", None, tool=ToolCall("e", "Edit", {"file_path": "/r/a.py", "new_string": "b"}))
    session = Session("s", cwd="/r", events=[Event("user", None, text="Add a retry limit to the importer"),
                                             Event("assistant", None, text="Done."), Event("user", None, text=prompt),
                                             edit])
    return [item.text for _, item in user_directions(session)]


def test_an_ordinary_follow_up_is_no_choice_at_the_users_request() -> None:
    assert _directed("run the linter first and fix what it reports") == []
    assert _directed("don't forget to update the changelog too") == []
    assert _directed("let's also add a --verbose flag") == []
    # a correction keeps its words: "no need" is the direction, no lead word
    assert _directed("no need to deprecate it, remove it completely") == [
        "At the user's request: no need to deprecate it, remove it completely."]


def test_a_step_or_a_remark_in_plain_words_is_no_finding() -> None:
    for said in ("We need to add a migration for the new column before the release.",
                 "I don't see any other callers of this function in the repository.",
                 "It doesn't matter much which order the hooks are registered in."):
        assert changes_in(sentences(said), "") == []


def test_a_choice_named_with_its_reason_is_kept_though_it_leads_into_what_follows() -> None:
    # "The simplest fix is to add a `//nolint:maintidx` to the init function, since the pattern ... is deliberate and
    # already established:" and the code after it
    assert ("The simplest fix is to add a `//nolint:maintidx` to the init function, since the pattern of registering "
            "handlers in init is deliberate and already established.") in texts("ca8cc13b-d3df-4615-8f3f-f48a96b1a6f9")
    # a lead-in whose point is all in what follows ("... it now:", "we should probably:")
    assert lines_of("The key change: instead of extracting files from the fork's tree and creating a single "
                    "flattened commit, it now:") == []
    assert lines_of("Since `SessionMetadataDir` can cause the exact bug we just fixed, the cleanest option is that we "
                    "should probably:") == []


def test_a_step_on_the_users_correction_says_it_was_theirs() -> None:
    # "You're right, we should use real booleans. Let me fix both the reading and writing logic."
    assert ("Fix both the reading and writing logic, since we should use real booleans (the user's correction)."
            in texts("cab865ac-8278-406e-b5c2-c73d24d7f9ad"))
    assert [item.text for item in steps_on_findings(sentences(
        "The linter found duplication between the two tests. Let me refactor to a table-driven test."))
        if "correction" in item.text] == []


def test_what_a_tool_does_not_do_said_in_plain_words_fills_a_free_place() -> None:
    assert any(line.startswith("Cobra doesn't propagate `Hidden` to children, so commands like")
               for line in texts("2a80b8d9-b65a-4c2e-8bf4-0df4958640fd"))
    # advice to the person ("You may need to reload your IDE window ..."), not a finding the work follows from
    assert not any(line.startswith("You may need") for line in texts("5ed31c36-bca8-40fd-8d24-f1a1f0af7901"))


def test_an_option_the_user_picked_after_a_bare_yes_is_named_as_the_agent_put_it() -> None:
    # "I like Option C", then "yes" to the agent's question, then the edit: the option as the agent's message named it
    assert "At the user's request: Option C — Thank you footer (Homebrew / many CLIs)." in texts(
        "22c5d52e-9602-4ffe-aaa1-0265b115ef3d")


def test_a_fix_beside_its_root_cause_is_no_repeat_of_it() -> None:
    # (the fix ranked first now: the root cause after it is no repeat either)
    found = texts("c3afafd7-9a94-4316-80d3-ad6f8a1e4d80")
    assert any(line.startswith("Before: the `shouldFilterFile` function filters") for line in found)  # fixed since
    assert "The fix is to add `paths.SummaryFileName` to the switch case in `shouldFilterFile`." in found


def test_a_verdict_after_an_interjection_is_read_without_it() -> None:
    # "Good, `setupAgentHooksNonInteractive` already loads settings first ..., so it's fine": code left as it is
    found = insights(corpus_session("cacf6cfb-e843-47af-9dc2-6a5af1137c53"))
    assert any(line.endswith("`setupAgentHooksNonInteractive` already loads settings first and only modifies "
                             "specific fields, so it's fine.") for line in found)
    assert lines_of("Good, the tests pass now.") == []


def test_a_topic_the_insight_opens_with_is_said_once() -> None:
    """d88bceb6's "**Agent-native design** - All interactive prompts have `--flag` alternatives" is no
    "**Agent-native design** -- Agent-native design - ..."; 00ef13bd's topic named in passing leads no line."""
    assert "Agent-native design - All interactive prompts have `--flag` alternatives" in insights(
        corpus_session("d88bceb6-bb3a-4ae8-9405-d67d19950a46"))
    lines = insights(corpus_session("00ef13bd-99a1-4001-a829-09985a069ab2"))
    assert "`GetGitAuthorFromRepo` already matches this behavior" in " ".join(lines)
    assert not any(line.startswith("**GetGitAuthorFromRepo** -- `GetGitAuthorFromRepo`") for line in lines), lines
    assert any(line.startswith("The change at `common.go:294`") for line in lines), lines


def test_an_interjection_before_a_cause_is_left_out() -> None:
    """0bdbfa06: "Interesting - the session was found because manual-commit tracks active sessions via state files.":
    the cause, with no "**Interesting** --" before it."""
    lines = insights(corpus_session("0bdbfa06-acf1-473a-b3e4-6a03313d1d0e"))
    assert "The session was found because manual-commit tracks active sessions via state files." in lines
    assert not any("Interesting" in line for line in lines), lines


def test_a_choice_of_list_items_named_only_by_number_is_no_insight() -> None:
    """45ba035c's "My recommendation: Fix items 1, 2, 3, 4 (and 8), and 5." and 377c739d's prompts "let's start with
    implementing suggestions 1-4 first", "now let's do 6,7,8,10": the list they number is not in the handoff."""
    assert not any("items 1, 2" in line for line in insights(corpus_session("45ba035c-93ee-46e8-b83c-9d8a3a1cb05b")))
    lines = insights(corpus_session("377c739d-2463-4e96-a4bc-d06fbb4c3e3e"))
    assert not any("1-4" in line or "6,7,8,10" in line for line in lines), lines


def test_a_choice_of_numbered_items_that_says_what_they_are_stays() -> None:
    """09a2c705: "I'd suggest addressing items 3 and 6 before merge (lint verification + stderr warnings) ..."."""
    assert any(line.startswith("I'd suggest addressing items 3 and 6 before merge (lint verification")
               for line in insights(corpus_session("09a2c705-b334-4632-b1bf-b68e510ca0b5")))


def test_a_topic_the_insight_opens_with_as_a_path_is_said_once() -> None:
    """0bdbfa06: "`cmd/entire/cli/explain_test.go`: Updated tests to expect new behavior ..." under no
    "**explain_test.go** --"."""
    lines = insights(corpus_session("0bdbfa06-acf1-473a-b3e4-6a03313d1d0e"))
    assert "`cmd/entire/cli/explain_test.go`: Updated tests to expect new behavior (overview instead of error)" in lines


def test_per_as_for_each_is_no_reason() -> None:
    """d88bceb6's "`004-pending-p3-duplicate-git-hook-install.md` - `InstallGitHook` called twice per enable": a
    count, not a change made per a rule; fe1ffae3's "... excluded from `gosec` and `wrapcheck` per the golangci
    config, so that's fine" still gives one."""
    assert not any("called twice per enable" in line
                   for line in insights(corpus_session("d88bceb6-bb3a-4ae8-9405-d67d19950a46")))
    assert any("per the golangci config" in line
               for line in insights(corpus_session("fe1ffae3-f297-4dc1-9b9d-8a2b49059af7")))


def test_the_finding_said_right_before_an_edit_fills_a_free_place() -> None:
    # 0f6074fc: "The comment says output goes to `/dev/null`, but `nil` actually inherits the parent's file
    # descriptors. Let me fix this:" and the edit: the reason its label folds into the decision to redirect output
    assert ("The comment says output goes to `/dev/null`, but `nil` actually inherits the parent's file descriptors."
            in texts("0f6074fc-a0f5-4d56-8de0-f4a592ddcf3b"))
    # 5a6312ee: what the function reads, said before the test cases were written around it
    assert any(line.startswith("The function reads `SHELL` env and `os.UserHomeDir()`")
               for line in texts("5a6312ee-5752-4b7a-9ad2-6c3b1b5f4c8a"))


def _before_edit(said: str, *tools: str, is_error: bool = False) -> list[str]:
    """What `chosen` keeps of `said`, a message the session's next steps after are `tools` (an Edit by default; a
    tool named "say: ..." is a message of the agent's)."""
    steps = [Event("assistant", None, text=tool[5:]) if tool.startswith("say: ") else Event(
        "tool", None, tool=ToolCall("e", tool, {"file_path": "/r/a.go", "new_string": "b"}, is_error=is_error))
        for tool in tools or ("Edit",)]
    session = Session("s", cwd="/r", events=[Event("user", None, text="Fix the telemetry subprocess output"),
                                             Event("assistant", None, text=said), *steps])
    return [item.text for item in chosen(session) if item.strength == BEFORE_EDIT]


def test_no_finding_before_an_edit_from_a_status_a_step_a_read_or_a_failed_edit() -> None:
    finding = "The comment says output goes to `/dev/null`, but `nil` inherits the parent's file descriptors."
    assert _before_edit(finding) == [finding]
    assert _before_edit(finding, "Read", "Edit") == [finding]  # the file read first, then edited
    assert _before_edit(finding, "Read") == []
    # narration between the finding and the edit; a later finding is the one the edit follows from
    assert _before_edit(finding, "Read", "say: Now let me update the file.", "Edit") == [finding]
    later = "The integration test checks for `go run` in the settings, but localDev mode uses the wrapper script."
    assert _before_edit(finding, f"say: {later}", "Edit") == [later]
    assert _before_edit(finding, is_error=True) == []
    for said in ("All tests pass now and the lint is clean.", "The timeout settings are working.",
                 "Those other diagnostics are pre-existing suggestions, not errors.",
                 "Now remove the unused `strings` import from the test file.", "This is a straightforward change.",
                 "All conflict markers are gone from the three files.", "Wait, I need to check the other callers too.",
                 "The diagnostics show the `repo` variable is declared but not used.",
                 "Update the release workflow to publish the Homebrew formula with the new token."):
        assert _before_edit(said) == [], said
    # 768de5d6's edits after "Now remove the unused `strings` import.": a chore, no finding
    assert not any("unused" in line for line in texts("768de5d6-9fad-475b-8a4f-dfa7ddc01bb0"))


def test_a_finding_before_an_edit_that_points_at_the_sentence_before_it_is_left_out() -> None:
    # b9bdbf44 "Since they're in the same package, I can use them directly." and "The function is too complex ...",
    # 23986045 "This ensures we record the check attempt ...", b6b83817 "Lines 228 and 331 both immediately set ...",
    # 9e44573d "Persist it in checkpoint metadata ...": what they are about is said before
    for session_id, start in (("b9bdbf44-cc66-4b63-bf50-e2ace00d58e7", "Since they're"),
                              ("23986045-ec24-48ac-8531-832bf31b9053", "This ensures"),
                              ("b6b83817-c584-4561-86a0-bd4f974e7274", "Lines 228"),
                              ("b9bdbf44-cc66-4b63-bf50-e2ace00d58e7", "The function is too complex"),
                              ("9e44573d-4eb8-4de0-8659-418f3c68706d", "Persist it")):
        assert not any(text.startswith(start) for text in texts(session_id)), session_id
    # 0f6074fc's finding names what it is about: kept
    assert ("The comment says output goes to `/dev/null`, but `nil` actually inherits the parent's file descriptors."
            in texts("0f6074fc-a0f5-4d56-8de0-f4a592ddcf3b"))


def test_a_topic_among_the_first_words_of_the_text_is_said_once_and_a_setting_is_no_topic() -> None:
    # 0d3a8e6f: "**sidechain group** -- The sidechain group has ..." said the topic twice; 87a7858d's topic, named
    # later in its text in passing, leads no line
    finding = "The sidechain group has `#e8f5e8` (light green) but the CSS for `.vis-item.timeline-item-sidechain` uses"
    assert Insight("Found", "sidechain group", finding, BEFORE_EDIT).line() == finding
    assert ("The commit adds an early exit to `handlePostTask()` when there are no file "
            "changes.") in insights(corpus_session("87a7858d-3f94-4c65-a2d5-307e9337b041"))
    # f744aef5: "... since the linter only checks new/changed code (`new: true`)": a setting, no topic
    assert topic_of("Add nolint comments, since the linter only checks new/changed code (`new: true`).") != "new: true"
    assert topic_of("Now `entire session list` will send the whole command path.") == "entire session list"


def test_a_change_asked_for_as_a_question_or_a_correction_naming_the_right_side_is_the_users_choice() -> None:
    # ab8c5aa0: "can we import the id packages as checkpointID in trailers.go?", then the edit: said by its verb
    assert "At the user's request: import the id packages as checkpointID in trailers.go." in texts(
        "ab8c5aa0-e11b-4b16-9be3-c470a9483829")
    # 1ecba475: "fix the test, the code is right": which side of a failing test to change
    assert "At the user's request: fix the test, the code is right." in texts("1ecba475-5b18-4058-a0cb-e87703f6f792")


def test_a_change_asked_that_names_nothing_outside_its_quote_is_no_choice_and_a_second_question_is_cut() -> None:
    # 569aed7b: "could we also do "Git hooks verified" ?" reads alone as nothing; 488c5296's "can you also add a single
    # retry?" stays
    assert not any("Git hooks verified" in line for line in texts("569aed7b-6ead-4790-a3fe-c7028466112c"))
    assert "At the user's request: add a single retry." in texts("488c5296-fc78-4fdf-8cfd-f1cae9454bd0")
    # b25a8b6e: "Can we have a generic Fallback like "Agent" does that make sense with the setences?"
    assert "At the user's request: have a generic Fallback like \"Agent\"." in texts(
        "b25a8b6e-b748-4911-bc05-dfa90cd63948")


def test_a_check_an_investigation_or_tests_asked_for_as_a_question_is_no_choice() -> None:
    # ee6078de: "can we add a test?"; fe0cdcc5: "can you double check that `--force` on enable actually removes ...?"
    for session_id in ("ee6078de", "fe0cdcc5"):
        path = next(CORPUS.rglob(f"{session_id}*.jsonl"))
        assert directions(corpus_session(path.stem)) == [], session_id
    assert _directed("can you figure out if there are more types we don't support?") == []
    assert _directed("could you explain why the hook runs twice?") == []
    assert _directed("can we use `git diff --cached` instead of go-git's status?") == [
        "At the user's request: use `git diff --cached` instead of go-git's status."]


def test_what_a_change_will_do_a_risk_foreseen_or_a_verdict_is_no_root_cause() -> None:
    # 4ec443d0: "This will remove the fake test sessions that are causing the parsing error on startup."; 4931d45a:
    # "But this inconsistency could cause issues if code paths change."; 76d407bd's review: "Root cause is
    # well-understood and the fix is in the right place."
    assert not any(line.startswith("This will remove the fake test sessions")
                   for line in texts("4ec443d0-063b-4de3-8ede-e35160c2c1de"))
    assert not any("could cause issues" in line for line in texts("4931d45a-d447-44b4-8475-1e6fcfcc28bf"))
    assert not any("well-understood" in line for line in texts("76d407bd-2561-45ef-8cbb-2dc1f9be9bbe"))
    # a cause found that says what it did: "... used `source .env` with `set -u` active, which would cause ..."
    assert any(line.startswith("The original wrapper scripts used `source .env` with `set -u` active, which would")
               for line in texts("9f26971d-da0a-46db-b911-e156aad9548e"))


def test_a_short_choice_is_not_joined_to_the_question_after_it() -> None:
    # 03a1382e: "The real fix is ENT-242. Want me to close it?"
    assert not any("Want me to close it?" in line for line in texts("03a1382e-ecd5-42c4-b3d4-5c659e165904"))
    assert lines_of("The real fix is ENT-242. Want me to close it?") == []


def test_a_step_on_a_finding_fills_a_free_place_before_a_further_root_cause() -> None:
    # f744aef5, eight places: the step on the user's correction is a choice with its reason; the further cause
    # ("go-git doesn't automatically use the system's credential helpers ...") gives way to it (and the step to the
    # review's own words of the fix, which rank with the user's directions: tests/test_user_choices.py); it takes
    # only the place the overruled "... constructed internally ..., I'll add the appropriate nolint comments" left
    session = corpus_session("f744aef5-5139-4c21-91e5-3f44ce902105")
    found = texts("f744aef5-5139-4c21-91e5-3f44ce902105")
    steps = [item.text for _, text in agent_texts(session) for item in steps_on_findings(sentences(text))]
    assert "Add proper validation for the branch name, since that's a valid security concern (the user's correction)." \
        in steps
    assert any(line.startswith("Per the review: validate branchName as a safe refname") for line in found)
    assert found[-1].startswith("go-git doesn't automatically use")
    # a finding opening with "But" joins without it: "..., since for API consistency ..."
    assert [item.text for item in steps_on_findings(sentences(
        "But for API consistency with the Gemini pattern, the error return stays. Let me keep the error return and "
        "suppress the lint warning."))] == ["Keep the error return and suppress the lint warning, since for API "
                                            "consistency with the Gemini pattern, the error return stays."]


def test_the_finding_before_an_edit_holds_across_narration_between() -> None:
    # fe1ffae3: "Uses `dirname "$0"` to resolve the hooks directory dynamically — works correctly with worktrees.",
    # then a message that only announces the edit, then the edit (its label: "Chain call resolves the hooks directory
    # with dirname "$0" so it works in worktrees.")
    assert ('Uses `dirname "$0"` to resolve the hooks directory dynamically — works correctly with worktrees.'
            in texts("fe1ffae3-f297-4dc1-9b9d-8a2b49059af7"))


@pytest.mark.parametrize("prompt", ["can you fix it?", "can you please proceed?", "can you continue?",
                                    "Can you commit and push?", "ok can you go ahead?", "can you apply the fix?",
                                    "can you make the changes?", "could you make it better?", "Can you update it?"])
def test_a_go_ahead_asked_as_a_question_names_no_change_and_is_no_choice(prompt: str) -> None:
    assert _directed(prompt) == []


def test_a_change_asked_as_a_question_that_names_what_to_change_is_the_users_choice() -> None:
    assert _directed("can you do the same for the config loader?") == [
        "At the user's request: do the same for the config loader."]


def test_a_prompt_saying_something_is_right_now_so_is_no_correction() -> None:
    assert _directed("the CI is right now failing on lint, fix it") == []
    assert _directed("the test was right, keep the retry in the client") == [
        "At the user's request: the test was right, keep the retry in the client."]


@pytest.mark.parametrize("said", [
    "export const handler = async (event) => { const body = JSON.parse(event.body); return process(body) }",
    "if (retries > max) { throw new Error('too many retries for the upload request'); }",
    "The user wants the retry loop to reset the backoff counter after each successful request.",
])
def test_code_outside_backticks_or_the_users_request_restated_before_an_edit_is_no_finding(said: str) -> None:
    assert _before_edit(said) == []


def test_a_closing_reports_list_line_naming_written_code_fills_a_free_place() -> None:
    # f8e05984's closing report: "1. **`geminicli/gemini.go`** - `DetectPresence()`" with "- Now uses `paths.RepoRoot()`
    # with fallback to CWD" under it (its label: "Use paths.RepoRoot() with a CWD fallback in Gemini presence
    # detection ..."); its siblings repeat the changes already kept ("`InstallHooks()` - Now uses repo root ...")
    found = chosen(corpus_session("f8e05984-93e4-45b7-b638-e6f011442db9"))
    assert [item.text for item in found if item.strength == CLOSING] == [
        "Now uses `paths.RepoRoot()` with fallback to CWD"]
    # 8c816805, eight places: the closing line takes the one the others leave
    assert "Modified `GetOutputFilter()` to log a warning to stderr when settings fail to load" in texts(
        "8c816805-24e2-4871-ac94-e97ce23993c1")


def test_a_closing_reports_list_of_what_the_tests_check_gives_no_line() -> None:
    # ee6078de closes on a report of the tests it added: "### What the Test Verifies", "### Helper Functions" led by
    # "To keep the test maintainable ..., I created two helper functions:"; none of its list lines is a choice
    session = corpus_session("ee6078de-2c4f-428e-b137-aafce7251a7a")
    last = agent_texts(session)[-1][1]
    assert not any(item.strength == CLOSING and item.text in last for item in chosen(session))
    written = "func Resolve() {} func parseInput() {} const backupSuffix"
    report = ("Resolved it.\n\n- Changed `Resolve` to read the repository root first, since the hooks do\n"
              "- [ ] Verify `Resolve` still works from a subdirectory\n"
              "- `parseInput()` - Parse and validate input\n"
              "- Added imports for `backupSuffix` and the rest of `parseInput`\n"
              "- `Resolve` fix committed in `46815ae` and pushed to the branch\n\n"
              "**Tests added:**\n- `parseInput` returns an error on an empty payload from the hook")
    assert [item.text for item in closing_lines(sentences(report), written)] == [
        "Changed `Resolve` to read the repository root first, since the hooks do"]
    # the message's first outcome is What Happened's bullet: it stays there
    assert closing_lines(sentences("- Changed `Resolve` to read the repository root first, since the hooks do"),
                         written) == []


def test_a_comment_the_session_wrote_that_says_why_fills_a_free_place() -> None:
    # 0f6074fc wrote "// Discard stdout/stderr to prevent output leaking to parent's terminal" above the redirect it
    # added (its label: "Explicitly redirect output rather than leaving nil ..."); five places were taken
    found = chosen(corpus_session("0f6074fc-a0f5-4d56-8de0-f4a592ddcf3b"))
    assert [item.text for item in found if item.strength == WRITTEN] == [
        "Discard stdout/stderr to prevent output leaking to parent's terminal"]
    # ddf36c6d's Edit renamed `isSummariseEnabled`: the comment "Reads the settings file directly to avoid import
    # cycles" above it was there before, in its `old_string`, and is not the session's
    assert written_reasons(corpus_session("ddf36c6d-77ad-4900-9c50-1ea2c4cd932b")) == []


def test_a_review_reply_the_session_posted_that_says_why_is_a_decision() -> None:
    # 45ba035c answered Copilot's comments with `gh api .../replies -f body="..."`: the reply keeps the duplicated
    # helper on purpose (its label: "Kept the duplicated fileExists helpers to avoid ... import cycles")
    texts_written = [item.text for item in written_reasons(corpus_session("45ba035c-93ee-46e8-b83c-9d8a3a1cb05b"))]
    assert "The duplication is a conscious trade-off to avoid import cycles and over-abstraction for a 3-line " \
           "function." in texts_written
    # "Valid — fixed in 46815ae.", "The error is not swallowed.": a reply with no reason is no decision
    assert not any("fixed in" in text or "swallowed" in text for text in texts_written)


def test_comments_that_only_describe_the_code_are_no_decision() -> None:
    # b45ad5d8 wrote docstrings ("Extract unique working directories from a list of entries. Ordered by timestamp
    # (most recent first).") that say what the code does, none why
    assert written_reasons(corpus_session("b45ad5d8-81fb-4bcb-baba-19d9f503d731")) == []


def test_comments_in_tests_are_no_decision() -> None:
    # 1c38adc0's test says "The file must be outside the repo to avoid showing up as untracked itself": how a test is
    # set up; its code's comment on the choice stays
    found = [item.text for item in written_reasons(corpus_session("1c38adc0-5071-4382-9e53-de8c30e2265f"))]
    assert found == ["Uses git CLI instead of go-git because go-git doesn't respect global gitignore "
                     "(core.excludesfile) which can cause false positives for globally ignored files."]


def test_comments_that_say_why_fill_only_places_left_free() -> None:
    # cc432c40 keeps eight insights from its messages: its comments ("APIKey and Endpoint are intentionally excluded
    # to avoid exposing them in process listings") push none of them out
    session = corpus_session("cc432c40-914a-4c1a-a972-0103199a736a")
    assert "APIKey and Endpoint are intentionally excluded to avoid exposing them in process listings (ps/top)." in [
        item.text for item in written_reasons(session)]
    with mock.patch.object(insights_rules, "MAX_INSIGHTS", 8):  # places held full by its messages
        found = chosen(session)
    assert len(found) == 8 and not any(item.strength == WRITTEN for item in found)


def _write(call_id: str, name: str, arguments: dict) -> ToolCall:
    """A write as a source reads it: its input cut, the comments its new text adds kept whole."""
    return tool_call(call_id, name, arguments, identity, written(arguments))


def _written(*calls: ToolCall) -> list[str]:
    return [item.text for item in written_reasons(Session("s", cwd="/r", events=[Event("tool", None, tool=call)
                                                                                for call in calls]))]


def test_a_comments_wrapped_lines_are_one_sentence_and_old_comments_are_not_the_sessions() -> None:
    old = "# Keep the cache small since it lives in memory.\nCACHE = 10\n"
    new = ("# Keep the cache small since it lives in memory.\n"
           "# Read the token from the keyring instead of the environment, so it\n"
           "# never shows in process listings\n"
           "# TODO: drop this once the importer is fixed, because it is slow\n"
           "# Note: JSON is parsed twice so that errors name the line\n"
           "CACHE = 10\n")
    assert _written(_write("e", "Edit", {"file_path": "/r/cache.py", "old_string": old, "new_string": new})) == [
        "Read the token from the keyring instead of the environment, so it never shows in process listings",
        "JSON is parsed twice so that errors name the line"]
    # a document's prose is no comment of code
    assert _written(_write("w", "Write", {"file_path": "/r/README.md", "content": new})) == []


def test_a_pull_requests_body_that_says_why_is_a_decision_and_its_test_plan_is_not() -> None:
    command = ("gh pr create --title \"Keyring tokens\" --body \"$(cat <<'EOF'\n## Summary\n"
               "- Read the token from the keyring instead of the environment, so it never shows in ps\n"
               "- Add a `--token` flag\n\n## Test plan\n- [ ] Verify the keyring is used because CI has none\n"
               "EOF\n)\"")
    assert _written(ToolCall("b", "Bash", {"command": command})) == [
        "Read the token from the keyring instead of the environment, so it never shows in ps"]
    assert _written(ToolCall("b", "Bash", {"command": command}, is_error=True)) == []
def test_a_reports_list_line_that_gives_its_reason_fills_a_free_place_in_any_turn() -> None:
    # 28596a79 proposes a friendlier not-in-PATH message in an earlier turn's report ("Key changes:"), the user says go;
    # its label: "Tell users to restart their terminal rather than rerun the installer, as a concrete next action"
    found = [item.text for item in chosen(corpus_session("28596a79-6247-4bc2-a031-f5848b31e039"))
             if item.strength == CLOSING]
    assert '"restart your terminal" — concrete action instead of "rerun installation"' in found
    # b45ad5d8's last report, a line naming no code ("Working directories are ordered by timestamp, most recent first")
    assert "Preserved ordering: Sorts by timestamp (most recent first) to maintain consistent ordering" in texts(
        "b45ad5d8-81fb-4bcb-baba-19d9f503d731")
    # ee6078de's first report, a line with its purpose ("Branch field uses omitempty so it is left out when HEAD is
    # detached"); its last, of what the tests check, gives none
    assert "Both fields use `omitempty` JSON tag so they're empty when in detached HEAD state" in texts(
        "ee6078de-2c4f-428e-b137-aafce7251a7a")


def test_an_earlier_reports_line_without_a_reason_or_a_referent_gives_no_line() -> None:
    # 7ff991f5's first report describes the function it was asked to follow ("Marks the default agent with `(default)`
    # suffix"): code the session writes later, no choice; ab8c5aa0's "This prevents partial matching of longer invalid
    # IDs" leaves what it is about to the line before
    for session_id in ("7ff991f5-9a8b-4e94-ae66-40204bc3049b", "ab8c5aa0-e11b-4b16-9be3-c470a9483829"):
        assert not any(item.strength == CLOSING for item in chosen(corpus_session(session_id))), session_id
    report = sentences("Done.\n\n- Sorts the rows by timestamp to maintain a stable order\n"
                       "- Marks the default agent with a `(default)` suffix in the listing")
    assert [item.text for item in closing_lines(report, "")] == [
        "Sorts the rows by timestamp to maintain a stable order"]


def test_the_reports_closing_a_turn_are_the_last_message_before_each_prompt_and_the_sessions_last() -> None:
    said = [Event("assistant", None, text=text) for text in ("Reading.", "Proposal.", "Working.", "Done.")]
    session = Session("s", cwd="/r", events=[Event("user", None, text="Fix the importer"), said[0], said[1],
                                             Event("user", None, text="go ahead"), said[2],
                                             Event("tool", None, tool=ToolCall("e", "Edit", {"file_path": "/r/a.py"})),
                                             said[3]])
    messages = agent_texts(session)
    assert [messages[place][1] for place in turn_reports(session, messages)] == ["Proposal.", "Done."]


def test_closing_lines_and_written_reasons_fill_only_the_places_the_findings_leave() -> None:
    # cde341db's findings ("The 100ms timeout isn't being hit fast enough.") keep the last places; its comments that
    # say why ("G304: trace file path from env var is intentional for debugging") come after them
    with mock.patch.object(insights_rules, "MAX_INSIGHTS", 8):  # places held full by the findings
        found = chosen(corpus_session("cde341db-b80a-44f5-b0f2-94db2ef7a164"))
    assert "The 100ms timeout isn't being hit fast enough." in [item.text for item in found]
    assert not any(item.strength == WRITTEN for item in found)
    # 4931d45a's finding on `TaskCheckpointContext` keeps its place before its report's "Consistency - ..." line
    with mock.patch.object(insights_rules, "MAX_INSIGHTS", 8):
        found = chosen(corpus_session("4931d45a-d447-44b4-8475-1e6fcfcc28bf"))
    assert any(item.text.startswith("`TaskCheckpointContext` in `strategy.go` doesn't have") for item in found)
    assert not any(item.strength == CLOSING for item in found)


def test_a_session_that_wrote_no_code_or_only_documents_gives_no_report_lines() -> None:
    # 189d8afc edited a design document: "Updated step 6 to mention token usage is included in `SaveContext` ..."
    # describes the text, not code it settled
    session = corpus_session("189d8afc-493f-49af-b59e-6a1ee9676a6e")
    assert not any(item.strength == CLOSING for item in chosen(session))
    assert any("SaveContext" in text for _, text in agent_texts(session))
    # 9ff9c26d wrote only a design document: its report's "Use interface pattern instead of nil checks everywhere"
    # proposes; 94604a7b wrote nothing
    for session_id in ("9ff9c26d-319d-4a47-843a-3d60f73295c9", "94604a7b-062f-4369-bdf0-da948381c3e5"):
        assert not any(item.strength == CLOSING for item in chosen(corpus_session(session_id))), session_id


def test_a_docstring_the_session_wrote_that_says_why_is_a_decision_and_an_old_one_is_not() -> None:
    old = 'def load():\n    """Read the settings once, since the file is large."""\n'
    new = ('def load():\n    """Read the settings once, since the file is large."""\n\n\ndef token():\n'
           '    """Read the token from the keyring instead of the environment, so it never shows in ps."""\n')
    assert _written(_write("e", "Edit", {"file_path": "/r/auth.py", "old_string": old, "new_string": new})) == [
        "Read the token from the keyring instead of the environment, so it never shows in ps."]


@pytest.mark.parametrize("said", [
    "The timeout is LIKELY the cause of the flaky upload.", "It Might Be the cache.", "This seems fine to me now.",
    "I think the parser drops the last line.", "Looks like the build passed.", "The parser is fixed now, verified.",
    "Unlikely: the lock was never taken.", "Maybe.", "The ſeems word is not ASCII: the pattern decides.", "",
])
def test_a_guess_is_told_by_the_pieces_as_the_pattern_tells_it(said: str) -> None:
    """`_hedged` skips `_HEDGE_RE` for an ASCII sentence holding none of its pieces: the same answer either way."""
    assert _hedged(said) == bool(_HEDGE_RE.search(said))


def test_options_laid_out_and_not_picked_are_no_decisions() -> None:
    # "We have a few options:" then a list; the person's reply picked none, and no edit followed the message
    found = insights(corpus_session("9e953218-585f-4692-89df-9e0747a31c68"))
    assert not any("Copy files during build" in line or "Use rewrites instead of serving" in line for line in found)


def test_the_option_the_reply_picked_or_agreed_to_stays_a_decision() -> None:
    # "can you do me a full summary of the approach with option 5"; "Option 1 is cleaner ... Want me to ...?" "yes"
    assert any("Start with Option 5. It's conservative" in line for line in insights(corpus_session(
        "63784323-7042-4ab8-82b1-3c0b79467bf9")))
    assert any("Option 1 is cleaner" in line for line in insights(corpus_session(
        "ccc58457-00a5-4a2f-82a9-175e4473c60b")))


def test_a_recommended_option_the_reply_passed_over_is_no_decision() -> None:
    # "My recommendation: Go with Option A ...", and the reply: "I like Option C"
    found = insights(corpus_session("22c5d52e-9602-4ffe-aaa1-0265b115ef3d"))
    assert not any("Go with Option A" in line for line in found)
    assert any("Option C" in line for line in found)


def test_a_plans_step_lines_are_no_decisions_but_a_reason_under_a_step_heading_is() -> None:
    assert not any(line.startswith("Step ") for line in insights(corpus_session(
        "63784323-7042-4ab8-82b1-3c0b79467bf9")))
    assert any("This is the cleanest approach because all existing code accessing `msg.Content`" in line
               for line in stated("c010174c-a7cd-4bcc-b7d4-61258d6c463f"))


def test_a_comparison_in_a_session_closing_on_a_choice_question_is_no_decision() -> None:
    # the last message: "The GitHub App approach is better for orgs ... Which way do you want to go?", no reply
    assert not any("GitHub App approach is better" in line for line in insights(corpus_session(
        "2cfdacb8-9317-430f-8975-0709d2837d1c")))
    # a proposal that asks, and a reply came (another request): its recommendation was then carried out
    assert any("I recommend the Keep a Changelog format" in line for line in insights(corpus_session(
        "22c5d52e-9602-4ffe-aaa1-0265b115ef3d")))


def test_an_option_laid_out_is_kept_only_when_the_reply_picks_it() -> None:
    text = ("We have a few options:\n\n"
            "1. **Inline the helper** - avoids the extra call through the registry on every request, since it has one "
            "caller\n2. **Cache the result** - avoids the lookup on every request, since the registry never changes")
    assert insights_in(sentences(text), "why not both?") == []
    assert [item.text for item in insights_in(sentences(text), "go with 2")] == [
        "Cache the result - avoids the lookup on every request, since the registry never changes"]


def test_a_fix_a_reviews_findings_propose_is_no_decision_made() -> None:
    # 847ff7d2: "### Important Findings (P2) - Should Fix ... **Fix:** Extract helper function `GroupCleanupItems()`."
    found = texts("847ff7d2-4a55-44d7-a3f5-a3afd89f1ee1")
    assert not any("GroupCleanupItems" in line or line.startswith("Pre-compute checkpoint path") for line in found)
    assert "Since this is a Go CLI project, I'll skip the Rails-specific reviewers and focus on the relevant ones." in (
        found)
    # under a heading that is no review's, the fix labelled is the choice
    fix = "**Fix:** Use a mutex around the cache instead of a channel, since reads dominate."
    assert lines_of(f"### Approach\n\n{fix}") == [
        "**Decision** -- Use a mutex around the cache instead of a channel, since reads dominate."]
    assert lines_of(f"### Important Findings (P2) - Should Fix\n\n{fix}") == []


def test_a_commit_bodys_item_wrapped_at_72_columns_is_one_line() -> None:
    # 030e1e67: "- Add deprecated LastTranscriptLineCount field to PrePromptState with old\n  JSON tag, plus ..."
    found = texts("030e1e67-6bf0-492d-8bd3-cc3383ec93ab")
    assert ("Add deprecated LastTranscriptLineCount field to PrePromptState with old JSON tag, plus "
            "normalizePrePromptState() migration called on load") in found
    assert not any(line.startswith("JSON tag") for line in found)
    command = ("git commit -m \"$(cat <<'EOF'\nUse a bounded retry\n\n- Retry the upload three times with backoff\n"
               "- Keep the old timeout of thirty seconds for reads\nEOF\n)\"")
    session = Session("s", cwd="/r", events=[Event("tool", None, tool=ToolCall("c", "Bash", {"command": command}))])
    assert [item.text for item in commit_reasons(session)] == [
        "Retry the upload three times with backoff", "Keep the old timeout of thirty seconds for reads"]


def test_a_finding_with_no_choice_yields_its_place_to_a_choice() -> None:
    # b25a8b6e, eight places full: the step taken on the linter's finding, a choice with its reason, keeps its place;
    # the finding stated with no choice ("When `hasNewContent` is false and we reuse ...") yields its own
    with mock.patch.object(insights_rules, "MAX_INSIGHTS", 8):
        found = texts("b25a8b6e-b748-4911-bc05-dfa90cd63948")
    assert len(found) == 8
    assert "Add a constant, since the linter flagged the repeated string." in found
    assert not any(line.startswith("When `hasNewContent` is false") for line in found)
    # places left free: the root cause stays, shown first
    assert session_insights("ab8c5aa0-e11b-4b16-9be3-c470a9483829")[0].startswith("**Root cause: trailers** --")


def test_a_choice_the_agent_judged_ranks_after_the_users_and_the_commits() -> None:
    # a7da6a22, eight places full: the option the user picked keeps its place, the approach the agent judged
    # ("Approach: Add an `error` field to `ManifestEntry` ...") yields its own
    with mock.patch.object(insights_rules, "MAX_INSIGHTS", 8):
        found = texts("a7da6a22-facc-4fcd-8bab-f83c87862004")
    assert len(found) == 8
    assert any(line.startswith("How should corrupted archives be reported in the manifest? The user chose Option C")
               for line in found)
    assert not any(line.startswith("Approach: Add an `error` field") for line in found)
    # places left free: the judged choice stays
    assert any(line.startswith("The fix is to add `.entire` to `.git/info/exclude`")
               for line in texts("0a76fbfe-d767-433e-b4b1-a39e044f21e8"))


def test_a_change_leading_into_its_reasons_is_no_line() -> None:
    # cc432c40: "The test `TestTrackCommandDetachedDefaultsAgentToAuto` (line 90-99) doesn't actually test the
    # defaulting logic because:", its reasons in the list after it
    assert not any(line.endswith("because.") for line in texts("cc432c40-914a-4c1a-a972-0103199a736a"))
    said = "The test `TestDefaults` (line 90-99) doesn't test the defaulting logic because:\n\n1. it returns early"
    assert changes_in(sentences(said), "TestDefaults") == []
    # a change that leads into its code ends with a stop (f744aef5)
    assert "Replace go-git's `remote.Fetch()` with git CLI calls in both functions, similar to how `push_common.go` " \
           "does it." in texts("f744aef5-5139-4c21-91e5-3f44ce902105")


def test_updating_the_todo_list_is_a_chore_not_a_step_on_a_finding() -> None:
    # cb2e607c: "... the installation is working perfectly. Let me update the todo list and show you the final ..."
    assert not any("todo list" in line for line in texts("cb2e607c-c758-415a-8b45-c49e4631906a"))
    assert steps_on_findings(sentences("The lint run found a duplicated check in both handlers. Let me update the "
                                       "todo list.")) == []
    assert [item.text for item in steps_on_findings(sentences(
        "The lint run found a duplicated check in both handlers. Let me extract a shared helper."))] == [
        "Extract a shared helper, since the lint run found a duplicated check in both handlers."]


def test_a_numbered_list_run_together_is_no_finding() -> None:
    # e5fcdc73: "Fix 1: `.env` file should not override existing env vars (both wrapper scripts) Fix 2: ..."
    assert not any("Fix 2:" in line for line in texts("e5fcdc73-b9fc-4991-b532-6bf8440fd12d"))
    run = ("Fix 1: the `.env` file overrides existing env vars in both wrapper scripts Fix 2: the Gemini test expects "
           "the old format of the hook command")
    assert findings_before_edits(sentences(run)) == []
    assert findings_before_edits(sentences("The `.env` file overrides existing env vars in both wrapper scripts, so "
                                           "the values set in the shell are lost.")) != []


def test_a_change_announced_whose_edit_the_user_refused_outright_is_a_step_not_done() -> None:
    # 03a1382e: "I'll replace `getStagedFiles` to use `git diff --cached --name-only` ...:", its edit refused: "let's
    # not make this change in this branch": not done, at the user's word, once (the refusal's own line repeats it)
    found = texts("03a1382e-ecd5-42c4-b3d4-5c659e165904")
    assert ("Not done, at the user's word: replace `getStagedFiles` to use `git diff --cached --name-only` instead of "
            "go-git's `worktree.Status()` (let's not make this change in this branch).") in found
    assert not any(line.startswith(("Replace `getStagedFiles`", "At the user's word, instead of the edit to"))
                   for line in found)
    # 1ecba475's refusal corrects the step ("fix the test, the code is right"): the step fills no place, as before
    assert not any(line.startswith("Not done") for line in texts("1ecba475-5b18-4058-a0cb-e87703f6f792"))


def test_a_short_lead_joins_no_sentence_pointing_at_what_came_between() -> None:
    # 03a1382e: "The simplest way:", a command block, "This re-reads the branch's tree ...": no "The simplest way: This
    # re-reads ..."; 63784323's "My recommendation: Start with Option 5" still reads with "It's conservative ..."
    assert not any(line.startswith("The simplest way: This") for line in texts("03a1382e-ecd5-42c4-b3d4-5c659e165904"))
    assert any("Start with Option 5. It's conservative" in line for line in texts(
        "63784323-7042-4ab8-82b1-3c0b79467bf9"))


def test_what_needed_fixing_or_a_review_found_is_no_change_made() -> None:
    # f8e05984: "3 places that need fixing: ... `InstallHooks()` - uses `os.Getwd()` instead of repo root": the state
    # before the fix; its report's "Now uses repo root instead of `os.Getwd()`" takes the place
    found = texts("f8e05984-93e4-45b7-b638-e6f011442db9")
    assert "`InstallHooks()` - uses `os.Getwd()` instead of repo root" not in found
    assert "`InstallHooks()` - Now uses repo root instead of `os.Getwd()`" in found
    # e5fcdc73: "### Issues Found ... Test still expects old `go run` format instead of ...": the session updated it
    found = texts("e5fcdc73-b9fc-4991-b532-6bf8440fd12d")
    assert not any(line.startswith("Test still expects old") for line in found)
    assert any(line.startswith("`cmd/entire/cli/agent/geminicli/hooks_test.go` - Updated `TestInstallHooks_LocalDev`")
               for line in found)
    # 847ff7d2: "Fix suggestion: In `ListOrphanedSessionStates()`, use prefix matching ..." under a test's heading, and
    # "Unnecessary nil slice check ..." under "Nice-to-Have Findings (P3)": proposed, found, not chosen
    found = texts("847ff7d2-4a55-44d7-a3f5-a3afd89f1ee1")
    assert not any(line.startswith(("Fix suggestion", "Unnecessary nil slice check")) for line in found)
    assert lines_of("### Approach\n\nSuggested fix: use a mutex around the cache instead of a channel.") == []


def test_a_line_opening_on_a_contrast_reads_without_it() -> None:
    # 847ff7d2: "But I found one issue in `manual_commit_test.go:1170` ..."; cbc0f75b's finding before an edit
    # "However, the tests expect a more complex logic ..." (the session then changed the tests): no line
    assert "I found one issue in `manual_commit_test.go:1170` that stores `BaseCommit` as 7-char instead of the full " \
           "hash." in texts("847ff7d2-4a55-44d7-a3f5-a3afd89f1ee1")
    assert not any(line.startswith(("However", "The tests expect a more complex"))
                   for line in texts("cbc0f75b-b36d-4efd-a7da-ac800ea30eb6"))
    assert Insight("Decision", "", "But `x` only reads the cache, so the write goes first.", 1).line() == \
        "`x` only reads the cache, so the write goes first."
    assert Insight("Decision", "", "go-git v5.16.5 fixed the bug.", 0).line() == "go-git v5.16.5 fixed the bug."


def test_a_cause_named_only_by_the_sentence_before_is_no_root_cause() -> None:
    # 0a76fbfe: "go-git ... fixed a long-standing bug where ...", then "This is the exact bug documented in your
    # CLAUDE.md ...": the pointer is no cause; "This happens because ..." says its own
    assert not any(line.startswith("This is the exact bug") for line in texts("0a76fbfe-d767-433e-b4b1-a39e044f21e8"))
    assert lines_of("## Root Cause\n\nThis is the exact bug the cache had.") == []
    assert lines_of("## Root Cause\n\nThis happens because the cache is read before the settings load.") != []
    # 0c97beba: "This is a race condition because `os.Chdir()` affects the entire process ...": its own cause
    assert any(line.startswith("This is a race condition because") for line in texts(
        "0c97beba-bfcb-4f84-9950-e0354bfc808b"))


def test_two_lines_naming_mostly_the_same_things_say_one_thing() -> None:
    # b25a8b6e: "Now when a partial state exists from concurrent warning (with empty `AgentType`) ..." and "Fixed
    # AgentType not set in concurrent warning state ...: Now sets `AgentType` when creating the partial state ...":
    # five of their named words shared, one line
    found = texts("b25a8b6e-b748-4911-bc05-dfa90cd63948")
    assert sum("concurrent warning" in line for line in found) == 1
    # 8897bd54's lines share fewer: each stays (but its "will break linting", the lint run then passed)
    assert len(texts("8897bd54-16f4-4a28-8e23-cb187c639e40")) == insights_rules.MAX_INSIGHTS - 1


def _lint_session(output: str, said: str, *after: Event, command: str = "mise run lint") -> Session:
    """A session whose lint run (`command`) prints `output`, then the agent says `said`, then `after` happens."""
    return Session("s", cwd="/r", events=[
        Event("user", None, text="add the debug command"),
        Event("tool", None, tool=ToolCall("l", "Bash", {"command": command}, output=output)),
        Event("assistant", None, text=said), *after])


_EDIT = Event("tool", None, tool=ToolCall("e", "Edit", {"file_path": "/r/x.go", "old_string": "a", "new_string": "b"}))


def test_a_step_announced_on_a_lint_run_of_one_rule_has_the_rule_as_its_reason() -> None:
    # e7eb742c: `mise run lint` flags `runDebugAutoCommit` (maintidx) and the agent says "Let me refactor to reduce
    # complexity by extracting helper functions." before its edit (a reader's decision: "Split runDebugAutoCommit into
    # helper functions to satisfy the maintidx lint limit rather than suppressing it."); the measures left out
    line = ("Refactor to reduce complexity by extracting helper functions, to satisfy the `maintidx` lint: Function "
            "name: runDebugAutoCommit.")
    session = corpus_session("e7eb742c-bdac-4824-afdb-20b63ca6b6dd")
    assert [item.text for _, _, item in lint_steps(session)] == [line]
    assert line in texts("e7eb742c-bdac-4824-afdb-20b63ca6b6dd")
    # ruff's codes are rules too, in its concise format and its full one
    concise = _lint_session("x.py:3:89: E501 Line too long (104 > 88)\nFound 1 error.", "Let me split the long call.",
                            _EDIT, command="ruff check .")
    assert [item.text for _, _, item in lint_steps(concise)] == [
        "Split the long call, to satisfy the `E501` lint: Line too long (104 > 88)."]
    full = _lint_session("SIM115 Use a context manager for opening files\n   --> x.py:191:25\n    |\nFound 1 error.",
                         "Let me use a `with` block.", _EDIT, command="uv run ruff check")
    assert [item.text for _, _, item in lint_steps(full)] == [
        "Use a `with` block, to satisfy the `SIM115` lint: Use a context manager for opening files."]


def test_a_step_said_bare_gives_its_place_to_the_same_step_with_the_lint_rule_as_its_reason() -> None:
    # 130d7b7e: "I need to add a `testAgent` constant in `logger_test.go` following the same pattern." was a line;
    # `mise run lint` had flagged goconst (its reader: "Added a shared testAgent constant to satisfy the goconst lint
    # rule, as done for the other test constants.")
    found = texts("130d7b7e-5801-4345-9bd6-f32fd9b8429b")
    step = "Add a `testAgent` constant in `logger_test.go` following the same pattern"
    reason = "to satisfy the `goconst` lint: string `claude-code` has 3 occurrences, make it a constant"
    assert f"{step}, {reason}." in found
    assert f"{step}." not in found
    # e7eb742c's step was no line of its own: the lint line fills a place left free (the test above)


def test_no_rule_is_the_reason_of_a_step_on_several_rules_code_that_does_not_compile_or_a_prompt() -> None:
    # ca8cc13b: one run flags revive, unparam and unused ("Several lint issues to fix. Let me address them all."):
    # no one rule; 34b1e2a4: golangci-lint's `typecheck` is code that does not compile, no rule to satisfy
    assert lint_steps(corpus_session("ca8cc13b-d3df-4615-8f3f-f48a96b1a6f9")) == []
    assert lint_steps(corpus_session("34b1e2a4-8cec-4bb9-94a0-ec9e9c639c8e")) == []
    one = "x.go:57:1: func `f` is unused (unused)\n1 issues:\n* unused: 1"
    two = f"{one}\nx.go:9:2: string `a` has 3 occurrences, make it a constant (goconst)"
    said = "Let me remove the helper."
    assert lint_steps(_lint_session(two, said, _EDIT)) == []
    assert lint_steps(_lint_session(one, said, Event("user", None, text="no, keep it"), _EDIT)) == []
    assert lint_steps(_lint_session(one, "The helper is unused.", _EDIT)) == []  # no step announced
    assert [item.text for _, _, item in lint_steps(_lint_session(one, said, _EDIT))] == [
        "Remove the helper, to satisfy the `unused` lint: func `f` is unused."]
    dupl = "x_test.go:90: 90-109 lines are duplicate of `x_test.go:111-130` (dupl)"  # dupl names no column
    assert [item.text for _, _, item in lint_steps(_lint_session(dupl, "Let me refactor to one table.", _EDIT))] == [
        "Refactor to one table, to satisfy the `dupl` lint: 90-109 lines are duplicate of `x_test.go:111-130`."]


def test_the_task_restated_as_the_session_opens_is_no_choice() -> None:
    # 89488521 opens "I'll help you modify the TUI to launch the cached session HTML page instead of regenerating it.":
    # the person's task in the agent's words; it took a place and, as a repeat, kept out the change the agent then
    # announced (its second reader: "Dropped the file-existence check and regeneration in action_export_selected and
    # just open the cached file, as the user asked.")
    found = texts("89488521-e2e7-4d97-bc02-38197efdddc8")
    assert not any(line.startswith(("Help you", "I'll help you")) for line in found)
    assert "Modify the `action_export_selected` method to use cached session HTML files instead of regenerating " \
           "them." in found
    assert lines_of("I'll help you modify the TUI to launch the cached page instead of regenerating it.") == []
    assert lines_of("I'll modify the TUI to launch the cached page instead of regenerating it.") != []


def test_a_remark_on_the_editors_diagnostics_is_no_finding_and_no_reason() -> None:
    # d46bf731: "The diagnostic will clear once we save. Now let me add the second test" became the step's reason, and
    # "The LSP diagnostics suggest that `CommittedMetadata` doesn't have a `CLIVersion` field" a finding the agent
    # disproves at once ("it does show in the struct definition ... This might be a stale diagnostic")
    found = texts("d46bf731-66ab-4dd4-83e4-e764cf54f818")
    assert not any("diagnostic" in line for line in found)
    # 8c816805: "Good, the diagnostics show unused imports but that's because they're now used in the code."
    assert not any("diagnostic" in line for line in texts("8c816805-24e2-4871-ac94-e97ce23993c1"))
    # d50aed65: the choice it makes against one stays ("..., I'll keep `strings.Split` where needed")
    assert any(line.startswith("The diagnostics suggest using `strings.SplitSeq` but since the codebase doesn't use")
               for line in texts("d50aed65-f324-43f2-8c95-9edd32b25b32"))


def test_a_choice_the_session_took_back_later_is_left_out() -> None:
    # cab865ac: "Changed from `"off"` to `"false"` for consistency.", then "why can't we not just real booleans?" and
    # the line `const pushSessionsDisabled = "false"` rewritten away: the string is no choice the code still holds
    assert not any('`"false"`' in line for line in texts("cab865ac-8278-406e-b5c2-c73d24d7f9ad"))
    # 4555072a: "I'll add `Hidden: true` to the command definition", then "let's completely remove the start command"
    # and `rm cmd/entire/cli/start.go ...`: the file that held it deleted
    assert not any("Hidden: true" in line for line in texts("4555072a-e039-4937-b6ea-dcb86152dd55"))
    # b25a8b6e: "... will use "Claude Code" as the default ...", then `DefaultAgentType = "Agent"` at the user's word
    assert not any('"Claude Code" as the default' in line for line in texts("b25a8b6e-b748-4911-bc05-dfa90cd63948"))
    # 4e836284: "I'll update to use `cmd.CommandPath()`", then "I do also want to send the command flags" and `os.Args`
    assert not any("cmd.CommandPath()" in line for line in texts("4e836284-4a0a-44a1-acb3-38c68db78007"))
    # 5dd7775c: "I need to use `exec.CommandContext` - let me fix that", then `GetGitDir()` at the user's word and the
    # `git rev-parse` call gone: a name in its package is a value, not a place
    assert not any("exec.CommandContext" in line for line in texts("5dd7775c-3161-4ad5-bf25-eb59a6ffa8e6"))
    # 3cd520f7: `id.CheckpointID`, brought in and kept: the line stays
    assert "Added a new `id.CheckpointID` type (replacing raw strings)" in texts("3cd520f7-d4af-469f-97ac-bcad4933d9d4")
    # 7ff991f5: `printWrongAgentError` then made a thin wrapper by an edit whose new text was cut where it was stored
    # (the name may sit in the part lost): not known to be taken back, the line stays
    assert any(line.startswith("The `printWrongAgentError` function is implemented") for line in texts(
        "7ff991f5-9a8b-4e94-ae66-40204bc3049b"))
    # the choices those sessions kept stay: the user's correction, the fallback asked for
    assert "Fix both the reading and writing logic, since we should use real booleans (the user's correction)." \
        in texts("cab865ac-8278-406e-b5c2-c73d24d7f9ad")
    assert any("generic Fallback" in line for line in texts("b25a8b6e-b748-4911-bc05-dfa90cd63948"))


def _edit(path: str, old: str, new: str) -> Event:
    return Event("tool", None, tool=ToolCall("e", "Edit", {"file_path": path, "old_string": old, "new_string": new}))


def test_a_value_replaced_in_its_own_turn_or_kept_later_stays() -> None:
    said = "I'll switch the retry limit to `MAX_RETRIES = 5` so the importer gives up sooner."
    written = _edit("/r/a.py", "MAX_RETRIES = 9", "MAX_RETRIES = 5")
    later = [Event("user", None, text="also log each retry"),
             _edit("/r/a.py", "MAX_RETRIES = 5\n", "MAX_RETRIES = 5\nlog = True\n")]
    session = Session("s", cwd="/r", events=[Event("user", None, text="the importer retries too long"),
                                             Event("assistant", None, text=said), written, *later])
    assert any("MAX_RETRIES = 5" in item.text for item in chosen(session))
    # the next turn rewrites the line without the value: the choice was taken back
    taken_back = [Event("user", None, text="no, make it configurable"),
                  _edit("/r/a.py", "MAX_RETRIES = 5\n", "MAX_RETRIES = settings.retries\n")]
    session = Session("s", cwd="/r", events=[Event("user", None, text="the importer retries too long"),
                                             Event("assistant", None, text=said), written, *taken_back])
    assert not any("MAX_RETRIES = 5" in item.text for item in chosen(session))
    # a value the turn itself set aside ("replaced `MAX_RETRIES = 9`") was never the choice: it does not count
    replaced = "Replaced `MAX_RETRIES = 9` with a setting so that each deployment picks its own limit."
    session = Session("s", cwd="/r", events=[
        Event("user", None, text="the importer retries too long"), _edit("/r/a.py", "x = 1", "MAX_RETRIES = 9\n"),
        _edit("/r/a.py", "MAX_RETRIES = 9\n", "MAX_RETRIES = settings.retries\n"),
        Event("assistant", None, text=replaced), Event("user", None, text="thanks"),
        _edit("/r/a.py", "MAX_RETRIES = settings.retries\n", "MAX_RETRIES = settings.retries  # per deployment\n")])
    assert any("MAX_RETRIES = 9" in item.text for item in chosen(session))


def test_a_fault_its_turn_then_fixed_and_tested_is_said_as_it_was() -> None:
    # 0bdbfa06: "the command fails entirely", then the fix to `runExplainDefault` and `mise run test` passing: the
    # handoff says the fault as it was before the fix, not as a live one
    found = texts("0bdbfa06-acf1-473a-b3e4-6a03313d1d0e")
    assert "Before the fix: when the current session ID doesn't have any associated checkpoints/data yet, the " \
        "command fails entirely." in found
    assert not any(line.startswith("When the current session ID") for line in found)
    # ccc58457: "The test is failing because ...", fixed in the turn: the same
    assert any(line.startswith("Before the fix: the test is failing because") for line in texts(
        "ccc58457-00a5-4a2f-82a9-175e4473c60b"))
    # b6b83817: "when `LoadEntireSettings()` fails, the fallback ...": a case the code meets, not a symptom: unchanged
    assert any(line.startswith("The Bugbot found that when `LoadEntireSettings()` fails") for line in texts(
        "b6b83817-c584-4561-86a0-bd4f974e7274"))


def test_a_fault_left_untested_stays_as_said() -> None:
    said = "The root cause is that the importer crashes because the retry counter is never reset."
    events = [Event("user", None, text="the importer crashes"), Event("assistant", None, text=said),
              _edit("/r/a.py", "retries += 1", "retries = 0")]
    assert any(item.text == said for item in chosen(Session("s", cwd="/r", events=events)))
    tested = Event("tool", None, tool=ToolCall("t", "Bash", {"command": "pytest -q"}))
    assert any(item.text == f"Before the fix: t{said[1:]}" for item in chosen(Session(
        "s", cwd="/r", events=[*events, tested])))


def test_a_fault_said_before_the_fix_takes_no_second_prefix() -> None:
    # a symptom its turn fixed and tested whose code the edit also wrote: "Before the fix: ...", said once
    said = "The tests are failing because the mock `renderable` is not being updated when the code calls it."
    events = [Event("user", None, text="the tests fail"), Event("assistant", None, text=said),
              _edit("/r/test_a.py", "mock = Mock()", "mock = Mock()\nmock.renderable = Text()"),
              Event("tool", None, tool=ToolCall("t", "Bash", {"command": "pytest -q"}))]
    assert [item.text for item in chosen(Session("s", cwd="/r", events=events)) if said[5:30] in item.text] == \
        [f"Before the fix: t{said[1:]}"]


def test_what_happened_leaves_out_what_the_session_took_back() -> None:
    # cab865ac's one report of a change, "Changed from `"off"` to `"false"` ...", was taken back by the real booleans:
    # What Happened says what was asked instead, the correction among it
    from .test_extractor import run_extract

    happened = run_extract(corpus_session("cab865ac-8278-406e-b5c2-c73d24d7f9ad")).what_happened
    assert not any('"false"' in line for line in happened)
    assert any("real booleans" in line for line in happened)


def test_a_line_whose_choice_or_object_is_in_the_sentence_before_is_no_insight() -> None:
    """9e953218's "That way we don't need rewrites for every asset." (an approach it then dropped), 8897bd54's "Update
    this test since we now include it." and 63784323's "Both approaches use go-git's diff utilities ...": read alone,
    what they are about is lost; the place goes to the next line ("... must return immediately to avoid corrupting the
    JSON ...")."""
    assert not any(line.startswith("That way") for line in insights(corpus_session(
        "9e953218-585f-4692-89df-9e0747a31c68")))
    lines = insights(corpus_session("8897bd54-16f4-4a28-8e23-cb187c639e40"))
    assert not any(line.startswith("Update this test") for line in lines), lines
    assert any("must return immediately to avoid corrupting the JSON" in line for line in lines), lines
    assert not any(line.startswith("Both approaches") for line in insights(corpus_session(
        "63784323-7042-4ab8-82b1-3c0b79467bf9")))


def test_a_line_naming_what_it_is_about_stays() -> None:
    """0bdbfa06's "Fix this by checking BEFORE calling `runExplainSession`, since ..." says what it fixes with: no
    detached line."""
    assert any(line.startswith("Fix this by checking BEFORE")
               for line in insights(corpus_session("0bdbfa06-acf1-473a-b3e4-6a03313d1d0e")))


def test_a_step_on_the_edits_or_on_them_is_no_insight() -> None:
    """60b38d1e's "Make the edits, since both `checkpoint` and `plumbing` are only used in the code we're removing."
    and 4931d45a's "Add them to the strategy and session packages ...": the step's object is in the sentence before;
    the finding said alone stays. A gerund's "them" is a subject, no step: 03eb5929's "Splitting them ..." stays."""
    lines = insights(corpus_session("60b38d1e-f048-428b-89da-e5dca96614d4"))
    assert not any(line.startswith("Make the edits") for line in lines), lines
    assert "Both `checkpoint` and `plumbing` are only used in the code we're removing." in lines
    assert not any(line.startswith("Add them to") for line in insights(corpus_session(
        "4931d45a-d447-44b4-8475-1e6fcfcc28bf")))
    assert any(line.startswith("Splitting them across two trees") for line in insights(corpus_session(
        "03eb5929-52b3-4b13-ada3-b93ae35806b8")))


def test_a_topic_leads_a_line_only_after_a_frame_that_opens_it() -> None:
    """A topic leads its line only where "The issue is that" or "The fix is to add" opens the text and the topic comes
    right after: 130d7b7e's "**component** -- Add context-based agent name support ... like `session_id` and
    `component`" and 20b81bf8's "**edit** -- Interesting - the docs mention `edit` ..." named code in passing."""
    lines = insights(corpus_session("130d7b7e-5801-4345-9bd6-f32fd9b8429b"))
    assert any(line.startswith("Add context-based agent name support") for line in lines), lines
    assert not any(line.startswith("**") for line in lines), lines
    assert "**paths.SummaryFileName** -- The fix is to add `paths.SummaryFileName` to the switch case in " \
        "`shouldFilterFile`." in insights(corpus_session("c3afafd7-9a94-4316-80d3-ad6f8a1e4d80"))
    assert Insight("Found", "edit", "Interesting - the docs mention `edit` as a tool name too.", 1).line() == \
        "Interesting - the docs mention `edit` as a tool name too."


def test_a_lack_a_later_edit_filled_is_said_as_it_was() -> None:
    # 4931d45a: the plan's "`session.State` does NOT have a TokenUsage field", then an edit to session/state.go wrote
    # `TokenUsage`: the handoff says the lack as it was, not as a live one
    found = texts("4931d45a-d447-44b4-8475-1e6fcfcc28bf")
    assert "Before: `session.State` does NOT have a TokenUsage field" in found
    # ... while the plan's other lack, `TaskCheckpointContext` without `TokenUsage`, no edit filled: it stays as said
    assert any(line.startswith("`TaskCheckpointContext` in `strategy.go` doesn't have a `TokenUsage` field")
               for line in found)
    # 030e1e67: a review's "Comment on `StepTranscriptStart` still says ..." and "Need to handle old
    # `last_transcript_line_count` files", each followed by the edit that wrote them
    found = texts("030e1e67-6bf0-492d-8bd3-cc3383ec93ab")
    assert any(line.startswith("Before: `cmd/entire/cli/state.go:30` — Comment on `StepTranscriptStart` still")
               for line in found)
    assert "Before: need to handle old `last_transcript_line_count` files." in found


def test_a_cause_a_later_edit_filled_is_said_as_it_was() -> None:
    # b50aaf5c: "... isn't being included ... because I'm not setting the `AgentID` field in the
    # `TaskCheckpointContext`", then `AgentID: input.ToolUseID` written: the root cause said as it was
    assert "Before: the subagent transcript isn't being included in the git tree because I'm not setting the " \
        "`AgentID` field in the `TaskCheckpointContext`." in texts("b50aaf5c-3ef3-472b-8d5e-75bb89ac3fe1")
    # c3afafd7: "`shouldFilterFile` ... does NOT include `paths.SummaryFileName`", then the edit adding it to the case
    assert any(line.startswith("Before: the `shouldFilterFile` function filters transcripts") and
               "does NOT include `paths.SummaryFileName`" in line
               for line in texts("c3afafd7-9a94-4316-80d3-ad6f8a1e4d80"))


def test_a_lack_of_no_named_code_stays_as_said() -> None:
    # eb4bcc15: "The tool result doesn't include the agent's internal token usage." names no code a later edit could
    # write: a fact of the tool, kept as said
    assert "The tool result doesn't include the agent's internal token usage." in \
        texts("eb4bcc15-3ff5-4d73-bac5-9bc1d786b2bb")


def test_what_the_person_then_overruled_is_no_insight() -> None:
    # 1ecba475: "The tests expect custom error messages ..., but the command is returning plain errors", then "fix
    # the test, the code is right", "Got it! ..." and the test edits: the diagnosis goes, the person's word stays
    found = texts("1ecba475-5b18-4058-a0cb-e87703f6f792")
    assert not any(line.startswith("The tests expect custom error messages") for line in found)
    assert "At the user's request: fix the test, the code is right." in found
    # f744aef5: "Since the `branchName` and `refSpec` are constructed internally ..., I'll add the appropriate nolint
    # comments", then "The gosec suppression comment is inaccurate: branchName is passed from ...", "You're right, ..."
    assert not any(line.startswith("Since the `branchName` and `refSpec` are constructed internally") for line in texts(
        "f744aef5-5139-4c21-91e5-3f44ce902105"))
    # 37f83ec9: the turn's own "You're absolutely right! ... The issue is that in `_generate_html_with_combined_link`,
    # I'm doing a simplified/duplicated version ..." already said the person's view: it stays
    assert any(line.startswith("The issue is that in `_generate_html_with_combined_link`, I'm doing a simplified")
               for line in texts("37f83ec9-f2ea-42a9-925e-0d5c105cb6e8"))


def test_a_question_after_the_turn_overrules_nothing() -> None:
    # ccc58457: "but all the context of why there was no checkpoint id is lost now, right?" questions one part of the
    # turn; its reason for `TryGetLatestCheckpointID` stays
    assert any(line.startswith("This is intentional because the test `TestShadow_TrailerRemovalSkipsCondensation`")
               for line in texts("ccc58457-00a5-4a2f-82a9-175e4473c60b"))
    # 2cfdacb8: "hmm, ... Can't we just keep the commits as they were?" weighs another way; the YAML finding stays
    assert "The YAML parser sees `Synced from fork:` as a YAML key, not bash script content." in texts(
        "2cfdacb8-9317-430f-8975-0709d2837d1c")


def test_a_lack_no_later_edit_wrote_stays_as_said() -> None:
    said = "The `Importer` class does not have a `retry_limit` setting, so it retries forever."
    events = [Event("user", None, text="the importer hangs"), Event("assistant", None, text=said),
              _edit("/r/b.py", "x = 1", "x = 2")]
    assert any(item.text == said for item in chosen(Session("s", cwd="/r", events=events)))
    filled = _edit("/r/a.py", "class Importer:\n", "class Importer:\n    retry_limit = 3\n")
    assert any(item.text == f"Before: t{said[1:]}" for item in chosen(Session(
        "s", cwd="/r", events=[*events, filled])))


def test_a_line_number_the_agent_read_is_left_out() -> None:
    # ee6078de: "Added `Branch string` field to `CommittedMetadata` struct (line 296)": later edits move line 296
    found = texts("ee6078de-2c4f-428e-b137-aafce7251a7a")
    assert "Added `Branch string` field to `CommittedMetadata` struct" in found
    assert not any(re.search(r"\blines? \d", line) for line in found)
    # 7ff991f5: "implemented at line 525, ...", "(lines 509-523)": the same; a name with digits stays
    found = texts("7ff991f5-9a8b-4e94-ae66-40204bc3049b")
    assert "`printMissingAgentError` prints a message with available agents and usage." in found
    assert Insight("Decision", "", "Use `utf8` (line 3) in `lines2.go`.", 1).line() == "Use `utf8` in `lines2.go`."


def test_a_cause_found_anew_before_anything_was_done_replaces_the_guess() -> None:
    # f6833005: "The checkpoint wasn't created because no files were modified", staging them changed nothing, then "I
    # found the issue! The test harness creates a mock transcript without tool_use blocks"
    found = texts("f6833005-7be4-4178-bb37-a0e9feadc36b")
    assert not any("no files were modified" in line for line in found)
    assert "The test harness creates a mock transcript without tool_use blocks." in found
    # 768de5d6: "The issue is that `JSONLContent` replaces individual secret strings ...", the edit refused, then
    # "You're right, sorry. The issue is the expected value itself."
    found = texts("768de5d6-9fad-475b-8a4f-dfa7ddc01bb0")
    assert not any("replaces individual secret strings" in line for line in found)
    assert any(line.startswith("The issue is the expected value itself.") for line in found)
    # 0cd9edf7: "The issue is these values need to be populated in `SaveContext`.", then "**FOUND THE ROOT CAUSE!**"
    assert not any("populated in `SaveContext`" in line for line in texts("0cd9edf7-459c-4900-af40-cf2c64dea525"))
    # b6b83817: the Bugbot's finding, then "Now I see the issue clearly. When ..." restates it: no guess, it stays
    assert any(line.startswith("The Bugbot found that when `LoadEntireSettings()` fails") for line in texts(
        "b6b83817-c584-4561-86a0-bd4f974e7274"))


def test_what_happened_leaves_out_a_turn_whose_files_later_work_deleted() -> None:
    # 4555072a: "The `entire start` command is now hidden", then "thinking again: let's completely remove the start
    # command": `rm cmd/entire/cli/start.go ...` and the edits to root.go, config.go: the hiding was replaced
    from .test_extractor import run_extract

    happened = run_extract(corpus_session("4555072a-e039-4937-b6ea-dcb86152dd55")).what_happened
    assert not any("now hidden" in line for line in happened)
    assert any(line.startswith("Deleted `start.go`") for line in happened)
    # 6da7d497: "write a file about geese", then "delete that file" and only `rm`: undone, not replaced; it stays
    happened = run_extract(corpus_session("6da7d497-00e2-460d-a6b4-d280e0314cfd")).what_happened
    assert any(line.startswith("Created `docs/geese.md`") for line in happened)


def test_a_check_foretold_to_fail_that_then_passed_is_no_insight() -> None:
    # 8897bd54: "... removing those `//nolint:ireturn` directives will break linting. Let me verify.", then `mise run
    # lint` printed "[lint:go] 0 issues." and "Lint passes cleanly, so the `//nolint:ireturn` removals are safe."
    found = texts("8897bd54-16f4-4a28-8e23-cb187c639e40")
    assert not any("will break linting" in line for line in found)
    assert "Lint passes cleanly, so the `//nolint:ireturn` removals are safe." in found
    # 1c38adc0: "this test will fail if someone reverts to the go-git implementation": a case, not a forecast; it stays
    assert any("this test will fail if someone reverts" in line for line in texts(
        "1c38adc0-5071-4382-9e53-de8c30e2265f"))


def test_a_fault_of_what_code_does_a_later_edit_and_check_answered_is_said_as_it_was() -> None:
    # ea0a65af: the bot's "`--agent` ... calls `ag.IsInstalled()` directly without checking the env var", then the edit
    # to setup.go around `ag.IsInstalled()` and `go test`, `mise run lint` passed
    assert "Before: the `--agent` flag code path calls `ag.IsInstalled()` directly without checking the env var." \
        in texts("ea0a65af-b639-46be-b158-dc1a4c599799")
    # da15b15f: "The state machine doesn't handle `FirstPrompt` or `AgentType` backfills — those are business logic
    # ...": a design said of code no later edit wrote: it stays as said
    assert any(line.startswith("The state machine doesn't handle `FirstPrompt`") for line in texts(
        "da15b15f-a573-4523-abcb-fdd6c9a4e2a2"))


def test_a_linter_silenced_with_its_reason_written_beside_it_is_a_decision() -> None:
    # 5e231473: at the user's word it wrote `//nolint:exhaustive // default case handles all other agent types` above
    # the switch (both readers' label: "silenced the exhaustive linter with a nolint comment ..., since the default
    # covers other agents"); the Insights held only "The linter requires exhaustive switch cases."
    found = [item.text for item in chosen(corpus_session("5e231473-1e70-45c5-9c18-6510ac844c99"))]
    assert "Suppressed `exhaustive` with a `nolint` comment: default case handles all other agent types." in found


def test_a_linter_silenced_in_a_test_is_no_decision() -> None:
    # 562589bd wrote `//nolint:dupl // tests different install mode than TestUninstallHooks` into a test file: how a
    # test is kept, as its other comments there (`test_comments_in_tests_are_no_decision`)
    assert not any(item.text.startswith("Suppressed") for item in
                   written_reasons(corpus_session("562589bd-5a9f-4bdf-8aed-cbfce44490ba")))


def test_a_silenced_linter_an_insight_already_names_with_its_directive_is_said_once() -> None:
    # b2273d7d: "Add `//nolint:ireturn` directives to silence the linter ..." is kept; a second directive's reason
    # ("Returns interface by design") added a line a blind A/B read as a repeat
    found = [item.text for item in chosen(corpus_session("b2273d7d-fb20-41f7-93fb-265486aae975"))]
    assert any(text.startswith("Add `//nolint:ireturn` directives") for text in found)
    assert not any(text.startswith("Suppressed") for text in found)


def test_a_linter_directive_the_session_says_was_stripped_is_no_decision() -> None:
    # 9e44573d wrote `//nolint:revive // var-naming: ...`, then: "The linter's `fix: true` setting stripped the nolint
    # comment" (a blind A/B read "Suppressed `revive` ..." as false: the net change was nothing)
    assert not any(item.text.startswith("Suppressed") for item in
                   written_reasons(corpus_session("9e44573d-4eb8-4de0-8659-418f3c68706d")))
    assert insights_rules._STRIPPED_RE.search("the linter removed the `nolint` comment")
    assert not insights_rules._STRIPPED_RE.search("Removed the unused import; added a nolint comment")


def test_a_stripped_directive_named_by_its_rule_leaves_the_sessions_other_directives_standing() -> None:
    # ca8cc13b: "The `gofmt` run removed the `nolint:ireturn` comments from the strategy files" (then restored them);
    # its own `//nolint:unparam // error return kept for API consistency ...` stayed, and both readers name it
    found = [item.text for item in written_reasons(corpus_session("ca8cc13b-d3df-4615-8f3f-f48a96b1a6f9"))]
    assert "Suppressed `unparam` with a `nolint` comment: error return kept for API consistency with other agent " \
           "packages." in found
    assert not any("ireturn" in text for text in found)
    stripped = insights_rules._STRIPPED_RE.search("The `gofmt` run removed the `nolint:ireturn` comments")
    assert stripped is not None and stripped.groups() == ("nolint", "ireturn")


def test_a_finding_that_goes_on_with_the_choice_made_on_it_then_done_is_a_decision() -> None:
    # 4f8c1176: "The `SaveContext` doesn't carry `StartedAt`, but we can load it from the session state ...", then
    # the edits; both readers: "load the session state ... to get StartedAt, since SaveContext does not carry it"
    found = chosen(corpus_session("4f8c1176-7025-4530-a860-c6fc4c63a150"))
    assert any(item.kind == "Decision" and item.text.startswith("The `SaveContext` doesn't carry `StartedAt`, but we "
                                                                "can load it") for item in found)
    # 847ff7d2: "... doesn't use shadow branches, so there's no reason to truncate `BaseCommit` to 7 chars", then done
    assert any(item.kind == "Decision" and "no reason to truncate `BaseCommit`" in item.text
               for item in chosen(corpus_session("847ff7d2-4a55-44d7-a3f5-a3afd89f1ee1")))


def test_a_finding_that_goes_on_with_a_choice_and_no_edit_after_stays_a_finding() -> None:
    said = "The `SaveContext` doesn't carry `StartedAt`, but we can load it from the session state instead."
    edit = Event("tool", None, tool=ToolCall("e", "Edit", {"file_path": "/r/a.go", "new_string": "StartedAt"}))
    session = Session("s", cwd="/r", events=[Event("user", None, text="Fix the restore path"), edit,
                                             Event("assistant", None, text=said)])
    assert [item.kind for item in chosen(session) if item.text == said] == ["Found"]
    # the same finding with an edit after it: the choice made on it
    session.events.append(edit)
    assert [item.kind for item in chosen(session) if item.text == said] == ["Decision"]
    # 03a1382e: "Next run will show ..., so we can confirm ...": no edit after it, no decision of it
    assert not any("so we can confirm" in item.text for item in chosen(
        corpus_session("03a1382e-ecd5-42c4-b3d4-5c659e165904")))
