"""Checks a closing says were not run, or hands to the person, in the idioms Codex CLI and Gemini CLI close a report
with (core/extract/checks_said.py), and the step they would take next ("Next, I would ...", "Next up: ...") of
core/extract/said_left.py: each an open thread of one clause, on a Codex and on a Gemini session; the status is
partial for a check said not run only when no check of its kind ran after the last edit. Then the other closing idioms
the blind sweeps of bench/closings/ showed: steps said left, questions without their mark, caveats listed under a
label, and near phrasings that say nothing is left. (These idioms are not in the Claude Code corpus: the sessions are
built as the real CLIs' are read.)"""

from __future__ import annotations

from zoneinfo import ZoneInfo

import pytest

from eywa.core.extract.deterministic import draft
from eywa.core.handoffs.model import Handoff
from eywa.core.session import Event, ToolCall
from eywa.core.sources.codex import build_codex_session
from eywa.core.sources.gemini import build_gemini_session

from .fact_transcripts import fixture_session
from .test_said_left import T0, _edit, _session

AGENTS = ("codex", "gemini")


def _passed(command: str) -> Event:
    return Event("tool", T0, tool=ToolCall("b1", "Bash", {"command": command}, output="5 passed in 0.12s"))


def _closing(agent: str, text: str, *after_edit: Event) -> Handoff:
    return draft(_session(agent, Event("user", T0, text="Add a retry helper to the client"), _edit("retry.py"),
                          *after_edit, Event("assistant", T0, text=text)), ZoneInfo("UTC"))


NOT_RUN_SAID = [
    ("Added retry() to retry.py.\n\nTests not run.", "Not run: tests"),
    ("Added retry() to retry.py.\n\nTests were not run.", "Not run: tests"),
    ("Added retry() to retry.py.\n\nTesting: not run.", "Not run: tests"),
    ("Added retry() to retry.py.\n\n**Tests:** not run (pytest is not installed here).",
     "Not run: tests (pytest is not installed here)"),
    ("**Summary**\n- Added retry() to retry.py.\n\n**Testing**\n- Not run (not requested)",
     "Not run: tests (not requested)"),
    ("**Summary**\n- Added retry() to retry.py.\n\n**Testing**\n- ⚠️ Not run (no test runner in the sandbox)",
     "Not run: tests (no test runner in the sandbox)"),
    ("Added retry() to retry.py.\n\nTesting\n- Not run (not requested)", "Not run: tests (not requested)"),
    ("Added retry() to retry.py.\n\n### Testing\n- Not run (not requested)", "Not run: tests (not requested)"),
    ("**Summary**\n- Added retry() to retry.py.\n\n**Verification**\n- Not run (no sandbox)",
     "Not run: verification (no sandbox)"),
    ("Added retry() to retry.py. I did not run the tests.", "Not run: the tests"),
    ("Added retry() to retry.py. I didn't run tests.", "Not run: tests"),
    ("Added retry() to retry.py.\n\nNote: I didn't run the test suite.", "Not run: the test suite"),
]


@pytest.mark.parametrize(("agent", "text", "thread"), [(a, t, w) for a in AGENTS for t, w in NOT_RUN_SAID])
def test_a_check_the_closing_says_was_not_run_is_a_not_run_thread_and_the_work_partial(agent: str, text: str,
                                                                                      thread: str) -> None:
    handoff = _closing(agent, text)
    assert handoff.open_threads == [thread] and handoff.status == "partial"


@pytest.mark.parametrize("agent", AGENTS)
def test_a_check_said_not_run_after_a_run_of_its_kind_passed_after_the_last_edit_is_not_contradicted(
        agent: str) -> None:
    # `pytest` passed after the last edit: "Tests not run." says nothing the record holds, the work is done
    handoff = _closing(agent, "Added retry() to retry.py.\n\nTests not run.", _passed("pytest"))
    assert handoff.open_threads == [] and handoff.status == "done"
    # tests it names apart ("integration tests") are others: a note, the work still done
    handoff = _closing(agent, "Added retry().\n\nIntegration tests were not run (they need Docker).",
                       _passed("pytest tests/test_retry.py"))
    assert handoff.open_threads == ["Not run: integration tests (they need Docker)"] and handoff.status == "done"
    # a check of another kind (lint) leaves the tests not run
    handoff = _closing(agent, "Added retry() to retry.py.\n\nTests not run.", _passed("ruff check ."))
    assert handoff.open_threads == ["Not run: tests"] and handoff.status == "partial"
    # "Verification" speaks of any kind: the tests that ran stand for it
    assert _closing(agent, "Added retry().\n\nVerification: not run.", _passed("ruff check .")).status == "done"


