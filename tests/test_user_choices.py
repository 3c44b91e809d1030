"""Decisions whose words sit in the user's text: a pasted review comment's fix carried out, an offer declined, an
option of the agent's list picked by its number, a correction of the work in front, an option picked when the agent
asked with AskUserQuestion (core/extract/user_choices.py,
core/extract/directions.py), each on the real session it came from and on one it must not fire on."""

from __future__ import annotations

import random

from eywa.core.extract.directions import directions
from eywa.core.extract.insights import insights
from eywa.core.extract.user_choices import answered_questions, declined_offers, refusals, review_fixes
from eywa.core.redaction.scrubber import default_redactor
from eywa.core.session import Event, Session, ToolCall

from .secrets_corpus import body
from .test_extractor import corpus_session


def _lines(session_id: str) -> list[str]:
    """The handoff's insight lines without their topic."""
    return [line.split("** -- ", 1)[-1] for line in insights(corpus_session(session_id))]


def _session(prompt: str, offer: str = "Done.", edit: bool = True) -> Session:
    """A session whose second prompt is `prompt`, after an agent message `offer`, an edit after it or not."""
    events = [Event("user", None, text="Add a retry limit to the importer"), Event("assistant", None, text=offer),
              Event("user", None, text=prompt)]
    if edit:
        events.append(Event("tool", None, tool=ToolCall("e", "Edit", {"file_path": "/r/a.py", "new_string": "b"})))
    return Session("s", cwd="/r", events=events)


def test_the_fix_a_pasted_review_comment_suggests_carried_out_is_a_choice() -> None:
    # f744aef5: "Please either (a) validate branchName as a safe refname (...) before constructing the refspec, or (b)
    # update the suppression rationale ...": the agent took up (a) (its label: "Validated the user-supplied branch
    # name with git check-ref-format before building the refspec, rather than only rewording the gosec suppression")
    fixes = [text for _, text in review_fixes(corpus_session("f744aef5-5139-4c21-91e5-3f44ce902105"))]
    assert fixes == ["validate branchName as a safe refname (e.g., git check-ref-format --branch or equivalent) before "
                     "constructing the refspec",
                     "using context.WithTimeout (similar to strategy/push_common.go) so the command is guaranteed to "
                     "terminate and returns a clear timeout error"]
    # its last comment ("FetchMetadataBranch runs git fetch ... Consider using context.WithTimeout ...") no edit
    # followed: no choice
    assert ("Per the review: validate branchName as a safe refname (e.g., git check-ref-format --branch or equivalent) "
            "before constructing the refspec.") in _lines("f744aef5-5139-4c21-91e5-3f44ce902105")
    # cc432c40: "To reduce the risk of accidentally exposing the PostHog key ..., consider removing these fields ..."
    assert ("Per the review: removing these fields from the payload and having SendEvent read "
            "PostHogAPIKey/PostHogEndpoint directly from the package-level variables.") in _lines(
        "cc432c40-914a-4c1a-a972-0103199a736a")


def test_a_review_comment_asking_for_tests_or_a_short_prompt_is_no_review_fix() -> None:
    # f736da47's comments ask for tests ("Consider adding unit tests to verify the validation behavior ...")
    assert review_fixes(corpus_session("f736da47-b2ca-4f86-bb32-a1bbe582e464")) == []
    assert review_fixes(_session("consider using a set here")) == []
    comment = ("The importer retries forever when the server answers 503, which can hang the nightly job for hours. "
               "Consider using a bounded retry with backoff so that the job fails within a known time.")
    assert [text for _, text in review_fixes(_session(comment))] == [
        "using a bounded retry with backoff so that the job fails within a known time"]
    assert review_fixes(_session(comment, edit=False)) == []
    # the test words are plan_steps.about_tests' (one list): "coverage" alone asks for tests too
    coverage = comment.replace("using a bounded retry with backoff", "raising the coverage of the retry path")
    assert review_fixes(_session(coverage)) == []


def test_an_offer_the_user_declined_is_a_step_not_taken_by_their_choice() -> None:
    # 03a1382e: "Want me to also set `gc.auto 0` on your repo now?" "no don't set it, let's see if it keeps happening"
    # (its label: "Did not disable auto-GC (gc.auto 0); the user preferred to watch whether the problem recurs")
    assert ("Not done, at the user's word: set `gc.auto 0` on your repo now (don't set it, let's see if it keeps "
            "happening).") in _lines("03a1382e-ecd5-42c4-b3d4-5c659e165904")


