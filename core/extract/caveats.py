"""Caveats the agent named in passing, mid-session too, that nothing later resolved: a limitation of what it
delivered (labelled "Limitation:", "Notable:", "The catch:"; a change marked breaking; one accepted "anyway"; a bug
found and left as pre-existing), work it deferred or judged and left (lower risk, a merge conflict foreseen), a check
it did not run, a temporary thing to clean up, a step left to the person. A sentence is a caveat when one family of
shapes below says so and it is no question and no step announced (and taken next); it is resolved when a later edit
touched the code it names, a later prompt took it up and an edit followed, a later report says it done, a passing
check ran after an unverified claim, a temporary file was removed, a later merge met a conflict foreseen, or a later
message names it again (that one is the thread). Each renders as one short clause. Beside them, what the code it
wrote says it leaves undone, in a comment no later write took out ("Left in `resume.go`: TODO: ...").
"""

from __future__ import annotations

import re

from eywa.core.extract import commands
from eywa.core.extract.claude_words import Sentence, heading_name, outcome, sentences
from eywa.core.extract.key_files import DOC_FILE_RE
from eywa.core.extract.said_left import (
    ASIDE_LEAD,
    NOTHING,
    THREAD_WORDS,
    YES_RE,
    clause,
    edited_after,
    failure_rerun,
    named_code,
)
from eywa.core.handoffs.fixed_words import CAVEAT, LEFT_IN_CODE
from eywa.core.retrieval.query_tokens import content_words
from eywa.core.session import WRITE_TOOLS, Event, ToolCall
from eywa.core.sources.comments import LEFT_FOR_LATER_RE, LEFT_UNDONE_RE, written

MAX_CAVEATS = 2
MAX_LEFT_IN_CODE = 2  # comments of the code written that say it leaves something undone
_FEWEST_WORDS = 7  # of a caveat that names what it is about

# "Limitation: ...", "Notable: `RemoveStanza` leaves a leading blank line ...", "The catch: GitHub only loads ...": a
# caveat the agent labelled so
_LABELLED = r"(?:the |one )?(?:limitation|caveat|notable|gotcha|catch|warning)s?"
# "Worth flagging:", "Something to be aware of:", "One gap in the ctx handling:", "A limit on what this proves:": what
# follows is flagged to the person
_FLAGGED = (r"(?:one |a )?(?:thing|something)s? (?:to|worth) (?:be aware of|flag|note|know|keep in mind|watch)|"
            r"worth (?:flagging|noting|knowing)|heads[- ]up|one (?:gap|concern|risk)|a limit")
_FLAG_LEAD = rf"^\W*(?:{_FLAGGED})\b[^:.]{{0,60}}:\W*?(?=\w|`)"
_FLAG_LEAD_RE = re.compile(_FLAG_LEAD, re.IGNORECASE)
# "Limitations:", "**Known issues**", "### Caveats": a label alone, whose list items are each a caveat
_LABEL_ONLY_RE = re.compile(rf"^\W*(?:known (?:limitations?|issues?)|{_LABELLED})\W*$", re.IGNORECASE)
_NOTHING_RE = re.compile(f"^{NOTHING}", re.IGNORECASE)
# "There will be minor merge conflicts in `hooks.go`": a conflict foreseen with other work, not one met
_FORESEEN = (r"\bthere (?:will|would|may|might|could) (?:likely |probably )?be (?:some |a few |minor )?"
             r"(?:merge )?conflicts?\b")