HANDED = [
    ("Added retry() to retry.py. To verify, run `pytest tests/test_retry.py`.",
     "Not run: `pytest tests/test_retry.py` to verify (left to the user)"),
    ("Added retry() to retry.py. Run `pytest` to confirm everything passes.",
     "Not run: `pytest` to confirm everything passes (left to the user)"),
]


@pytest.mark.parametrize(("agent", "text", "thread"), [(a, t, w) for a in AGENTS for t, w in HANDED])
def test_a_check_the_closing_hands_to_the_person_is_a_note_unless_the_session_ran_it(agent: str, text: str,
                                                                                     thread: str) -> None:
    handoff = _closing(agent, text)
    assert handoff.open_threads == [thread] and handoff.status == "done"
    assert _closing(agent, text, _passed("pytest")).open_threads == []  # the session ran it after its last edit
    assert _closing(agent, text, _passed("ruff check .")).open_threads == [thread]  # another kind ran


NEXT_SAID = [
    ("Added retry() to retry.py.\n\nNext up: wire it into the upload client.",
     "Next: wire it into the upload client."),
    ("Added retry() to retry.py. Next, I would add backoff(attempt) to the retry loop.",
     "Next: add backoff(attempt) to the retry loop."),
    ("Added retry() to retry.py. Next I'd suggest adding backoff(attempt) to the retry loop.",
     "Next: adding backoff(attempt) to the retry loop."),
    ("Added retry() to retry.py. The next step is to add backoff(attempt) to the retry loop.",
     "Next: add backoff(attempt) to the retry loop."),
    ("Added retry() to retry.py.\n\nThe remaining step would be wiring it into the upload client.",
     "Next: wiring it into the upload client."),
    ("Added retry() to retry.py.\n\n*Next:* add backoff(attempt) to the retry loop.",  # in italics, as in bold
     "Next: add backoff(attempt) to the retry loop."),
]


@pytest.mark.parametrize(("agent", "text", "thread"), [(a, t, w) for a in AGENTS for t, w in NEXT_SAID])
def test_the_step_a_closing_would_take_next_is_a_next_thread(agent: str, text: str, thread: str) -> None:
    handoff = _closing(agent, text)
    assert handoff.open_threads == [thread] and handoff.status == "partial"


NOTHING_LEFT = [
    "Added retry() to retry.py. Tests: all 42 passed.",
    "Added retry() to retry.py.\n\nNot run: none",
    "Added retry() to retry.py. I ran the tests and they pass.",
    "**Summary**\n- Added retry() to retry.py.\n\n**Testing**\n- ✅ `pytest`\n- ✅ `ruff check .`",
    "**Summary**\n- Added retry() to retry.py.\n\n**Testing**\n- Not run: none",
    "Added retry() to retry.py. The tests that were not run before now pass.",
    "Added retry() to retry.py. Next, I added backoff(attempt) to the retry loop.",
    "Added retry() to retry.py. The last step is done: the loop retries three times.",
    "Added retry() to retry.py. The final step was wiring it into the upload client.",
    "Added retry() to retry.py. There is nothing left to do.",
    "Added retry() to retry.py. No remaining issues.",
    "Added retry() to retry.py. Nothing is pending.",
    "Added retry() to retry.py. No tasks are pending.",
    "Added retry() to retry.py. It's not needed yet.",
    "Added retry() to retry.py. All tests pass and nothing else needs to be done.",
    "Added retry() to retry.py. I couldn't find any other callers that need updating.",
    "Added retry() to retry.py. I haven't changed any other files.",
    "Added retry() to retry.py. Tests pass. No follow-up needed.",
    "Added retry() to retry.py. I confirmed that the defaults match the old loop.",
    "Added retry() to retry.py. It would need no changes to support async callers.",
    "Added retry() to retry.py. Happy to help with anything else!",
    "Added retry() to retry.py. Happy to help if anything else comes up.",
    "Added retry() to retry.py. No further changes are required.",
    "Added retry() to retry.py. Some callers signal \"not ready yet\" by returning None.",
    "Added retry() to retry.py. Let me know if you need anything else.",
    "Added retry() to retry.py.\n\n**Caveats**\n- None.",
    "Added retry() to retry.py.\n\nKnown limitations: none.",
    "Added retry() to retry.py. Next, I ran the tests.",
    "**Summary**\n- Not run (the old path is gone)\n\nAdded retry() to retry.py.",  # no Testing section
    "Added retry() to retry.py. I have resolved the `TODO: handle empty CSV` in `etl/ingest.py`.",
    "Added retry() to retry.py. Removed the `# TODO: skip holidays` comment.",
    "Added retry() to retry.py. Is there anything else you would like me to adjust in the pipeline?",
    "Added retry() to retry.py. The CLI still uses the old flag names for backward compatibility.",
    "Added retry() to retry.py. The PR needs no review from anyone else: the owners approved it.",
    "Added retry() to retry.py. I have resolved the issue where the client could not be retried after a timeout.",
    "Added retry() to retry.py. The one `// TODO: recycle` comment that pointed at this is removed.",
    "Added retry() to retry.py. The remaining callers already use it, so no one needs to change anything.",
    "Added retry() to retry.py. Please let me know if anything looks off.",
    "Added retry() to retry.py.\n\n## Limitations\nNone.",
    "Added retry() to retry.py. This finishes the follow-up from last week's pagination PR.",
    "Added retry() to retry.py. Last session I couldn't get it to start — that's resolved now.",
    "Added retry() to retry.py. Responses could arrive after later ones and overwrite them.",
    "Added retry() to retry.py. The old client is not written to any more.",
    "Added retry() to retry.py. It still works on Python 3.8, though.",
    "Added retry() to retry.py. I left the existing tests as is; they still pass.",
    "Added retry() to retry.py. The cache is not updated when a request fails, as before.",
    "Added retry() to retry.py. The function still has the same signature, so callers do not change.",
]