def test_an_offer_accepted_or_a_no_to_no_offer_is_no_declined_offer() -> None:
    # 0f6074fc: "Want me to update the code to use `io.Discard` instead?" "yes please"
    assert declined_offers(corpus_session("0f6074fc-a0f5-4d56-8de0-f4a592ddcf3b")) == []
    assert declined_offers(_session("no, the config should live in settings.toml", offer="Done.")) == []
    assert declined_offers(_session("no need to deprecate it, remove it", offer="Should I deprecate `load`?")) == []
    assert [text for _, text in declined_offers(_session("nope, leave it as it is", offer="Should I deprecate "
                                                         "`load`?"))] == [
        "Not done, at the user's word: deprecate `load` (leave it as it is)"]


def test_an_option_of_the_agents_list_picked_by_its_number_is_the_users_choice() -> None:
    # 9667a07f: "1. **Quick fix** - Rename `contentSb73` to `sb` in `common.go:408` (30 seconds) 2. **Merge as-is**
    # ... Would you like me to fix the variable naming before you merge?" "1"
    assert "At the user's request: Quick fix - Rename `contentSb73` to `sb` in `common.go:408` (30 seconds)." in \
        _lines("9667a07f-c677-4f9d-9b21-da366e5add6a")
    # 847ff7d2: "3" names the item of the message's last list (its options), not of a list of findings above it
    assert "Add structured logging - For audit trail / debugging" in [
        text for _, text in directions(corpus_session("847ff7d2-4a55-44d7-a3f5-a3afd89f1ee1"))]


def test_a_number_with_no_such_item_or_no_edit_after_it_is_no_pick() -> None:
    options = "Two ways:\n1. **Retry** - up to three times\n2. **Fail fast** - stop at once\n\nWhich one?"
    assert [text for _, text in directions(_session("2", offer=options))] == ["Fail fast - stop at once"]
    assert directions(_session("3", offer=options)) == []
    assert directions(_session("the first one", offer=options, edit=False)) == []
    assert directions(_session("2", offer="Done, the tests pass.")) == []


def test_a_correction_of_the_work_in_front_is_a_choice_and_its_mention_line_is_left_out() -> None:
    # 28596a79: "Let's adjust this to return .bash_profile if ~/.bash_profile exists, otherwise return .bashrc.\n
    # @/Users/paul/src/entireio/cli/cmd/entire/cli/setup.go:694-698"
    assert ("At the user's request: Let's adjust this to return .bash_profile if ~/.bash_profile exists, otherwise "
            "return .bashrc.") in _lines("28596a79-6247-4bc2-a031-f5848b31e039")
    # 94e68429: "yeah let's make both a constant" names nothing a reader sees
    assert directions(corpus_session("94e68429-3fb7-4f6c-9915-65ada4c33908")) == []


def test_a_change_asked_after_its_reason_keeps_the_reason() -> None:
    # 37f83ec9: "oh, I didn't find those cross-session navigation links helpful, can you please replace them with a
    # single link to the combined transcript instead?"
    assert ("At the user's request: I didn't find those cross-session navigation links helpful, can you please replace "
            "them with a single link to the combined transcript instead.") in _lines(
        "37f83ec9-f2ea-42a9-925e-0d5c105cb6e8")
    assert directions(_session("the test still fails, can you fix it?")) == []
    assert directions(_session("I'm lost, can you explain why the hook runs twice instead?")) == []


def test_a_change_asked_without_its_question_mark_or_before_a_pasted_example_is_a_choice() -> None:
    # 170cebcc: "can you make the agent a free form field and just give "Claude Code, Gemini" as example" (no "?"),
    # then the edit; its readers: "Make Agent a free-text input ... instead of a dropdown, at the user's request."
    assert ("At the user's request: make the agent a free form field and just give \"Claude Code, Gemini\" as "
            "example.") in _lines("170cebcc-4cb9-42aa-a322-6e590fc9db0d")
    # cb2e607c: "Can you please change the default command behaviour (without pr_input) to look up the PR for the
    # current branch? You can do something like:\n\n➜ ... gh pr view --json url\n{...}" and a man page pasted
    assert ("At the user's request: change the default command behaviour (without pr_input) to look up the PR for the "
            "current branch.") in _lines("cb2e607c-c758-415a-8b45-c49e4631906a")


