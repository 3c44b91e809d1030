"""What the agent said is left (core/extract/said_left.py): labelled next-step lines of any agent, options
offered with no choice made, caveats named in passing and not resolved later, each one clause."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from zoneinfo import ZoneInfo

from eywa.core.extract.deterministic import draft
from eywa.core.extract.facts import FACT_PREFIXES
from eywa.core.extract.open_threads import open_threads
from eywa.core.extract.said_left import clause
from eywa.core.session import Event, Session, ToolCall
from eywa.core.sources.claude.builder import build_session
from eywa.core.sources.codex import build_codex_session
from eywa.core.sources.gemini import build_gemini_session

from .test_extractor import corpus_session

T0 = dt.datetime(2026, 12, 1, 10, 18, tzinfo=dt.UTC)


def _session(agent: str, *events: Event) -> Session:
    session = Session(session_id="2257c943-0000-4000-8000-000000000001", agent=agent, cwd="/tmp/widgets",
                      first_ts=T0, last_ts=T0)
    session.events = list(events)
    return session


def _edit(path: str) -> Event:
    return Event("tool", T0, tool=ToolCall("e1", "Edit", {"file_path": f"/tmp/widgets/{path}"}))


def _bash(command: str, failed: bool = False) -> Event:
    return Event("tool", T0, tool=ToolCall("b1", "Bash", {"command": command}, is_error=failed))


def test_a_closing_next_line_of_gemini_or_codex_is_an_open_thread_not_a_decision() -> None:
    for agent in ("gemini", "codex"):
        handoff = draft(_session(
            agent, Event("user", T0, text="Add a retry helper to the client"), _edit("retry.py"),
            Event("assistant", T0, text="Added retry() to retry.py.\n\nNext: add backoff(attempt) to the retry loop "
                                        "so that transient errors are retried with a growing delay to avoid "
                                        "hammering the server.")), ZoneInfo("UTC"))
        assert any(t.startswith("Next: add backoff(attempt)") for t in handoff.open_threads), handoff.open_threads
        assert not any("Next" in line for line in handoff.insights), handoff.insights
        assert handoff.status == "partial"


def test_a_closing_report_with_no_step_left_names_none() -> None:
    handoff = draft(_session("gemini", Event("user", T0, text="Add a farewell function"), _edit("farewell.py"),
                             Event("assistant", T0, text="Added farewell() to farewell.py; it prints bye.")),
                    ZoneInfo("UTC"))
    assert handoff.open_threads == [] and handoff.status == "done"


def test_options_offered_with_no_choice_made_are_one_decide_thread_naming_them() -> None:
    # "**Option 1: Remove `t.Parallel()`** ... Which approach do you prefer?"
    threads = draft(corpus_session("0c97beba-bfcb-4f84-9950-e0354bfc808b"), ZoneInfo("UTC")).open_threads
    assert threads == ["Decide: remove `t.Parallel()`, add path parameter to `DetectPresence` or use "
                       "`ClearRepoRootCache()` + document concurrent safety"]


def test_an_open_choice_says_what_it_decides_from_the_question_it_answers() -> None:
    # 2cfdacb8: "how would we get that PAT?", then "**Option 1: Fine-grained PAT (quick)** ... Which way do you want to
    # go?": the options answer the user's question, which says what is decided
    threads = draft(corpus_session("2cfdacb8-9317-430f-8975-0709d2837d1c"), ZoneInfo("UTC")).open_threads
    assert "Decide how to get that PAT: fine-grained PAT or GitHub App" in threads


def _choice(prompt: str, message: str) -> list[str]:
    return draft(_session("codex", Event("user", T0, text=prompt), Event("assistant", T0, text=message)),
                 ZoneInfo("UTC")).open_threads


def test_an_open_choice_says_what_it_decides_where_the_message_names_it() -> None:
    options = ("\n\n1. **Minimal & friendly** - one line\n2. **With session info** - lists them\n"
               "3. **Balanced** - both\n\n")
    asked = "Draft the warning shown when several sessions run"
    assert _choice(asked, f"Three drafts:{options}Which wording do you prefer for the multi-session warning?") == [
        "Decide the wording for the multi-session warning: minimal & friendly, with session info or balanced"]
    assert _choice(asked, f"For the multi-session warning, three drafts:{options}Which one do you prefer?") == [
        "Decide on the multi-session warning: minimal & friendly, with session info or balanced"]
    assert _choice("Why is the login test flaky?", "There are two ways to fix the flaky login test:\n\n"
                   "1. Retry the request\n2. Mock the clock\n\nWhich approach would you prefer?") == [
        "Decide how to fix the flaky login test: retry the request or mock the clock"]
    assert _choice("Where should the token live?", "## Token storage\n\n**Option 1: Keychain** - safe.\n\n"
                   "**Option 2: File** - simple.\n\nWhich one should we use?") == [
        "Decide on token storage: keychain or file"]


def test_an_open_choice_naming_its_subject_nowhere_names_only_its_options() -> None:
    # a request, no question; a lead and a question that name nothing but options
    assert _choice("Clean up the retry code", "Two options, from simplest to most proper:\n\n"
                   "**Option 1: Keep the loop (quick)**\n\n**Option 2: Use tenacity (proper)**\n\n"
                   "Which way do you want to go?") == ["Decide: keep the loop or use tenacity"]
    assert _choice("Clean up the retry code", "## Recommendation\n\n**Option 1: Keep the loop**\n\n"
                   "**Option 2: Use tenacity**\n\nWhich do you prefer?") == ["Decide: keep the loop or use tenacity"]


def test_an_option_s_name_drops_a_tail_pointing_back_at_what_the_message_named() -> None:
    """0cd9edf7 ends "1. Remove `omitempty` from these specific fields (so ...) 2. Or use a sentinel value like -1 ...
    Which approach would you prefer?" (blind label: "... the agent asked whether to remove omitempty or use a -1
    sentinel"); an option naming what it acts on keeps it."""
    threads = draft(corpus_session("0cd9edf7-459c-4900-af40-cf2c64dea525"), ZoneInfo("UTC")).open_threads
    assert "Decide: remove `omitempty` or use a sentinel value like -1" in threads
    assert _choice("Clean up the retry code", "1. Keep the loop in `retry.py`\n2. Move it to `tenacity`\n\n"
                   "Which do you prefer?") == ["Decide: keep the loop in `retry.py` or move it to `tenacity`"]


def test_a_question_offering_a_further_step_names_the_step_offered() -> None:
    # 4ec443d0 ends "Would you like me to commit these changes?" (blind label: "offered to commit ...")
    threads = draft(corpus_session("4ec443d0-063b-4de3-8ede-e35160c2c1de"), ZoneInfo("UTC")).open_threads
    assert threads == ["Uncommitted, left for the person to commit: `test-harness.sh`; the agent offered to commit "
                       "these changes, no answer"]  # said with the fact it restates: one line


def test_a_further_step_offered_leaves_the_work_done_a_question_about_the_work_holds_it() -> None:
    """4ec443d0's offer to commit (blind label: done) is a note, as an offer said without a question mark is; eb4bcc15
    asks whether to go on with more of the work itself ("Want me to proceed with that?"): the work waits on it."""
    offered = draft(corpus_session("4ec443d0-063b-4de3-8ede-e35160c2c1de"), ZoneInfo("UTC"))
    assert offered.status == "done" and offered.open_threads[0].endswith("the agent offered to commit these changes, "
                                                                         "no answer")
    asked = draft(corpus_session("eb4bcc15-3ff5-4d73-bac5-9bc1d786b2bb"), ZoneInfo("UTC"))
    assert asked.status == "partial" and asked.open_threads[0].startswith("Asked whether to proceed")


def test_a_question_asking_to_go_on_with_the_work_stays_a_question_in_plain_words() -> None:
    """130d7b7e's "Want me to proceed with implementing all three locations using this approach?": what it asks, not
    the asking (its blind label: "The agent asked whether to implement all three call sites ...")."""
    threads = draft(corpus_session("130d7b7e-5801-4345-9bd6-f32fd9b8429b"), ZoneInfo("UTC")).open_threads
    assert "Asked whether to proceed with implementing all three locations using this approach" in threads
    assert not any(t.startswith(("Offered", "Decide:")) for t in threads)


def test_a_follow_up_left_for_later_mid_session_is_a_caveat() -> None:
    # ten messages before the end: "If Windows support becomes important later, you could implement ..."
    threads = draft(corpus_session("cc432c40-914a-4c1a-a972-0103199a736a"), ZoneInfo("UTC")).open_threads
    assert any(t.startswith("Caveat: If Windows support becomes important later") for t in threads), threads


def test_a_finished_session_names_no_caveat() -> None:
    """Only what its actions left (the session facts' threads: a change left out of its commit) and no words."""
    handoff = draft(corpus_session("78368290-ee0b-474f-8052-bb65a9a581d6"), ZoneInfo("UTC"))
    assert not [thread for thread in handoff.open_threads if not thread.startswith(FACT_PREFIXES)]


