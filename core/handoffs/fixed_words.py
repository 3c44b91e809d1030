"""The words the deterministic extractor writes around a session's own on a handoff's lines: the label a line opens
with ("Asked:", "Not pushed:") and the fixed phrases of its fact lines ("(no commit in the session)").

Defined once, here, for the extractor that writes them (core/extract) and the full-text index that leaves them out
of what it holds (core/index/text_index.py, which may not import the extractor): in nearly every handoff, they say
nothing of one session, yet weigh in each query holding one of their words ("commit", of "Not committed" and
"(no commit in the session)", was in over `text_index.COMMON_SHARE` of the sessions and so dropped from queries).
"""

from __future__ import annotations

import functools
import re

# The handoff's sections, by field: the renderer writes them, the parser reads them, the index knows Key Files by it
SECTION_TITLES = {
    "what_happened": "What Happened",
    "insights": "Insights",
    "key_files": "Key Files",
    "open_threads": "Open Threads",
}

# What Happened
ASKED = "Asked:"  # a request, when nothing done is reported
RAN = "Ran:"  # a command the person ran
ASKED_TO_FIX = "Asked to fix the failing"  # a pasted test failure, when nothing done is reported: "... `TestX/case`"
ANSWER = "Answer"  # "Answer: ...", "Answer, asked again: ...", "Answer (not checked): ..."
ASKED_FIRST, ASKED_AGAIN = f"{ANSWER}, first time asked", f"{ANSWER}, asked again"  # one question asked twice
UNCHECKED = "(not checked)"  # the reply rests on the agent's own knowledge, nothing it looked up or ran
CHECKS = "Checks:"  # the checks whose last run passed
PASSED_AFTER, PASSED_BEFORE = "passed after the last edit", "passed before the last edit"
BEFORE_IT = "before it"  # "`a` passed after the last edit; `b` before it"
NOT_COMMITTED = "Not committed:"  # a session's edits it never committed ("Not committed on `x`: ..." names the branch)
SWITCHED = "Switched to"  # "Switched to branch `x`": a branch a command changed to, nothing committed after
# the tests the session's writes added ("Tests added: `X`; renamed: `A` → `B`") and, when none, renamed
TESTS_ADDED, TESTS_RENAMED = "Tests added:", "Tests renamed:"
NO_COMMIT = "(no commit in the session)"
COMMITTED = ("Committed: ", "Committed `")  # a commit the session made, without and with its hash
OPENED_PR = "Opened PR:"
KIND_WORDS = {"tests": "Tests", "lint": "Lint", "types": "Type check", "build": "Build"}  # a check's line: "Lint: ..."
FAILING, NOT_RERUN = " failing:", " not rerun:"  # after a kind's word: "Lint failing: ...", "Build not rerun: ..."

# Insights
AT_REQUEST = "At the user's request:"  # a decision the user asked for
PER_REVIEW = "Per the review:"
BEFORE_FIX = "Before the fix:"  # a root cause its turn then fixed
BEFORE = "Before:"  # a lack a later edit filled