def test_a_question_asking_no_change_is_no_choice_with_or_without_its_mark_or_a_paste() -> None:
    # 0a76fbfe: "does this mean we can remove our checkout shims?\n..." asks, no change asked of the agent
    assert directions(corpus_session("0a76fbfe-d767-433e-b4b1-a39e044f21e8")) == []
    assert directions(_session("can you check the importer handles 503 too")) == []
    assert directions(_session("can you explain why the retry loop never stops?\n\nTraceback (most recent call last):\n"
                               "  File \"importer.py\", line 3")) == []


def test_of_the_options_a_review_comment_offers_the_one_the_agents_answer_takes_up_is_the_fix() -> None:
    comment = ("The branch name comes straight from the user and is put into the refspec, so a name with a colon "
               "can push to another ref. Please either (a) Validate the branch name before building the refspec, "
               "or (b) Quote the refspec when the command is built.")
    events = [Event("user", None, text="Add a push command"), Event("assistant", None, text="Done."),
              Event("user", None, text=comment),
              Event("assistant", None, text="I'll quote the refspec where the command is built."),
              Event("tool", None, tool=ToolCall("e", "Edit", {"file_path": "/r/push.go", "new_string": "b"}))]
    # the second option, its plain first word in lower case: the line goes on from "Per the review:"
    assert [text for _, text in review_fixes(Session("s", cwd="/r", events=events))] == [
        "quote the refspec when the command is built"]


def test_an_option_picked_in_askuserquestion_is_a_choice_with_its_description_as_the_reason() -> None:
    # d19ec7f9: the agent asked where the generated diagram goes; the user picked "docs/generated/"
    assert ("Where should the generated Mermaid diagram go? The user chose docs/generated/: clear that contents are "
            "machine-generated artifacts.") in _lines("d19ec7f9-dfaf-4c65-a9ad-ab56240f23d8")


def test_the_next_step_picked_or_a_question_never_answered_is_no_choice() -> None:
    # 9ff9c26d: "Plan ready at ... What would you like to do next?" "Run /plan_review": a step, not how the work is done
    assert answered_questions(corpus_session("9ff9c26d-319d-4a47-843a-3d60f73295c9")) == []
    # cb2e607c: the tool was not available, no answer came
    assert answered_questions(corpus_session("cb2e607c-c758-415a-8b45-c49e4631906a")) == []


def test_a_prompt_saying_what_the_work_should_be_carried_out_is_the_users_choice() -> None:
    # ccc58457, 3ae3ab59, a7da6a22: "we should ...", "the test should ...", "first commit ..., then proceed ..."
    assert [text for _, text in directions(corpus_session("ccc58457-00a5-4a2f-82a9-175e4473c60b"))] == [
        "we should update \"Created orphan branch 'entire/sessions' for session metadata\" to also have a check mark "
        "in front"]
    assert [text for _, text in directions(corpus_session("3ae3ab59-52bc-413d-ad30-02b165c91785"))] == [
        "the test should check the content of CLIVersion is the same as used while compiling the binary"]
    assert ("At the user's request: first commit the changes related to the previous task, adding support for tar, "
            "then proceed with this new plan (reporting archive errors).") in _lines(
        "a7da6a22-facc-4fcd-8bab-f83c87862004")
    # 569aed7b: "I'd like to change this so it's more interactive. If there is a settings.json already we ask ...
    # instead": the sentence that corrects the work is said, not the wish before it
    assert [text for _, text in directions(corpus_session("569aed7b-6ead-4790-a3fe-c7028466112c"))][-1] == (
        "If there is a settings.json already we ask if it should be updated, or if local settings should be used "
        "instead")
    # a wish no edit carried out, or asked as a question, is no choice
    assert directions(_session("we should retry on 503 as well", edit=False)) == []
    assert directions(_session("should we retry on 503 as well?")) == []