def test_a_caveat_a_later_passing_check_resolved_is_not_open() -> None:
    said = Event("assistant", T0, text="The parser change is not yet tested against the old format.")
    left = _session("codex", Event("user", T0, text="Fix the parser"), _edit("parse.py"), said,
                    Event("assistant", T0, text="Updated parse.py for both formats."))
    resolved = _session("codex", Event("user", T0, text="Fix the parser"), _edit("parse.py"), said,
                        _bash("pytest tests/test_parse.py"), Event("assistant", T0, text="Updated parse.py."))
    caveat = "Caveat: The parser change is not yet tested against the old format."
    assert caveat in draft(left, ZoneInfo("UTC")).open_threads
    assert draft(resolved, ZoneInfo("UTC")).open_threads == []


def test_a_thread_is_one_clause_not_a_run_on() -> None:
    long = ("Run the migration on staging first, then check the dashboards for errors over a full day, and only "
            "then roll it out to production with the feature flag turned on for a small share of users")
    cut = clause(long)
    assert cut.endswith("…") and len(cut.split()) <= 24 and cut.startswith("Run the migration on staging first")


def test_a_question_naming_nothing_after_a_plan_names_the_plan() -> None:
    """9ff9c26d wrote plans/posthog-telemetry-integration.md, nothing else, and ended "Ready to implement?" (both blind
    readers: "Nothing of the telemetry plan is implemented yet", "Implementation of the telemetry plan ... not
    started"): the plan is a thread of its own, by its title, and the question beside it stays short. With an edit
    beside the plan, the plan is not left: the question names it."""
    threads = draft(corpus_session("9ff9c26d-319d-4a47-843a-3d60f73295c9"), ZoneInfo("UTC")).open_threads
    assert threads == ["Plan not implemented yet: PostHog Telemetry in Entire CLI - Phase 1 (MVP)",
                       "Question: Ready to implement?"]
    plan = Event("tool", T0, tool=ToolCall("p1", "ExitPlanMode", {"plan": "# Plan: Add Retry Helper\n\n1. Add it"}))
    built = draft(_session("claude-code", Event("user", T0, text="Plan a retry helper"), plan, _edit("retry.py"),
                           Event("assistant", T0, text="Done with the first part.\n\nReady to implement?")),
                  ZoneInfo("UTC")).open_threads
    assert built == ["Question: Ready to implement? (Plan: Add Retry Helper)"]
    # 38917d7d carried its plan out (six edits), 3ae3ab59's plan was refused in plan mode: neither is left unbuilt
    for session_id in ("38917d7d-9f69-4210-a3b0-eed0a9e97575", "3ae3ab59-52bc-413d-ad30-02b165c91785"):
        assert not any(t.startswith("Plan not implemented") for t in _threads(session_id))


def test_an_offer_pointing_back_at_a_list_names_the_list_s_first_item() -> None:
    """eb4bcc15 ends "**Recommendation:** 1. Move all transcript parsing logic to `agent/claudecode/` ... 3. Or define
    an interface ... This would be a larger refactor ... Want me to proceed with that, or leave it as-is for now?"
    (blind label: "The agent offered to move the remaining ... transcript parsing ... and asked whether to proceed");
    130d7b7e's question names its step itself and keeps it."""
    threads = draft(corpus_session("eb4bcc15-3ff5-4d73-bac5-9bc1d786b2bb"), ZoneInfo("UTC")).open_threads
    assert "Asked whether to proceed: Move all transcript parsing logic to `agent/claudecode/`" in threads
    assert not any("Or define an interface" in t for t in threads)
    threads = draft(corpus_session("130d7b7e-5801-4345-9bd6-f32fd9b8429b"), ZoneInfo("UTC")).open_threads
    assert "Asked whether to proceed with implementing all three locations using this approach" in threads


def _checks_session(agent: str) -> Session:
    """The real Codex CLI's or Gemini CLI's session of tests/fixtures/agents-checks (tests/check_transcripts.py)."""
    from eywa.core.ingest.prepare import read_session
    from eywa.core.sources.discovery import file_session, group_sessions, scan_files

    from .check_transcripts import FIXTURES

    folder = FIXTURES / agent / ("sessions" if agent == "codex" else "tmp")
    group = next(iter(group_sessions(scan_files(folder, agent), file_session).values()))
    return read_session(group, str)[0]


def test_the_real_clis_closing_next_line_is_an_open_thread() -> None:
    for agent in ("codex", "gemini"):
        handoff = draft(_checks_session(agent), ZoneInfo("UTC"))
        assert "Next: add backoff(attempt) to the retry loop" in handoff.open_threads, (agent, handoff.open_threads)
        assert not any("Next" in line for line in handoff.insights), handoff.insights


def test_an_interrupted_step_is_named_in_two_clauses_at_most() -> None:
    # the last message: "Someone removed the `//nolint:ireturn` comments ... That's not related ... Let me restore
    # them."
    threads = draft(corpus_session("2a80b8d9-b65a-4c2e-8bf4-0df4958640fd"), ZoneInfo("UTC")).open_threads
    wanted = "Interrupted: Someone removed the `//nolint:ireturn` comments from these files; Let me restore them"
    assert wanted in threads


def test_an_offer_to_commit_the_user_passed_over_is_a_step_not_taken() -> None:
    # "Would you like me to commit these changes?", then the user asks about something else; no commit follows
    threads, _ = open_threads(corpus_session("04cd0da1-dee3-4738-8139-524dfe55de83"))
    assert "Agent offered, not taken: commit these changes" in [t.text for t in threads]


def test_an_offer_to_commit_carried_out_later_is_not_open() -> None:
    # the same offer, passed over at first, and the session commits afterwards
    threads = draft(corpus_session("a7da6a22-facc-4fcd-8bab-f83c87862004"), ZoneInfo("UTC")).open_threads
    assert not any(t.startswith("Agent offered, not taken") for t in threads), threads


def _caveats_of(*said: str) -> list[str]:
    events = [Event("user", T0, text="Rework the importer"), _edit("importer.py"),
              *[Event("assistant", T0, text=text) for text in said],
              Event("assistant", T0, text="Updated importer.py.")]
    return [t for t in draft(_session("codex", *events), ZoneInfo("UTC")).open_threads if t.startswith("Caveat:")]


def test_deferrals_conflicts_and_temporary_files_named_in_passing_are_caveats() -> None:
    assert _caveats_of("The retry policy is only documented in tests for now.",
                       "Expect conflicts with PR #41 since it edits the same loader.") == [
        "Caveat: The retry policy is only documented in tests for now.",
        "Caveat: Expect conflicts with PR #41 since it edits the same loader."]
    assert _caveats_of("Streaming import is deferred as too complex for this change.") == [
        "Caveat: Streaming import is deferred as too complex for this change."]
    assert _caveats_of("I wrote a temporary script scratch.py; remove it before merging.") == [
        "Caveat: I wrote a temporary script scratch.py; remove it before merging."]


def test_code_that_defers_or_a_temporary_file_removed_later_is_no_caveat() -> None:
    assert _caveats_of("The deferred close in `load()` releases the file handle.",
                       "We defer to the caller's timeout here.", "Let me clean up the debug code:") == []
    events = [Event("user", T0, text="Rework the importer"), _edit("importer.py"),
              Event("assistant", T0, text="I wrote a temporary script scratch.py; remove it before merging."),
              _bash("rm scratch.py"), Event("assistant", T0, text="Removed scratch.py. Updated importer.py.")]
    assert draft(_session("codex", *events), ZoneInfo("UTC")).open_threads == []


def test_steps_proposed_in_a_list_the_user_put_off_with_first_are_deferred() -> None:
    # "The most impactful refactoring would be: 1. ... 5." and the reply "let's first fix the bug with CWD": the
    # CWD fix (`DetectPresence`, edited) was taken, the other steps put off, not declined (review of f8e05984)
    threads = draft(corpus_session("f8e05984-93e4-45b7-b638-e6f011442db9"), ZoneInfo("UTC")).open_threads
    left = [t for t in threads if t.startswith("Deferred, not started: ")]
    assert "Deferred, not started: Add Gemini metadata deny rule (security gap)" in left
    assert any("SanitizePath" in t for t in left) and not any("DetectPresence" in t for t in left)
    assert not any(t.startswith("Not taken: ") for t in threads)


def test_steps_proposed_in_a_list_the_user_took_only_part_of_are_not_taken() -> None:
    listed = ("The most impactful refactoring would be:\n\n1. Extract the retry loop into `retry()`\n"
              "2. Rename `fetch_all` to `fetch_pages`")
    events = [Event("user", T0, text="What would you refactor?"), Event("assistant", T0, text=listed),
              Event("user", T0, text="just do 1"), Event("tool", T0, tool=ToolCall(
                  "e1", "Edit", {"file_path": "/tmp/widgets/client.py", "new_string": "def retry():"})),
              Event("assistant", T0, text="Done.")]
    threads = open_threads(_session("claude-code", *events))[0]
    assert [t.text for t in threads] == ["Not taken: Rename `fetch_all` to `fetch_pages`"]


def test_steps_proposed_that_the_user_accepted_whole_are_no_thread() -> None:
    # a list of proposed steps answered "yes"
    threads = draft(corpus_session("a0bd162f-1328-48c5-83bc-c0674aa791ac"), ZoneInfo("UTC")).open_threads
    assert not any(t.startswith("Not taken: ") for t in threads), threads