CAVEATS_LISTED = [
    ("Added retry() to retry.py.\n\nLimitations:\n- No backoff between attempts yet.\n- Only OSError is retried.",
     ["Caveat: No backoff between attempts yet.", "Caveat: Only OSError is retried."]),
    ("Added retry() to retry.py.\n\n### Limitations\n- The loop does not back off between attempts.",
     ["Caveat: The loop does not back off between attempts."]),
    ("Added retry() to retry.py.\n\nKnown issues:\n- The loop does not back off between attempts.",
     ["Caveat: The loop does not back off between attempts."]),
]


@pytest.mark.parametrize(("agent", "text", "threads"), [(a, t, w) for a in AGENTS for t, w in CAVEATS_LISTED])
def test_each_item_listed_under_a_caveat_label_alone_is_a_caveat(agent: str, text: str, threads: list[str]) -> None:
    handoff = _closing(agent, text)
    assert handoff.open_threads == threads and handoff.status == "done"


NOTE_SAID = [
    ("Added retry() to retry.py. Only OSError is retried; that'd need a wider exception list for HTTP errors.",
     "Later: Only OSError is retried; that'd need a wider exception list for HTTP errors."),
    ("Added retry() to retry.py. The old `with_retries()` helper should be removed once its two callers move over.",
     "Later: The old `with_retries()` helper should be removed once its two callers move over."),
    ("Added retry() to retry.py. Jitter is left alone for now.", "Later: Jitter is left alone for now."),
    ("Added retry() to retry.py. Next, you can add backoff(attempt) to the retry loop.",
     "Next: you can add backoff(attempt) to the retry loop."),  # the person's step: a note, the lead said once
    ("Added retry() to retry.py.\n\nSuggested next step: add backoff(attempt) to the retry loop.",
     "Later: add backoff(attempt) to the retry loop."),
    ("Added retry() to retry.py. Next time, run the tests before you commit.",
     "Later: Next time, run the tests before you commit."),
]


@pytest.mark.parametrize(("agent", "text", "thread"), [(a, t, w) for a in AGENTS for t, w in NOTE_SAID])
def test_a_step_that_may_follow_or_is_the_persons_is_a_note(agent: str, text: str, thread: str) -> None:
    handoff = _closing(agent, text)
    assert handoff.open_threads == [thread] and handoff.status == "done"


QUESTIONS_UNMARKED = [
    ("Let me know which style you prefer and I'll adjust.",
     "Question: Let me know which style you prefer and I'll adjust."),
    ("Please confirm whether three attempts suit the uploader.",
     "Question: Please confirm whether three attempts suit the uploader."),
    ("\n\n**Question:** should a timeout count as a failed attempt?",
     "Question: should a timeout count as a failed attempt?"),
]


@pytest.mark.parametrize(("agent", "said", "thread"), [(a, s, w) for a in AGENTS for s, w in QUESTIONS_UNMARKED])
def test_a_question_put_without_its_mark_is_a_question(agent: str, said: str, thread: str) -> None:
    assert _closing(agent, f"Added retry() to retry.py. {said}").open_threads == [thread]