def test_a_tool_call_refused_with_what_to_do_instead_is_the_users_choice() -> None:
    # 2956cee6: `git merge origin/main` refused, "merge from origin alex/ent-221-..."
    assert refusals(corpus_session("2956cee6-6153-4ba6-ba24-3b7f3257549c")) == [
        (3, "At the user's word, instead of `git merge origin/main`: merge from origin "
            "alex/ent-221-better-state-tracking-for-sessions")]
    # 70c88cff: the refusal ("let's cut a branch first") and a later direction ("let's do the hint if it's small")
    # share only the words that ascribe them to the user: both stay
    lines = _lines("70c88cff-cb35-404f-a974-2a08bab4e4bc")
    assert "At the user's word, instead of the edit to `explain.go`: let's cut a branch first." in lines
    assert "At the user's request: let's do the hint if it's small." in lines


def test_a_refusal_taking_over_asking_or_stating_a_fact_is_no_choice() -> None:
    # 34b1e2a4: "i'll take it from here", "really? Can't we ...?"; 0a76fbfe: "main is clean"
    assert refusals(corpus_session("34b1e2a4-8cec-4bb9-94a0-ec9e9c639c8e")) == []
    assert refusals(corpus_session("0a76fbfe-d767-433e-b4b1-a39e044f21e8")) == []
    refused = ToolCall("r", "Bash", {"command": "git stash"}, is_error=True, rejected=True,
                       error="The user doesn't want to proceed with this tool use. The tool use was rejected. To tell "
                             "you how to proceed, the user said:\ndo not stash anything, read the files you need")
    read = Event("tool", None, tool=ToolCall("g", "Read", {"file_path": "/r/a.go"}))
    events = [Event("user", None, text="Fix the hook"), Event("tool", None, tool=refused)]
    assert refusals(Session("s", cwd="/r", events=[*events, read])) == [
        (0, "At the user's word, instead of `git stash`: do not stash anything, read the files you need")]
    # the session did not go on from it: a prompt came first
    assert refusals(Session("s", cwd="/r", events=[*events, Event("user", None, text="stop"), read])) == []


def test_a_refusal_naming_a_value_the_redone_edit_took_is_the_line_it_changed() -> None:
    # cf564e14: the LICENSE's Write refused with "Entire Inc.", redone with it: the line before and after, not the bare
    # value after the headline's own words ("At the user's word, instead of the edit to `LICENSE`: Entire Inc.")
    assert _lines("cf564e14-9b07-42ad-8d9a-4faa1b79a0ed") == [
        'At the user\'s word, `LICENSE` has "Copyright (c) 2026 Entire Inc." instead of "Copyright (c) 2026 Entire".']
    # 70c88cff: "let's cut a branch first" is no value of the edit redone: the refusal as it was
    assert "At the user's word, instead of the edit to `explain.go`: let's cut a branch first." in _lines(
        "70c88cff-cb35-404f-a974-2a08bab4e4bc")


def test_a_direction_naming_its_object_by_a_redaction_mark_is_no_line() -> None:
    # 768de5d6: "In func [REDACTED], i'd like us to make a literal structure ...": what it changes is hidden
    found = _lines("768de5d6-9fad-475b-8a4f-dfa7ddc01bb0")
    assert not any("[REDACTED]," in line for line in found)
    assert ("At the user's request: for every test in redact/redact_test.go i'd like to see literal expectations "
            "(either byte slices or strings) instead of strings.Contains checks.") in found
    # a value redacted (an assignment): the direction still reads
    assert directions(_session("let's use token=[REDACTED] in the importer instead")) == [
        (1, "let's use token=[REDACTED] in the importer instead")]


def test_a_direction_naming_its_object_by_the_scrubbers_own_mark_is_no_line_either() -> None:
    # directions' mark pattern is written out (a bare `[REDACTED]` comes from transcripts redacted before Eywa): it
    # must read the scrubber's `[REDACTED:kind]` as well, whatever that becomes
    typed = "In func {}, i'd like us to make a literal structure instead of a map"
    hidden = default_redactor().redact(typed.format("ghp_" + body(random.Random(1), 36)))  # a token as the name
    assert hidden == typed.format(hidden.split()[2].rstrip(",")) and "REDACTED" in hidden
    assert directions(_session(hidden)) == []
    assert directions(_session(typed.format("parseArgs"))) == [(1, typed.format("parseArgs"))]
