"""What a session left open, and so its status: the pending items of its last todo or task list, the steps it
took off that list unfinished, and the findings it filed as pending todo files, the questions, next steps and listed
steps left (under "manual steps", "remaining", ...) of the agent's last messages (of its last turn that changed
something, when the session ended on an aside), an offer the user passed over with a question, work the user
interrupted or a plan refused, an announced step the session ended before, a request never answered. (What the
session's actions left, a failing check among them: core/extract/facts.py.)
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from eywa.core.extract import commands
from eywa.core.extract.caveats import caveat, caveats
from eywa.core.extract.checks_said import handed_check, handed_kinds, not_run
from eywa.core.extract.claude_words import Sentence, sentences
from eywa.core.extract.directions import PROMPT_SENTENCE_RE
from eywa.core.extract.marks import first_line, typed, words_cut
from eywa.core.extract.plan_steps import ended_on, plan_file, steps_of
from eywa.core.extract.review_reply import review_reply_left
from eywa.core.extract.said_left import (
    ASIDE_LEAD,
    ASK_PREFIX,
    NO_WORDS,
    NOTHING,
    YES_WORDS,
    checks_left_to_user,
    clause,
    edited_after,
    failure_rerun,
    findings_left,
    labelled_step,
    last_prompt_index,
    merge_left,
    named_code,
    offers_not_taken,
    open_choice,
    refusal_words,
    review_files_left,
    steps_not_taken,
)
from eywa.core.handoffs.fixed_words import (
    API_ERROR,
    CAVEAT,
    DROPPED_TODO,
    IN_PROGRESS,
    INTENT_LEFT,
    INTERRUPTED,
    INTERRUPTED_ON,
    LATER,
    LEFT_IN_CODE,
    NEXT,
    NOT_DONE,
    NOT_RUN,
    OFFERED,
    PLAN_NOT_BUILT,
    PLAN_REFUSED,
    QUESTION,
    TO_DO,
    TO_TEST,
    TODO,
    UNANSWERED,
)
from eywa.core.retrieval.query_tokens import content_words
from eywa.core.session import WRITE_TOOLS, Event, Session, ToolCall
from eywa.core.sources.common import TODO_TOOLS

MAX_THREADS = 8
_THREAD_CHARS = 240

# ("Backoff is not wired up yet": a step not taken; "not staged yet" is repository state, which the facts say)
NEXT_STEP_RE = re.compile(
    r"\b(ready to (?:be )?(?:commit|push|merge|deploy|ship|release|review|test|committed|merged|pushed)\w*|"
    r"still (?:need|needs|has to|have to|to be|missing|fails?|failing|broken|incomplete|"
    r"un(?:handled|implemented|supported|tested|verified|finished|resolved))|"
    r"still (?:uses?|using|calls?|on) the old\b"
    r"(?![^.]{0,160}\b(?:compatib|on purpose|intentional|deliberate|by design))|"
    r"not yet|yet to|left to|"
    r"(?:is|are) (?:currently |still )?(?:failing|broken)\b|ran out of (?:time|room)|"
    r"(?:didn't|did not) (?:\w+ ){1,4}yet\b|"
    r"(?:didn't|did not) (?:commit|push|deploy|merge|apply|release)\b|"
    r"(?:didn't|did not) (?:resolve|fix|address) (?:it|them|this|that)\b|"
    r"(?:didn't|did not) (?:make|apply|implement) (?:this|that|the|these|those) (?:change|fix)(?:es)?\b|"
    r"(?:is|are|was|were)(?:n't| not) (?:yet )?(?:been )?(?:written|implemented|wired|built|hooked up|handled|"
    r"ported|updated|regenerated)\b(?!\s+(?:to|by|from|when|if|on|unless|until|for|during|as)\b)|"
    r"(?:is|are)n't (?:yet )?done\s*[:;—–]|^until (?:then|that(?:'s| is) done)\b|"
    r"\bnot (?:yet )?(?:done|fixed|implemented|handled|addressed|resolved)\s*[.!]?$|"
    r"\b(?:but|and) not (?:yet )?(?:pushed|committed|merged|deployed|released)\b|still (?:doesn't|does not)\b|"
    r"hold off on (?:merging|deploying|releasing|shipping)\b|"
    r"still (?:has|have|shows?) the same (?:bug|issue|problem|offset|leak|race|error|flaw)s?\b|"
    r"\b(?:is|as) (?:a|your) (?:product|business|design) (?:call|decision)\b|"
    r"until (?:that|this|it|they|\S+|(?:[\w`.-]+ ){2,4}?[\w`.-]+) (?:is|are|'s|gets?) "
    r"(?:updated|renamed|added|fixed|set|changed|created|"
    r"deployed|applied|merged|run|installed|configured)\b|"
    r"(?:someone|somebody|an? admin\w*)\b[^.]{0,160}\b(?:needs? to|should|must)\b|"
    r"\bneeds? (?:an? )?(?:review|approval|sign-?off)s? from\b|"
    r"^[\w` -]{2,40}? not (?:applied|run|deployed|verified|tested|released|merged|migrated)\s*(?::|—|–| - |\()|"
    rf"^not (?:committed|pushed)\b(?!\s*[:—–-]\s*{NOTHING})"
    # "Not pushed, per your instructions", "Not committed; you didn't ask for it"
    r"(?![^.]{0,40}\b(?:per your|as you (?:asked|said|requested)|as requested|you (?:didn't|did not) ask))|"
    r"\b(?:ci|checks?|pipeline|workflow)s? (?:is|are) still (?:running|pending|in progress)\b|"
    r"(?:don't|do not) (?:merge|deploy|release|ship|apply)\b[^.]{0,160}\b(?:until|before)\b|"
    r"^please (?:run|apply|deploy|merge|review|rotate|restart|reload|update|install|migrate|approve)\b|"
    r"before (?:committing|merging|pushing|releasing|shipping)|"
    r"you(?:'ll| will) (?:need|have|want) to|you (?:can|could|should|may want to|might want to) (?:now )?"
    r"(?:run|test|try|push|commit|merge|deploy|backfill|check|verify|review|add|remove|update)|"
    r"you (?:should|must) (?:now |also |still )?(?:rotate|revoke|restart|reload|redeploy|migrate|install|configure|"
    r"enable|approve|regenerate|apply)\b|"
    r"needs? to be|should be (?:run|tested|verified|reviewed|checked)|"
    r"haven't|hasn't been|have not|has not been|wasn't able|weren't able|couldn't|could not|unable to|"
    r"blocked on|remaining (?:items?|work|tasks?|issues?|steps?|failures?)|still open|"
    r"(?:not|(?:is|are|was|were)n['’]t) (?:been )?(?!(?:needed|required|necessary|staged|committed|pushed|merged)\b)"
    r"\w+(?:ed|en|wn|one|ilt|un|et)"
    r"(?: up| in| out)? yet\b|"
    r"(?:is|are|was) pending|to-?do:|once you|"
    r"ready for `?(?:git )?(?:commit|push|merge|review|deploy|release)\w*`?)(?!\w)", re.IGNORECASE)
# "There is nothing left to do.", "No remaining issues.", "... and nothing else needs to be done.", "I couldn't find
# any other callers", "I haven't changed any other files": a step's words, saying none is left (not "Nothing is
# committed yet")
_NOTHING_LEFT_RE = re.compile(r"^(?!.*\byet\b)(?:(?:so,?\s+)?(?:there(?:'s|’s| is| are) )?(?:nothing\b|"
                              r"none (?:needed|required|necessary|left|remaining)\b|"
                              r"no (?:more |other |further )?(?:remaining|pending|open|outstanding)\b|"
                              r"no \w+ (?:is|are|remains?) (?:pending|remaining|left|open|outstanding)\b|"
                              r"no (?:further |more |other )?[\w-]+(?: [\w-]+)? (?:is |are )?(?:needed|required|"
                              r"necessary)\b)|"
                              r".*\bnothing (?:else |more |further )?(?:needs|is left|remains|left|to do|"
                              r"is outstanding)\b|.*\b(?:couldn't|could not|can't|cannot) (?:find|see|spot) any\b|"
                              r".*\b(?:haven't|have not|didn't|did not) "
                              r"(?:changed?|touch(?:ed)?|modif(?:y|ied)|edit(?:ed)?) any)",
                              re.IGNORECASE)
# ("arrive after later ones": an order, not a time to come; "once a fix is out, the pin needs to come off")
# ("throws `BillingSdkError` instead of crashing later": when a failure shows, no step put off)
LATER_RE = re.compile(r"\b((?<!ing )later(?! ones?\b)|follow-?up|separate (?:pr|change|issue|fix)|another pr|"
                       r"in a future|next time|"
                       r"worth (?:investigating|exploring|checking|looking)|for now|"
                       r"(?:that|it|this)(?:'d|’d| would) need(?! no\b| nothing\b)|"
                       r"(?:should|can|could) be (?:removed|deleted|dropped|cleaned up|replaced) once|"
                       r"once [^.]{0,160}\bneeds? to)\b",
                       re.IGNORECASE)
# "Note: I haven't verified ...", "Next, you can add ...": a lead the thread's kind says
_ASIDE_LEAD_RE = re.compile(rf"^(?:{ASIDE_LEAD}\s*:|(?:next|then),?(?=\s+(?:you|we|i)\b))\s*", re.IGNORECASE)
_INTENT_RE = re.compile(r"^(?:(?:now|next|first|finally|ok(?:ay)?|great|good|perfect|all green)[.,!]?\s+)*"
                        r"(?:let me(?! know\b)|i'll|i will|i'm going to|let's|now i'll)\s+(.+)$", re.IGNORECASE)
# "**Question:** should symlinks ... be allowed?": the lead the thread's own prefix says
_QUESTION_LEAD_RE = re.compile(r"^(?:(?:one |a )?(?:open )?question|next)\s*:\s*", re.IGNORECASE)
# "Let me know which style you prefer and I'll adjust.": a question put without its mark (not "Let me know if ...")
_WHICH_ASKED_RE = re.compile(r"^(?:please )?(?:let me know (?:which|whether)|confirm (?:whether|which|if|that))\b",
                             re.IGNORECASE)
# "I left a `# TODO` where the logging call should go": a TODO the closing says it left, named in prose
_TODO_LEFT_RE = re.compile(r"\bleft (?:(?:a|an|some) )?`?(?:#|//)?\s*(?:TODO|FIXME)", re.IGNORECASE)
# a TODO comment (not "## TODO ...", which heads a list, nor "`# TODO`" named in prose)
_TODO_RE = re.compile(r"(?<!`)(?:(?<!#)#(?!#)|//|--|\*)[ \t]*TODO\b(?!`)[:(]?[ \t]*(.{8,160})")
# "run the full test suite", "also run the linter": a check announced, not a change
_CHECK_INTENT_RE = re.compile(r"^(?:also |now |quickly |then )?(?:re-?run|run|verify|check|build|compile|lint|test)\b",
                              re.IGNORECASE)
_ACTIONS = {
    "commit": re.compile(r"\bgit\b.*\bcommit\b"),
    "push": re.compile(r"\bgit\b.*\bpush\b"),
    "pr": re.compile(r"\bgh\s+pr\s+create\b"),
    "reply": re.compile(r"\bgh\s+(?:api|pr\s+comment|pr\s+review)\b"),
}
ACTION_WORDS = {"commit": r"\bcommit", "push": r"\bpush", "pr": r"\b(?:pr|pull request)\b",
                 "reply": r"\b(?:reply|respond|comment)"}
_GENERIC_QUESTION = frozenset("want me would you like should i shall do you prefer which approach option options "
                              "way direction go ahead proceed continue any that this these those it with to the a "
                              "or of one instead implement start begin now for leave move forward on "
                              "next apply make happy help all anything as is".split())
# "If you want, I can also add tests for the retry path.": an offer made as a statement (Codex's closing style)
_OFFER_SAID_RE = re.compile(r"^(?:(?:if you(?:'d| would)? (?:want|like|prefer)|let me know if you(?:'d| would)? "
                            r"(?:want|like))(?: me to|,? (?:i can|i could|i'll|i will))|(?:i'm )?happy to) "
                            r"(?!.*\banything else\b)(.{8,})$",
                            re.IGNORECASE)
# "I have resolved the `TODO: handle empty CSV`", "The one `// TODO: recycle` comment ... is removed": a TODO done;
# "I have resolved the issue where the notebook could not be re-run": the words of what was wrong, now fixed
_SAID_DONE_RE = re.compile(r"\b(?:resolved|removed|addressed|implemented|fixed|deleted|cleared|completed|handled|"
                           r"dropped)\s+(?:(?:the|that|this|a|an|its|my)\s+)?`?(?:#|//)?\s*(?:TODO|FIXME)\b|"
                           r"\b(?:TODO|FIXME)\b[^.]{0,160}\b(?:is|was|has been|are|were) (?:now )?"
                           r"(?:removed|gone|resolved|deleted)\b|"
                           r"^(?:i(?:'ve| have) )?(?:resolved|fixed|solved|addressed) (?:the|an?) "
                           r"(?:[\w-]+ ){0,3}(?:issue|bug|problem|error|crash) (?:where|that|in which|when|causing)\b|"
                           # "This finishes the follow-up from last week's PR", "... — that's resolved now"
                           r"\b(?:finish|complet|clos)e[sd]? the follow-?up\b|"
                           r"\b(?:that's|that is|which is|it's|it is) (?:now )?(?:resolved|fixed)(?: now)?\s*[.!]?$|"
                           # "The temporary `[bp]` tracing is gone (checked with grep before committing)"
                           r"\b(?:temporary|debug)\b[^.]{0,60}\b(?:is|are) (?:now )?(?:gone|removed)\b|"
                           # "... line from my local DB was removed before committing": done, not a step to take
                           r"\b(?:checked|verified|confirmed|ran|tested|(?:was|were|been) \w+(?:ed|en))\b[^.]{0,40}"
                           r"\bbefore (?:committing|merging|pushing)\b",
                           re.IGNORECASE)
# "Next: `refunds.go` has the same shape if you want me to do it too": a further step offered, a note
_OFFER_IN_RE = re.compile(r"\b(?:if you(?:'d| would)? (?:want|like) me to|want me to)\b", re.IGNORECASE)
# "Is there anything else you would like me to adjust?": a courtesy, it asks about no work
_COURTESY_RE = re.compile(r"\banything else\b", re.IGNORECASE)
# not "Should I ...?": that asks what to do (a question, "Asked whether to ..."), it offers nothing
_OFFER_ASKED_RE = re.compile(rf"^(?!should i\b){ASK_PREFIX} (?!proceed|go ahead|continue|start|begin)(.{{8,}}?)\s*\?$",
                             re.IGNORECASE)
# "Would you also like a live strength meter?", "Would you like the search to match descriptions too?": more offered
_EXTRA_ASKED_RE = re.compile(r"^would you (?=also like|like .*\b(?:too|as well)\s*\?$)(?:also )?like (?!me\b|to\b)"
                             r"(.{8,}?)(?:\s+(?:too|as well))?\s*\?$", re.IGNORECASE)
_ASKED_TO_RE = re.compile(rf"^{ASK_PREFIX} (.+?)\s*\?$", re.IGNORECASE)
# "You may want to run `mise install`", "The changes are ready to be committed whenever you'd like": a step the person
# may take after finished work, at their leisure, not the session's own
LEFT_TO_PERSON_RE = re.compile(r"\byou (?:can|could|may want to|might want to)\b|\bwhenever you\b|"
                                r"\bwhen(?:ever)? you(?:'re| are)? ready\b|\bwhen you (?:want|wish|like)\b|"
                                r"\bwhen you(?:'d| would) like\b|\bat your convenience\b|"
                                r"\bif you(?:'d| would)? (?:like|want)\b", re.IGNORECASE)
# "Both agents recommend REQUEST CHANGES before merging.": a review's verdict; its findings are the threads
_VERDICT_RE = re.compile(r"\brecommends?\b(?:(?!\brecommends?\b).)*\b(?:request(?:ing)? changes|approv(?:e|al|ing)|"
                         r"lgtm)\b", re.IGNORECASE)  # each "recommend" read up to the next: linear on a long line
# A prompt that answers an offer: yes (group 1) or no
_ANSWER_RE = re.compile(rf"^\s*(?:({YES_WORDS})|no|nope)\b", re.IGNORECASE)
# each run of spaces tried from its start only, and read whole (possessive): linear on a long run, the same matches
_POINTER_RE = re.compile(r"(?<!\s)\s++(?:(?:with|on|to|for)\s++)?(?:that|this|it|these|those|them)$", re.IGNORECASE)
_OR_RE = re.compile(r",?(?<!\s)\s++or\s++", re.IGNORECASE)
_SECOND_OPTION_RE = re.compile(r",? or (?:would you|should i|do you|shall i|want me)\b", re.IGNORECASE)
_FILE_RE = re.compile(r"`?[\w./-]+\.[A-Za-z]{1,5}\b`?")
# Before its last message, a question put to the person: "you", or a question it labels so ("Before I write the
# migration, a question: should existing rows be backfilled ...?")
_PUT_TO_RE = re.compile(r"\byou\b|\bquestion\s*:", re.IGNORECASE)
_ASKS_RE = re.compile(r"\b(?:can|could) you (?:tell|confirm|check|clarify|share)|let me know\b", re.IGNORECASE)
# A lead-in ("**Required Setup (manual steps):**", "### Remaining work") whose list items are left to do;
# "Next steps" lists what may follow, seldom what the session owed.
_STEPS_LEAD_RE = re.compile(r"\b(?:manual steps?|required setup|setup required|still (?:to do|needed)|remaining|"
                            r"left to do|what(?:'s|’s| is) left|to-?dos?|action items|actions? (?:required|needed)|"
                            r"open items|outstanding|pending|not (?:yet )?done|"
                            r"before (?:merging|releasing|you (?:merge|release))|"
                            r"^you(?: should| must| need to| have to|(?:'ll| will) need to)(?=\s*:$))\b", re.IGNORECASE)
# "Test checklist:", "## Test It Now!", "How to test:": checks left to the person (not "## Testing", often a report)
_TEST_LEAD_RE = re.compile(r"^\W*(?:(?:manual )?test(?:ing)? (?:checklist|steps|instructions)|how to (?:test|verify)|"
                           r"to (?:test|verify)|test (?:it|this)(?: (?:now|yourself|out|locally|manually))?)\W*$",
                           re.IGNORECASE)
_LATER_LEAD_RE = re.compile(r"\b(?:next steps?|what(?:'s|’s| is) next|up next|follow-?ups?|future work|later)\b",
                            re.IGNORECASE)
# A lead on a line of its own ("**Remaining work**", "**What's left**"): a few words, no sentence end
_LABEL_WORDS = 4
# "- ✅ Added tests", "- [x] Added tests", "- ~~Bump the version~~": an item of a list marked done
_DONE_ITEM_RE = re.compile(r"^[ \t]*(?:[-*+]|\d+[.)])[ \t]+(?:\[[xX]\]|~~|.*[✅✔☑]).*$\n?", re.MULTILINE)
_UNTICKED_RE = re.compile(r"^([ \t]*(?:[-*+]|\d+[.)])[ \t]+)\[ \][ \t]*", re.MULTILINE)  # "- [ ] Deploy": a step
# "TODOs completed", "Nothing remaining", not "What's left to be done" nor "Remaining, not yet done"
_DONE_LEAD_RE = re.compile(r"^(?:nothing|none|no)\b|"
                           r"\b(?<!\bbe )(?<!\bnot )(?<!\byet )(?:done|completed?|finished|fixed|resolved|addressed)\b",
                           re.IGNORECASE)
# A step of a todo list that changes something ("Write unit tests for task-start hook"), not a check ("Run tests")
_CHANGE_STEP_RE = re.compile(r"^(?:write|add|implement|create|update|fix|remove|refactor|extract|move|rename|replace|"
                             r"document|wire|handle|support|migrate|delete)\b", re.IGNORECASE)
# "Deploy to staging": a step, as a change or a check is ("## Next" over "Wire the flag", not "The migration is ...")
_SHIP_STEP_RE = re.compile(r"^(?:deploy|push|merge|commit|release|publish|tag|open|rebase)\b", re.IGNORECASE)
_DROPPED = 3  # threads of the steps dropped from a todo list
# threads of a closing naming steps, not questions, offers
_STEP_KINDS = (f"{NEXT}:", f"{LATER}:", f"{NEXT} (", f"{LATER} (")
_LIST_ITEMS = 4  # of one list: its first items say what it is
# The words of a lead-in that only say that steps follow ("Next steps:", "Remaining work:"), not what they are for
_LIST_WORDS = frozenset("next steps step remaining left still needed work todo todos what whats follow ups later "
                        "future action items addressed pending outstanding open".split())
# "If you see a warning on stderr, check ...": what to read into an outcome that may come, no step left
_CONDITION_RE = re.compile(r"^(?:if|when|unless)\b", re.IGNORECASE)
# the person's word that puts the agent's question off ("separate thing while I think", "meanwhile do the rest")
_ANSWER_PUT_OFF_RE = re.compile(r"\b(?:while i (?:think|decide|check|ask)|let me (?:think|ask|check with)|"
                                r"i(?:'ll| will| need to) (?:think|ask|check with|get back to you)|meanwhile|"
                                r"in the meantime|hold that thought)\b", re.IGNORECASE)
# a reply that answers a question: yes or no, an option picked ("B", "option 2", "the second", "go with the shim")
_ANSWERED_RE = re.compile(rf"^\W*(?:{YES_WORDS}|{NO_WORDS}|both|either|neither|option\b|[a-c1-3]\b|"
                          r"(?:\w+\s+){0,2}the (?:first|second|third|last|latter|former)\b|go with\b|let'?s go with\b|"
                          # "Adress them but be careful ...", "remove it completely": the step asked about, taken
                          r"(?:\w+\s+){1,2}(?:them|those|these|it|all)\b)", re.IGNORECASE)
_YOU_RE = re.compile(r"\b(?:you|your|which|should i|shall i|should we|do we|want me)\b", re.IGNORECASE)  # asked of them
_CHECKBOX_RE = re.compile(r"^[ \t]*[-*] \[([ xX])\] +(\S.*?)[ \t]*$", re.MULTILINE)  # a markdown task list's item
_TEST_PLAN_RE = re.compile(r"\btest plan\b", re.IGNORECASE)
_PENDING_TODO_RE = re.compile(r"(?:^|/)todos/(\d+)-pending-(?:p\d-)?([^/]+?)\.md$")
_COMPLETED_TODO_RE = re.compile(r"todos/(\d+)-complete-")
_TODO_WORDS = 16  # of a todo file's finding: one clause on a thread's line, its file's name before it
_POINTING_RE = re.compile(r"^(?:this|that|it|these|those|they)\b", re.IGNORECASE)
_LEAD_RE = re.compile(r"^(?:and|but|so|also)(?: (?:yes|yeah))?,\s+(?=[a-z])", re.IGNORECASE)
_ASIDE_RE = re.compile(r"^(?:wait|hmm|so|why|what|how come|interesting)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Thread:
    text: str
    blocking: bool  # the session's own work is unfinished (not a note for later)


def _cut(text: str, limit: int = _THREAD_CHARS) -> str:
    """At most `limit` characters of its words, cut as `words_cut` cuts."""
    return words_cut(" ".join(text.split()), limit)


def _todo_threads(session: Session) -> list[Thread]:
    checked = _checked_after_list(session)
    stopped = _edit_stopped_after_list(session)
    return [Thread(_todo_line(t, stopped), True)
            for t in session.todos
            if t.get("status") in ("pending", "in_progress") and str(t.get("content", "")).strip()
            and not (checked and _CHECK_INTENT_RE.match(str(t["content"])))] + [
        Thread(f"{DROPPED_TODO} {_cut(item, 160)}", False)
        for item in [i for i in session.todos_dropped if _CHANGE_STEP_RE.match(i)][:_DROPPED]]


def _checklist_threads(session: Session) -> list[Thread]:
    """The unticked items of the agent's last checklist in its own text ("- [x] tests for parser and table", "- [ ]
    CHANGELOG entry"): its todo list, kept in words where no todo tool holds one, when it ticked some of it and the
    session ended on that work (no new request after it). A PR's test plan is no such list."""
    if session.todos:
        return []
    events = session.events
    at = next((i for i in range(len(events) - 1, -1, -1)
               if events[i].kind == "assistant" and _CHECKBOX_RE.search(events[i].text)), -1)
    boxes = _CHECKBOX_RE.findall(events[at].text) if at >= 0 else []
    if all(mark == " " for mark, _ in boxes) or _TEST_PLAN_RE.search(events[at].text) or not ended_on(session, at):
        return []
    return [Thread(f"{TO_DO} {_cut(item, 160)}", True) for mark, item in boxes if mark == " "]