def test_a_pr_named_in_passing_in_a_summary_is_no_pr_description_drafted() -> None:
    for agent in AGENTS:
        handoff = _closing(agent, "## Summary\n\nAdded retry() to retry.py and committed it on `feat/retry`.\n\n"
                                  "I haven't pushed the branch or opened a PR — want me to do that?")
        assert not any(t.startswith("PR not opened") for t in handoff.open_threads), handoff.open_threads


def test_a_todo_named_in_prose_is_the_sentence_that_names_it_and_one_shown_in_code_its_comment() -> None:
    for agent in AGENTS:
        handoff = _closing(agent, "Added retry() to retry.py. I left a `# TODO` where the logging call should go.")
        assert handoff.open_threads == ["TODO: I left a `# TODO` where the logging call should go."]
        handoff = _closing(agent, "Added retry() to retry.py. The `# TODO` markers in `old.py` are gone now.")
        assert handoff.open_threads == []
        handoff = _closing(agent, "Added retry() to retry.py.\n\n```python\n# TODO: log each failed attempt\n```")
        assert handoff.open_threads == ["TODO: log each failed attempt"]


def test_a_step_after_an_upstream_fix_is_a_note() -> None:
    for agent in AGENTS:
        handoff = _closing(agent, "Added retry() to retry.py. Once the upstream fix is out, the pin needs to come off.")
        assert handoff.open_threads == ["Later: Once the upstream fix is out, the pin needs to come off."]


def test_a_further_step_offered_under_a_next_lead_is_a_note_and_a_plans_go_ahead_still_waits() -> None:
    for agent in AGENTS:
        handoff = _closing(agent, "Added retry() to retry.py.\n\nNext: `upload.py` has the same loop if you want me "
                                  "to do it too.")
        assert handoff.open_threads == ["Next: `upload.py` has the same loop if you want me to do it too."]
        assert handoff.status == "done"
        handoff = _closing(agent, "Added retry() to retry.py. Next: `upload.py` could use it too — want me to add it?")
        assert handoff.open_threads == ["Question: `upload.py` could use it too — want me to add it?"]
        assert handoff.status == "done"
        handoff = _closing(agent, "Added retry() to retry.py. The client could retry uploads the same way. Want me to "
                                  "proceed with that, or leave it as-is for now?")
        assert handoff.status == "partial", handoff.open_threads


def test_the_steps_listed_under_an_action_lead_are_next_threads() -> None:
    for agent in AGENTS:
        for lead, said in (("You should:", "Next"), ("**Action Required:**", "Next (action required)")):
            handoff = _closing(agent, f"Added retry() to retry.py.\n\n{lead}\n1. Roll the API key in the dashboard\n"
                                      "2. Set the new key in the deploy environment")
            assert handoff.open_threads == [f"{said}: Roll the API key in the dashboard",
                                            "Next: Set the new key in the deploy environment"], lead


def test_more_of_the_work_offered_as_a_question_is_a_note_and_a_question_of_how_still_waits() -> None:
    for agent in AGENTS:
        handoff = _closing(agent, "Added retry() to retry.py. Would you also like a jittered backoff between attempts?")
        assert handoff.open_threads == ["Agent offered, no answer: a jittered backoff between attempts"]
        assert handoff.status == "done"
        handoff = _closing(agent, "Added retry() to retry.py. Would you like the default to be 30 seconds?")
        assert handoff.status == "partial", handoff.open_threads


LEFT_IN_PLACE = [
    ("I left `// FIXME: drop the fallback` in `retry.py`.",
     "TODO: I left `// FIXME: drop the fallback` in `retry.py`."),
    ("\n\n## Limitation\nThe whole response is read into memory before it is retried. Streaming would avoid that.",
     "Caveat: The whole response is read into memory before it is retried."),
]


@pytest.mark.parametrize(("agent", "said", "thread"), [(a, s, w) for a in AGENTS for s, w in LEFT_IN_PLACE])
def test_a_fixme_said_left_and_the_first_sentence_under_a_limitation_heading_are_threads(agent: str, said: str,
                                                                                        thread: str) -> None:
    assert _closing(agent, f"Added retry() to retry.py. {said}").open_threads == [thread]