# Each family: a shape of sentence that names something left. Named so a reader sees why a line is a caveat.
_FAMILIES: tuple[tuple[str, str], ...] = (
    # "not yet tested", "I couldn't verify ...": a claim with no check behind it
    ("unverified", r"\bnot (?:yet )?(?:been )?(?:tested|verified|exercised)|\b(?:untested|unverified)\b|"
                   # "haven't been exercised against real Postgres", "I can't check that here": no check behind it
                   r"\b(?:haven't|have not|hasn't|has not) (?:yet )?been (?:exercised|run|tried)\b|"
                   r"\b(?:can't|cannot) (?:check|verify|test|confirm) (?:that|this|it)\b|"
                   # "I cannot build the app target or look at the screen in dark mode here": no way to check here
                   r"\b(?:can't|cannot) (?:build|run|launch|open|look at)\b[^.]{0,80}\b(?:from )?here\b|"
                   r"(?:haven't|have not|didn't|did not|couldn't|could not) (?:yet )?(?:(?:test|verify)(?:ed)?\b|run\b"
                   r"(?! (?:into|out)\b)|check(?:ed)?\b(?! in\b))(?! (?:any|anything|the existing))|"
                   # "The `buildinfo` package name issue doesn't reproduce with the project's lint config": not fixed
                   r"\b(?:doesn't|does not|didn't|did not|couldn't|could not|can't|cannot) (?:seem to )?reproduce\b|"
                   r"\bunable to reproduce\b"),
    # "expect conflicts with PR #41", "deferred as too complex", "in a follow-up", "Worth fixing separately",
    # "Address P2 items in follow-up PRs", "This is an acceptable tradeoff, but worth a comment": work judged and left
    ("deferred", r"\bonly documented (?:in|by)|\bexpect (?:some |a few )?(?:merge )?conflicts?|"
                 r"\bwill (?:likely |probably )?conflict with|"
                 rf"{_FORESEEN}|"
                 r"\bdefer(?:red|ring)? (?:as (?:too|out of|a follow)|(?:it |this |that )?(?:to|for|until) (?:a |the )?"
                 r"(?:later|follow|future|next|separate|another))|"
                 r"\b(?:left|leav(?:e|ing)) (?:it |this |that |them )?(?:for|as) (?:a )?(?:follow-?up|later|future)|"
                 r"\bout of scope for (?:this|now)|\btoo complex (?:for|to) |"
                 r"\bin (?:a )?(?:later |separate |future )?follow-?up(?:s| prs?)?\b|"
                 r"\bfollow-?up (?:prs?|issues?|changes?|tasks?|migrations?|commits?|tickets?)\b|"
                 # "I'm leaving that for a separate PR", "it can go in a separate one", "I'll keep it out of this
                 # migration", "I will leave that as is for now", "I have left it as is for now": put off, by the
                 # agent's choice
                 r"\bleav(?:e|ing) (?:it |this |that |them )?for (?:a |the )?(?:separate|later|future|next)\b|"
                 r"\b(?:can|could|should|will) go in(?:to)? a separate\b|"
                 # "I'm keeping it out of this PR", "I'm leaving rotation out of this first version", "I will not do
                 # that in this change"
                 r"\b(?:keep(?:ing)?|kept|leav(?:e|ing)|left)\b[^.;]{0,40}\bout of this\b|"
                 # "That's the uninstall side, so I'm keeping this change to install": the rest left out of it
                 r"\b(?:keep(?:ing)?|limit(?:ing)?) (?:this|the) (?:change|fix|pr) (?:scoped |limited )?to\b|"
                 # "I'm not switching the allocator in this change", "leaving the sleep as it is in this change"
                 r"\b(?:will not|won't|not going to|i'm not|i am not)\b[^.;]{0,60}\b(?:in|as part of) this "
                 r"(?:change|pr|patch|commit|task|pass)\b|"
                 r"\b(?:leav(?:e|ing)|(?<!nothing )left|not touch)\b[^.;]{0,60}\b(?:for now|in this "
                 r"(?:change|pr|patch|commit|pass))\b|"
                 # "I'll come back to that after this fix", "will return to it after the lint pass": a promise
                 r"\b(?:i'll|i will|we'll|we will|will) (?:come back to|circle back to|return to) "
                 r"(?:it|that|this|them|those)\b|"
                 # "left a `// TODO: honor Retry-After on 429` at `pushChanges.ts:27` to handle later"
                 r"\bto (?:handle|fix|address|do|revisit|tackle) later\b|"
                 # "Proper DMA-backed transfers stay as a TODO."
                 r"\b(?:stays?|remains?) (?:as )?(?:a )?`?TODO\b|"
                 r"(?<!\bwe )(?<!\bwhich )\b(?:fix|address|handle|tackle|revisit)(?:ing|ed)? "
                 r"(?:it |this |that |these |them )?"
                 r"separately\b|"
                 r"\bworth (?:fixing|doing|documenting|revisiting|addressing|thinking about|a comment)\b|"
                 # "worth checking prod logs / APM for ...", not the lead of a list of questions ("worth checking:")
                 r"\bworth (?:checking|verifying|investigating|looking into|confirming|monitoring)\b(?!\s*:)|"
                 # "..., but it's only called at session start, so it's lower risk": judged and left for now
                 r"\b(?:lower|low) (?:risk|priority)\b"),
    # "Known limitation: ...", "Limitation: For private forks, ...", "The `[0.4.2]` section is a placeholder"
    ("limitation", rf"\bknown (?:limitation|issue)|^{_LABELLED}\s*[:—–-](?!\s*(?:{NOTHING}|(?:no|0)\b))|"
                   rf"{_FLAG_LEAD}|"
                   # "(the summarizer only supports JSONL anyway, so it will gracefully skip Gemini transcripts)": a
                   # limitation accepted as it is
                   r"^(?=.*\banyway\b)(?=.*(?:\bonly\b|-only\b|\b(?:doesn't|does not|don't|do not|can't|cannot) "
                   r"(?:support|handle|parse|read|work)))|"
                   # "Settings key (breaking change):": a change marked as breaking what used the old one
                   r"\(breaking(?: changes?)?\)|^breaking changes?\s*:|"
                   # "The lint error in `x.go:488` is a pre-existing bug": found, and left as not this work's
                   # ("..., so I'll quote the variables": fixed next)
                   r"^(?!.*\b(?:diagnostics?|warnings?|hints?|lsp|fix(?:ed|es|ing)?|resolved|addressed|i'll|i will|"
                   r"let me)\b)"
                   r".*?\bpre-?existing (?:\w+ )?(?:bugs?|issues?|errors?|failures?|problems?)\b|"
                   r"\b(?:is|are|'s) (?:(?:a|an|just|still|only) )*placeholders?\b|"
                   r"\bplaceholders? (?:values?|sections?|for)\b|"
                   r"\b(?:remove|replace|fill in) the placeholders?\b|"
                   # "`examples/settings.toml` still uses `kebab-case` keys and will not load as-is"
                   r"\b(?:will not|won't|can't|cannot) (?:load|work|build|compile|parse|run)\b[^.]{0,30}"
                   r"\b(?:as[- ]is|yet|until)\b"),
    # a temporary file or debug code still to clean up
    ("temporary", r"\b(?:temporary|throwaway|scratch) (?:`[^`]+` )?(?:file|script|branch|directory|folder|workaround|"
                  r"lines?|logging|logs?|prints?|statements?|code)s?\b.*"
                  # (not a report of it gone: "the scratch directory was removed afterwards")
                  r"(?<!\bwas )(?<!\bwere )(?<!\bbeen )(?<!\bis )(?<!\bare )\b(?:remove|delete|revert)"
                  r"(?![^.]*\bautomatic)|"
                  r"\b(?:remove|delete|clean up|revert) (?:the |this )?(?:temporary|temp|debug)\b|"
                  # "Scratch only, will delete before wrapping up", "a scratch file ... — I'll delete it once we're
                  # done": a removal promised
                  r"\b(?:temporary|throwaway|scratch)\b[^.]{0,60}\b(?:i'll|i will|will|going to) "
                  r"(?:delete|remove|clean up|drop)\b|"
                  # "It needs to be deleted once the fix is confirmed", "Keep it until we've seen a green CI run,
                  # then drop it": to go, at a time still to come
                  r"\bneeds? to be (?:deleted|removed|reverted) (?:once|when|after|before)\b|"
                  # "I've put a temporary `.limit(1000)` on the input read; it has to go before this is merged"
                  r"\btemporary\b.{0,160}?\b(?:has|have|needs?|must|should) to go\b.{0,30}?\bbefore\b|"
                  # "...; should come out before this ships"
                  r"\bshould (?:come out|be (?:removed|deleted|reverted|taken out))\b[^.]{0,40}\bbefore\b|"
                  r"\bkeep (?:it|this|that|them) until\b[^.]{0,80}\bthen (?:drop|remove|delete|revert)\b|"
                  # "I will take it out once the tests are green", "It's for inspection only, delete it before
                  # merging", "I'll add a debug print temporarily and take it out", "It's throwaway; delete before
                  # merge": a removal promised for later
                  r"\b(?:take (?:it|them|this|that) out|(?:delete|remove|drop) (?:it|them|this|that))\b[^.]{0,40}"
                  r"\b(?:once|before|when|after)\b|"
                  r"\b(?:temporarily|throwaway)\b[^.]{0,80}\b(?:take (?:it|them) out|delete|remove)\b"),
    # "If Windows support becomes important later, you could ...", "You may need to reload ...": left to the person
    ("left to the person", r"\bnot something (?:i|we) can (?:do|check|verify|test|run)\b|"
                           # "I've left it at 100 until you decide", "is something you'll have to decide": a choice
                           # put to the person without a question
                           r"\buntil you (?:decide|pick|choose)\b|\bsomething you(?:'ll| will)? (?:have|need) to "
                           r"decide\b|"
                           r"^(?:if|when)\b[^.]{0,80}\b(?:later|in the future|becomes? (?:important|necessary|"
                           r"a problem)|continues?|continue to|keep (?:hitting|seeing|getting)|still (?:see|hit|get))"
                           r"\b[^.]*\b(?:you|we) (?:could|can|would|might)\b|"
                           r"\b(?:delete|remove|clean up|revert|close|archive)\b[^.]{0,60}\bmanually\b|"
                           r"\bworth (?:filing|opening|raising|reporting) (?:an? |the )?(?:issue|bug|ticket)|"
                           r"\bnot (?:be )?worth (?:implementing|doing|adding|building)|"
                           r"\bclean-?up opportunit(?:y|ies)|\byou (?:may|might) (?:also )?need to\b|"
                           r"\byou can\b[^.]{0,60}\blater\b(?=\s*(?:[.,;:!)—–]|$|if\b|when\b|once\b|as\b))|"
                           # "If you have existing URLs ..., you'll need to remove those angle brackets manually"
                           r"^(?:if|when|once)\b[^.]{0,100},\s*you(?:'ll|'d| will| would| may| might)? "
                           r"(?:also |still )?(?:need|have|want) to\b"),
)
_FAMILY_RES = tuple((name, re.compile(pattern, re.IGNORECASE)) for name, pattern in _FAMILIES)
# A piece of every family above: substring tests rule out most messages before any regex runs.
_PIECES = ("tested", "verified", "haven't", "have not", "didn't", "did not", "couldn't", "could not", "documented",
           "conflict", "follow", "defer", "left ", "scope", "complex", "limitation", "caveat", "notable", "gotcha",
           "catch", "warning", "existing", "risk", "priority", "breaking", "anyway", "reproduce",
           "placeholder", "temp", "debug", "later", "future", "becomes", "continue", "keep ", "still ", "manually",
           "worth", "opportunit", "separately", "need to", "have to", "want to", "known ", "exercised", "can't",
           "cannot", "separate", "for now", "out of this", "throwaway", "scratch", "until", "to be deleted",
           "to be removed", "to be reverted", "not something", "won't", "will not", "come out", "unverified", "todo",
           "back to", "return to", "flag", "aware", "heads", "gap", "concern", "a limit", "thing to", "one risk",
           "in this ", "change to", "be deleted", "be removed", "be reverted", "you decide", "you pick", "you choose",
           "to decide", "take it out", "take them out", "delete it", "remove it", "delete them", "remove them",
           "temporarily", "drop it", "drop them")