def test_a_review_comment_fixed_after_a_push_and_not_pushed_nor_answered_is_a_thread() -> None:
    """c010174c pushed PR #342, fetched cursor[bot]'s comment, fixed it and ended on the commit (blind labels, two
    readers: "The reply to cursor[bot]'s 'Active sessions condense without content checks' review thread on PR #342
    was planned but not posted"); 030e1e67 replied to its comments; 8c00ac51 never pushed (its edits are the
    uncommitted work, which its reader did not call open)."""
    threads = draft(corpus_session("c010174c-a7cd-4bcc-b7d4-61258d6c463f"), ZoneInfo("UTC")).open_threads
    assert ('Review comment not answered: "Active sessions condense without content checks" on PR #342, fixed in '
            "`manual_commit_hooks.go`, `phase_postcommit_test.go` after the last push; push the fix, then reply to or "
            "resolve it") in threads
    for other in ("030e1e67-6bf0-492d-8bd3-cc3383ec93ab", "8c00ac51-4fbb-417c-ac2b-0fd595a5c296"):
        found = draft(corpus_session(other), ZoneInfo("UTC")).open_threads
        assert not any(t.startswith("Review comment not answered:") for t in found), found


def test_a_pasted_review_comment_after_the_sessions_push_names_its_title() -> None:
    pasted = "Retry loop never backs off\n\nMedium Severity\n\nThe loop in `fetch()` retries at once."
    events = [Event("user", T0, text="Ship it"), _bash("git push origin retries"), Event("user", T0, text=pasted),
              _edit("client.py"), Event("assistant", T0, text="Fixed the backoff.")]
    assert open_threads(_session("claude-code", *events))[0][-1].text == (
        'Review comment not answered: "Retry loop never backs off", fixed in `client.py` after the last push; push the '
        "fix, then reply to or resolve it")
    replied = [*events, _bash("git push && gh api repos/o/r/pulls/3/comments/9/replies -f body=Fixed")]
    assert not any(t.text.startswith("Review comment") for t in open_threads(_session("claude-code", *replied))[0])


def test_a_review_comment_read_with_gh_pr_view_names_its_pr() -> None:
    # `gh pr view 192 --comments` names its PR in the command itself, as `gh api .../pulls/192/comments` does
    comments = "cursor[bot] commented:\nRetry loop never backs off\n\nMedium Severity\n"
    viewed = Event("tool", T0, tool=ToolCall("v1", "Bash", {"command": "gh pr view 192 --comments"}, output=comments))
    events = [Event("user", T0, text="Ship it"), _bash("git push origin retries"), viewed, _edit("client.py"),
              Event("assistant", T0, text="Fixed the backoff.")]
    assert open_threads(_session("claude-code", *events))[0][-1].text == (
        'Review comment not answered: "Retry loop never backs off" on PR #192, fixed in `client.py` after the last '
        "push; push the fix, then reply to or resolve it")


def test_a_deferral_the_agent_posted_in_a_pr_reply_is_a_caveat() -> None:
    # gh api .../replies -f body="... Will add targeted tests in a follow-up if the logic grows more complex."
    handoff = draft(corpus_session("45ba035c-93ee-46e8-b83c-9d8a3a1cb05b"), ZoneInfo("UTC"))
    assert "Caveat (PR reply): Will add targeted tests in a follow-up if the logic grows more complex." in \
        handoff.open_threads
    assert handoff.status == "done"  # a note for later, not the session's own work unfinished


def test_pr_replies_that_defer_nothing_leave_no_caveat() -> None:
    # three review replies posted with gh api, each saying what was fixed
    assert draft(corpus_session("030e1e67-6bf0-492d-8bd3-cc3383ec93ab"), ZoneInfo("UTC")).open_threads == []


# -- a review's findings left ------------------------------------------------------------------------------------
def _threads(session_id: str) -> list[str]:
    return draft(corpus_session(session_id), ZoneInfo("UTC")).open_threads


def test_review_findings_the_user_did_not_take_up_and_no_edit_touched_are_threads() -> None:
    """76d407bd: the user had findings 1 and 2 fixed; 3 (`reaggregateFromEntries`) was left, 4 is a "Non-issue"."""
    assert _threads("76d407bd-2561-45ef-8cbb-2dc1f9be9bbe") == [
        "Not fixed (review): `reaggregateFromEntries` is now a hard error on missing metadata (review: low; not "
        "blocking, worth considering)"]


def test_a_finding_taken_up_in_the_users_words_or_fixed_by_an_edit_is_not_left() -> None:
    """09a2c705: "let's add some warnings for the failing agent resolution" took finding 6; the `sync.Once` cache (1)
    was edited; 2, 4, 5 and 7 were left."""
    threads = [t for t in _threads("09a2c705-b334-4632-b1bf-b68e510ca0b5") if t.startswith("Not fixed (review)")]
    assert len(threads) == 4 and threads[0].startswith("Not fixed (review): `RestoreLogsOnly` skips sessions")
    assert not any("printMultiSessionResumeCommands" in t or "protectedDirsCache" in t for t in threads)


def test_a_short_finding_title_gets_the_first_sentence_of_its_body() -> None:
    """9667a07f: finding 1 was fixed (`contentSb73` renamed), 3 was asked about by the user; 2 and 4 were left."""
    assert [t for t in _threads("9667a07f-c677-4f9d-9b21-da366e5add6a") if t.startswith("Not fixed")] == [
        'Not fixed (review): Commit message could be more descriptive: The message "small refactor" understates the '
        "consolidation work…",
        "Not fixed (review): Optional documentation comment: Could explain why EnsureEntireGitignore lives in "
        "strategy/common.go."]


def test_many_findings_of_one_priority_left_are_one_thread() -> None:
    """847ff7d2 lists "## P2 Findings" again; the user has 3 and 9 fixed and six stay untouched (both blind readers
    write one thread: "Most P2 review findings remain unaddressed, e.g. ..."); 70fc6d83's table of issues of
    several severities and 09a2c705's four "### Issues" stay one thread each."""
    threads = [t for t in _threads("847ff7d2-4a55-44d7-a3f5-a3afd89f1ee1") if t.startswith("Not fixed (review)")]
    assert threads == ["Not fixed (review): most P2 findings (2 of 12 fixed), e.g. Large Repo DoS, Multiple Repository "
                       "Opens (N+1), Unbounded Commit Scanning"]
    assert len([t for t in _threads("70fc6d83-147d-4fdf-b015-bd67eeb11883") if t.startswith("Not fixed")]) == 6
    assert len([t for t in _threads("09a2c705-b334-4632-b1bf-b68e510ca0b5") if t.startswith("Not fixed")]) == 4


def test_many_findings_of_one_priority_the_user_mostly_took_up_say_how_many_are_left() -> None:
    review = "## P2 Findings\n\n" + "\n".join(f"{n}. **Finding {n}** - `step{n}()` is slow" for n in range(1, 11))
    events = [Event("user", T0, text="Review the branch"), Event("assistant", T0, text=review),
              Event("user", T0, text="fix 1-6"), Event("assistant", T0, text="I can't change the code here.")]
    assert draft(_session("codex", *events), ZoneInfo("UTC")).open_threads == [
        "Not fixed (review): 4 of 10 P2 findings, e.g. Finding 7, Finding 8, Finding 9"]
    few = [Event("user", T0, text="Review the branch"), Event("assistant", T0, text=review),
           Event("user", T0, text="fix 1-7"), Event("assistant", T0, text="I can't change the code here.")]
    assert len(draft(_session("codex", *few), ZoneInfo("UTC")).open_threads) == 3


def test_a_reviews_table_of_issues_is_its_findings_each_row_with_its_description() -> None:
    """70fc6d83 (blind labels: "GetSessionLog was removed from the Strategy interface without documentation", "A
    single JSONL line larger than MaxChunkSize is passed through unchecked"): "### Consensus Critical Issues" and
    "### Other Important Issues" are tables (Issue | Location | Description); the header row is no finding, the
    location cell no body."""
    threads = [t for t in _threads("70fc6d83-147d-4fdf-b015-bd67eeb11883") if t.startswith("Not fixed (review)")]
    assert len(threads) == 6
    assert threads[2] == "Not fixed (review): `GetSessionLog` removed from interface: Breaking change to Strategy " \
                         "interface without migration documentation"
    assert threads[4] == "Not fixed (review): Oversized single-line handling: A single JSONL line larger than " \
                         "MaxChunkSize passes through without validation or error"


def test_a_table_of_pr_comments_already_fixed_is_no_review_left() -> None:
    """8c00ac51 closes on a table of the PR's comments ("| # | Author | Issue | Status |", each "Already fixed" or
    "**Fixed now**") under no heading of issues: a report, no findings."""
    assert not any(t.startswith("Not fixed (review)") for t in _threads("8c00ac51-4fbb-417c-ac2b-0fd595a5c296"))


def test_a_table_of_issues_fixed_is_no_findings_left() -> None:
    report = "## Issues Fixed\n\n| Issue | Fix |\n|---|---|\n| `parseConfig` drops empty keys | now kept as empty " \
             "strings in the output |\n"
    events = [Event("user", T0, text="Fix the config bugs"), Event("assistant", T0, text=report)]
    assert draft(_session("codex", *events), ZoneInfo("UTC")).open_threads == []


def test_a_table_of_issues_under_a_review_heading_leaves_its_rows() -> None:
    review = "## Review\n\n### Issues\n\n| # | Issue | Severity |\n|---|---|---|\n| 1 | `parseConfig` drops " \
             "empty keys silently | high |\n| 2 | `loadCache` never expires | low |\n"
    events = [Event("user", T0, text="Review the config module"), Event("assistant", T0, text=review)]
    assert draft(_session("codex", *events), ZoneInfo("UTC")).open_threads == [
        "Not fixed (review): `parseConfig` drops empty keys silently", "Not fixed (review): `loadCache` never expires"]