def _todo_line(item: dict[str, object], stopped: str) -> str:
    """A todo item's thread: in progress, to do, or not done when the user `stopped` the edit of the one in progress
    (how: `_edit_stopped_after_list`)."""
    content = _cut(str(item.get("content", "")), 160)
    if item.get("status") != "in_progress":
        return f"{TO_DO} {content}"
    return f"{INTENT_LEFT} {content} ({stopped})" if stopped else f"{IN_PROGRESS} {content}"


def _last_list(events: list[Event]) -> int:
    """The index of the last write of the todo list (the end when none)."""
    return next((i for i in range(len(events) - 1, -1, -1)
                 if (tool := events[i].tool) is not None and tool.name in TODO_TOOLS), len(events))


def _edit_stopped_after_list(session: Session) -> str:
    """How the user stopped an edit after the todo list was last written, when no edit went through after it (the item
    in progress was not carried out): "its edit refused by the user", or, stopped with no word and a question asked
    next, the question (130d7b7e: "how can we know which agent is active ?", a pause, not a refusal); "" when not."""
    events = session.events
    start = _last_list(events)
    edits = [(i, e.tool) for i, e in enumerate(events) if i > start and e.tool is not None
             and e.tool.name in WRITE_TOOLS]
    refused = next(((i, call) for i, call in edits if call.rejected), None)
    if refused is None or not all(call.is_error for _, call in edits):
        return ""
    asked = next((e.text.strip() for e in events[refused[0] + 1:] if e.kind == "user" and e.text.strip()), "")
    if refusal_words(refused[1]) or not asked.endswith("?"):
        return "its edit refused by the user"
    return f'its edit stopped by the user, who asked next: "{clause(asked, 16)}"'