# "Let me clean up the debug code": a step announced, and taken next
_ANNOUNCED_RE = re.compile(r"^(?:(?:now|next|first|ok(?:ay)?)[,.]?\s+)?(?:let me|let's|i'll|i will|i'm going to)\b"
                           r"(?!\s+(?:leave|keep|not)\b)", re.IGNORECASE)  # "I will leave that as is for now": put off
_POINTER_LEAD_RE = re.compile(r"^(?:these|those|this|that)\b(?= \w)", re.IGNORECASE)
_POINTING_RE = re.compile(r"^(?:this|that|it|these|those|both)\b", re.IGNORECASE)
# "I'll come back to that after this fix": what "that" is, the sentence before says
_RETURN_RE = re.compile(r"^(?:i'll|i will|we'll|we will) (?:come back to|circle back to|return to) "
                        r"(?:it|that|this|them|those)\b", re.IGNORECASE)
# "I'll leave the counter cache alone for now", "I will leave that as it is for now": a deferral of what came before
_LEAVING_RE = re.compile(r"^(?:i(?:'ll| will|'m going to| am going to)|we(?:'ll| will)) (?:leave|keep|skip)\b",
                         re.IGNORECASE)
# "... and remove them once I have the cause": a temporary thing announced, to go later
_REMOVED_LATER_RE = re.compile(r"\b(?:remove|delete|drop|revert|clean up|take (?:it|them) out)\b[^.]{0,40}"
                               r"\b(?:once|after|when|later|before)\b", re.IGNORECASE)