def test_a_row_of_a_findings_table_its_status_column_marks_fixed_is_not_left() -> None:
    review = "## Review\n\n### Issues\n\n| # | Author | Issue | Status |\n|---|---|---|---|\n| 1 | Copilot | Reuse " \
             "`isGeminiFormat` | Already fixed (commit 308738a) |\n| 2 | cursor | Summary slicing is line-based on " \
             "Gemini JSON | Open |\n"
    events = [Event("user", T0, text="Go over the PR comments"), Event("assistant", T0, text=review)]
    assert draft(_session("codex", *events), ZoneInfo("UTC")).open_threads == [
        "Not fixed (review): Summary slicing is line-based on Gemini JSON"]


def test_a_reviews_verdict_is_no_step_its_findings_are_the_threads() -> None:
    """70fc6d83 closes its review "Both agents recommend **REQUEST CHANGES** before merging.": a verdict, not a step."""
    assert not any("REQUEST CHANGES" in t for t in _threads("70fc6d83-147d-4fdf-b015-bd67eeb11883"))


def test_a_step_recommended_before_merging_is_still_a_thread() -> None:
    events = [Event("user", T0, text="Add the migration"), _edit("migrate.py"),
              Event("assistant", T0, text="Added the migration. I recommend running it on staging before merging.")]
    assert draft(_session("codex", *events), ZoneInfo("UTC")).open_threads == [
        "Next: I recommend running it on staging before merging."]


def test_findings_the_user_said_yes_to_fixing_are_not_left() -> None:
    """e5fcdc73: "Want me to fix these?" - "yes" (some were already fixed on the PR's branch, with no edit here)."""
    assert _threads("e5fcdc73-b9fc-4991-b532-6bf8440fd12d") == []


# -- work left to the person ---------------------------------------------------------------------------------------
def test_work_left_to_the_person_mid_session_is_a_caveat() -> None:
    threads = _threads("8b418ea5-895d-4ad5-abe8-4489d36e454f")
    assert any(t.startswith("Caveat: ") and t.endswith("You may want to delete that one manually") for t in threads)
    assert "Caveat: Worth filing an issue on the Linear MCP server to add `issue` parameter support for document " \
           "creation." in threads


def test_a_caveat_leading_a_list_names_its_first_items() -> None:
    assert _threads("488c5296-fc78-4fdf-8cfd-f1cae9454bd0") == [
        "Caveat: If you continue to hit timeouts, you could also consider: Retrying the release; Running notarization "
        "in parallel"]


def test_a_caveat_in_the_closing_message_is_a_thread() -> None:
    assert _threads("4555072a-e039-4937-b6ea-dcb86152dd55") == [
        "Caveat: Minor cleanup opportunity, but not the same issue that caused the test failure."]


def test_doing_something_manually_is_no_caveat() -> None:
    """cb2e607c: "This is much cleaner than manually hunting for cache files": no work left."""
    assert _threads("cb2e607c-c758-415a-8b45-c49e4631906a") == []


_REVIEW = "## Review\n\n### Issues\n\n1. **`parseConfig` drops empty keys** - an empty value is skipped silently\n" \
          "2. **`loadCache` never expires** - entries live for the whole process\n"


def _edit_code(old: str, new: str) -> Event:
    return Event("tool", T0, tool=ToolCall("e2", "Edit", {"file_path": "/tmp/widgets/config.py", "old_string": old,
                                                         "new_string": new}))


def test_a_review_of_code_nobody_edited_after_leaves_its_findings() -> None:
    events = [Event("user", T0, text="Review the config module"), Event("assistant", T0, text=_REVIEW),
              Event("user", T0, text="fix the cache one"), _edit_code("def loadCache():", "def loadCache(ttl):"),
              Event("assistant", T0, text="Done: `loadCache` now takes a ttl.")]
    assert draft(_session("codex", *events), ZoneInfo("UTC")).open_threads == [
        "Not fixed (review): `parseConfig` drops empty keys - an empty value is skipped silently"]


def test_findings_only_talked_about_after_the_review_with_no_edit_are_still_left() -> None:
    # no edit follows the review: the messages after it are no explanation of an edit (the slice up to the last
    # edit once read as far as the session's second-last event, so a finding merely named there counted as fixed)
    events = [Event("user", T0, text="Review the config module"), Event("assistant", T0, text=_REVIEW),
              Event("user", T0, text="what does the cache one mean?"),
              Event("assistant", T0, text="`loadCache` keeps each entry until the process exits."),
              Event("assistant", T0, text="`parseConfig` skips a key whose value is empty.")]
    assert draft(_session("codex", *events), ZoneInfo("UTC")).open_threads[-2:] == [
        "Not fixed (review): `parseConfig` drops empty keys - an empty value is skipped silently",
        "Not fixed (review): `loadCache` never expires - entries live for the whole process"]


def test_issues_the_turn_fixed_before_reporting_them_are_no_findings_left() -> None:
    events = [Event("user", T0, text="Fix the config bugs"), _edit_code("def parseConfig(raw):", "def parseConfig(r):"),
              _edit_code("def loadCache():", "def loadCache(ttl):"), Event("assistant", T0, text=_REVIEW)]
    assert draft(_session("codex", *events), ZoneInfo("UTC")).open_threads == []


def test_a_caveat_pointing_back_names_what_it_points_at() -> None:
    """63784323: "... would require recognizing that the worktree now matches `-1`'s content. This adds complexity and
    may not be worth implementing initially.": "this" is the sentence before."""
    assert 'Caveat: Detecting that we should "go back" to `-1`: This adds complexity and may not be worth ' \
           "implementing initially." in _threads("63784323-7042-4ab8-82b1-3c0b79467bf9")


def test_a_research_answers_key_findings_are_no_review() -> None:
    answer = "## Key Findings\n\n1. Yes, `claude -p` can use WebSearch\n2. Tools can be limited with `--tools`\n"
    events = [Event("user", T0, text="Can claude -p search the web?"), Event("assistant", T0, text=answer)]
    assert draft(_session("codex", *events), ZoneInfo("UTC")).open_threads == []


def _codex_rollout(folder: Path, *plans: list[tuple[str, str]]) -> Session:
    """A Codex CLI rollout: the request, `update_plan` before and after an `apply_patch` of retry.py, the report."""
    def item(kind: str, **payload: object) -> dict:
        return {"timestamp": "2026-12-01T10:18:44Z", "type": kind, "payload": payload}

    def plan(number: int, steps: list[tuple[str, str]]) -> list[dict]:
        arguments = json.dumps({"plan": [{"step": step, "status": status} for step, status in steps]})
        return [item("response_item", type="function_call", name="update_plan", arguments=arguments,
                     call_id=f"p{number}"),
                item("response_item", type="function_call_output", call_id=f"p{number}", output="Plan updated")]

    patch = "*** Begin Patch\n*** Update File: retry.py\n@@\n+def retry(): ...\n*** End Patch"
    records = [item("session_meta", id="01a2311d-0000-7000-8000-000000000001", cwd="/tmp/widgets"),
               item("response_item", type="message", role="user",
                    content=[{"type": "input_text", "text": "Add a retry helper"}]),
               *plan(1, plans[0]),
               item("response_item", type="custom_tool_call", name="apply_patch", input=patch, call_id="e1"),
               *[record for number, steps in enumerate(plans[1:], 2) for record in plan(number, steps)],
               item("response_item", type="message", role="assistant",
                    content=[{"type": "output_text", "text": "Added retry() to retry.py."}])]
    path = folder / "rollout-2026-12-01T10-18-44-01a2311d-0000-7000-8000-000000000001.jsonl"
    path.write_text("\n".join(json.dumps(record) for record in records) + "\n")
    return build_codex_session("01a2311d-0000-7000-8000-000000000001", [path], lambda text: text)[0]


def _gemini_chat(folder: Path, *plans: list[tuple[str, str]]) -> Session:
    """A Gemini CLI chat: the request, `write_todos` before and after a `replace` in retry.py, the report."""
    def todos(number: int, steps: list[tuple[str, str]]) -> dict:
        args = {"todos": [{"description": step, "status": status} for step, status in steps]}
        return {"id": f"t{number}", "name": "write_todos", "args": args, "status": "success",
                "result": [{"functionResponse": {"id": f"t{number}", "response": {"output": "Todos updated"}}}]}

    def reply(number: int, text: str, *calls: dict) -> dict:
        return {"id": f"g{number}", "timestamp": "2026-12-01T10:18:59Z", "type": "gemini", "content": text,
                "model": "gemini-2.5-pro", "toolCalls": list(calls)}

    edit = {"id": "e1", "name": "replace", "args": {"file_path": "/tmp/widgets/retry.py"}, "status": "success",
            "result": [{"functionResponse": {"id": "e1", "response": {"output": "Edited retry.py"}}}]}
    records = [{"sessionId": "2257c943-0000-4000-8000-000000000002", "startTime": "2026-12-01T10:18:59Z",
                "directories": ["/tmp/widgets"]},
               {"id": "u1", "timestamp": "2026-12-01T10:18:59Z", "type": "user",
                "content": [{"text": "Add a retry helper"}]},
               reply(1, "", todos(1, plans[0]), edit),
               reply(2, "Added retry() to retry.py.", *[todos(n, steps) for n, steps in enumerate(plans[1:], 2)])]
    path = folder / "chats" / "session-2026-12-01T10-18-2257c943.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("\n".join(json.dumps(record) for record in records) + "\n")
    return build_gemini_session("2257c943-0000-4000-8000-000000000002", [path], lambda text: text)[0]