def _checked_after_list(session: Session) -> bool:
    """Whether checks ran after the todo list was last written and each kind's last run passed: a check step left
    unticked ("Run fmt, lint, and tests") was carried out, the list was just never written again."""
    events = session.events
    passed: dict[str, bool] = {}  # kind -> its last run's verdict
    for event in events[_last_list(events) + 1:]:
        call = event.tool
        if call is not None and call.name == "Bash" and not call.rejected and not call.running:
            passed |= {check.kind: ok for check, ok in commands.verdicts(
                commands.checks(str(call.input.get("command", ""))), call.output or call.error, call.is_error)}
    return bool(passed) and all(passed.values())


def _question(found: tuple[Sentence, ...], index: int, plan: str, built: bool) -> str:
    """A question, one clause of the sentence before it first when it names nothing itself (the plan it
    follows: "Ready to implement?" -> "Ready to implement? (Plan: ...)", unless nothing but the plan was written:
    then the plan has a thread of its own); not a choice of options (`open_choice`)."""
    question = _QUESTION_LEAD_RE.sub("", found[index].text)
    asked = _ASKED_TO_RE.match(question)
    if asked is not None and len(named_words(asked.group(1))) >= 2:  # "Want me to proceed with ...?"
        return "Asked whether to " + clause(asked.group(1))
    if len(named_words(question)) >= 2 or not index:
        return f"{QUESTION} {clause(question)}"
    if plan and not built:  # the plan's own thread (`PLAN_NOT_BUILT`) names what it asks about
        return f"{QUESTION} {question}"
    if plan:
        return f"{QUESTION} {question} ({clause(plan, 14)})"
    # of the two sentences before, the last that names its subject ("This would be a larger refactor" does not)
    at = next((i for i in range(index - 1, max(0, index - 2) - 1, -1) if not _POINTING_RE.match(found[i].text)),
              index - 1)
    while at and found[at].listed and found[at - 1].listed:  # a list's first item is what it proposes, not "Or ..."
        at -= 1
    named = clause(found[at].text, 14).rstrip(".:…")
    if asked is not None:  # "Want me to proceed with that, or leave it as-is?": what "that" is
        step = _POINTER_RE.sub("", _OR_RE.split(asked.group(1), 1)[0])
        return f"Asked whether to {step if step.lower() != 'do' else 'proceed'}: {named}"
    return f"{QUESTION} {named}; {question}"