_CLAUSE_MARKS = (", ", "; ", " — ", " – ")  # where a clause of a long caveat may start
_LAST_CLAUSE_RE = re.compile(r",\s+(?:so|but|and|which)\s+", re.IGNORECASE)
# "(not during a git hook)": an aside a long caveat can lose, from the start of the spaces before it (not each)
_PAREN_ASIDE_RE = re.compile(r"(?<!\s)\s*\((?!\s*\))[^()`]*\)")
# "... this could be:", "Possible causes:": the items after it are guesses at a cause, none a caveat the agent holds
_GUESSES_RE = re.compile(r"\b(?:could|might|may) be\s*:$|\bpossib(?:le|ly|ilities)\b[^:]{0,60}:$", re.IGNORECASE)
# "You may want to delete that one manually", "Not something I can do from here": of the last clause before it
# "I will take it out once the tests are green": what "it" is, the sentence before says
_REMOVAL_PROMISE_RE = re.compile(r"^(?:i'll|i will|will) (?:take|delete|remove|drop) (?:it|them)\b", re.IGNORECASE)
_THAT_ONE_RE = re.compile(r"\b(?:that|this) one\b|^not something\b", re.IGNORECASE)
# Read on a phone: no "`file.go:12-30` —", "Limitation:" or "Note:" (the thread says "Caveat:") before it, no link,
# no code longer than a name
_LOCATION_RE = re.compile(rf"^(?:`?[\w./-]+\.\w{{1,5}}(?::[\d-]+)?`?|{_LABELLED}|{ASIDE_LEAD})\s*(?:—|–|-|:)\s+",
                          re.IGNORECASE)