def test_the_pending_steps_of_codex_update_plan_and_gemini_write_todos_are_open_threads(tmp_path: Path) -> None:
    """Codex CLI's `update_plan` and Gemini CLI's `write_todos` are their todo lists, as TodoWrite is Claude Code's:
    each reader keeps the last one as the session's todos."""
    for read in (_codex_rollout, _gemini_chat):
        folder = tmp_path / read.__name__
        folder.mkdir()
        session = read(folder, [("Add retry helper", "in_progress"), ("Write retry tests", "pending"),
                                ("Document the retry flag", "pending")],
                       [("Add retry helper", "completed"), ("Write retry tests", "pending")])
        assert session.todos == [{"content": "Add retry helper", "status": "completed"},
                                 {"content": "Write retry tests", "status": "pending"}], read.__name__
        assert session.todos_dropped == ["Document the retry flag"], read.__name__
        handoff = draft(session, ZoneInfo("UTC"))
        assert handoff.open_threads == ["To do: Write retry tests", "Not done, dropped from the todo list: Document "
                                        "the retry flag"] and handoff.status == "partial", read.__name__


def test_a_plan_whose_steps_are_all_completed_leaves_no_todo(tmp_path: Path) -> None:
    session = _codex_rollout(tmp_path, [("Add retry helper", "in_progress")], [("Add retry helper", "completed")])
    handoff = draft(session, ZoneInfo("UTC"))
    assert handoff.open_threads == [] and handoff.status == "done"


def test_an_offer_made_as_a_statement_in_the_last_message_is_an_open_thread() -> None:
    """Codex closes with "If you want, I can ..." where Claude asks "Want me to ...?"."""
    handoff = draft(_session(
        "codex", Event("user", T0, text="Add a retry helper"), _edit("retry.py"),
        Event("assistant", T0, text="Added retry() to retry.py.\n\nIf you want, I can also add tests for the backoff "
                                    "path.")), ZoneInfo("UTC"))
    assert handoff.open_threads == ["Agent offered, no answer: also add tests for the backoff path"]
    assert handoff.status == "done"


def test_a_condition_that_is_no_offer_is_no_thread() -> None:
    handoff = draft(_session(
        "codex", Event("user", T0, text="Add a retry helper"), _edit("retry.py"),
        Event("assistant", T0, text="Added retry() to retry.py. If you want retries off, set `RETRIES=0`.")),
        ZoneInfo("UTC"))
    assert handoff.open_threads == []


def test_a_change_announced_last_and_made_before_the_session_stopped_is_done() -> None:
    # 5a6312ee: "Let me write the table tests.", then the Edit and a green `go test`, then no report
    handoff = draft(corpus_session("5a6312ee-5752-4b7a-9ad2-6c3b1b5f4c8a"), ZoneInfo("UTC"))
    assert (handoff.status, handoff.open_threads) == ("done", [])


def test_a_step_the_person_may_take_after_finished_work_is_named_and_leaves_it_done() -> None:
    # bc3bf53b (blind label: done) ends "You may want to run `mise install` to install the new Go version."
    handoff = draft(corpus_session("bc3bf53b-19fe-4209-b30a-a1acffaf6703"), ZoneInfo("UTC"))
    assert handoff.status == "done"
    assert handoff.open_threads == ["Next: You may want to run `mise install` to install the new Go version."]


def test_a_step_the_session_still_owes_keeps_it_partial() -> None:
    # 48f428f9's closing steps are the setup its work needs ("Create a GitHub App ...")
    assert draft(corpus_session("48f428f9-72d8-40b2-9594-953019809473"), ZoneInfo("UTC")).status == "partial"


def test_next_steps_closing_the_last_edit_stand_when_the_session_ends_on_an_aside() -> None:
    """9667a07f fixes a review finding, closes "Ready to commit or merge.", then only answers "can you explain 3.":
    the step it named is still left, a note (the blind label: "the agent said the branch was ready to commit")."""
    handoff = draft(corpus_session("9667a07f-c677-4f9d-9b21-da366e5add6a"), ZoneInfo("UTC"))
    assert handoff.open_threads[0].endswith('; the agent: "Ready to commit or merge."') and handoff.status == "done"


def test_a_merge_left_to_the_person_is_in_progress_whatever_the_agent_said() -> None:
    """da15b15f resolves a `--no-commit` merge, runs fmt, lint and the tests green, and closes "The merge is staged and
    ready to commit whenever you'd like." with no `git add` after its edits: the merge is in progress (every blind
    reader: partial), the step that closes it given, the agent's word marked as against its commands."""
    handoff = draft(corpus_session("da15b15f-a573-4523-abcb-fdd6c9a4e2a2"), ZoneInfo("UTC"))
    assert (handoff.open_threads, handoff.status) == (
        ["Merge in progress: edits not staged, no `git add` ran: `git add cmd/entire/cli/strategy/"
         "manual_commit_hooks.go cmd/entire/cli/strategy/phase_wiring_test.go && git commit` (the merge of "
         "`origin/alex/ent-221-type-consolidation`); the agent: \"The merge is staged and ready to commit whenever "
         "you'd like.\", against its commands"], "partial")


def test_edits_the_agent_leaves_the_person_to_commit_are_named_by_their_files() -> None:
    """4f8c1176 closes "The changes are ready to be committed whenever you'd like.", 04cd0da1 "Ready to commit?",
    9667a07f "Ready to commit or merge." before an aside, none committing after: the files are named (blind labels:
    "... were left uncommitted"), a note that keeps the session's status."""
    for session_id, files in [("4f8c1176-7025-4530-a860-c6fc4c63a150", "`checkpoint.go`, `committed.go`"),
                              ("04cd0da1-dee3-4738-8139-524dfe55de83", "`paths.go`, `state.go`"),
                              ("9667a07f-c677-4f9d-9b21-da366e5add6a", "`common.go`")]:
        threads = draft(corpus_session(session_id), ZoneInfo("UTC")).open_threads
        assert any(t.startswith(f"Uncommitted, left for the person to commit: {files}") for t in threads), threads


def test_a_commit_offered_then_made_or_a_git_status_shown_names_no_commit_left_to_the_person() -> None:
    """ae68c513 commits when asked ("commit this": "Committed as `5fddc49c`"); 8b418ea5's own `git status` listed its
    edits, which say it in their words ("Left uncommitted on main"); 78368290 offers no commit: none is left to the
    person."""
    for session_id in ("ae68c513-db90-451f-940d-804a1d3d0986", "8b418ea5-895d-4ad5-abe8-4489d36e454f",
                       "78368290-ee0b-474f-8052-bb65a9a581d6"):
        threads = draft(corpus_session(session_id), ZoneInfo("UTC")).open_threads
        assert not [t for t in threads if t.startswith("Uncommitted, left for the person")], (session_id, threads)


def test_steps_before_a_last_turn_that_took_them_are_not_left() -> None:
    """ae68c513's last prompt, "commit this", is a step taken: what the turn before closed on is not carried over."""
    threads = draft(corpus_session("ae68c513-db90-451f-940d-804a1d3d0986"), ZoneInfo("UTC")).open_threads
    assert not any(t.startswith("Next: Changed wingman review injection") for t in threads)


def test_an_offer_the_user_answered_with_a_question_of_their_own_is_a_note() -> None:
    """fe0cdcc5 closes a turn with "Want me to adjust anything in the README wording?" and the user's last prompt
    asks about `--force` instead; its blind label: "the user never answered"."""
    handoff = draft(corpus_session("fe0cdcc5-cd91-4041-8742-e375aca7f56e"), ZoneInfo("UTC"))
    assert "Agent offered, no answer: adjust anything in the README wording" in handoff.open_threads
    assert handoff.status == "done"


def test_an_offer_whose_edit_the_user_refused_in_words_is_a_step_not_done() -> None:
    """03a1382e's "Want me to fix this?" ("The fix: replace `getStagedFiles` ..."), passed over by "are you sure?",
    was answered 100 events later: the user refused its edit ("let's not make this change in this branch. Can we log
    an linear issue") and the issue was filed. Its blind label: the fix was not made in this branch."""
    threads = draft(corpus_session("03a1382e-ecd5-42c4-b3d4-5c659e165904"), ZoneInfo("UTC")).open_threads
    assert not any(t.startswith("Agent offered, no answer:") for t in threads)
    assert ("Not done, at the user's word: fix this (The fix: replace `getStagedFiles` with a `git diff --cached "
            "--name-only` CLI call instead of…): \"let's not make this change in this branch\"") in threads