def _lead_words(text: str) -> str:
    """"Next" when a lead-in or heading names work left ("## Next" too), "Later" when work that may follow, "To test"
    when checks left to the person ("Test checklist:"), else ""."""
    if _STEPS_LEAD_RE.search(text) or text.strip(" :").lower() == "next":
        return NEXT
    if _TEST_LEAD_RE.match(text):
        return TO_TEST
    return LATER if _LATER_LEAD_RE.search(text) else ""


def _lead_kind(text: str) -> str:
    """The kind of the steps a lead-in or heading lists; "" for a list of what was done ("TODOs completed")."""
    return "" if _DONE_LEAD_RE.search(text) else _lead_words(text)


def _label(text: str) -> bool:
    """A lead on a line of its own ("Remaining work", bold in the message): no sentence, no step of its own."""
    return len(text.split()) <= _LABEL_WORDS and not text.endswith((".", "!", "?", "…", ":")) and \
        bool(_lead_words(text))


def _lead_own_words(text: str) -> str:
    """What a lead-in says its steps are ("**Required Setup (manual steps):**" -> "required setup, manual steps"), ""
    when it only says that steps follow ("Next steps:", "Remaining:") or is a sentence."""
    words = re.sub(r"\s*\(([^()]*)\)", r", \1", text)  # "Setup (manual steps)" -> "Setup, manual steps"
    words = " ".join(re.sub(r"[*_#`]", " ", words).split()).strip(" :,").lower()
    return words if content_words(words) - _LIST_WORDS and len(words.split()) <= _LABEL_WORDS + 1 else ""