_URL_RE = re.compile(r":?\s*<?https?://\S+>?")
_CODE_SPAN_RE = re.compile(r"\s*(?:(?:using|with|via|like|as) )?`[^`]*`")
_LONG_CODE = 40  # characters of a code span: longer is a code dump
_SPAN_RE = re.compile(r"`[^`\n]+`")
_REMOVES_RE = re.compile(r"(?:^|[;&|(]\s*|\bgit\s+)rm\s")  # a step that removes files: `rm`, `git rm`, not `--rm`
_TEMP_RE = re.compile(r"\btemp(?:orary)?\b|\bdebug\b|\bdiagnos\w*|\binstrumentation\b|\bthrowaway\b|\bscratch\b")
_UNCHECKED_RE = re.compile(r"\b(?:test|verif|run|check)")
# "haven't been exercised against real Postgres", "I can't check that here": no check run here resolves it
_ELSEWHERE_RE = re.compile(r"\b(?:real|live|production|staging|device|emulator|simulator|browser|by hand|here|"
                           r"in this environment|sandbox)\b", re.IGNORECASE)
# A later report that says the caveat no longer holds.
_PASSED_RE = re.compile(r"\b(?:all (?:\w+ )?tests? pass|tests? (?:now )?pass(?:es|ed)?|verified|confirmed)\b",
                        re.IGNORECASE)
# A conflict foreseen with other work: only a later merge or rebase meets it (an edit of the files it names does not)
_FORESEEN_RE = re.compile(_FORESEEN, re.IGNORECASE)
# "..., but they should be straightforward to resolve": a reassurance, no part of what is left
_REASSURED_RE = re.compile(r",?(?<!\s)\s+but (?:it|they|this|that|these)(?:'s| is| are)? (?:should |will |would )?"
                           r"(?:only )?(?:be )?(?:easy|straightforward|simple|trivial|quick)\b"
                           r"(?! to (?:miss|overlook|forget|break)).*$", re.IGNORECASE)
# "not ... in this change", "for now", "in a follow-up", "its own PR": put off to later work, not judged worth fixing
_PUT_OFF_RE = re.compile(r"\b(?:in|out of) this (?:change|pr|patch|commit|pass|task)\b|\bfor now\b|"
                         r"\bfollow-?up\b|\bseparate(?:ly)?\b|\b(?:its|their) own (?:pr|change)\b|\bdefer|\blater\b",
                         re.IGNORECASE)
_TODO_SPAN_RE = re.compile(r"\b(?:TODO|FIXME)\b")
_MERGED_RE = re.compile(r"\bgit\s+(?:merge|rebase|pull)\b")
_FILE_SPAN_RE = re.compile(r"`[^`\s]*[/.][^`\s]*`")  # `src/sync/pushChanges.ts:27`
# "Removed the debug logging", "The temporary debug `puts` is gone", "removing the debug `puts`"
_CLEANED_RE = re.compile(r"\b(?:cleaned up|removed|removing|deleted|took out|taken out|(?:is|are) gone)\b",
                         re.IGNORECASE)
# What the agent posted on GitHub in its own words: a review reply (`gh api .../replies -f body="..."`), a PR comment.
_POSTED_RE = re.compile(r"\bgh\s+(?:api\b[^\n]*?\s(?:-f|-F|--field|--raw-field)\s+body=|"
                        r"pr\s+(?:comment|review)\b[^\n]*?\s(?:--body|-b)\s+)([\"'])(.+?)(?<!\\)\1", re.DOTALL)


def posted_reply(command: str) -> str:
    """What a command posts on GitHub in the agent's words (a review reply, a PR comment), its shell escapes undone;
    "" for any other command."""
    posted = _POSTED_RE.search(command)
    return commands.unescaped(posted.group(2)) if posted else ""


def _plain(said: str) -> str:
    """The sentence without its location, links and long code."""
    said = _URL_RE.sub("", _LOCATION_RE.sub("", said))
    return _CODE_SPAN_RE.sub(_short_code, said).strip()


def _short_code(span: re.Match[str]) -> str:
    """A code span as a caveat keeps it: a long one goes, with the "using" that leads it, or, with no such lead (the
    sentence's own word: "The clean fix is `...`, but ..."), its start stays."""
    lead, code = span.group(0).split("`")[:2]
    if len(code) < _LONG_CODE:
        return span.group(0)
    return "" if lead.strip() else f"{lead}`{code[:_LONG_CODE // 2].rstrip()}…`"