def test_an_offer_taken_later_or_passed_over_for_another_road_is_no_note() -> None:
    """2577a596's "add this to the CHANGELOG.md file?" is followed by a question, but CHANGELOG.md is edited later;
    22c5d52e's "create this file?" is made again and answered "yes". 170cebcc's "Want me to add any of these?" (more
    templates) gets "can we add a free field for the terminal used to the form?" and 63784323's "Want me to sketch
    out the implementation changes?" gets "the matches part is also where I'm struggling": the user's next prompts
    led elsewhere (neither blind label keeps the offer)."""
    for session_id in ("2577a596-e227-47e1-bea8-752f792cbc24", "22c5d52e-9602-4ffe-aaa1-0265b115ef3d",
                       "170cebcc-4cb9-42aa-a322-6e590fc9db0d", "63784323-7042-4ab8-82b1-3c0b79467bf9"):
        threads = draft(corpus_session(session_id), ZoneInfo("UTC")).open_threads
        assert not [t for t in threads if t.startswith("Agent offered, no answer:")], session_id


def test_an_offer_made_as_a_statement_and_passed_over_by_a_question_is_a_note_too() -> None:
    """Codex offers as a statement ("If you want, I can ..."); a "yes" takes it."""
    def session(answer: str) -> Session:
        return _session("codex", Event("user", T0, text="Add a retry helper"), _edit("retry.py"),
                        Event("assistant", T0, text="Added retry().\n\nIf you want, I can also add tests for the "
                                                    "backoff path."),
                        Event("user", T0, text=answer), Event("assistant", T0, text="It waits 2 ** attempt seconds."))
    assert "Agent offered, no answer: also add tests for the backoff path" in draft(
        session("how long does it wait between attempts?"), ZoneInfo("UTC")).open_threads
    assert draft(session("yes, and how long does it wait?"), ZoneInfo("UTC")).open_threads == []


def test_a_bare_ask_to_go_on_keeps_the_sentence_that_names_its_subject() -> None:
    """"Shall I proceed?" names nothing: what it asks to go on with is the sentence before it."""
    handoff = draft(_session(
        "claude-code", Event("user", T0, text="How should the retry helper back off?"), _edit("retry.py"),
        Event("assistant", T0, text="Exponential backoff with jitter fits the flood limits. Shall I proceed?")),
        ZoneInfo("UTC"))
    assert handoff.open_threads == ["Asked whether to proceed: Exponential backoff with jitter fits the flood limits"]


def test_steps_the_agent_took_off_its_own_todo_list_unfinished_are_notes() -> None:
    """b50aaf5c's last TodoWrite leaves out its two pending "Write unit tests for ..." steps (its blind label: "the
    task spec's unit and integration tests for the new hooks were not written")."""
    session = corpus_session("b50aaf5c-3ef3-472b-8d5e-75bb89ac3fe1")
    assert session.todos_dropped == ["Add helper functions for task metadata extraction",
                                     "Write unit tests for task-start hook", "Write unit tests for task-complete hook"]
    handoff = draft(session, ZoneInfo("UTC"))
    assert "Not done, dropped from the todo list: Write unit tests for task-start hook" in handoff.open_threads
    assert handoff.status == "done"


def test_a_todo_in_progress_whose_edit_the_user_stopped_is_not_done() -> None:
    """130d7b7e's edit of hook_registry.go was rejected with no word and none went through after (blind label: "the
    requested wiring into hook_registry.go ... was not done"); the user asked a question next, a pause, not a refusal
    (review: "refused" misreads them). 7acd37a8's item in progress had no edit refused."""
    threads = draft(corpus_session("130d7b7e-5801-4345-9bd6-f32fd9b8429b"), ZoneInfo("UTC")).open_threads
    assert threads[:2] == ["Not done: Add WithAgent to hook_registry.go (its edit stopped by the user, who asked "
                           'next: "how can we know which agent is active ?")',
                           "To do: Add WithAgent to hooks_claudecode_handlers.go"]
    assert "In progress: Test recording with new AudioWorklet implementation" in draft(
        corpus_session("7acd37a8-2745-4b58-a8a9-46164b22ad9e"), ZoneInfo("UTC")).open_threads


def test_a_todo_in_progress_whose_edit_the_user_stopped_with_a_new_request_is_refused() -> None:
    rejected = ToolCall("e1", "Edit", {"file_path": "/tmp/widgets/api.py"}, is_error=True, rejected=True,
                        error="The user doesn't want to proceed with this tool use.")
    todos = ToolCall("t1", "TodoWrite", {"todos": [{"content": "Add retries to api.py", "status": "in_progress"}]})
    session = _session("claude-code", Event("user", T0, text="Add retries"), Event("tool", T0, tool=todos),
                       Event("tool", T0, tool=rejected), Event("user", T0, text="Leave api.py alone, do the docs."))
    session.todos = [{"content": "Add retries to api.py", "status": "in_progress"}]
    assert "Not done: Add retries to api.py (its edit refused by the user)" in open_threads(session)[0][0].text


def test_a_renamed_step_a_new_turns_list_or_a_dropped_check_is_no_dropped_step() -> None:
    """7acd37a8 renames "Remove vendor prefixes (AudioContext, URL)"; 0cd9edf7's list changes after the user turned to
    testing PR #68; d88bceb6 drops "Run code simplicity review", a check, not a change."""
    assert corpus_session("7acd37a8-2745-4b58-a8a9-46164b22ad9e").todos_dropped == []
    assert "Add missing fields to session.State struct" not in corpus_session(
        "0cd9edf7-459c-4900-af40-cf2c64dea525").todos_dropped
    session = corpus_session("d88bceb6-bb3a-4ae8-9405-d67d19950a46")
    assert session.todos_dropped == ["Run code simplicity review"]
    assert not [t for t in draft(session, ZoneInfo("UTC")).open_threads if t.startswith("Not done, dropped")]


def test_a_listed_step_is_a_thread_an_outcome_to_read_into_is_not() -> None:
    """8c816805's "Next Steps for Debugging": "1. Check `.entire/logs/<session-id>.log` ...", "2. If you see "no filter
    configured", the settings aren't loading": the check is left to do, the condition says what a result would mean."""
    threads = draft(corpus_session("8c816805-24e2-4871-ac94-e97ce23993c1"), ZoneInfo("UTC")).open_threads
    assert "Later (next steps for debugging): Check `.entire/logs/<session-id>.log` for filter-related log messages" \
        in threads
    assert not any(t.startswith("Later: If ") for t in threads), threads


def test_a_reply_s_connective_is_no_part_of_the_step() -> None:
    """0a76fbfe: "And yes, investigating the checkout/reset shims removal is a great follow-up — ..."."""
    threads = draft(corpus_session("0a76fbfe-d767-433e-b4b1-a39e044f21e8"), ZoneInfo("UTC")).open_threads
    assert any(t.startswith("Later: Investigating the checkout/reset shims removal") for t in threads), threads
def test_a_step_dropped_while_an_unrelated_one_is_added_is_a_dropped_step(tmp_path: Path) -> None:
    # "Update the docs for the API" and "Update the tests for the CLI" share only "update": no rename
    session = _codex_rollout(tmp_path, [("Add retry helper", "in_progress"),
                                        ("Update the docs for the API", "pending")],
                             [("Add retry helper", "completed"), ("Update the tests for the CLI", "pending")])
    assert session.todos_dropped == ["Update the docs for the API"]


def _claude_tasks(folder: Path, *updates: dict) -> Session:
    """A Claude Code session: the request, two TaskCreate calls, then `updates` (TaskUpdate inputs), in one turn."""
    records: list[dict] = [{"type": "user", "uuid": "u0", "timestamp": "2026-12-01T10:18:44Z",
                            "message": {"role": "user", "content": "track the migration work"}}]

    def call(number: int, name: str, args: dict, result: dict) -> None:
        records.append({"type": "assistant", "uuid": f"a{number}", "timestamp": "2026-12-01T10:18:45Z",
                        "message": {"id": f"m{number}", "role": "assistant", "model": "claude-opus-4-5",
                                    "content": [{"type": "tool_use", "id": f"t{number}", "name": name,
                                                 "input": args}]}})
        records.append({"type": "user", "uuid": f"r{number}", "timestamp": "2026-12-01T10:18:46Z",
                        "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{number}",
                                                                 "content": "ok"}]}, "toolUseResult": result})

    subjects = ("Write the migration", "Add the backfill of old rows", "Update the changelog")
    for number, subject in enumerate(subjects, 1):
        call(number, "TaskCreate", {"subject": subject}, {"task": {"id": str(number), "subject": subject}})
    for number, update in enumerate(updates, 4):
        call(number, "TaskUpdate", update, {"success": True, "taskId": update["taskId"]})
    path = folder / "01a2311d-0000-7000-8000-000000000003.jsonl"
    path.write_text("\n".join(json.dumps(record) for record in records) + "\n")
    return build_session("01a2311d-0000-7000-8000-000000000003", [path], [], lambda text: text)[0]


def test_an_unfinished_claude_task_deleted_is_a_dropped_step(tmp_path: Path) -> None:
    session = _claude_tasks(tmp_path, {"taskId": "1", "status": "completed"}, {"taskId": "2", "status": "deleted"})
    assert session.todos == [{"content": "Write the migration", "status": "completed"},
                             {"content": "Update the changelog", "status": "pending"}]
    assert session.todos_dropped == ["Add the backfill of old rows"]
    threads = draft(session, ZoneInfo("UTC")).open_threads
    assert "Not done, dropped from the todo list: Add the backfill of old rows" in threads
    # a finished task deleted drops nothing
    assert _claude_tasks(tmp_path, {"taskId": "1", "status": "completed"},
                         {"taskId": "1", "status": "deleted"}).todos_dropped == []