def _listed_steps(found: tuple[Sentence, ...]) -> list[tuple[Thread, set[int]]]:
    """(thread, the indices of the sentences it says) of the first items of each list a lead-in ("Remaining:",
    "**What's left**") or heading names as left to do, the first with what the lead says they are for ("Next (manual
    steps): ..."); of a list of checks left to the person, one thread."""
    threads: list[tuple[Thread, set[int]]] = []
    lead, taken, checks, leads_items, about = "", 0, 0, False, ""
    for index, sentence in enumerate(found):
        if not sentence.listed:
            text = sentence.text
            if sentence.heading and (not index or found[index - 1].heading != sentence.heading) and \
                    _lead_kind(sentence.heading) == NEXT and not text.endswith(("?", ":")) and (
                    _CHANGE_STEP_RE.match(text) or _CHECK_INTENT_RE.match(text) or _SHIP_STEP_RE.match(text)):
                threads.append((Thread(f"{NEXT}: {clause(text)}", True), {index}))
            lead, taken, checks = _lead_kind(text) if text.endswith(":") or _label(text) else "", 0, 0
            about = _lead_own_words(text) if lead else ""
            continue
        if sentence.nested and not leads_items:
            continue  # a detail of the step above it
        if not sentence.nested:
            # a name over sub-items ("Frontend:"), not a step of its own ("Add these secrets:"): they are the steps
            leads_items = sentence.text.endswith(":") and len(sentence.text.split()) <= _LABEL_WORDS and \
                index + 1 < len(found) and found[index + 1].nested
            if leads_items:
                continue
        kind = lead or _lead_kind(sentence.heading)
        if kind == TO_TEST:  # one thread for the list: its first check, and how many there are
            checks += 1
            thread, said = threads.pop() if checks > 1 else (None, set())
            first = thread.text.split(": ", 1)[1] if thread else clause(sentence.text.rstrip(":"), 12)
            threads.append((Thread(f"{kind}{f' ({checks} steps)' if checks > 1 else ''}: {first}", False),
                            said | {index}))
            continue
        checks = 0
        if kind and taken < _LIST_ITEMS and not _CONDITION_RE.match(sentence.text) and \
                not _NOTHING_LEFT_RE.match(sentence.text):  # "1. None needed for deploy: ..."
            about = about if lead or taken else _lead_own_words(sentence.heading)
            head = f"{kind} ({about})" if about and not taken else kind
            taken += 1
            threads.append((Thread(f"{head}: {clause(sentence.text.rstrip(':'))}", kind == "Next"), {index}))
    return threads


def _pending_todo_files(session: Session) -> list[Thread]:
    """Findings filed as `todos/NNN-pending-...md` (the file-todos convention), each by its file's name and the
    finding its text opens with, unless the session then marked them complete (`NNN-complete-...`, by a rename or a
    new file)."""
    names: dict[str, str] = {}
    for call in session.tool_calls:
        path = call.input.get("file_path") if call.name == "Write" else call.input.get("command")
        if call.is_error or not isinstance(path, str) or "todos/" not in path:
            continue
        for number in _COMPLETED_TODO_RE.findall(path):
            names.pop(number, None)
        match = _PENDING_TODO_RE.search(path) if call.name == "Write" else None
        if match:
            finding = _todo_finding(str(call.input.get("content", "")))
            names[match.group(1)] = match.group(2).replace("-", " ") + (f": {finding}" if finding else "")
    return [Thread(f"{TO_DO} {_cut(name, 160)}", False) for name in names.values()]


def _todo_finding(text: str) -> str:
    """What a todo file says the finding is: the first sentence of prose under a heading ("## Problem Statement"),
    past the front matter; "" when none."""
    first = next((s.text for s in sentences(text) if s.heading and not s.listed), "")
    return clause(first.rstrip(":"), _TODO_WORDS)


