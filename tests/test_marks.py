"""Lines cut or quoted whole (core/extract/marks.py): never ending inside a bracket, code span or quotation they
open, a check command shown so that it can be run again, and a request quoted from the user keeping its negation,
its `~` and no pasted-image residue (the reviewers' cut and flipped lines, step 18 of bench/RESULTS.md)."""

from __future__ import annotations

from zoneinfo import ZoneInfo

from eywa.core.extract import deterministic, marks, open_threads, plan_steps
from eywa.core.extract.deterministic import draft
from eywa.core.session import Event, Session

from .test_extractor import corpus_session

LONG = 200_000


def _happened(session_id: str) -> list[str]:
    return draft(corpus_session(session_id), ZoneInfo("UTC")).what_happened


def test_a_request_quoted_keeps_the_negation_its_clause_turns_it_around_with() -> None:
    # "I don't think we need to loop through all items, ...": the request is not to loop
    happened = _happened("0d3a8e6f-290f-4105-a327-a2496e5e2a83")
    assert "Asked: I don't think we need to loop through all items, the group names should match the filters?" \
        in happened
    assert not any(line.startswith("Asked: Loop through") for line in happened)


def test_a_negation_in_a_clause_before_the_request_leaves_its_words() -> None:
    # "oh, I didn't find those links helpful, can you please replace them ...": the clause before is the reason
    session = corpus_session("37f83ec9-f2ea-42a9-925e-0d5c105cb6e8")
    prompt = next(e.text for e in session.events if e.kind == "user" and "didn't find those" in e.text)
    assert deterministic._prompt_headline(prompt).startswith("Replace them with a single link to the combined")


def test_a_pasted_image_and_a_line_continuation_leave_no_residue_nor_an_open_bracket() -> None:
    # "it's an inline style (and there's no data-groupid:\\\n\\\n[Image #1]": the aside its writer never closed left out
    happened = _happened("0d3a8e6f-290f-4105-a327-a2496e5e2a83")
    assert "Asked: I think the library is setting it, it's an inline style" in happened
    assert not any("[Image #" in line or "\\ " in line for line in happened)


def test_a_home_path_quoted_keeps_its_tilde() -> None:
    assert "Asked: Adjust this to return .bash_profile if ~/.bash_profile exists, otherwise return .bashrc" in \
        _happened("28596a79-6247-4bc2-a031-f5848b31e039")


def test_a_headline_cut_inside_a_bracket_closes_it_at_a_clause_end() -> None:
    # '... "sequence operations" (rebase, cherry-pick, revert) at the start of ...': cut at a comma, closed
    handoff = draft(corpus_session("5dd7775c-3161-4ad5-bf25-eb59a6ffa8e6"), ZoneInfo("UTC"))
    assert handoff.headline == 'Add detection for git "sequence operations" (rebase, cherry-pick)'


def test_a_check_command_is_shown_whole_with_its_test_filter() -> None:
    assert "Checks: `mise run test:integration -- -run TestSubagentCheckpoints`, `mise run lint` passed after the " \
           "last edit" in _happened("87a7858d-3f94-4c65-a2d5-307e9337b041")
    assert any('`mise run test:integration -- -run "TestAgentHookInstallation|TestSetupGeminiHooks"`' in line
               for line in _happened("9f26971d-da0a-46db-b911-e156aad9548e"))


def test_a_long_command_is_cut_between_its_arguments_a_quoted_one_whole() -> None:
    command = 'go test ./cmd/entire/cli/checkpoint -run "TestReadCommitted_Backwards|TestReadCommitted_Missing" -v'
    assert marks.command(command, 60) == "go test ./cmd/entire/cli/checkpoint -run …"
    assert marks.command(command, 98) == command[:-3] + " …"
    assert marks.command(command) == command


def test_a_mark_left_open_is_closed_a_quotation_left_out() -> None:
    assert marks.balanced("saying `session not found: 2026") == "saying `session not found: 2026`"
    assert marks.balanced('use of `os.Getwd` forbidden because "os.Getwd() breaks') == "use of `os.Getwd` forbidden"
    assert marks.balanced("a style (and there's no groupid:", cut=False) == "a style (and there's no groupid:)"
    assert marks.balanced("it is an inline style (and there's no", cut=False) == "it is an inline style"
    assert marks.balanced("down from 18) since it uses (a) and [b]") == "down from 18) since it uses (a) and [b]"


def test_marks_are_read_in_linear_time_on_a_long_line() -> None:
    # a quotation closed pops what it opened: a bracket left open before each quote adds to what is kept
    assert len(marks.unclosed('("x"' * (LONG // 4))) == LONG // 4
    assert marks.unclosed("(`" + "x" * LONG) == [0, 1]
    assert marks.command("go " + "x" * LONG, 100).endswith(" …")
    assert len(marks.words_cut("word " * LONG, 120)) <= 121


def test_a_prompt_quoted_anywhere_is_cleaned_as_the_headline_cleans_it() -> None:
    # an unanswered last prompt, an interrupted one and a direction quote the user as "Asked: ..." does: no pasted
    # image's marker, a home folder's path from `~/` (marks.typed, one cleaner); a URL stays (only a headline drops it)
    asked = "[Image #1] fix the parser in /Users/dain/work/eywa/parse.py, see https://example.com/issue/7"
    shown = "fix the parser in ~/work/eywa/parse.py, see https://example.com/issue/7"
    assert marks.typed(asked).strip() == shown
    session = Session(session_id="s", agent="claude-code", cwd="/tmp/w",
                      events=[Event("user", None, "hello there, a first request"), Event("assistant", None, "Done."),
                              Event("user", None, asked)])
    assert f"Unanswered request: {shown}" in [thread.text for thread in open_threads.open_threads(session)[0]]
    stopped = Session(session_id="s", agent="claude-code", cwd="/tmp/w",
                      events=[Event("user", None, asked), Event("interrupt", None)])
    assert f"Interrupted while working on: {shown}" in [t.text for t in open_threads.open_threads(stopped)[0]]


def test_a_request_for_tests_left_is_quoted_as_the_user_typed_it_without_the_image_marker() -> None:
    session = Session(session_id="s", agent="claude-code", cwd="/work/widgets", events=[
        Event("user", None, "[Image #1] add test that checks the settings file under /Users/alex/widgets is read")])
    assert plan_steps.tests_asked_left(session) == "add test that checks the settings file under ~/widgets is read"


def test_a_lead_in_whose_clause_only_its_list_ended_is_said_up_to_its_last_whole_clause() -> None:
    # 9ff9c26d: "I've created a comprehensive plan at `plans/posthog-telemetry-integration.md` that incorporates:" and
    # its list of five items
    happened = _happened("9ff9c26d-319d-4a47-843a-3d60f73295c9")
    assert "Created a comprehensive plan at `plans/posthog-telemetry-integration.md`" in happened
    assert not any(line.endswith("that incorporates") for line in happened)
    # too few words left before the opener (9e953218's "Works in all modern browsers that support:"), a "that" after a
    # preposition (it points, it opens no clause): the line stays
    for line in ("Works in all modern browsers that support", "Updated the retry loop and the tests in that file"):
        assert marks.stub_dropped(line, 6) == line
    assert marks.stub_dropped("which includes", 0) == "which includes"