def _closing(agent: str, text: str) -> list[str]:
    """The open threads of a session of `agent` whose closing message, after an edit, is `text`."""
    return draft(_session(agent, Event("user", T0, text="Add a retry helper to the client"), _edit("retry.py"),
                          Event("assistant", T0, text=f"Added retry() to retry.py.\n\n{text}")),
                 ZoneInfo("UTC")).open_threads


AGENTS = ("claude-code", "codex", "gemini", "copilot", "qwen")


def test_each_item_of_a_list_under_a_lead_of_work_left_is_its_own_thread_the_lead_none() -> None:
    first = ("Add backoff(attempt) to the retry loop so that a transient error waits longer each time, and only then "
             "retry the request up to five times before it gives up")
    for lead in ("**Remaining work**", "**Remaining work:**", "Remaining:", "Still to do:", "TODO:", "Next:",
                 "What's left:", "**What's left**", "Open items:", "**Outstanding**", "Pending:", "Not done yet:"):
        for agent in AGENTS:
            threads = _closing(agent, f"{lead}\n1. {first}\n2. Wire the `--retries` flag into the CLI")
            # each item one thread, cut at a clause
            assert threads == ["Next: Add backoff(attempt) to the retry loop so that a transient error waits longer "
                               "each time…", "Next: Wire the `--retries` flag into the CLI"], (lead, agent, threads)


def test_a_line_of_work_left_is_a_next_thread_for_each_lead() -> None:
    for lead in ("Remaining", "Still to do", "TODO", "What's left", "Next", "Not done yet", "Outstanding",
                 "Open items", "One leftover"):
        for agent in AGENTS:
            assert _closing(agent, f"{lead}: wire the `--retries` flag into the CLI.") == [
                "Next: wire the `--retries` flag into the CLI."], (lead, agent)


def test_a_markdown_heading_of_work_left_leads_its_list_items() -> None:
    for heading in ("## Next", "### Next steps", "## What's next", "## Remaining", "## TODO", "### Still to do"):
        for agent in AGENTS:
            threads = _closing(agent, f"{heading}\n\n- Add backoff(attempt) to the retry loop\n- Wire the flag")
            kind = "Later" if heading.endswith(("steps", "next")) else "Next"  # what may follow, not what is owed
            assert threads == [f"{kind}: Add backoff(attempt) to the retry loop", f"{kind}: Wire the flag"], \
                (heading, agent, threads)


def test_a_bold_or_heading_lead_with_no_list_after_it_is_no_thread() -> None:
    for agent in AGENTS:
        assert _closing(agent, "## Next\n\nNothing: the retry is complete.") == []
        assert _closing(agent, "**Remaining work**\n\nNone, all done.") == []
        for lead in ("**TODOs completed**", "## Remaining work (done)", "Remaining items, all fixed:"):
            assert _closing(agent, f"{lead}\n- Add backoff(attempt)\n- Wire the flag") == [], (lead, agent)


def test_let_me_know_if_you_want_me_to_is_one_offer() -> None:
    for agent in AGENTS:
        said = _closing(agent, "Let me know if you want me to push the branch.")
        assert said == ["Agent offered, no answer: push the branch"]
        assert _closing(agent, "Let me know if you'd like me to open a PR.") == ["Agent offered, no answer: open a PR"]



def test_a_lead_of_work_still_to_be_done_leads_its_list() -> None:
    for lead in ("What's left to be done:", "Remaining, not yet done:", "## Remaining (to be addressed)",
                 "Remaining (still to be done):"):
        for agent in AGENTS:
            assert _closing(agent, f"{lead}\n- Wire the `--retries` flag into the CLI") == [
                "Next: Wire the `--retries` flag into the CLI"], (lead, agent)


def test_the_first_step_of_a_list_says_what_its_lead_says_the_steps_are() -> None:
    """48f428f9's closing: "**Required Setup (manual steps):** 1. Create a GitHub App ... 2. Install the app ...":
    the steps are the person's to do, which the steps alone do not say."""
    threads = draft(corpus_session("48f428f9-72d8-40b2-9594-953019809473"), ZoneInfo("UTC")).open_threads
    assert [t for t in threads if t.startswith("Next")] == [
        "Next (required setup, manual steps): Create a GitHub App in the `entirehq` organization with Contents: Read "
        "and write permissions", "Next: Install the app on the `homebrew-tap` repository",
        "Next: Add these secrets to the `entireio/cli` repository"], threads
    for agent in AGENTS:
        assert _closing(agent, "**Manual steps:**\n1. Create the app\n2. Add the secrets") == [
            "Next (manual steps): Create the app", "Next: Add the secrets"], agent
        assert _closing(agent, "## Before merging\n- Run the migration on staging") == [
            "Next (before merging): Run the migration on staging"], agent


def test_a_list_closing_the_last_edit_keeps_its_lead_when_the_session_ends_on_an_aside() -> None:
    for agent in AGENTS:
        session = _session(agent, Event("user", T0, text="Add a retry helper"), _edit("retry.py"),
                           Event("assistant", T0, text="Added retry().\n\n**Manual steps:**\n1. Create the app\n"
                                                       "2. Add the secrets"),
                           Event("user", T0, text="why retry() and not a loop?"),
                           Event("assistant", T0, text="A helper keeps the loop in one place."))
        assert draft(session, ZoneInfo("UTC")).open_threads == [
            "Next (manual steps): Create the app", "Next: Add the secrets"], agent


def test_a_lead_that_only_says_steps_follow_adds_no_words_to_them() -> None:
    for lead in ("Next steps:", "Remaining:", "**Remaining work**", "Still to do:", "What's left:", "## Next Steps",
                 "## Remaining (to be addressed)", "TODOs:"):
        for agent in AGENTS:
            assert [t.split(": ", 1)[0] for t in _closing(agent, f"{lead}\n- Wire the flag\n- Add a test")] in (
                [["Next", "Next"], ["Later", "Later"]]), (lead, agent)


def test_items_marked_done_in_a_list_of_next_steps_are_no_threads() -> None:
    for agent in AGENTS:
        assert _closing(agent, "**Next steps**\n- ✅ Added tests\n- Updated docs ✅\n- ~~Bump the version~~") == []
        assert _closing(agent, "Next steps:\n- [x] Added tests\n- [ ] Deploy to staging") == [
            "Later: Deploy to staging"], agent


def test_a_sub_item_of_a_listed_step_is_its_detail_not_a_thread() -> None:
    for agent in AGENTS:
        assert _closing(agent, "Remaining:\n1. Add retries to the clients\n   - in `client.go`\n   - in `server.go`\n"
                               "2. Write the docs") == ["Next: Add retries to the clients", "Next: Write the docs"]
        # a step that leads sub-steps ("Frontend:") is no step itself: its sub-steps are
        assert _closing(agent, "Remaining:\n- Frontend:\n  - Wire the `--retries` flag") == [
            "Next: Wire the `--retries` flag"], agent
        # a list indented as a whole is no list of sub-items; a sub-item under a tab is one
        assert _closing(agent, "Remaining:\n  - Add retries\n  - Write the docs") == [
            "Next: Add retries", "Next: Write the docs"], agent
        assert _closing(agent, "Remaining:\n- Add retries\n\t- in `client.go`") == ["Next: Add retries"], agent
        # a step over its details: the step alone
        assert _closing(agent, "Remaining:\n1. Add these secrets to the repository:\n   - `APP_ID` - the App ID\n"
                               "2. Tag a release") == ["Next: Add these secrets to the repository",
                                                       "Next: Tag a release"], agent


def test_a_next_line_that_says_nothing_is_left_is_no_thread() -> None:
    for line in ("Next steps: none, everything is merged.", "Remaining: nothing.", "Next: n/a, all merged.",
                 "Follow-ups: none needed."):
        for agent in AGENTS:
            assert _closing(agent, line) == [], (line, agent)


def test_a_listed_step_over_a_code_block_reads_without_its_colon() -> None:
    for agent in AGENTS:
        assert _closing(agent, "Remaining:\n- Run the migration:\n  ```bash\n  make migrate\n  ```\n- Update the "
                               "changelog") == ["Next: Run the migration", "Next: Update the changelog"], agent


def test_a_lead_that_says_nothing_is_left_leads_no_steps() -> None:
    for lead in ("**Nothing remaining**", "No follow-ups needed:", "## No remaining work"):
        for agent in AGENTS:
            assert _closing(agent, f"{lead}\n- Added the retry loop\n- Fixed the flaky test") == [], (lead, agent)


def test_the_first_sentence_under_a_heading_of_work_left_is_a_next_step() -> None:
    for heading in ("## Next", "### Remaining", "## Still to do"):
        for agent in AGENTS:
            assert _closing(agent, f"{heading}\n\nWire the `--retries` flag into the CLI. It reads the config.") == [
                "Next: Wire the `--retries` flag into the CLI."], (heading, agent)
    for agent in AGENTS:  # what may follow, or nothing left: no step owed
        assert _closing(agent, "## Next steps\n\nYou could add a metric for retries later.") == [
            "Later: You could add a metric for retries later."]
        assert _closing(agent, "## Remaining\n\nNothing, the retry is complete.") == []
        assert _closing(agent, "## Remaining risks\n\nThe migration cannot be undone.") == []