def _closing_threads(replies: list[Event], plan: str = "", prompt: str = "", built: bool = True,
                     checked: frozenset[str] = frozenset()) -> list[Thread]:
    """Questions, next steps, checks not run and TODOs in the assistant messages of the last turn (`prompt`: the one
    it answers; `built`: whether anything beside the plan was written; `checked`: the kinds of check that ran after the
    last edit, whose checks said not run or handed to the person are notes)."""
    threads: list[Thread] = []
    for position, event in enumerate(replies):
        last = position == len(replies) - 1 or bool(_ASKS_RE.search(event.text))
        found = sentences(_UNTICKED_RE.sub(r"\1", _DONE_ITEM_RE.sub("", event.text)))
        steps = _listed_steps(found) if last else []
        threads += [thread for thread, _ in steps]
        stepped = {index for _, said in steps for index in said}
        for index, sentence in enumerate(found):
            if index in stepped:
                continue
            text = sentence.text
            if text.endswith("?") or _WHICH_ASKED_RE.match(text):
                # Claude thinking aloud ("Wait, only 16ms?") is no question; before its last message,
                # only one put to the user counts.
                if len(text) > 12 and not _INTENT_RE.match(text) and not _ASIDE_RE.match(text) and \
                        not _COURTESY_RE.search(text) and (last or _PUT_TO_RE.search(text)):
                    choice = open_choice(found, index, prompt)  # "Decide: A or B": which of the options offered
                    offer = _OFFER_ASKED_RE.match(text) or _EXTRA_ASKED_RE.match(text) if choice is None else None
                    # a further step offered ("Would you like me to commit these changes?"): what is offered, not
                    # asked, and a note as an offer said is: the work it follows is done
                    said = choice if choice is not None else f"{OFFERED} {clause(offer.group(1))}" \
                        if offer is not None else _question(found, index, plan, built)
                    # "Next: `show` could use the flag too — want me to add it?": an offer under a lead, a note;
                    # "Want me to proceed?" after a plan still waits for its answer
                    offered = text.lower().startswith("next") and bool(_OFFER_IN_RE.search(text))
                    threads.append(Thread(said, offer is None and not offered))
            elif last and (offer := _OFFER_SAID_RE.match(text)) is not None:
                threads.append(Thread(f"{OFFERED} {clause(offer.group(1).rstrip('.!'))}", False))
            elif last and (unrun := not_run(found, index)) is not None:
                # a check of its kind ran after the last edit: the record says otherwise, unless it names another
                if unrun.qualified or not unrun.kinds & checked:
                    threads.append(Thread(unrun.thread, not unrun.kinds & checked))
            elif last and (handed := handed_check(text)) is not None and not handed_kinds(handed) & checked:
                threads.append(Thread(f"{NOT_RUN} {clause(handed, 14)} (left to the user)", False))
            elif last and (step := labelled_step(text)) is not None:
                threads.append(Thread(step, step.startswith(NEXT) and not _OFFER_IN_RE.search(text)))
            elif last and _VERDICT_RE.search(text):
                continue
            elif last and not text.lower().startswith(("if ", "when ")) and not text.endswith(":") and \
                    not _label(text) and not _NOTHING_LEFT_RE.match(text) and not _SAID_DONE_RE.search(text) and \
                    (LATER_RE.search(text) or NEXT_STEP_RE.search(text)):
                later = bool(LATER_RE.search(text))
                threads.append(Thread(f"{LATER if later else NEXT}: {clause(_ASIDE_LEAD_RE.sub('', text))}",
                                      not later and not LEFT_TO_PERSON_RE.search(text) and
                                      not _OFFER_IN_RE.search(text)))
            elif last and _TODO_LEFT_RE.search(text):
                threads.append(Thread(f"{TODO} {clause(text)}", False))
            elif last and (warned := caveat(found, index)) is not None:
                threads.append(Thread(f"{CAVEAT} {warned}", False))
        for match in _TODO_RE.finditer(event.text):
            threads.append(Thread(f"{TODO} {_cut(match.group(1).strip())}", False))
    return threads


def _answer_words(text: str) -> set[str]:
    """The content words, a long one by its first six letters: "deprecated" answers "deprecate", "charts" is no
    "chart" (a plural is another thing's)."""
    return {word[:6] if len(word) >= 7 else word for word in content_words(text)}


def _put_off_question(events: list[Event], start: int) -> list[Thread]:
    """The question of the agent's message that the person's last prompt (at `start`) put off or passed over, asking
    for other work ("separate thing while I think — ...", "meanwhile do the rest", "we use helm-unittest in the other
    charts, can you add tests for this one too" after "Should I bump `Chart.yaml` to `0.8.0` ...?"): a choice with its
    options ("Decide: ..."), else the question; nothing after it edited what it names."""
    if start <= 0:
        return []
    prompt = typed(events[start].text)
    found: tuple[Sentence, ...] = ()
    asked: list[int] = []
    reply = start
    for reply in range(start - 1, -1, -1):  # the last message of the turn before that asked the person something
        if events[reply].kind == "user":
            return []
        if events[reply].kind == "assistant" and events[reply].text.strip():
            found = sentences(events[reply].text)
            asked = [i for i, s in enumerate(found) if s.text.rstrip("*").endswith("?") and _YOU_RE.search(s.text)
                     and not _COURTESY_RE.search(s.text) and not _EXTRA_ASKED_RE.match(s.text)]
            if asked:
                break
    if not asked:
        return []
    at = asked[-1]
    if not _ANSWER_PUT_OFF_RE.search(prompt):
        around = " ".join(s.text for s in found[max(0, at - 1):at + 1])
        named = named_code(found[at].text)
        if _ANSWERED_RE.match(prompt) or _answer_words(around) & _answer_words(prompt) or any(
                name in edited_after(events, reply) for name in named):
            return []
    before = next((e.text for e in reversed(events[:start]) if e.kind == "user"), "")
    return [Thread(open_choice(found, at, before) or _question(found, at, "", True), True)]


def _steps_before_aside(events: list[Event], start: int, calls: list[ToolCall]) -> list[Thread]:
    """The next steps ("Ready to commit or merge.") closing the last turn that edited, when the turns after it
    changed nothing (an aside: "can you explain 3."): still left, as notes."""
    if start < 0 or any(_changes(call) for call in calls):
        return []
    for prompt in range(start - 1, -1, -1):
        if events[prompt].kind != "user":
            continue
        turn = events[prompt + 1:start]
        if any(e.tool is not None and _changes(e.tool) for e in turn):
            replies = [i for i in range(prompt + 1, start) if events[i].kind == "assistant" and events[i].text.strip()]
            if replies and failure_rerun(events, replies[-1]):
                return []  # the aside ran through what had failed ("use the kind-staging context")
            return [Thread(t.text, False) for t in _closing_threads([events[i] for i in replies[-1:]])
                    if t.text.startswith(_STEP_KINDS)]
        start = prompt
    return []