# Open Threads
UNCOMMITTED = "Uncommitted:"
LEFT_UNCOMMITTED = "Left uncommitted"
LEFT_TO_COMMIT = "Uncommitted, left for the person to commit:"  # the agent handed the commit over: a note
MERGE_IN_PROGRESS = "Merge in progress:"  # a merge no commit closed: the repository is mid-merge, whatever was said
MERGE_NOT_STAGED = "edits not staged, no `git add` ran:"  # after MERGE_IN_PROGRESS: what the record shows of its files
LEFT_OUT = "Left out of commit"  # "Left out of commit `46815aeb` (`Fix x`): `settings.json`", changes listed, not taken
NOT_PUSHED = "Not pushed:"
PR_NOT_OPENED = "PR not opened:"
STASH_LEFT = "Stashed, not restored:"  # a `git stash` no later pop or apply took back: the work sits in the stash
NOT_RUN = "Not run:"
FAILED_NOT_RERUN = "Failed, not run again:"
TEMPORARY_FILE = "Temporary file still in the repository:"
TEMPORARY_DEBUG = "Temporary debug code still in"
STILL_RUNNING = "Still running:"
INTEGRATION_LEFT = "Integration tests not run after the last edit of"
PLAN_NOT_CARRIED = "Plan not carried out:"
LEFT_IN_CODE = "Left in `"  # "Left in `resume.go`: ...", what the code the agent wrote says it leaves undone
MERGE_LEFT = "Not merged:"  # a fact of the session's actions (no merge ran)
REVIEW_FILE_LEFT = "Review file left in the repo:"
REVIEW_REPLY_LEFT = "Review comment not answered:"  # fixed after the last push, the fix not pushed, no reply
STEP_LEFT = "Plan step not done:"  # a step of the session's own plan
TESTS_LEFT = "Tests asked for, none written:"  # a prompt's request for tests no test file edited after it answers
PLAN_NOT_BUILT = "Plan not implemented yet:"  # a plan the session wrote, and nothing else
OFFERED = "Agent offered, no answer:"  # a step the agent offered that no reply took up
DROPPED_TODO = "Not done, dropped from the todo list:"
CAVEAT = "Caveat:"
TO_DO = "To do:"
TODO = "TODO:"
QUESTION = "Question:"
INTENT_LEFT = "Not done:"  # work the agent said it was about to do, the session ended first
NOT_DONE = "Not done, at the user's word:"  # a step offered or announced that the user turned down in words
IN_PROGRESS = "In progress:"  # an item of the agent's todo list
NOT_FIXED = "Not fixed (review):"  # a review's finding left
OFFER_NOT_TAKEN = "Agent offered, not taken:"  # an offer to commit, push or open a PR the next prompt passed over
PLAN_REFUSED = "Plan not approved:"  # a plan the user refused in plan mode, the session ended on
NOT_TAKEN = "Not taken:"
DEFERRED = "Deferred, not started:"  # a proposed step the user put off ("let's first fix the bug"), not declined
INTERRUPTED = "Interrupted:"
INTERRUPTED_ON = "Interrupted while working on:"
API_ERROR = "Ended on an API error:"
UNANSWERED = "Unanswered request:"
# Labels whose own words may follow before the colon ("Next (manual): ...", "Decide which store: A or B"): the word
NEXT, LATER, TO_TEST, DECIDE = "Next", "Later", "To test", "Decide"
WORD_LABELS = (NEXT, LATER, TO_TEST, DECIDE, NOT_COMMITTED.removesuffix(":"), SWITCHED)

LABELS = (ASKED, ASKED_TO_FIX, RAN, *(f"{label}{hedge}:" for label in (ANSWER, ASKED_FIRST, ASKED_AGAIN)
                        for hedge in ("", f" {UNCHECKED}")),
          CHECKS, NOT_COMMITTED, TESTS_ADDED, TESTS_RENAMED, COMMITTED[0], OPENED_PR,
          *(f"{word}{kind}" for word in KIND_WORDS.values() for kind in (":", FAILING, NOT_RERUN)),
          AT_REQUEST, PER_REVIEW, BEFORE_FIX, BEFORE,
          UNCOMMITTED, LEFT_UNCOMMITTED, LEFT_TO_COMMIT, MERGE_IN_PROGRESS, LEFT_OUT, NOT_PUSHED, PR_NOT_OPENED,
          STASH_LEFT,
          NOT_RUN, FAILED_NOT_RERUN,
          TEMPORARY_FILE, TEMPORARY_DEBUG, STILL_RUNNING, INTEGRATION_LEFT, PLAN_NOT_CARRIED, LEFT_IN_CODE, MERGE_LEFT,
          REVIEW_FILE_LEFT, STEP_LEFT, TESTS_LEFT, PLAN_NOT_BUILT, PLAN_REFUSED, OFFERED, OFFER_NOT_TAKEN, DROPPED_TODO,
          CAVEAT, TO_DO, TODO, IN_PROGRESS, QUESTION, INTENT_LEFT, NOT_DONE, NOT_FIXED, NOT_TAKEN, DEFERRED,
          REVIEW_REPLY_LEFT, INTERRUPTED, INTERRUPTED_ON, API_ERROR, UNANSWERED)
# fixed words within a fact line; BEFORE_IT ends the Checks line
PHRASES = (NO_COMMIT, PASSED_AFTER, PASSED_BEFORE, MERGE_NOT_STAGED)

@functools.cache
def _fixed_re() -> re.Pattern[str]:
    """A label at a bullet's start (the longest first: "Tests failing:" before "Tests:"), a word label's word, a
    phrase; compiled on first use: indexing needs it, `eywa get`'s search does not."""
    return re.compile(r"(?<=^- )(?:" + "|".join(map(re.escape, sorted(LABELS, key=len, reverse=True)))
                      + "|(?:" + "|".join(map(re.escape, WORD_LABELS)) + r")\b)|" + "|".join(map(re.escape, PHRASES))
                      + rf"|{BEFORE_IT}$", re.MULTILINE)


def session_words(body: str) -> str:
    """A handoff's markdown without the fixed words the extractor writes: what the full-text index holds of it."""
    return _fixed_re().sub(" ", body)