def test_a_markdown_heading_named_todo_is_a_lead_not_a_todo_comment() -> None:
    for agent in AGENTS:
        assert _closing(agent, "### TODO (not done)\n- Wire the `--retries` flag") == [
            "Next: Wire the `--retries` flag"], agent
        assert _closing(agent, "```python\n# TODO: drop the retry shim\n```") == ["TODO: drop the retry shim"], agent


# -- checks the closing leaves to the person --------------------------------------------------------------------------
def test_a_test_checklist_the_closing_leaves_to_the_person_is_one_thread() -> None:
    # 7acd37a8 ends on "## 🧪 Test It Now!" / "**Test checklist:**" and five steps to try in the browser; blind label:
    # "The AudioWorklet migration and API updates were never tested in a browser; the user is asked to test ..."
    threads = draft(corpus_session("7acd37a8-2745-4b58-a8a9-46164b22ad9e"), ZoneInfo("UTC")).open_threads
    assert "To test (5 steps): Open browser console to check for any errors" in threads
    for lead in ("**Test checklist:**", "How to test:", "## Test it locally", "To verify:"):
        for agent in AGENTS:
            assert _closing(agent, f"{lead}\n1. Run `widgets serve`\n2. Open the page") == [
                "To test (2 steps): Run `widgets serve`"], (lead, agent)
        # its further steps are the thread's, no thread of their own ("before merging" is no next step here)
        assert _closing(agent, "How to test:\n1. Open the page\n2. Check it still loads before merging") == [
            "To test (2 steps): Open the page"], agent


def test_a_testing_section_reporting_the_checks_run_is_no_thread() -> None:
    # ee6078de closes on "## Testing" / "All tests pass:" with a list of what passed: a report, nothing left
    assert not any(t.startswith("To test") for t in _threads("ee6078de-2c4f-428e-b137-aafce7251a7a"))
    for agent in AGENTS:
        assert _closing(agent, "## Testing\n\n- Unit tests pass\n- Lint is clean") == []
        assert _closing(agent, "Now let me run the tests to verify the fixes:\n- `pytest -q`") == []


def test_a_pr_called_good_to_merge_that_the_session_never_merged_is_an_open_thread() -> None:
    # 0cd9edf7 (fresh2, both readers): `gh pr checkout 68`, tests and lint pass, "PR#68 looks good to merge. ...
    # Ready to merge when you are."; d88bceb6 (dev, both readers): a review's "PR is safe to merge", no merge ran
    checked_out = draft(corpus_session("0cd9edf7-459c-4900-af40-cf2c64dea525"), ZoneInfo("UTC")).open_threads
    assert "Not merged: PR #68, checked out as `gtrrz-victor/add-token-usage-manual-commit` (ready to merge); " \
           "merging is left to the user" in checked_out, checked_out
    reviewed = draft(corpus_session("d88bceb6-bb3a-4ae8-9405-d67d19950a46"), ZoneInfo("UTC")).open_threads
    assert "Not merged: PR #6 (safe to merge); merging is left to the user" in reviewed, reviewed


def test_a_merge_verdict_the_work_moved_past_or_a_merge_carried_out_is_no_thread() -> None:
    # ea0a65af: "The branch is ready to merge." early on, then the review's fixes were edited in: the verdict is stale
    moved_on = draft(corpus_session("ea0a65af-b639-46be-b158-dc1a4c599799"), ZoneInfo("UTC")).open_threads
    assert not any(t.startswith("Not merged:") for t in moved_on), moved_on
    for closing, after in [("PR #12 looks good to merge.", [_bash("gh pr merge 12 --squash")]),
                           ("PR #12 is not ready to merge yet: CI is red.", []),
                           ("Once CI passes, PR #12 is safe to merge.", [])]:
        threads = draft(_session("claude-code", Event("user", T0, text="Review PR #12"), _bash("gh pr view 12"),
                                 Event("assistant", T0, text=closing), *after), ZoneInfo("UTC")).open_threads
        assert not any(t.startswith("Not merged:") for t in threads), (closing, threads)


def test_a_check_handed_to_the_person_that_the_reply_passed_over_is_an_open_thread() -> None:
    # 20b81bf8 (fresh2, both readers): "You can rebuild and test with the Gemini test repo now." -> "can we figure out
    # if there are more types we don't support?"; only unit tests ran after
    threads = draft(corpus_session("20b81bf8-77cd-4205-8ac9-727b573a70e4"), ZoneInfo("UTC")).open_threads
    assert "Not run: rebuild and test with the Gemini test repo (left to the user)" in threads, threads


def test_a_check_the_person_reported_on_took_back_or_ran_is_no_thread() -> None:
    # 4e836284 (labelled nothing open): "Run `./entire status` (or any command) to test it sends events to PostHog."
    # -> "the command string send to posthog only contains the last command ...": the person ran it
    reported = draft(corpus_session("4e836284-4a0a-44a1-acb3-38c68db78007"), ZoneInfo("UTC")).open_threads
    assert not any("(left to the user)" in t for t in reported), reported
    handed = Event("assistant", T0, text="Fixed the parser. You can rebuild and try it on the sample repo now.")
    for reply in ["yes, run it", "it works, thanks", "now add a changelog line"]:
        after = [_bash("make build && ./parse sample")] if reply.startswith("yes") else []
        threads = draft(_session("codex", Event("user", T0, text="Fix the parser"), _edit("parse.py"), handed,
                                 Event("user", T0, text=reply), *after, _edit("CHANGELOG.md"),
                                 Event("assistant", T0, text="Added the line.")), ZoneInfo("UTC")).open_threads
        passed_over = reply == "now add a changelog line"
        assert any("(left to the user)" in t for t in threads) == passed_over, (reply, threads)
# -- a review file left in the work tree ----------------------------------------------------------------------------


def test_a_review_file_a_reviewer_subagent_wrote_into_the_repo_is_an_open_thread() -> None:
    """70c88cff's reviewer subagent answers "The review has been written to `/Users/alex/workspace/cli/review-01.md`"
    and nothing touches the file after (both blind readers: "wrote review-01.md into the repo root ... untracked");
    847ff7d2 runs six review subagents that write no file."""
    assert "Review file left in the repo: `review-01.md`, written by the reviewer subagent" in \
        _threads("70c88cff-cb35-404f-a974-2a08bab4e4bc")
    assert not any(t.startswith("Review file left") for t in _threads("847ff7d2-4a55-44d7-a3f5-a3afd89f1ee1"))


def test_a_review_file_committed_removed_or_outside_the_repo_is_not_left() -> None:
    review = Event("tool", T0, tool=ToolCall("r", "Task", {"description": "Review the branch"}, result=(
        "Verdict: approve.\n\nThe review has been written to `/tmp/widgets/docs/review-01.md`.")))
    asked = Event("user", T0, text="Have the reviewer look at the branch")
    done = Event("assistant", T0, text="The reviewer approved the change.")

    def left(*events: Event) -> list[str]:
        return [t for t in draft(_session("claude-code", asked, review, *events, done), ZoneInfo("UTC")).open_threads
                if t.startswith("Review file left")]

    assert left() == ["Review file left in the repo: `docs/review-01.md`, written by the reviewer subagent"]
    for command in ("rm docs/review-01.md", "git add -A && git commit -m 'review'"):
        assert left(Event("tool", T0, tool=ToolCall("b", "Bash", {"command": command}))) == [], command
    outside = Event("tool", T0, tool=ToolCall("r", "Task", {}, result="The review has been written to `/tmp/r.md`."))
    assert not any(t.startswith("Review file left") for t in draft(
        _session("claude-code", asked, outside, done), ZoneInfo("UTC")).open_threads)


def test_a_check_step_left_unticked_whose_checks_then_passed_is_done() -> None:
    # fresh2 4f8c1176: "Run fmt, lint, and tests" stays in progress, but fmt, lint, unit and integration tests ran
    # and passed after the list's last write
    threads = draft(corpus_session("4f8c1176-7025-4530-a860-c6fc4c63a150"), ZoneInfo("UTC")).open_threads
    assert not [t for t in threads if "Run fmt, lint, and tests" in t]
    # entire 130d7b7e: no check ran after the list: its "Run tests and lint" is still to do
    threads = draft(corpus_session("130d7b7e-5801-4345-9bd6-f32fd9b8429b"), ZoneInfo("UTC")).open_threads
    assert "To do: Run tests and lint" in threads


def test_a_left_finding_keeps_the_reviews_verdict() -> None:
    """09a2c705's review called item 4 "an acceptable tradeoff, but worth a comment", 76d407bd's nit "(Low)" "Not
    blocking": each thread says so, not as a fix required."""
    threads = _threads("09a2c705-b334-4632-b1bf-b68e510ca0b5")
    assert any(t.startswith("Not fixed (review): `resolveTranscriptPathFromMetadata`")
               and t.endswith("(review: acceptable tradeoff, worth a comment)") for t in threads)
    assert any("`resumeSingleSession`" in t and t.endswith("(review: minor; not blocking)") for t in threads)
    # 76d407bd's verdict: test_review_findings_the_user_did_not_take_up_and_no_edit_touched_are_threads


def test_a_finding_the_review_only_lists_gets_no_verdict() -> None:
    """70fc6d83's review weighs none of its findings in words: none is given one."""
    threads = _threads("70fc6d83-147d-4fdf-b015-bd67eeb11883")
    assert [t for t in threads if t.startswith("Not fixed (review):")]
    assert not any("(review:" in t for t in threads)