def _changes(call: ToolCall) -> bool:
    """An edit, or a commit, push or PR: a turn that took a step."""
    command = str(call.input.get("command", "")) if call.name == "Bash" else ""
    return not call.is_error and (call.name in WRITE_TOOLS or any(
        _ACTIONS[name].search(command) for name in ("commit", "push", "pr")))


def _offer_passed_over(session: Session, before: int) -> list[Thread]:
    """The last offer that closed a turn ("Want me to adjust anything in the README wording?", "If you want, I can
    also add tests for the backoff path.") and that the user answered with a question of their own ("can you double
    check that `--force` ...?"): a note when that question is the last prompt, unless a later edit touched a file it
    names; a prompt after it took another road. The step not taken, in the user's words, when the user refused its
    edit in words ("let's not make this change in this branch")."""
    events = session.events
    offers: list[tuple[int, tuple[Sentence, ...], str]] = []  # (the prompt after it, its message, the step)
    for index in range(1, before):
        said = sentences(events[index - 1].text) if events[index - 1].kind == "assistant" else ()
        last = said[-1].text if said and events[index].kind == "user" else ""
        asked = _OFFER_ASKED_RE.match(last) or _OFFER_SAID_RE.match(last)
        prompt = events[index].text.strip()
        if asked is not None and prompt.endswith("?") and not _ANSWER_RE.match(prompt):
            offers.append((index, said, asked.group(1).rstrip(".")))
    final = last_prompt_index(events[:before])
    for index, said, offer in reversed(offers):
        step = _offered(said, offer)
        if words := _edit_refused(events[index:], step):
            return [Thread(f'{NOT_DONE} {step}: "{words}"', False)]
        if index == final:
            named = {_file_name(name) for name in _FILE_RE.findall(offer)}
            edited = {_file_name(str(e.tool.input.get("file_path", ""))) for e in events[index:]
                      if e.tool is not None and e.tool.name in WRITE_TOOLS and not e.tool.is_error}
            if not named & edited:
                return [Thread(f"{OFFERED} {step}", False)]
    return []


def _edit_refused(events: list[Event], step: str) -> str:
    """The first sentence of the user's words refusing an edit the agent announced in the words of `step` ("I'll
    replace `getStagedFiles` to use `git diff --cached --name-only`"); "" when none was refused in words."""
    announced = ""
    for event in events:
        if event.kind == "assistant" and event.text:
            announced = event.text
        elif event.tool is not None and event.tool.name in WRITE_TOOLS and (words := refusal_words(event.tool)) \
                and len(named_words(announced) & named_words(step)) >= 2:
            return PROMPT_SENTENCE_RE.split(words, maxsplit=1)[0].rstrip(" .")
    return ""


def named_words(text: str) -> set[str]:
    """The words of a question or offer that name something ("README", "wording"), not the asking."""
    return content_words(text, 2, _GENERIC_QUESTION)


def _offered(said: tuple[Sentence, ...], offer: str) -> str:
    """The step offered, its first option only; one that names nothing itself ("fix this") after the sentence
    before it naming the most code ("The fix: replace `getStagedFiles` with ...")."""
    step = clause(_SECOND_OPTION_RE.split(offer, 1)[0])
    if len(named_words(step)) >= 2 or len(said) < 2:
        return step
    named = max((s.text for s in said[-4:-1]), key=lambda text: (text.count("`"), len(text.split())))
    return f"{step} ({clause(named, 14).rstrip('.:')})"  # a cut sentence keeps its …


def _file_name(path: str) -> str:
    return path.rsplit("/", 1)[-1].strip("`'\"")


def _ran_as_said(step: str, ran: list[str]) -> bool:
    """Whether a command run names every word of the step said ("continue the rebase": `git rebase --continue`)."""
    said = {word for word in re.findall(r"[a-z]{4,}", step.lower()) if word not in _GENERIC_QUESTION}
    return bool(said) and any(said <= set(re.findall(r"[a-z]+", command.lower())) for command in ran)


def _intent_left(replies: list[Event], tail: list[ToolCall]) -> Thread | None:
    """The step Claude announced last ("Now let me commit, push and reply") when the session ended
    before its tool record shows it done."""
    if not replies:
        return None
    found = sentences(replies[-1].text)
    intent = _INTENT_RE.match(found[-1].text) if found else None
    if intent is None:
        return None
    wanted = [name for name, words in ACTION_WORDS.items() if re.search(words, intent.group(1), re.IGNORECASE)]
    ran = [str(c.input.get("command", "")) for c in tail if c.name == "Bash" and not c.is_error]
    missing = [name for name in wanted if not any(_ACTIONS[name].search(cmd) for cmd in ran)]
    if wanted and not missing:
        return None
    if not wanted and tail and not any(c.is_error for c in tail) and (
            _CHECK_INTENT_RE.match(intent.group(1)) or any(c.name in WRITE_TOOLS for c in tail)
            or _ran_as_said(intent.group(1), ran)):
        return None  # a check, an edit or the command it named, that went through: the session stopped reporting
    return Thread(f"{INTENT_LEFT} {_cut(intent.group(1).rstrip('.:'))}", True)


# "perfect, thanks", "lgtm, thanks", "Thanks, that's what I needed.", "thanks, I'll open the PR myself": a last
# prompt that only thanks (and takes the rest over) asks for nothing
_THANKS_RE = re.compile(r"^\W*(?:(?:ok(?:ay)?|perfect|great|nice|cool|awesome|lgtm|looks good|good|got it|all good)"
                        r"[\s,.!-]+)*(?:thanks|thank you|thx|ty|cheers)\b(?:[\s,.!-]+(?:that's (?:what i needed|all|it|"
                        r"great|perfect)|i'll (?:take it from here|open|push|merge|commit|deploy|handle|do) [^?]*))?"
                        r"[\s.!]*$|^lgtm[\s.!]*$", re.IGNORECASE)