def kind_of(said: str) -> str | None:
    """The family that makes the sentence a caveat, None when none does or it is a question or a step announced (and
    taken next), unless what it announces is to put something off ("I will do v1 in this pass and leave the v2
    routers on the old middleware for now", "I will add temporary debug lines ... and remove them once ...")."""
    if said.endswith("?") or not _may_hold_one(said):
        return None
    kind = next((name for name, pattern in _FAMILY_RES if pattern.search(said)), None)
    if kind and _ANNOUNCED_RE.match(said) and not (kind == "deferred" or _REMOVED_LATER_RE.search(said)):
        return None
    return kind


def caveat(found: tuple[Sentence, ...], index: int) -> str | None:
    """The sentence at `index` as a caveat, one clause; a lead-in ("If you continue to hit timeouts, you could also
    consider:") with the first two items of its list."""
    said = found[index].text
    if _LABEL_ONLY_RE.match(said):
        return None  # its items say the caveats
    if _under_label(found, index):
        said = _REASSURED_RE.sub("", _plain(said))
        return clause(said) if len(said.split()) >= 3 and not _NOTHING_RE.match(said) else None
    if kind_of(said) is None or _guessed(found, index):
        return None
    said, items = _REASSURED_RE.sub("", _unflagged(_plain(said))), []
    if said.endswith(":"):  # a lead-in says it with its list ("Settings key (breaking change): `a` → `b`")
        items = [clause(s.text, 6).rstrip(".…") for s in found[index + 1:index + 3] if s.listed]
        if not items:
            return None
        said = f"{said} {'; '.join(items)}"
    if len(re.findall(r"[A-Za-z]\w*", said)) < _FEWEST_WORDS and not _POINTING_RE.match(said):
        return None  # "Not blocking — just worth thinking about.": says nothing on its own
    if items:
        return clause(said)
    leaving = _LEAVING_RE.match(said)
    pointing = _POINTING_RE.match(said) or _RETURN_RE.match(said) or _REMOVAL_PROMISE_RE.match(said)
    if (pointing or _THAT_ONE_RE.search(said) or leaving) and index \
            and not found[index - 1].text.endswith((":", "?")):
        # "This adds complexity and may not be worth implementing initially": what "this" is, the sentence before says
        before, room = _plain(found[index - 1].text), THREAD_WORDS // 2
        if leaving:  # "I'll leave the counter cache alone for now": what that leaves, the last clause before says
            before = _LAST_CLAUSE_RE.split(before)[-1]
        elif not pointing:  # "delete that one": the one the last clause before names, whole
            before, room = _LAST_CLAUSE_RE.split(before)[-1], THREAD_WORDS - len(said.split())
        before = clause(before[:1].upper() + before[1:], room).rstrip(".…")
        if before:  # (a sentence before of nothing but code or a link says nothing)
            return f"{before}: {clause(_from_caveat(said, THREAD_WORDS // 2, 4), THREAD_WORDS // 2)}"
    subject = heading_name(found[index].heading) if found[index].heading and not named_code(said) else None
    if subject:
        said = f"{subject}: {said}"
    # "If you have existing URLs ..., you'll need to remove ... manually": the condition alone says nothing left
    words = 2 * THREAD_WORDS if said.lower().startswith(("if ", "when ")) else THREAD_WORDS
    if len(said.split()) > words:  # "... at session start (not during a git hook), so it's lower risk": the aside goes
        said = _PAREN_ASIDE_RE.sub("", said)  # first, the reason it was left stays
    return clause(_from_caveat(said, words), words)


def _unflagged(said: str) -> str:
    """The sentence without the words that flag it ("Worth flagging: `x.py` uses SQLite" -> "`x.py` uses SQLite"),
    capitalised; a pointing word it starts with then names nothing before ("these counters live in ...")."""
    rest = _FLAG_LEAD_RE.sub("", said)
    if rest == said:
        return said
    rest = _POINTER_LEAD_RE.sub("the ", rest)
    return rest[:1].upper() + rest[1:]


def _from_caveat(said: str, words: int, fewest: int = _FEWEST_WORDS) -> str:
    """The sentence from the clause that makes it a caveat, when a cut at `words` would lose that clause ("We do have
    historical logins ..., so a backfill is possible, but it touches 2M rows; I will keep it out of this migration")."""
    found = next((m for _, pattern in _FAMILY_RES if (m := pattern.search(said))), None)
    if found is None or found.end() <= len(clause(said, words).rstrip("…")):
        return said
    start = max(said.rfind(mark, 0, found.start()) for mark in _CLAUSE_MARKS)
    rest = said[start:].lstrip(",;:—– ")
    return rest[:1].upper() + rest[1:] if start > 0 and len(rest.split()) >= fewest else said