def test_a_step_said_not_taken_yet_is_a_next_thread() -> None:
    for agent in AGENTS:
        for said in ("Backoff is not wired up yet.", "I haven't changed the callers yet.",
                     "I haven't wired it into the client.", "I didn't add input validation yet.",
                     "The new test `test_retry_gives_up` is currently failing.", "I ran out of time to fix it.",
                     "I didn't commit: the change is in the working tree.",
                     "Migration not applied: the local database was not running.",
                     "The label stays empty until `docker-compose.yml` is updated.",
                     "Someone with admin access needs to add the `DEPLOY_TOKEN` secret.",
                     # the fifth sweep's (bench/closings/fifth.txt)
                     "Duplicate detection isn't implemented yet.", "Windows path handling is still unhandled.",
                     "The `--threshold` sweep still uses the old single-metric path.",
                     "Nested columns are written as JSON strings until proper struct support is added.",
                     "The PR needs a review from a code owner before it can merge.",
                     "You should rotate the old key in the Stripe dashboard.",
                     # the sixth's (bench/closings/sixth.txt)
                     "I ran out of room to do the soft-delete semantics properly.",
                     "Someone should do a manual pass with NVDA and VoiceOver.",
                     "You'll want to decide whether to fix those rows by hand.",
                     "CI is still running on the integration job.", "Don't merge until the integration job is green.",
                     "Please run those commands before anyone runs `terraform apply`.",
                     "Not committed — the changes are in the working tree.",
                     # the seventh's and eighth's
                     "I did not make this change since you asked for tests only.",
                     "Merge commit is created locally but not pushed.",
                     "Rebase stopped on a conflict; I didn't resolve it.",
                     "The backend endpoint isn't written.", "`ws/room.ts` uses the same pattern — not fixed.",
                     "`--until` not done.", "The cache key still doesn't include the tenant.",
                     "I'd hold off on merging until that's been announced.",
                     "What happens to those projects is a product call.",
                     "The deprecated v1 route still shows the same offset.",
                     # the ninth's
                     "XLSX isn't done: `format=xlsx` returns 400.",
                     "`poetry.lock` is not updated — `poetry lock` needs network.",
                     "Until then, the deploy job will fail on the next push."):
            handoff = _closing(agent, f"Added retry() to retry.py. {said}")
            assert handoff.open_threads == [f"Next: {said}"] and handoff.status == "partial"


@pytest.mark.parametrize(("agent", "text"), [(a, t) for a in AGENTS for t in NOTHING_LEFT])
def test_near_phrasings_that_leave_nothing_open_name_no_thread(agent: str, text: str) -> None:
    handoff = _closing(agent, text)
    assert handoff.open_threads == [] and handoff.status == "done"


def _real(name: str, agent: str, closing: str) -> Handoff:
    """The committed session of a real CLI (tests/fact_transcripts.py), its closing message said in other words."""
    build = build_codex_session if agent == "codex" else build_gemini_session
    session = build("s", [fixture_session(name, agent)], str)[0]
    last = max(i for i, e in enumerate(session.events) if e.kind == "assistant")
    session.events[last] = Event("assistant", session.events[last].timestamp, text=closing)
    return draft(session, ZoneInfo("UTC"))


@pytest.mark.parametrize("agent", AGENTS)
def test_a_real_cli_session_that_ran_its_tests_after_the_last_edit_is_done_whatever_its_closing_says(
        agent: str) -> None:
    # "todo-line" ran no check; "tests-fixed" ran `python3 -m pytest -q` green after its last edit
    for text, thread in NOT_RUN_SAID:
        not_checked = _real("todo-line", agent, text)
        assert not_checked.open_threads == [thread] and not_checked.status == "partial"
        checked = _real("tests-fixed", agent, text)
        assert checked.open_threads == [] and checked.status == "done"  # none names other tests than it ran
    for text, thread in HANDED:
        assert _real("todo-line", agent, text).open_threads == [thread]
        assert _real("tests-fixed", agent, text).open_threads == []


@pytest.mark.parametrize("agent", AGENTS)
def test_a_closing_lines_note_or_warning_lead_gives_way_to_the_threads_own_kind(agent: str) -> None:
    said = {"Added retry() to retry.py. Note: I haven't verified this against the live API.":
            "Next: I haven't verified this against the live API.",
            "Added retry() to retry.py.\n\n**Important:** you still need to set RETRY_LIMIT in production.":
            "Next: you still need to set RETRY_LIMIT in production.",
            "Added retry() to retry.py.\n\n**Warning:** the old client still retries without any limit at all.":
            "Caveat: the old client still retries without any limit at all."}
    for text, thread in said.items():
        assert _closing(agent, text).open_threads == [thread], text


@pytest.mark.parametrize("agent", AGENTS)
def test_a_warnings_or_limitations_lead_saying_there_are_none_leaves_nothing_open(agent: str) -> None:
    for text in ("Added retry() to retry.py.\n\nWarnings: none of the lint warnings remain after the fix.",
                 "Added retry() to retry.py.\n\nLimitations: none that matter for the retry helper here."):
        handoff = _closing(agent, text)
        assert handoff.open_threads == [] and handoff.status == "done", text