def open_threads(session: Session, checked: frozenset[str] = frozenset()) -> tuple[list[Thread], str]:
    """(the threads, the last event's kind among user / assistant / interrupt / api_error / tool); `checked`: the
    kinds of check that ran after the session's last edit (`Facts.checked_after_edit`)."""
    events = session.events
    start = last_prompt_index(events)
    turn = events[start + 1:]
    replies = [e for e in turn if e.kind == "assistant" and e.text.strip()]
    calls = [e.tool for e in turn if e.tool is not None]
    after_reply = next((i for i in range(len(turn) - 1, -1, -1) if turn[i].kind == "assistant"), -1)
    tail = [e.tool for e in turn[after_reply + 1:] if e.tool is not None]
    threads = _todo_threads(session) + _pending_todo_files(session)
    last = next((e for e in reversed(events) if e.kind in ("user", "assistant", "interrupt", "api_error", "tool")),
                None)
    kind = last.kind if last is not None else ""
    refused = next((c for c in reversed(calls) if c.rejected), None)
    answered = refused is not None and any(e.tool is refused for e in turn[:after_reply])
    if kind == "interrupt" or (refused is not None and refused is (calls[-1] if calls else None) and not answered):
        kind = "interrupt"
        if refused is not None and refused.name == "ExitPlanMode":
            plan = str(refused.input.get("plan", ""))
            title = _PLAN_WORD_RE.sub("", _first_line(plan)) or "the plan"
            steps = steps_of(plan)  # what the plan would have done first: its title seldom names the code
            first = f"; first step: {_short_paths(clause(steps[0][0].replace('**', ''), 12))}" if steps else ""
            threads.append(Thread(f"{PLAN_REFUSED} {_cut(title, 160)}{first}", True))
        else:
            # what it was doing: the last sentence, after the one of the last three naming most when the last is
            # short ("Let me restore them."), never the run of three
            said = [s.text for s in sentences(replies[-1].text)[-3:]] if replies else []
            named = max(said, key=lambda t: (len(t.split()), t.count("`"))) if said else ""
            parts = [named] if not said or named == said[-1] or len(said[-1].split()) >= 8 else [named, said[-1]]
            doing = "; ".join(clause(t, 16).rstrip(".") for t in parts)
            if doing:
                threads.append(Thread(f"{INTERRUPTED} {doing}", True))
            else:  # stopped before Claude said anything: what it was asked is what was left
                asked = first_line(typed(events[start].text), 160) if start >= 0 else ""
                threads.append(Thread(f"{INTERRUPTED_ON} {asked or 'the last step'}", True))
    elif kind == "api_error" and last is not None:
        threads.append(Thread(f"{API_ERROR} {first_line(last.text, 120)}", True))
    elif kind == "user" and last is not None and not _THANKS_RE.match(typed(last.text).strip()):
        threads.append(Thread(f"{UNANSWERED} {clause(typed(last.text))}", True))
    else:
        plan = plan_title(session)
        built = _wrote_beside_plan(session)
        if plan and not built:  # its subject by the plan's title, the verb the lead says dropped
            threads.append(Thread(f"{PLAN_NOT_BUILT} {_cut(_PLAN_VERB_RE.sub('', _PLAN_WORD_RE.sub('', plan)), 160)}",
                                  True))
        threads += _closing_threads(replies, plan, events[start].text if start >= 0 else "", built, checked)
        threads += _steps_before_aside(events, start, calls) + _put_off_question(events, start)
        left = _intent_left(replies, tail)
        if left is not None:
            threads.append(left)
        closing = next((i for i in range(len(events) - 1, -1, -1) if events[i].kind == "assistant" and events[i].text),
                       len(events))
        threads += [Thread(text, False) for text in [*offers_not_taken(events, closing), *caveats(events, closing),
                                                          *steps_not_taken(events), *findings_left(events),
                                                          *merge_left(events), *checks_left_to_user(events),
                                                          *review_files_left(events, session.cwd)]]
        threads += [t for t in _offer_passed_over(session, closing)  # not again one offers_not_taken named
                    if not any(t.text.split(": ", 1)[1] in said.text for said in threads)]
    threads += [Thread(text, False) for text in review_reply_left(events)]  # however the session ended
    # a checklist item a closing lead already names ("Next steps:\n- [ ] Deploy") is not said twice
    threads += [t for t in _checklist_threads(session) if not any(t.text.split(": ", 1)[1] in said.text
                                                                  for said in threads)]
    unique = list({t.text: t for t in map(_without_lead, threads)}.values())
    return [t for t in unique if not _said_by_another(t, unique)][:MAX_THREADS], kind


def _without_lead(thread: Thread) -> Thread:
    """"Later: And yes, investigating ..." -> "Later: Investigating ...": a reply's connective, no part of the step."""
    kind, sep, body = thread.text.partition(": ")
    lead = _LEAD_RE.match(body) if sep else None
    if lead is None:
        return thread
    rest = body[lead.end():]
    return Thread(f"{kind}: {rest[:1].upper()}{rest[1:]}", thread.blocking)


def _said_by_another(thread: Thread, threads: list[Thread]) -> bool:
    """A caveat read with the sentence before it ("Caveat: If the transcript was ... `$HOME`: This is an acceptable
    tradeoff ...") whose sentence before another thread already says (a review's finding quoting it); a comment left in
    code ("Left in `types.go`: TODO: Verify ...") that another thread already quotes (the TODO of the agent's reply)."""
    if thread.text.startswith(LEFT_IN_CODE):
        comment = thread.text.split(": ", 1)[1][:40]
        return any(comment in other.text for other in threads if other is not thread)
    before = thread.text.removeprefix(f"{CAVEAT} ").split(": ", 1)
    return thread.text.startswith(f"{CAVEAT} ") and len(before) == 2 and any(
        before[0].rstrip("…") in other.text for other in threads if other is not thread)


def plan_title(session: Session) -> str:
    """The title of the last plan the session wrote (a plan file, or one put to the user in plan mode)."""
    for call in reversed(session.tool_calls):
        text = call.input.get("plan") if call.name == "ExitPlanMode" else \
            call.input.get("content") if call.name == "Write" and plan_file(call.input.get("file_path")) else None
        if isinstance(text, str) and text.strip():
            return _first_line(text)
    return ""


_PLAN_WORD_RE = re.compile(r"^plan:\s*", re.IGNORECASE)  # "Plan: Add Unit Tests": the thread says it is a plan
_PLAN_VERB_RE = re.compile(r"^implement(?:ing|ation of)?\s+", re.IGNORECASE)  # the lead already says it
_PATH_RE = re.compile(r"`(?:[\w.-]+/)+([\w.-]+)`")


def _short_paths(text: str) -> str:
    """"`cmd/entire/cli/checkpoint/checkpoint_test.go`" -> "`checkpoint_test.go`": a reader knows a file by its name."""
    return _PATH_RE.sub(r"`\1`", text)


def _first_line(plan: str) -> str:
    """A plan's title: its first line with words, its heading marks dropped."""
    return next((line.lstrip("# ").strip() for line in plan.splitlines() if line.strip()), "")


def _wrote_beside_plan(session: Session) -> bool:
    """Whether the session itself wrote anything but a plan file."""
    return any(c.name in WRITE_TOOLS and not c.is_error and not plan_file(c.input.get("file_path"))
               for c in session.tool_calls)


def status_of(session: Session, threads: list[Thread], last_kind: str, committed: bool) -> str:
    """done | partial | abandoned | exploratory: nothing changed (or only a plan written) is exploratory
    (abandoned when the user stopped it); changes with work left are partial."""
    changed = committed or _wrote_beside_plan(session) or any(r.files_written for r in session.subagents)
    if not changed:
        return "abandoned" if last_kind == "interrupt" else "exploratory"
    return "partial" if any(t.blocking for t in threads) else "done"