def _under_label(found: tuple[Sentence, ...], index: int) -> bool:
    """An item of a list under a caveat label alone, as its lead-in ("Limitations:") or its heading; or the first
    sentence under such a heading ("## Limitation" over "The full matrix is loaded into memory ...")."""
    heading = found[index].heading or ""
    # a heading of issues ("### Known issues") lists findings, which said_left names "Not fixed (review)"
    labelled = bool(_LABEL_ONLY_RE.match(heading)) and not heading.lower().rstrip(" :").endswith(("issue", "issues"))
    if not found[index].listed:
        return labelled and (not index or found[index - 1].heading != heading)
    lead = next((s for s in reversed(found[:index]) if not s.listed), None)
    return labelled or lead is not None and bool(_LABEL_ONLY_RE.match(lead.text))


def _guessed(found: tuple[Sentence, ...], index: int) -> bool:
    """An item of a list whose lead offers guesses ("this could be:"): one possibility among several."""
    lead = next((s for s in reversed(found[:index]) if not s.listed), None) if found[index].listed else None
    return lead is not None and bool(_GUESSES_RE.search(lead.text))


def _checked_after(calls: list[tuple[int, ToolCall]], at: int) -> bool:
    """A check (tests, lint, build, type check) ran and passed after event `at`."""
    return any(i > at and not call.is_error and call.name == "Bash"
               and commands.checks(str(call.input.get("command", ""))) for i, call in calls)




def _taken_up(said: str, events: list[Event], at: int) -> bool:
    """The user took it up and an edit followed: the next prompt said yes, or a later one shares two topic words."""
    words = content_words(said, 4)
    first = True
    for index in range(at + 1, len(events)):
        if events[index].kind != "user":
            continue
        # the reply right after it said yes ("yep do it"), or a later prompt names it
        if first and YES_RE.match(events[index].text.strip()) or len(words & content_words(events[index].text, 4)) >= 2:
            return bool(edited_after(events, index))
        first = False
    return False


def _reported_done(said: str, later: list[str]) -> bool:
    """A later report says it was done: an outcome ("Added a comment explaining ...") holding three of its topic
    words or half of them."""
    words = content_words(_FILE_SPAN_RE.sub(" ", said), 4)  # a report names the file for what else it did there
    return any(len(words & content_words(s.text, 4)) >= min(3, (len(words) + 1) // 2) and outcome(s.text) is not None
               for text in later for s in sentences(text))


def _resolved(said: str, later: list[str], events: list[Event], calls: list[tuple[int, ToolCall]], at: int,
              kind: str | None = None) -> bool:
    """Resolved by what followed event `at` (`later`: the agent's later messages): a later edit touched the code it
    names, a later prompt took it up, a later report says it done, a passing check or a later report did a check
    left undone (not one that needs what is not here: a real database, a device), a temporary file was removed; a
    merge conflict foreseen, only by a later merge or rebase. `kind`: the family that made it a caveat, when one
    did: a check resolves only one left unchecked, a cleanup only a temporary one."""
    if _FORESEEN_RE.search(said):
        return any(i > at and _MERGED_RE.search(str(call.input.get("command", ""))) for i, call in calls)
    named = named_code(said)
    # put off: an edit of a file it names, or the TODO it left, is the work it left; code it names written is not
    put_off = kind == "deferred" and bool(_PUT_OFF_RE.search(said))
    edited = edited_after(events, at, paths=not put_off) if named else ""
    named = {name for name in named if not (put_off and _TODO_SPAN_RE.search(name))}
    if any(name in edited for name in named) or _taken_up(said, events, at) or _reported_done(said, later):
        return True
    lowered, joined = said.lower(), " ".join(later)
    if kind == "temporary" or kind is None and _TEMP_RE.search(lowered):
        return _cleaned_up(said, later) or any(
            i > at and _REMOVES_RE.search(str(call.input.get("command", ""))) for i, call in calls)
    if kind in ("unverified", None) and _UNCHECKED_RE.search(lowered) and failure_rerun(events, at):
        return True  # what failed and left it unchecked ran through later
    if kind in ("unverified", None) and _UNCHECKED_RE.search(lowered) and not _ELSEWHERE_RE.search(said):
        return _checked_after(calls, at) or bool(_PASSED_RE.search(joined))
    return False


def _cleaned_up(said: str, later: list[str]) -> bool:
    """A later message says the temporary thing gone: a sentence that says something removed and names it, or says
    temporary or debug ("Removed the debug logging"; not "removed the early return")."""
    named = [span.strip("`") for span in _SPAN_RE.findall(said)]  # what it put in quotes, not a name it mentions
    return any(_CLEANED_RE.search(s.text) and (_TEMP_RE.search(s.text.lower()) or any(n in s.text for n in named))
               for text in later for s in sentences(text))


def _may_hold_one(text: str) -> bool:
    """Whether the text holds a piece of some family: the others hold no caveat."""
    lowered = text.lower()
    return any(map(lowered.__contains__, _PIECES))


def _said_again(said: str, later: list[str]) -> bool:
    """A later message names it again as a caveat (half its topic words): that one, nearer the end, is the thread."""
    words = content_words(said, 4)
    return any(len(words & content_words(s.text, 4)) * 2 >= len(words) and kind_of(s.text) is not None
               for text in later if _may_hold_one(text) for s in sentences(text))


def _taken_out(comment: str, calls: list[tuple[int, ToolCall]], at: int) -> bool:
    """A later write took the comment out: its old text holds the comment's first words, its new text not."""
    start = " ".join(comment.split()[:6])
    return any(i > at and not call.is_error and call.name in WRITE_TOOLS
               and any(start in " ".join(old.split()) and start not in " ".join(new.split())
                       for old, new in written(call.input)) for i, call in calls)


def left_in_code(events: list[Event]) -> list[str]:
    """What the code the agent wrote says it leaves undone, in a comment no later write took out ("TODO: Extract file
    changes ...", "For now, ...", "a usable (if imperfect) path"; not in a document's headings): "Left in `resume.go`:
    ...", each after the sentence before it in its comment (what a "For now" or an "imperfect" path is of), a TODO with
    the sentences after it that say so too. The last `MAX_LEFT_IN_CODE` of them."""
    calls = [(i, e.tool) for i, e in enumerate(events) if e.tool is not None]
    found: list[str] = []
    for index, call in calls:
        path = str(call.input.get("file_path", ""))
        if call.is_error or call.name not in WRITE_TOOLS or not call.comments or DOC_FILE_RE.search(path):
            continue
        name = path.rsplit("/", 1)[-1] or "the code"
        for block in call.comments:
            # a comment's lines that start a sentence are kept apart by a blank line (sources/comments.py)
            said = [s.text for piece in block.split("\n\n") for s in sentences(piece)]
            groups: list[list[str]] = []
            last = -2  # the sentence the last group ends with
            for at, sentence in enumerate(said):
                if not LEFT_UNDONE_RE.search(sentence) or _taken_out(sentence, calls, index):
                    continue
                # "Claude ignores startTime; for Gemini this produces a usable (if imperfect) path": the clause says it
                sentence = next(part for part in sentence.split("; ") if LEFT_UNDONE_RE.search(part))
                if last == at - 1:  # "TODO: ..." then "For now, ...": one thread
                    groups[-1].append(sentence)
                elif at and not LEFT_FOR_LATER_RE.match(sentence):  # what "for now" is of: the sentence before
                    groups.append([clause(said[at - 1], THREAD_WORDS // 2).rstrip("…"), sentence])
                else:
                    groups.append([sentence])
                last = at
            found += [f"{LEFT_IN_CODE}{name}`: {clause('; '.join(t.rstrip('.') for t in group))}" for group in groups]
    return list(dict.fromkeys(found))[-MAX_LEFT_IN_CODE:]


def caveats(events: list[Event], before: int) -> list[str]:
    """The caveats the agent named before event `before` (the last turn reads its own), in its messages or in
    what it posted on GitHub, that no later message or passing check resolved: the last `MAX_CAVEATS` of them."""
    calls = [(i, e.tool) for i, e in enumerate(events) if e.tool is not None]
    messages = [(i, e.text) for i, e in enumerate(events) if e.kind == "assistant" and e.text]
    found: list[tuple[int, str]] = []
    for position, (index, text) in enumerate(messages):
        if index >= before or not _may_hold_one(text):
            continue
        listed = sentences(text)
        later = [t for _, t in messages[position + 1:]]
        for at in range(len(listed)):
            said = caveat(listed, at)
            # resolved by what the whole sentence names too: a cut may have left out the file a later edit touched
            if said is None or _resolved(f"{said}\n{listed[at].text}", later, events, calls, index,
                                         kind_of(listed[at].text)) or _said_again(said, later):
                continue
            found.append((index, f"{CAVEAT} {said}"))
    for index, call in calls:
        posted = posted_reply(str(call.input.get("command", ""))) if call.name == "Bash" else ""
        if not posted or index >= before or call.is_error:
            continue
        later = [t for i, t in messages if i > index]
        found += [(index, "Caveat (PR reply): " + clause(s.text)) for s in sentences(posted)
                  if (kind := kind_of(s.text)) is not None and not _resolved(s.text, later, events, calls, index, kind)]
    last = list(dict.fromkeys(text for _, text in sorted(found, key=lambda f: f[0])))[-MAX_CAVEATS:]
    return [*last, *left_in_code(events)]
