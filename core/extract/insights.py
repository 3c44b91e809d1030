"""Decisions and root causes in Claude's own words: the sentences of its messages (and of the plans it
wrote) that give a cause, a choice and its reason, or an approach rejected; the changes it reported or
announced to code it wrote, with their reason or what they replaced; a step announced on the finding before
it; the finding it stated right before an edit; what named code does not do; the bodies of the commits it
wrote; the user's prompts that redirected the work, carried out, and the user's other choices (an offer declined,
a pasted review's fix carried out); and, last, when it wrote code, the list lines of the reports closing its turns
that give their reason, and the last report's naming code it wrote. Each under the topic it
is about: the concept a report's label names, else the code identifier it names, else the subject of the
sentence. Plain regular expressions over a few messages: the extractor runs on every ingest.
After all these: the comments it wrote into code, and what it posted on GitHub, that say why.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections import Counter
from dataclasses import dataclass, replace

from eywa.core.extract.acts import acted_choices
from eywa.core.extract.caveats import posted_reply
from eywa.core.extract.claude_words import (
    DONE_REASON_RE,
    FOUND_RE,
    LINE_NOTE_RE,
    OUTCOME_VERBS,
    Sentence,
    outcome,
    sentences,
)
from eywa.core.extract.commands import HEREDOC_RE, checks, opens_pr, unescaped
from eywa.core.extract.directions import PLAN_PROMPT, PROMPT_SENTENCE_RE, directions
from eywa.core.extract.facts import Facts
from eywa.core.extract.key_files import DOC_FILE_RE, TEST_FILE_RE
from eywa.core.extract.said_left import NEXT_LINE_RE, YES_WORDS, clause, refusal_words
from eywa.core.extract.terms import commit_bodies
from eywa.core.extract.undone import Undone
from eywa.core.extract.user_choices import answered_questions, declined_offers, refusals, review_fixes
from eywa.core.handoffs.fixed_words import AT_REQUEST, BEFORE, BEFORE_FIX, NOT_DONE, PER_REVIEW
from eywa.core.retrieval.query_tokens import content_words
from eywa.core.session import WRITE_TOOLS, Session
from eywa.core.sources.comments import LEFT_FOR_LATER_RE, SUPPRESSION_MARKS, SUPPRESSION_RE

MAX_INSIGHTS = 10
MAX_CAUSES = 1
# The strengths of `changes_in`'s notes, each kind ranked after the choices the agent states (`_place`): a change with
# its reason or what it replaced, a change reported, one announced; and a limit of the code found, with the findings.
REASONED, REPORTED, ANNOUNCED, LIMIT = -1, -2, -3, -4
FOLLOWED = -5  # a step taken on what the agent had just found (`steps_on_findings`): the last of the choices
FINDING = -6  # what some code or tool does not do, named in plain words (`_FINDING_RE`): fills places left after those
BEFORE_EDIT = -7  # what the agent stated right before it edited (`findings_before_edits`): after the findings
LINTED = -8  # a step announced on a lint run's one rule (`lint_steps`): fills places after those
CLOSING = -9  # a report's list line giving its reason or naming code written (`closing_lines`): next to last
WRITTEN = -10  # a code comment or GitHub post of the session that says why (`written_reasons`): fills places last
NOTES_OF_A_KIND = {REPORTED: 2, LIMIT: 2}  # at most: the kinds that give no reason

_CAUSE_RE = re.compile(
    r"\b(root cause|the (?:real |actual |underlying |key |main )?(?:issue|problem|bug|culprit) (?:is|was)|"
    r"turns out|caus(?:e[sd]?|ing)|the reason (?:is|was)|because|that's why|which is why|"
    r"that's what (?:was )?(?:missing|broke|caused)|fixed a|bug where|(?:which|this|that) means|"
    r"long-standing bug|(?:is|are|was) deprecated|deprecated in favou?r|circular (?:dependency|import)|"
    r"import cycle|takes? precedence)\b", re.IGNORECASE)
# "The fix was updating ...": what the fix did ("The fix is working" says only that it works).
_FIX_ACTS = r"(?:add|updat|remov|chang|us|mak|mov|replac|sett|call|wrapp|renam|skipp|read|writ)ing"
# "Option 2 is cleaner but ...", "would be worse here": a comparison; "The code is cleaner." alone is praise.
# "... is less harmful than ...", "Failing the whole write feels too aggressive for a best-effort check": two options
# weighed, or one judged out of proportion
_COMPARATIVE = (r"(?:would be (?:worse|better|cleaner|simpler|safer|overkill)|(?:is|are) (?:worse|better|cleaner|"
                r"simpler|safer|overkill)\b(?=.*?(?:\b(?:than|for|here|but|because|since)\b|[—:]| - ))|"
                r"(?:less|more) (?:harmful|risky|robust|reliable|fragile|invasive|complex|expensive) than|"
                r"(?:is|are|feels?|seems?) too (?:aggressive|risky|complex|heavy|fragile|broad|invasive|expensive) "
                r"(?:for|to)\b)")
# "Current warn-and-continue behavior is reasonable since ...", "The other two don't need fixing because ...", "were
# already fixed in the latest PR commits": code judged right as it is, a choice to leave it, with its reason
_LEFT_AS_IS = (r"(?:is|are|was|were) (?:\w+ )?(?:reasonable|fine|acceptable|appropriate|correct|safe|expected|"
               r"sufficient)\b[^.]{0,30}?\b(?:since|because|given|as)\b|"
               r"so (?:it's|it is|that's|this is|they're|they are) (?:fine|correct|safe|expected)\b|"
               r"(?:is|are|'s) (?:\w+ )?(?:fine|appropriate|acceptable|reasonable|sufficient) for (?!now\b)|"
               r"(?:don't|doesn't|do not|does not) need (?:fixing|to be (?:changed|fixed)|chang(?:es|ing))\b|"
               r"(?:were|was|is|are) already (?:fixed|handled|addressed|resolved)\b")
_RECOMMEND = r"i(?:'d| would)? (?:recommend|suggest)"  # "I'd recommend", "I recommend", "I would suggest"
_CHOICE_RE = re.compile(
    r"\b(" + _LEFT_AS_IS + r"|instead of|rather than|" + _COMPARATIVE + r"|the (?:key |real |actual )fix (?:is|was)|"
    r"the fix (?:is|was) (?:to|" + _FIX_ACTS + r")|" +
    _RECOMMEND + r"|my recommendation|(?:cleanest|simplest|safest|best) (?:fix|approach|option|way)|"
    r"decided|went with|chose|opted|so that|to avoid|trade-?off|not worth|unnecessary|would've been|"
    r"avoids?|the intent is|falls? back to|intentional(?:ly)?|on purpose|(?:that|this) way|switched from|"
    r"(?:so|since|because)\b[^.]{0,120}\b(?:is|are) (?:fine|enough|sufficient|safe|appropriate|acceptable|reasonable)|"
    r"(?:the )?resolution (?:should|is to|was to|takes?))\b",
    re.IGNORECASE)
# A piece of every cue above: substring tests in C rule out most sentences before any regex runs.
_CUE_PIECES = ("caus", "issue", "problem", "bug", "culprit", "turns out", "reason", "why", "fix",
               "missing", "broke", "means", "deprecat", "circular", "cycle", "precedence", "instead", "rather",
               "would", "worse", "better", "cleaner", "simpler", "safer", "overkill", "recommend", "suggest",
               "cleanest", "simplest", "safest", "best", "decided", "went with", "chose", "opted", "so that",
               "avoid", "trade", "worth", "unnecessary", "intent", "fall", "on purpose", " way", "switched",
               "fine", "enough", "sufficient", "safe", "appropriate", "acceptable", "reasonable", "resolution",
               "correct", "expected", "need", "already", " than", "too ")
# The strongest cues: Claude naming the cause or the choice outright, not only giving a reason.
_STRONG_RE = re.compile(
    r"\b(root cause|the (?:real |actual |underlying |key |main )?(?:issue|problem|bug|culprit) (?:is|was)|"
    r"the (?:key |real |actual )fix (?:is|was)|the fix (?:is|was) (?:to|" + _FIX_ACTS + r")|turns out|"
    r"that's (?:why|what)|which is why|" + _RECOMMEND + r"|my recommendation|decided|went with|"
    r"chose|opted|the intent is|" + _COMPARATIVE + r"|rather than|"
    r"(?:cleanest|simplest|safest|best) (?:fix|approach|option|way))\b", re.IGNORECASE)
# A comparison of options is a decision even when it gives its reason with "because".
_COMPARED_RE = re.compile(r"\b(" + _COMPARATIVE + r"|" + _LEFT_AS_IS + r"|rather than|"
                          + _RECOMMEND + r"|my recommendation|trade-?off|the intent is|"
                          r"(?:cleanest|simplest|safest|best) (?:fix|approach|option|way))\b", re.IGNORECASE)
# A recommendation stays a decision when hedged ("I'd suggest ... might be simpler").
_RECOMMENDED_RE = re.compile(r"\b(" + _RECOMMEND + r"|my recommendation|would be (?:worse|better|cleaner|"
                             r"simpler|safer|overkill))\b", re.IGNORECASE)
_REASON_RE = re.compile(r"\b(because|so that|to avoid|since|otherwise|which would|would've|trade-?off|that way|"
                        r"this way|for consistency|matching|consistent with|similar to|in line with|mirroring|"
                        r"separating)\b", re.IGNORECASE)
# "Replaced X instead of Y": what a change replaced, said beside it
_REPLACED_RE = re.compile(r"\b(?:instead of|rather than)\b", re.IGNORECASE)
# "I removed them because ...": the reason of Claude's own act is a choice, not the cause of a fault.
_OWN_ACT_RE = re.compile(r"^(?:so |and )?(?:i|we)(?:'ve| have)? (?:also )?[a-z]+ed\b", re.IGNORECASE)
# "The constant was inlined ..., since ...": a change reported in the passive, with the reason for it.
_REPORTED_RE = re.compile(r"^(?:the |this |that |these |both |all )?(?:\S+\s+){0,5}?(?:was|were) ([a-z]+ed)\b",
                          re.IGNORECASE)
# "Kept HEAD's `Phase` field": which side a merge conflict's resolution took.
_RESOLVED_RE = re.compile(r"^(?:kept|took|adopted) (?:your|both|head's|main's|our|their|the incoming|upstream's)\b",
                          re.IGNORECASE)
# "The issue is likely ...", "I think the issue is ...": a guess said aloud, not a cause found.
_HEDGE_RE = re.compile(r"\b(likely|probably|possibly|perhaps|maybe|(?:might|may|could) be|seems?|looks like)\b|"
                       r"^(?:i (?:think|suspect|believe|guess|wonder))\b", re.IGNORECASE)
# A piece of each of its shapes: an ASCII sentence (where ignoring case is lower-casing) holding none is no guess
_HEDGE_PIECES = ("likely", "probably", "possibly", "perhaps", "maybe", "might be", "may be", "could be", "seem",
                 "looks like", "think", "suspect", "believe", "guess", "wonder")
# "This will remove the fake sessions that are causing ...", "this inconsistency could cause issues if ...", "Root cause
# is well-understood": what a change will do, a risk foreseen or a review's verdict, no cause found
_FORESEEN_RE = re.compile(r"^(?:this|that|it) will\b|\b(?:could|might|may) (?:cause|break|lead to|result in)\b|"
                          r"\broot cause is (?:well[- ])?(?:understood|identified|clear|confirmed)\b", re.IGNORECASE)
# "`bytes` is the imported package, not a type": a fact set against the belief it corrects.
_CORRECTION_RE = re.compile(r"\b(?:is|are|was|were|has|have|stores?|finds?|returns?|uses?|means?|counts?|"
                            r"comes? from|lives? in|runs? on)\b[^,;]{3,80}, not (?:the |a |an |just |only )?[\w`\"'-]")
# "... pre-existing, not from my changes": a check's result, not a fact of the code.
_NOT_MINE_RE = re.compile(r"\bpre-existing\b|\bnot (?:from|related to|caused by|introduced by) "
                          r"(?:my|our|this|these|the) (?:changes?|conflict|work|edits?)\b", re.IGNORECASE)
# "Add a test that ... should return true, not false": a step to take, not a fact found.
_INSTRUCTION_RE = re.compile(r"^(?:add|use|update|change|remove|make|create|move|rename|replace|keep|write|run|"
                             r"check|ensure|set)\b", re.IGNORECASE)
# "There's already a `fileExists` in `common.go`": existing code found that the work then reuses.
_EXISTING_RE = re.compile(r"^there(?:'s| is) (?:already )?an? `[^`]+`(?: (?:function|method|helper|type|struct|"
                          r"field|package|constant|hook|flag|setting|check))?\b", re.IGNORECASE)
_NARRATION_RE = re.compile(r"^(let me|let's|i'll|i will|i'm going|now let|next,? i|first,? i|looking|"
                           r"(?:now )?i (?:also |still |first )?need to|now i|i should|i can |good|great|perfect|"
                           r"ok(?:ay)?|hmm|i see|"
                           r"all (?:\w+ )*tests? pass)\b", re.IGNORECASE)
_UNMARKED_RE = re.compile(r"[`*()]")  # the marks around code a topic is named without
_HEARD_RE = re.compile(r"^(?:(?:good|great|perfect|ok(?:ay)?|right),|interesting\s*[-—–,:.!])\s+", re.IGNORECASE)
# "Let me use `slices.Equal` instead", "I'll add a helper to make the command string testable": an approach the agent
# takes next, with the alternative it sets aside or its purpose: a decision, though said as a step ("I'll help you
# modify the TUI to launch the cached page instead of regenerating it": the task restated as the session opens)
_ANNOUNCED_RE = re.compile(
    r"^(?:(?:ok(?:ay)?|now|so|hmm|actually)[,.]?\s+)?(?:let me|i'll|i will)\s+(?!help you\b)", re.IGNORECASE)
_STEP_VERB_RE = re.compile(r"(?:use|switch|update|refactor|add|extract|move|change|replace|keep|make|send|pass|read|"
                           r"write|rewrite|modify|simplify)\b", re.IGNORECASE)
_WORD_RE = re.compile(r"\w+\s+")
# what makes the announced step a choice, later on its line; "to make" is read once, then the words after it (one
# pattern with ".*" after each "to make" read the rest of the line again from each: quadratic on a long line)
_CHOICE_TAIL_RE = re.compile(r"\binstead\b|\brather than\b|\bso that\b|\bwhich (?:gives|lets|keeps|avoids)\b",
                             re.IGNORECASE)
_TO_MAKE_RE = re.compile(r"\bto make\b", re.IGNORECASE)
_MADE_RE = re.compile(r"\b(?:testable|consistent|explicit)\b", re.IGNORECASE)


def _announced_choice(text: str) -> bool:
    """"I'll rewrite it to use ruby elements instead of CSS display properties": a step announced (its verb within
    the first four words) with what it sets aside or what it is for, on the line of the verb."""
    head = _ANNOUNCED_RE.match(text)
    at = head.end() if head is not None else None
    for _ in range(4):
        if at is None:
            return False
        if (verb := _STEP_VERB_RE.match(text, at)) is not None:
            line = text[verb.end():].split("\n", 1)[0]
            made = _TO_MAKE_RE.search(line)
            if _CHOICE_TAIL_RE.search(line) or made is not None and _MADE_RE.search(line[made.end():]):
                return True
        at = word.end() if (word := _WORD_RE.match(text, at)) is not None else None
    return False
# "This is the exact bug documented in your CLAUDE.md": the cause named by the sentence before it ("This is a race
# condition because ..." gives its own)
_NAMED_BEFORE_RE = re.compile(r"^(?:this|that|it)(?:'s| is| was) (?:the|a|an|exactly)\b", re.IGNORECASE)
_POINTER_RE = re.compile(r"^(?:this|these|those)\b", re.IGNORECASE)  # "This re-reads ...": what came before it
# "The LSP diagnostics suggest ...", "The diagnostic will clear once we save": the editor's view lags the edits
_EDITOR_NOTE_RE = re.compile(r"^(?:the |those |these )?(?:[\w-]+ ){0,2}diagnostics?\b", re.IGNORECASE)
_INTERJECTION_RE = re.compile(r"^(?:hmm+|ok(?:ay)?|actually|wait|well)[,.!]?\s+", re.IGNORECASE)  # thinking aloud
_BARE_INSTEAD_RE = re.compile(r"\binstead\b(?! of\b)", re.IGNORECASE)  # "Let me use `slices.Equal` instead"
# "I should also document the transcript position in the UserPromptSubmit section, since that's where it's captured",
# "Since `cli` imports `strategy`, I'll create a shared package", "To keep the test maintainable, I created two
# helpers": a change about to be (or just) made, with its reason beside it; a decision even leading into a list
_CHANGE_VERBS = (r"(?:use|switch|update|refactor|add|extract|move|change|replace|keep|make|remove|document|create|"
                 r"rename|skip|drop|delete|split|wrap|return|check for|leave|rewrite|modify|simplify)")
_REASONED_STEP_RE = re.compile(
    r"^(?:(?:ok(?:ay)?|now|so|hmm|actually)[,.]?\s+)?(?:let me|i'll|i will|i should|we should|i need to|we need to)\s+"
    r"(?:also\s+|just\s+|now\s+)?" + _CHANGE_VERBS + r"\b.{8,}?(?:,\s+|\s)(?:since|because)\s|"
    r"^(?:since|because)\s[^,]{8,120},\s+(?:let me|i'll|i will|i should|we should|i need to|we need to)\s+"
    r"(?:also\s+|just\s+|now\s+)?" + _CHANGE_VERBS + r"\b|"
    r"^to (?:keep|make|avoid|satisfy|match|support|ensure|prevent|preserve|simplify|pass)\b[^,]{5,100},\s+"
    r"(?:i|we)(?:'ve| have)?\s+(?:also\s+)?[a-z]+ed\b",
    re.IGNORECASE)
# "Yes, I can refactor to ...": an answer to the user that offers work, no choice made; "Something like `x` would
# be cleaner": the recommendation before it said again.
_REPLY_RE = re.compile(r"^(?:(?:yes|sure|absolutely|of course)[,!.]?\s+(?:i|we)(?:'ll| can| could| will| would)\b|"
                       r"something like\b)", re.IGNORECASE)
# "Option B: ...", "Approach 2 - ...", "Alternatively, ...", "Step 1: ...": an option laid out, or a plan's step
# ("Option 2 is cleaner ..." judges an option: a recommendation, kept unless the reply picked another)
_NAMED_OPTION = r"\s+(?P<name>\d+|[A-Z])\s*(?:[:.)—–-]|$)"  # after its word: "2:", "B -", "A" at the end
_OPTION_RE = re.compile(rf"^(?:(?:option|approach|alternative|solution|choice){_NAMED_OPTION}|"
                        r"alternatively\b|step\s+\d+\s*[:.)—–-])", re.IGNORECASE)
_OPTION_HEADING_RE = re.compile(rf"^(?:option|approach|alternative|solution){_NAMED_OPTION}", re.IGNORECASE)
# "We have a few options:", "Two approaches:", "You could either:": the lead into a list of options weighed
_OPTIONS_LEAD_RE = re.compile(r"\b(?:options|approaches|alternatives|choices|possible (?:fixes|solutions)|"
                              r"(?:could|can) either)\b[^.]*:$", re.IGNORECASE)
# "option 2", "go with B", "approach 1", a reply of a bare "2": the option a reply or a message picks
_PICK_RE = re.compile(r"(?i:\b(?:option|approach|alternative|solution|choice|go with|number)\s+#?)"
                      r"(\d+|[A-D]|[a-d](?=\W*$))\b|^\W*#?(\d+|[A-Da-d])\W*$")
# "Which way do you want to go?", "Want me to make that change?", "Should I ...?": a close asking the person to choose
_ASKS_CHOICE_RE = re.compile(r"\b(?:which|prefer|want me to|should (?:i|we)|would you like|or (?:should|would))\b.*\?$",
                             re.IGNORECASE)
# "yes", "go ahead", "sounds good": the person took what the message recommended
_AGREED_REPLY_RE = re.compile(rf"^\W*(?:{YES_WORDS}|yup|go for it|let'?s do (?:it|that)|agreed|perfect|great)\b",
                              re.IGNORECASE)
# "Critical Findings (P1) - Should Fix Before Merge", "Issues Found", "Nice-to-Have": a review's list of what it found,
# each with the fix it proposes ("**Fix:** Extract helper function `GroupCleanupItems()`.")
_REVIEW_HEADING_RE = re.compile(r"\b(?:findings?|issues? found|should fix|must fix|nice[- ]to[- ]have)\b|\(P[0-3]\)",
                                re.IGNORECASE)
# "Issues Found (6 comments across 3 reviewers)": a list of what was wrong, each item a fault, not a change
_FAULTS_HEADING_RE = re.compile(r"\b(?:issues|problems|bugs)\s+found\b|\bfindings\b", re.IGNORECASE)
_PROPOSED_FIX_RE = re.compile(r"\bfix:\s", re.IGNORECASE)  # "This adds ... overhead. Fix: Pass ..."
# "Fix suggestion: In `ListOrphanedSessionStates()`, use prefix matching ...": a fix proposed under any heading
_SUGGESTED_FIX_RE = re.compile(r"\b(?:fix suggestion|suggested fix|proposed fix|possible fix)e?s?:\s", re.IGNORECASE)
_CAUSE_HEADINGS = ("root cause", "cause", "the issue", "the problem", "problem", "the bug", "diagnosis", "why",
                   "current issue")
_CHOICE_HEADING_RE = re.compile(r"\b(decisions?|approach|design|rationale|trade-?offs?|alternatives?|why)\b",
                                re.IGNORECASE)
# "**Type-safe approach**: Uses ...", "Root cause - ...": a report's line whose label says what it gives.
_LABEL_RE = re.compile(r"^([A-Z][\w'/-]*(?: [\w'/-]+){0,3}):\s+|^([A-Z][\w'/-]*(?: [\w'/-]+){0,3}) (?:—|–|-) ")
_CAUSE_LABEL_RE = re.compile(r"(?<![\w-])(root cause|cause|why|culprit|bug|issue|problem)(?![\w-])", re.IGNORECASE)
_CHOICE_LABEL_RE = re.compile(r"(?<![\w-])(approach|decisions?|choice|trade-?off|rationale|design|intent(?:ional)?|"
                              r"alternatives?|rejected)(?![\w-])|^(?:the )?fix$", re.IGNORECASE)
# A label that only says what kind of statement follows.
_KIND_LABEL_RE = re.compile(r"^(?:the )?(?:root cause|cause|bug|fix|issue|problem|decision|rationale)$",
                            re.IGNORECASE)
# Topic words that say only what kind of statement it is.
_GENERIC_TOPIC = frozenset("""
issue problem bug fix reason cause root key real actual main thing things change changes way approach solution
difference point result test tests code file files note option options idea plan step pre-existing
current new old other first second same whole simplest cleanest best value values data function method field
line output error message case part path one intent minor major important quick small critical
""".split())
# A label that opens with one of these is a clause or a verdict ("The fix", "Better approach"), not a topic.
_NOT_TOPIC_START = frozenset("""
the a an my our this that these it its so but and also no not before after final better best cleaner cleanest
simpler simplest safer safest additional another why how what fix add remove use update option summary note
status result there there's on in for with when if rationale found it's verdict
""".split())
_VERBS = frozenset("is are was were be been has have had takes take proceed needs need does do can will".split())
_SUBJECT_RE = re.compile(
    r"^(?:the|this|these|our|its|their) ((?:[a-z][\w-]* ){0,2}[a-z][\w-]*) (?:is|are|was|were|has|have|had|does|"
    r"doesn't|did|didn't|can|can't|cannot|will|won't|would|should|must|only|never|always|now|still|also|"
    r"returns?|uses?|used|overrides?|runs?|ran|fires?|fired|needs?|needed|expects?|expected|calls?|called|"
    r"writes?|wrote|reads?|includes?|fails?|failed)\b", re.IGNORECASE)
_OBJECT_RE = re.compile(r"^(?:the|this) (?:real |actual |underlying |key |main )?(?:issue|problem|bug|culprit|"
                        r"fix|cause) (?:is|was) (?:an?|the) ((?:[a-z][\w-]* ){0,2}[a-z][\w-]*)"
                        r"(?= in | on | of | for | with | at | from | [—–-] |[,.;]|$)", re.IGNORECASE)
_STOP_WORDS = frozenset("that this it a an the to of in on and or not no if when there here we i you they just "
                        "really actually then already itself now only".split())
# A sentence that ends "... because of this line:" says its point in the code block after it.
_DANGLING = frozenset("because of to with that this these following below here like as is are was line lines but "
                      "and or so code now it could should would can will probably".split())
_TOPIC_RE = re.compile(r"`([^`]{2,60})`")
_IDENTIFIER_RE = re.compile(r"^[A-Za-z_][\w.:-]*(?:\(\))?$")
_PATH_LINE_RE = re.compile(r":\d+(?:-\d+)?$")
_FILE_RE = re.compile(r"^[\w./@-]*\.[A-Za-z]{1,5}$|/$")
_HASH_RE = re.compile(r"^[0-9a-f]{7,40}$")
_CALL_ARGS_RE = re.compile(r"(?<=\w)\([^()]*\)$")
_EXAMPLE_LEADS = ("e.g. ", "e.g., ", "like ", "such as ")
# Values and built-in types a sentence quotes: what it says of them, not what it is about.
_LITERALS = frozenset("true false nil null none undefined string int bool error any object str dict list".split())


# "Now let me", "I'll", "I need to": the words that announce a step, not part of the choice it states
_ANNOUNCING = (r"^(?:(?:ok(?:ay)?|now|so|hmm|actually)[,.]?\s+)?(?:let me|i'll|i will|i need to|i can|we need to)\s+"
               r"(?:now\s+|also\s+|just\s+)?")
_ANNOUNCING_RE = re.compile(_ANNOUNCING + r"(?=[a-z])", re.IGNORECASE)


def as_stated(text: str) -> str:
    """The step without the words that announce it: "Let me use `x` instead" -> "Use `x` instead"."""
    match = _ANNOUNCING_RE.match(text)
    if not match:
        return text
    rest = text[match.end():]
    return rest[:1].upper() + rest[1:]


_CONTRAST_OPENING_RE = re.compile(r"^(?:however|but)\b,?\s+(?=\S)", re.IGNORECASE)
OPENING_WORDS = 4  # a topic named among a text's first words is said by the text
# "The issue is that ...", "The cleanest approach is to add ...": an opening that leaves the subject to what follows
_FRAME_RE = re.compile(r"^(?:the |this )?(?:(?:real|actual|key|main|underlying|root|simplest|cleanest|best|correct|"
                       r"right|proper|only|other) )*(?:issue|problem|bug|cause|culprit|fix|solution|approach|answer|"
                       r"reason|change)s? (?:is|was)\b(?: that\b| to \w+\b| in\b| with\b)?[:,]?\s*", re.IGNORECASE)


@dataclass(frozen=True)
class Insight:
    kind: str  # "Root cause" | "Decision" | "Found"
    topic: str  # "" when the sentence names none
    text: str
    strength: int  # how plainly Claude states it: a named cause or choice over a bare reason
    # of a "Suppressed ..." line (`_suppressed`): the directive's mark and the linters it names, to weigh repeats by
    mark: str = ""
    names: tuple[str, ...] = ()

    @property
    def cause(self) -> bool:
        return self.kind == "Root cause"

    def line(self) -> str:
        """As the LLM's insights render (core/extract/llm/prompt.py): the kind left to the text's own words, without
        an opening contrast ("But `replace` is not in the list ...": a line read alone contrasts with nothing)."""
        text = LINE_NOTE_RE.sub("", as_stated(self.text))
        if contrast := _CONTRAST_OPENING_RE.match(text):
            text = text[contrast.end()].upper() + text[contrast.end() + 1:]
        # the topic leads the line only where a frame opens the text and the topic comes right after it ("**lookPath**
        # -- The cleanest approach is to add an unexported `lookPath` field ..."): a topic among the text's first words
        # is said by it, one further on is a code name in passing, not what the line is about
        frame = _FRAME_RE.match(text)
        if not self.topic or frame is None or _said_first(text, self.topic):
            return text
        return f"**{self.topic}** -- {text}" if _said_first(text[frame.end():], self.topic) else text


def _said_first(text: str, topic: str) -> bool:
    """Whether `text` names `topic` among its first words (`OPENING_WORDS`), code marks aside."""
    first = _UNMARKED_RE.sub("", text).lower()
    name = _UNMARKED_RE.sub("", topic).lower()
    return first.startswith(name) or f" {name} " in f" {' '.join(first.split()[:OPENING_WORDS])} "


def _code_topic(text: str) -> tuple[int, str]:
    """(preference, name) of the first code the sentence names: an identifier (`Reset`,
    `state.LastCheckpointID`, `fileExists()`) over a file name, over a command (`entire version`); never
    a shell variable, a literal, a line number or punctuation. (0, "") when none."""
    best = (0, "")
    for match in _TOPIC_RE.finditer(text):
        if text[max(match.start() - 9, 0):match.start()].endswith(_EXAMPLE_LEADS):  # "(e.g., `origin`)"
            continue
        code = _CALL_ARGS_RE.sub("()", match.group(1).strip().rstrip(":"))
        if code.startswith(("$", '"', "'", "-", "<", "/", "~", ".")) and not _FILE_RE.search(code):
            continue
        code = _PATH_LINE_RE.sub("", code)
        if sum(ch.isalpha() for ch in code) < 2 or any(mark in code for mark in ("<", "$", "//", "=", "{", "\\")):
            continue
        if _FILE_RE.search(code):
            name = code.rstrip("/").rsplit("/", 1)[-1] + ("/" if code.endswith("/") else "")
            if not (name[:1].isalnum() or name[:1] in "._"):
                continue
            found = (2, name)
        elif _IDENTIFIER_RE.match(code) and code.lower() not in _LITERALS and not _HASH_RE.match(code):
            found = (3, code)
        elif code[:1].islower() and 1 <= code.count(" ") <= 2 and all(map(_IDENTIFIER_RE.match, code.split())) \
                and not any(word.endswith(":") for word in code.split()):  # a command, not a setting (`new: true`)
            found = (1, code)
        else:
            continue
        if found[0] > best[0]:
            best = found
    return best


def _concept(text: str) -> str:
    """The subject a plain sentence is about ("The org-level settings override ..." -> org-level
    settings; "The problem is a corrupted index file" -> corrupted index file), "" when unsure."""
    for pattern in (_OBJECT_RE, _SUBJECT_RE):
        match = pattern.match(text)
        if match:
            words = match.group(1).split()
            lowered = [w.lower() for w in words]
            if len(words) >= 2 and not any(w in _STOP_WORDS or w in _VERBS for w in lowered) \
                    and not set(lowered) <= _GENERIC_TOPIC:  # one word alone ("The message is ...") is too vague
                return " ".join(words)
    return ""


def topic_of(text: str, label: str = "") -> str:
    """What the insight is about: the concept its label names, a code identifier, else its subject."""
    words = label.lower().split()
    if words and not set(words) <= _GENERIC_TOPIC and words[0] not in _NOT_TOPIC_START | OUTCOME_VERBS \
            and not _VERBS.intersection(words) and not words[-1].lstrip("#").isdigit():  # "Conflict 1"
        return label
    preference, code = _code_topic(text)
    return code if preference >= 2 else _concept(text) or code


def _hedged(text: str) -> bool:
    """A guess said aloud (`_HEDGE_RE`); the pieces rule out most sentences before the slower regex."""
    if text.isascii() and not any(map(text.lower().__contains__, _HEDGE_PIECES)):
        return False
    return bool(_HEDGE_RE.search(text))


def _editor_note(text: str) -> bool:
    """A remark on the editor's diagnostics, no finding; "..., I'll keep `strings.Split`" after it is a choice."""
    return bool(_EDITOR_NOTE_RE.match(text)) and not _OWN_STEP_RE.search(text)


def _reported(text: str) -> bool:
    match = _REPORTED_RE.match(text)
    return bool(match and match.group(1).lower() in OUTCOME_VERBS)


def _option(sentence: Sentence, lead: str, number: int) -> str | None:
    """The name of the option a sentence lays out, lower-cased ("1", "b", or its place in a list led by "We have a few
    options:"), "" for a plan's step or an unnamed option ("Alternatively, ..."), None when it is neither."""
    named = _OPTION_RE.match(sentence.text) or _OPTION_HEADING_RE.match(sentence.heading)
    if named:
        return (named.group("name") or "").lower()
    return str(number) if sentence.listed and _OPTIONS_LEAD_RE.search(lead) else None


def _picked(text: str, reply: str | None, followed: bool) -> set[str]:
    """The options a message's sequel picked: those the reply names ("option 2", "go with B", "2"), else those the
    message itself names outside its list when edits followed it ("I think option 1 is cleanest. Let me ...")."""
    agreed = reply is not None and bool(_AGREED_REPLY_RE.match(reply))
    said = reply if reply is not None and _PICK_RE.search(reply) else text if followed or agreed else ""
    return {(named or bare).lower() for named, bare in _PICK_RE.findall(said)}


def insights_in(found: tuple[Sentence, ...], reply: str | None = "", followed: bool = False) -> list[Insight]:
    """The sentences of one message (or plan) that give a root cause or a choice and its reason. What
    Claude reports having done ("Replaced X instead of Y") is an outcome, a decision only with its
    reason; a guess said aloud is no cause. A short statement ("The intent is permanent unification.")
    reads with the sentence after it. Not the options it lays out or names that its sequel did not pick (`reply`: the
    person's next prompt, None when the session ended; `followed`: edits came after it), nor a plan's steps, nor,
    when it closes the session asking the person to choose, the options it compares."""
    result: list[Insight] = []
    announced = False
    lead = ""  # the line that leads into the list the sentence is an item of
    number = 0  # the place of a list's item under its lead
    # what the message says of its options outside laying them out ("I think option 1 is cleanest")
    picked = _picked(" ".join(s.text for s in found if not (s.listed or _OPTION_RE.match(s.text)
                                                            or _OPTION_HEADING_RE.match(s.heading))), reply, followed)
    asked = reply is None and bool(found) and bool(_ASKS_CHOICE_RE.search(found[-1].text))
    for index, sentence in enumerate(found):
        text = sentence.text
        if not sentence.listed:
            lead, number = text, 0
        elif not sentence.nested:
            number += 1
        option = _option(sentence, lead, number)
        # "My recommendation: Go with Option A ...", and the reply: "I like Option C"
        named = {name.lower() for name, _ in _PICK_RE.findall(text) if name}
        if option is not None and option not in picked or asked and _COMPARED_RE.search(text) \
                or named and picked and not named & picked:
            continue
        heard = _HEARD_RE.match(text)  # "Good, `x` already loads settings first ..., so it's fine": the verdict
        if heard and len(text) - heard.end() >= 40:
            text = text[heard.end()].upper() + text[heard.end() + 1:]
        if _editor_note(text):
            continue
        after_finding, announced = announced, len(text) < 80 and bool(FOUND_RE.search(text))
        # a question, a cut plan, thinking aloud, a step left ("Next: add backoff ... to avoid ..."): no decision
        # "Let me use the test data instead:": a step; "I'll rewrite it to use ruby elements instead of CSS display
        # properties for better browser compatibility:" names what it sets aside
        if _announced_choice(text) and (not text.endswith(":") or _REPLACED_RE.search(text)):
            text = text[:-1] + "." if text.endswith(":") else text
            before = found[index - 1] if index else None
            # ("... instead" names what it sets aside only in the sentence before)
            if (len(text) < 60 or _BARE_INSTEAD_RE.search(text)) and before is not None and not before.listed \
                    and before.heading == sentence.heading:
                # "Hmm, `fmt.Sprintf` is clunky here. Let me use `slices.Equal` instead": the two said as one choice
                aside = _INTERJECTION_RE.sub("", before.text)
                text = f"{aside[:1].upper()}{aside[1:]} {as_stated(text)}"
            if len(text) <= 300:
                result.append(Insight("Decision", topic_of(text), text, 1))
            continue
        if 40 <= len(text) <= 300 and _REASONED_STEP_RE.match(text) and not _CHORE_RE.search(as_stated(text)):
            text = text[:-1] + "." if text.endswith(":") else text
            result.append(Insight("Decision", topic_of(text), text, 1))
            continue
        if text.endswith(("?", "…")) or _NARRATION_RE.match(text) or NEXT_LINE_RE.match(text) or \
                _REPLY_RE.match(text):
            continue
        label_match = _LABEL_RE.match(text) if any(mark in text[:70] for mark in (":", " - ", "—", "–")) else None
        label = next((g for g in label_match.groups() if g), "") if label_match else ""
        body = text[label_match.end():] if label_match else text
        lowered = text.lower()
        # a sentence over 300 characters is left out below whatever its cue (only a short one joins the next)
        cued = len(text) <= 300 and any(map(lowered.__contains__, _CUE_PIECES)) and bool(
            _CAUSE_RE.search(text) or _CHOICE_RE.search(text))
        if cued and len(text) < 40 and index + 1 < len(found) and not found[index + 1].listed \
                and found[index + 1].heading == sentence.heading and not found[index + 1].text.endswith("?") \
                and not _POINTER_RE.match(found[index + 1].text):  # "The simplest way: [code] This re-reads ..."
            # a lead on a line of its own ("My recommendation: Start with Option 5") ends there: a stop before the next
            text = f"{text}{'' if text.endswith(('.', '!', ':', ';', ',')) else '.'} {found[index + 1].text}"
        if not 40 <= len(text) <= 300:
            continue
        # it announces what follows: worth keeping as a fact of named code, or a choice named with what it sets aside
        # or its reason ("The simplest fix is to add a `//nolint:maintidx` ..., since the pattern ... is deliberate:")
        if text.endswith(":"):
            if text[:-1].rsplit(None, 1)[-1].lower() in _DANGLING or not (
                    _code_topic(text)[0] or _STRONG_RE.search(text) and _REASON_RE.search(text)):
                continue
            text = text[:-1] + "."
        heading = sentence.heading.lower()
        existing = bool(_EXISTING_RE.match(text)) or (
            not sentence.listed and ", not " in text and bool(_CORRECTION_RE.search(text))
            and not _NOT_MINE_RE.search(text) and not _INSTRUCTION_RE.match(body))
        cause_label = bool(label and _CAUSE_LABEL_RE.search(label))
        choice_label = bool(label and _CHOICE_LABEL_RE.search(label))
        if (choice_label or _PROPOSED_FIX_RE.search(text)) and _REVIEW_HEADING_RE.search(sentence.heading) \
                or _SUGGESTED_FIX_RE.search(text):
            continue  # a review's fix proposed, not one chosen
        cause_heading = heading.startswith(_CAUSE_HEADINGS)
        choice_heading = bool(heading and _CHOICE_HEADING_RE.search(heading))
        done_with_reason = not cued and (bool(_RESOLVED_RE.match(body)) or bool(DONE_REASON_RE.search(text)) and (
            outcome(body) is not None or _reported(body)))
        cued = cued or done_with_reason
        if not (cued or after_finding or cause_heading or choice_heading or cause_label or choice_label
                or existing):
            continue
        # a list's item under the heading: a detail, not the gist; a labelled one without a cue ("Transparency -
        # Users can audit ...") one of a list of pros and cons, no choice
        if sentence.listed and not (cued or cause_label or choice_label):
            continue
        hedged = _hedged(text)
        compared = cued and _COMPARED_RE.search(text) is not None
        own_act = bool(_OWN_ACT_RE.match(body))
        if hedged and not _RECOMMENDED_RE.search(text):
            continue
        chosen = (choice_heading or choice_label or done_with_reason) and not (cause_heading or cause_label)
        if not hedged and not own_act and not chosen and (after_finding or cause_heading or cause_label or (
                cued and not compared and _CAUSE_RE.search(text))):
            if not cued and outcome(body) is not None:  # "Bug fix: Fixed a nil dereference": what was done
                continue
            if _FORESEEN_RE.search(text) or _NAMED_BEFORE_RE.match(text) and not _BECAUSE_RE.search(text):
                continue
            kind = "Root cause"
        elif (cued or choice_heading or choice_label) and (
                outcome(body) is None or done_with_reason or _REASON_RE.search(text) or _REPLACED_RE.search(text)):
            kind = "Decision"
        elif existing:
            kind = "Found"
        else:
            continue
        if kind == "Decision" and _FAULTS_HEADING_RE.search(sentence.heading):
            continue  # "Test still expects old `go run` format instead of ...": what a review found, no choice made
        strength = 1 + bool(_STRONG_RE.search(text)) + (after_finding or cause_heading or choice_heading
                                                        or cause_label or choice_label) - sentence.listed
        # a short detail of a list with a weak cue ("more causes form fatigue")
        if strength <= 0 and len(text) < 80 and not done_with_reason:
            continue
        if label_match and _KIND_LABEL_RE.match(label):  # "Root Cause: ...", "Fix: ..."
            text = text[label_match.end():]  # the kind says it: the text keeps only what follows its label
            text = text[:1].upper() + text[1:]
        result.append(Insight(kind, topic_of(body, label), text, strength))
    return result


def agent_texts(session: Session) -> list[tuple[int, str]]:
    """(event index, text) of what Claude wrote: its messages, and the plans it wrote in plan mode (a plan approved,
    or one a new session was started to carry out)."""
    found: list[tuple[int, str]] = []
    for index, event in enumerate(session.events):
        if event.kind == "assistant" and event.text:
            found.append((index, event.text))
        elif event.kind == "user" and event.text.startswith(PLAN_PROMPT):
            found.append((index, event.text[len(PLAN_PROMPT):]))
        elif event.tool is not None and event.tool.name == "ExitPlanMode" and not event.tool.rejected:
            found.append((index, str(event.tool.input.get("plan", ""))))
    return found


def turn_reports(session: Session, texts: list[tuple[int, str]]) -> list[int]:
    """The places in `texts` (`agent_texts`) of the agent's messages that close a turn: its last before each prompt,
    and the session's last. A reader finds what a turn settled in its closing report: one pass from the end."""
    places = {index: place for place, (index, _) in enumerate(texts)}
    found: list[int] = []
    closes = True  # a prompt, or the session's end, comes next
    for index in range(len(session.events) - 1, -1, -1):
        event = session.events[index]
        if event.kind == "user" and event.text:
            closes = True
        elif closes and event.kind == "assistant" and index in places:
            found.append(places[index])
            closes = False
    return found[::-1]


# "let's not make this change in this branch", "don't touch the hooks", "no, leave it": the step refused outright
_NOT_AT_ALL_RE = re.compile(r"^\W*(?:no\b|nope\b|don'?t\b|do not\b|let'?s not\b|not (?:now|yet|here|in)\b|leave it\b)",
                            re.IGNORECASE)


def _refused_after(session: Session, texts: list[tuple[int, str]]) -> dict[int, str]:
    """The event indices of what the agent wrote whose next edit, before any prompt, the user refused: the step it
    announced was not taken ("Let me simplify the test harness ...", then "why not adding .entire/.gitignore?"); each
    with the user's words when they refused the step outright ("let's not make this change in this branch"), else "":
    one pass from the end."""
    written = dict(texts)
    found: dict[int, str] = {}
    refused: str | None = None  # the next edit, before any prompt, was refused ("": not outright); None: it was not
    for index in range(len(session.events) - 1, -1, -1):
        event = session.events[index]
        if index in written and refused is not None:
            found[index] = refused
        tool = event.tool
        if tool is not None and tool.name in WRITE_TOOLS:
            words = refusal_words(tool)
            refused = (PROMPT_SENTENCE_RE.split(words, maxsplit=1)[0].rstrip(" .") if _NOT_AT_ALL_RE.match(words)
                       else "") if tool.rejected else None
        elif event.kind == "user" and event.text:
            refused = None
    return found


# "fix the test, the code is right", "The gosec suppression comment is inaccurate: ...", "Do we even need `x` then?":
# the person sets the turn's work aside ("but ...", "can't we just ..." most often ask or weigh: not cues)
_OBJECTION_RE = re.compile(r"^\W*(?:no|nope|wrong|stop|wait|actually)\b|\b(?:is|are) (?:right|wrong|inaccurate|"
                           r"incorrect|not correct)\b|\bdo we (?:even )?need\b|"
                           r"\blet's only\b|\brevert\b|\bundo\b|\bleave (?:it|them|the others)\b", re.IGNORECASE)
# "You're right - ...", "Got it! I'll fix the test expectations", "Good point": the agent concedes
_CONCEDED_RE = re.compile(r"^\W*(?:you'?re (?:absolutely )?right|you are (?:absolutely )?right|good (?:point|catch)|"
                          r"fair point|got it|understood|my mistake|sorry|i apologi[sz]e|right\b)", re.IGNORECASE)


OVERRULED_WORDS = 2  # the words a line shares with the objection and the concession: it is what they are about


def _overruled(session: Session, texts: list[tuple[int, str]]) -> dict[int, set[str]]:
    """The event indices of what the agent wrote (`texts`) in a turn whose next prompt objects, whose next reply
    concedes and whose next edits went through, each with the words the objection and the concession are about:
    what that turn said or did on those, the person overruled."""
    prompts = [index for index, event in enumerate(session.events) if event.kind == "user" and event.text]
    overruled: dict[int, set[str]] = {}
    for place, prompt in enumerate(prompts):
        end = prompts[place + 1] if place + 1 < len(prompts) else len(session.events)
        turn = session.events[prompt + 1:end]
        reply = next((event.text for event in turn if event.kind == "assistant" and event.text), "")
        edited = any(event.tool is not None and event.tool.name in WRITE_TOOLS
                     and not (event.tool.is_error or event.tool.rejected) for event in turn)
        if edited and _OBJECTION_RE.search(session.events[prompt].text) and _CONCEDED_RE.match(reply):
            start = prompts[place - 1] if place else -1
            about = _named(_words(f"{session.events[prompt].text} {reply}"))
            # (a message that itself conceded says the person's view: not overruled)
            overruled |= {index: about for index, text in texts
                          if start < index < prompt and not _CONCEDED_RE.match(text)}
    return overruled


def _replies(session: Session, texts: list[tuple[int, str]]) -> list[str | None]:
    """For each of `texts` (`agent_texts`), the person's next prompt, None when the session ended before one."""
    prompts = [index for index, event in enumerate(session.events) if event.kind == "user" and event.text]
    after = [bisect.bisect_right(prompts, index) for index, _ in texts]  # one search each, not a walk of every prompt
    return [session.events[prompts[place]].text if place < len(prompts) else None for place in after]


def _edited_after(session: Session, texts: list[tuple[int, str]]) -> set[int]:
    """The event indices of what the agent wrote (`texts`: its messages and plans) after which the session edited (an
    edit that went through) before a prompt or a message stating a finding of its own ("Now let me update the test:"
    between them is narration): one pass from the end."""
    written = dict(texts)
    found: set[int] = set()
    ahead = False  # an edit comes before anything that ends the search
    for index in range(len(session.events) - 1, -1, -1):
        event = session.events[index]
        tool = event.tool
        if index in written and ahead:
            found.add(index)
        if tool is not None and tool.name in WRITE_TOOLS and not (tool.is_error or tool.rejected):
            ahead = True
        elif event.kind == "user" and event.text:
            ahead = False
        elif event.kind == "assistant" and event.text:
            ahead = ahead and not findings_before_edits(sentences(event.text))
    return found


def _not_done(step: Insight, words: str) -> Insight:
    """A change announced whose edit the user refused outright, as a step not taken by the user's choice, with the
    user's words: "Not done, at the user's word: replace `getStagedFiles` ... (let's not make this change ...)"."""
    text = as_stated(step.text).rstrip(":. ")
    return Insight("Decision", "", f"{NOT_DONE} {text[:1].lower()}{text[1:]} ({words}).", USER)


USER = 0  # a direction the user gave, carried out: ranked with the choices the agent states
ACTED = 0  # a choice the session made by acting, with the reason said beside it (core/extract/acts.py): the same
def user_directions(session: Session) -> list[tuple[int, Insight]]:
    """The user's `directions`, each a choice made at the user's request, with its place in the session."""
    result: list[tuple[int, Insight]] = []
    for said, text in directions(session):
        preference, code = _code_topic(text)
        result.append((said, Insight("Decision", code if preference >= 2 else "", f"{AT_REQUEST} {text}.",
                                     USER)))
    return result + user_choices(session)


def user_choices(session: Session) -> list[tuple[int, Insight]]:
    """The agent's offers the user declined, the fixes of the review comments the user pasted that an edit carried out,
    the options the user picked when asked and the tool calls the user refused saying what to do instead
    (core/extract/user_choices.py), ranked as the user's directions, with their places in the session; a refusal
    names what it refused in its own words, no topic before it."""
    found = [*((said, f"{text}.") for said, text in declined_offers(session)),
             *((said, f"{PER_REVIEW} {text}.") for said, text in review_fixes(session)),
             *((said, f"{text}.") for said, text in answered_questions(session))]
    return [*((said, Insight("Decision", code if preference >= 2 else "", text, USER))
              for said, text in found for preference, code in [_code_topic(text)]),
            *((said, Insight("Decision", "", f"{text}.", USER)) for said, text in refusals(session))]


RESTATED_WORDS = 3
NAMED_REPEAT = 5
REPEAT_SHARE = 0.5  # the share of the shorter one's words two insights share when one repeats the other
_PLAIN_WORDS = frozenset("that this with from would could should which there their they them then than into when "
                         "what will have been were more less also just only some such like because since instead "
                         "rather better cleaner simpler safer approach change changes code file files test tests "
                         "recommend suggest".split())


# "Fix items 1, 2, 3, 4 (and 8), and 5", "suggestions 1-4", "do 6,7,8,10": a list's items named by their numbers
_NUMBERED_RE = re.compile(r"\b(?:items?|suggestions?|steps?|points?|issues?|findings?|options?|#)\s*\d+"
                          r"(?:\W+(?:and\W+)?\d+)*\W*|\b\d+(?:\s*[,-]\s*\d+)+\b", re.IGNORECASE)
_ASKING_WORDS = frozenset("recommendation user's request let's start first implementing implement fix address "
                          "addressing now".split())
BY_NUMBER_WORDS = 3  # named words a choice of numbered items must say besides them to read alone


def _by_number(text: str) -> bool:
    """Whether a choice names what it chose only by the numbers of a list the reader does not see."""
    if not _NUMBERED_RE.search(text):
        return False
    return len(_named(_words(_NUMBERED_RE.sub(" ", text))) - _ASKING_WORDS) < BY_NUMBER_WORDS


# "That way we don't need rewrites for every asset", "Update this test since we now include it", "Both approaches use
# ...", "Make the edits, since ...", "Add them to ...": a reason whose choice, or a step whose object, is in the
# sentence before
_DETACHED_RE = re.compile(r"^(?:that|this) way\b|^(?!since\b|because\b|as\b)\w+ (?:this|these|those) tests?\b|"
                          r"^(?:both|the two) (?:approaches|options|fixes)\b|^make the (?:edits?|changes?)\b|"
                          r"^(?!since\b|because\b|as\b|when\b|if\b)\w+(?<!ing) them\b", re.IGNORECASE)


def _unread_alone(text: str) -> bool:
    """Whether a line leaves what it is about to what the reader does not see: the numbers of a list (`_by_number`),
    or the sentence before it (`_DETACHED_RE`)."""
    return _by_number(text) or bool(_DETACHED_RE.match(as_stated(text)))


def _words(text: str, ascribed: bool = False) -> set[str]:
    """All words of three letters or more: a repeat shares a part of them, "the" and "that" too; without the words
    that ascribe a choice to the user (`ascribed`)."""
    text = text.removeprefix(_BEFORE_FIX).removeprefix(_BEFORE)  # (words such lines share: no repeat of one another)
    return content_words(_ASCRIBED_RE.sub("", text) if ascribed else text, stopwords=frozenset())


def _named(words: set[str]) -> set[str]:
    """The words that say what a sentence is about: longer than three letters, not connectives or verdicts."""
    return {w for w in words if len(w) > 3 and w not in _PLAIN_WORDS}


# "Replaced `os.Chdir()` with `t.Chdir()` which handles cleanup automatically": a change to code the session wrote,
# with its reason or the alternative it set aside
_CONTRAST_RE = re.compile(r"\b(instead of|rather than|no longer|not just)\b|, not\b", re.IGNORECASE)
_CODE_RE = re.compile(r"`([^`]{3,80})`")
# "Add the missing imports", "Add tests for `x`", "Update the todo list": a chore, not a choice
_CHORE_RE = re.compile(r"\b(?:missing|unused) imports?\b|\bimports? (?:for|of)\b|^(?:add|write|run) (?:\w+ )?tests?\b|"
                       r"\b(?:todo|task) list\b", re.IGNORECASE)
# "`runExplainSession` wraps the error without preserving the type", "The `commands/` directory only contains
# `help.go`": what a piece of code does not do, or only does: the finding a change follows from
_LIMIT_RE = re.compile(r"^(?:the |this |that |but |so )?(?:[\w-]+ )?`[^`]+`(?: [\w-]+){0,4}? (?:only|doesn't|does not|"
                       r"don't|do not|isn't|is not|aren't|can't|cannot|never|no longer|(?:is|are) deprecated|"
                       r"(?:wraps|returns|uses|reads|writes|calls)\b.*\bwithout)\b(?!.*\bexists?\b)", re.IGNORECASE)
# "Cobra doesn't propagate `Hidden` to children, so ...", "GoReleaser only supports `token` for the brews repository":
# the same, said of a tool or a part named in plain words; not advice to the person, a step or where the work stands
_FINDING_RE = re.compile(r"^(?:the |this |that |but |so )?(?:[\w`'./()-]+ ){1,5}(?:doesn't|does not|don't|do not|can't|"
                         r"cannot|isn't|is not|aren't|never|won't|has no|have no|only (?:checks|reads|"
                         r"matches|contains|supports|uses))\b", re.IGNORECASE)
_NOT_FINDING_RE = re.compile(r"^(?:you|i|we|it)\b|\blet me\b|\bnow\b", re.IGNORECASE)
# "But if `SaveChanges` is called before ...": a case the code meets, not a change made
_SCENARIO_RE = re.compile(r"^(?:but |and |or )?(?:if|when|unless|whenever)\b", re.IGNORECASE)
# "Let me create a shared `stringutil` package that both cli and strategy can import": the change about to be made
_ANNOUNCED_CHANGE_RE = re.compile(_ANNOUNCING + r"(?:create|add|use|replace|switch|extract|move|update|change|make|"
                                  r"rename|remove)\b", re.IGNORECASE)


# "There are actually 3 places that need fixing:", "Issues found:": a list of what was wrong before the change
_FAULTS_LEAD_RE = re.compile(r"\b(?:need(?:s)? (?:fixing|to be (?:fixed|changed|updated))|(?:issues|problems|bugs)"
                             r"(?: found)?:$)", re.IGNORECASE)


def written_text(session: Session, docs: bool = True) -> str:
    """Everything the session wrote with its edit tools: paths, new text; without its documents (`docs` False)."""
    return "\n".join(str(value) for call in session.tool_calls if call.name in WRITE_TOOLS and not call.is_error
                     and (docs or not DOC_FILE_RE.search(str(call.input.get("file_path", ""))))
                     for value in call.input.values())


def changes_in(found: tuple[Sentence, ...], written: str) -> list[Insight]:
    """The sentences that name code the session wrote and say why it was so written, or what it replaced:
    decisions stated as changes, ranked after those the agent states as a choice; and what named code does not
    do or only does, the finding such a change follows from."""
    result: list[Insight] = []
    # the message's first outcome is What Happened's bullet: said again without a reason, it adds nothing (and the
    # handoff's text indexed for recall would weigh its words twice: bench/RESULTS.md)
    lead = next((s.text for s in found if outcome(s.text)), None)
    above = ""  # the line that leads into the list the sentence is an item of
    for sentence in found:
        text = sentence.text
        if not sentence.listed:
            above = text
        elif _FAULTS_LEAD_RE.search(above):  # "3 places that need fixing: `InstallHooks()` - uses `os.Getwd()` ..."
            continue
        if text == lead and not (DONE_REASON_RE.search(text) or _CONTRAST_RE.search(text)):
            continue
        if not 40 <= len(text) <= 300 or text.endswith(("?", "…")) or NEXT_LINE_RE.match(text) \
                or _hedged(text) or _SCENARIO_RE.match(text) or _editor_note(text):
            continue
        if _LIMIT_RE.match(text):
            result.append(Insight("Found", topic_of(text), text, LIMIT))
            continue
        if _FINDING_RE.match(text) and not (sentence.listed or text.endswith(":") or len(text) > 220
                                            or _NARRATION_RE.match(text) or _NOT_FINDING_RE.search(text)):
            result.append(Insight("Found", topic_of(text), text, FINDING))
            continue
        names = [code for code in _CODE_RE.findall(text) if code.strip("()") in written]
        if not names or _SUGGESTED_FIX_RE.search(text) or _FAULTS_HEADING_RE.search(sentence.heading):
            continue  # (a fix proposed, what a review found: no change made)
        announced = bool(_ANNOUNCED_CHANGE_RE.match(text))
        if _NARRATION_RE.match(text) and not announced or _CHORE_RE.search(as_stated(text)):
            continue
        reasoned = bool(DONE_REASON_RE.search(text) or _CONTRAST_RE.search(text))
        # a change said with neither: one of code (a function, a field), not a list of files touched
        if not reasoned and ((outcome(text) is None and not announced) or all(_FILE_RE.search(code) for code in names)):
            continue
        if _REASON_AHEAD_RE.search(text):  # "... doesn't actually test the defaulting logic because:"
            continue
        text = text[:-1] + "." if text.endswith(":") else text
        result.append(Insight("Decision", topic_of(text), text,
                              REASONED if reasoned else ANNOUNCED if announced else REPORTED))
    return result


# "Let me refactor to a table-driven test", "I'll reset to the remote branch": a change announced as the next step,
# naming what it changes ("Fix this", "Update it" leave the finding to say it all)
_STEP_RE = re.compile(_ANNOUNCING + r"(?:use|switch|update|add|extract|move|change|replace|keep|make|remove|document|"
                      r"create|rename|drop|delete|split|wrap|rewrite|modify|simplify|fix|reset|restore|revert|refactor|"
                      r"stage)\b(?! (?:it|this|that|them|those|these|both)\b[^\w\s]*$)\s+\S", re.IGNORECASE)
# "The fix is complete and all tests pass", "The file ends at line 521", "Found Go version 1.25.5 in two files", "Yes,
# I have access ...": where the work stands, where an edit goes or a reply, not a finding the step answers
_NO_FINDING_RE = re.compile(r"\b(?:pass(?:es|ed)?|passing|complete[sd]?|done|clean|looks? (?:good|correct|right|fine)|"
                            r"at line|ends at|line \d+|several|updated|fixed|remaining|found (?:the|two|\d+|it))\b|"
                            r"^(?:step \d|(?:now|next|first|then|yes|no|ok(?:ay)?|found|expected|most|one|"
                            r"two|i|i'm|i've)\b)", re.IGNORECASE)
_AGREED_RE = re.compile(r"^you're (?:absolutely |completely )?(?:right|correct)(?: that\b)?\s*[-—–,:.!]*\s*",
                        re.IGNORECASE)
_AGREED = " (the user's correction)"
# ("I see the issue - ...", "I see 4 spots with ...": what follows names no finding of its own)
_SEEN_RE = re.compile(r"^(?:ah,?\s+)?i (?:see|notice|found) (?:that\s+|(?=there(?:'s| is| are)\s))", re.IGNORECASE)
_BECAUSE_RE = re.compile(r"\b(?:since|because)\b", re.IGNORECASE)  # a step that gives its own reason
_LOWER_START = frozenset("the this that these those there it its we our all both no only every each a an local missing "
                         "you using when if once while after before".split())
_JOINING_RE = re.compile(r"^(?:but|and|so|also)\b,?\s+(?=\w)", re.IGNORECASE)  # a finding's own joint, before "since"
_CONSISTENCY_RE = re.compile(r"\bfor (?:\w+ )?consistency\b", re.IGNORECASE)  # "for API consistency": a reason
# "GitHub tokens can't be branch-scoped, but we can minimize access by removing ...", "... doesn't use shadow branches,
# so there's no reason to truncate `BaseCommit`": a finding that says in its own words the choice made on it
_CHOSEN_ON_RE = re.compile(r", (?:but|so) (?:we|i) can (?!not\b)\w|, so there(?:'s| is) no (?:reason|need) to\b",
                           re.IGNORECASE)
_OWN_STEP_RE = re.compile(r"\b(?:i'll|i will|let me|we'll)\b", re.IGNORECASE)  # "..., I'll add nolint comments": a step
MAX_JOINED = 240  # characters of a step joined to its finding: a line a phone shows whole


def steps_on_findings(found: tuple[Sentence, ...]) -> list[Insight]:
    """A change announced right after the finding it answers, under one heading ("The linter found duplication
    between the two tests. Let me refactor to a table-driven test"): the step with its reason, the finding, as one
    decision ("Refactor to a table-driven test, since the linter found duplication between the two tests"). Ranked
    last: where a rule kept the step or the finding alone, the joined line repeats it and is left out."""
    result: list[Insight] = []
    for before, sentence in zip(found, found[1:], strict=False):
        step, finding = sentence.text, before.text
        agreed = _AGREED_RE.match(finding)  # "You're right, we should use real booleans": the user's correction
        finding = finding[agreed.end():] if agreed else finding
        seen = _SEEN_RE.match(finding)  # "I see that `x` is still used in `y`": what it saw is the finding
        finding = finding[seen.end():] if seen else finding
        if sentence.listed or before.listed or before.heading != sentence.heading or not _STEP_RE.match(step) \
                or step.endswith("?") or _CHORE_RE.search(as_stated(step)) or _BECAUSE_RE.search(step):
            continue
        if not 20 <= len(finding) <= 220 or finding.endswith(("?", ":", "…")) or _NARRATION_RE.match(finding) \
                or _STEP_RE.match(finding) or _NO_FINDING_RE.search(finding) or _hedged(finding) \
                or _editor_note(finding):
            continue
        if _OWN_STEP_RE.search(finding):  # "..., I'll add nolint comments": a step, no finding; the first alone
            if DONE_REASON_RE.search(step) or _CONSISTENCY_RE.search(step):
                result.append(Insight("Decision", topic_of(step), f"{as_stated(step).rstrip(':.')}.", FOLLOWED))
            continue
        finding, joints = _JOINING_RE.subn("", finding)  # "..., since but for API consistency ...": the since joins
        word = re.split(r"[\s']", finding, maxsplit=1)[0]
        first = word.lower()
        if first in _LOWER_START or first in ("since", "because") or joints and word[1:].islower():
            finding = finding[:1].lower() + finding[1:]
        joined = ", " if first in ("since", "because") else ", since "
        text = f"{as_stated(step).rstrip(':.')}{joined}{finding.rstrip('.')}{_AGREED if agreed else ''}."
        if len(text) <= MAX_JOINED:
            result.append(Insight("Decision", topic_of(text), text, FOLLOWED))
    return result


# A lint finding of one rule, as golangci-lint ("x.go:57:1: func `f` is unused (unused)", after mise's "[lint:go] ", no
# column for dupl) and ruff ("x.py:3:8: F401 [*] `os` imported but unused", or its full format: "SIM115 Use a context
# manager ..." over " --> x.py:191:25") print it: the rule the next change answers
_LINT_FINDING_RE = re.compile(r"^(?:\[[\w:-]+\] )?\S+:\d+(?::\d+)?: (?:(?P<said>.+?) \((?P<rule>[a-z][\w-]*)\)|"
                              r"(?P<code>[A-Z]{1,4}\d{2,4}) (?:\[\*\] )?(?P<what>.+))$|"
                              r"^(?P<full>[A-Z]{1,4}\d{2,4}) (?:\[\*\] )?(?P<told>.+)\n\s*-->", re.MULTILINE)
LINT_SAID_WORDS = 12  # words of the lint's finding kept after the step: a line a phone shows on two lines
_NOT_LINT_RULES = frozenset(("typecheck",))  # golangci-lint's name for code that does not compile: no rule to satisfy
_FIGURES_RE = re.compile(r",\s+[\w ]+: [\d.]+.*$")  # maintidx's ", Cyclomatic Complexity: 36, ...": the measures


def _lint_rule(output: str) -> tuple[str, str] | None:
    """The rule a lint run's output flags and its first finding's words, when it flags one rule only (several: the
    steps that follow fix a list, no one rule is the reason)."""
    found = [(m["rule"] or m["code"] or m["full"], m["said"] or m["what"] or m["told"])
             for m in _LINT_FINDING_RE.finditer(output)]
    if not found or len({rule for rule, _ in found}) > 1 or found[0][0] in _NOT_LINT_RULES:
        return None
    return found[0][0], _FIGURES_RE.sub("", clause(found[0][1], LINT_SAID_WORDS)).rstrip(".…")


_LATER_STEP_RE = re.compile(r"\s(?:-|—)\s+let me\b", re.IGNORECASE)  # "Use `x` - let me fix that": two steps run on


def _announced(sentence: Sentence) -> bool:
    """Whether a sentence announces one change to make ("Let me add a `testAgent` constant ..."), not a chore."""
    text = sentence.text
    return not sentence.listed and bool(_STEP_RE.match(text)) and not text.endswith("?") \
        and not _LATER_STEP_RE.search(text) and not _CHORE_RE.search(as_stated(text))


def lint_steps(session: Session) -> list[tuple[int, str, Insight]]:
    """A change the agent announced right after a lint run that flagged one rule, carried out by the next edit, with
    the rule as its reason ("Refactor to reduce complexity by extracting helper functions, to satisfy the `maintidx`
    lint: Function name: runDebugAutoCommit"): the reason sits in the tool's output, not in the agent's words. The
    announced step closest to the edit; none when a prompt comes first. With the number of agent messages before it
    and the step as stated."""
    result: list[tuple[int, str, Insight]] = []
    said = 0
    flagged: tuple[str, str] | None = None
    step = ""
    for event in session.events:
        if event.kind == "assistant" and event.text:
            said += 1
            if flagged is not None:
                step = next((s.text for s in reversed(sentences(event.text)) if _announced(s)), step)
            continue
        if event.kind == "user" and event.text:
            flagged, step = None, ""
            continue
        call = event.tool
        if call is None:
            continue
        if call.name == "Bash" and any(check.kind == "lint" for check in checks(str(call.input.get("command", "")))):
            flagged, step = _lint_rule(f"{call.output}\n{call.error}"), ""
        elif call.name in WRITE_TOOLS and flagged is not None:
            if step:
                rule, finding = flagged
                stated = as_stated(step).rstrip(":.")
                text = f"{stated}, to satisfy the `{rule}` lint: {finding}."
                if len(text) <= MAX_JOINED:
                    result.append((said, stated, Insight("Decision", topic_of(text), text, LINTED)))
            flagged, step = None, ""
    return result


# "The timeout settings are working.", "All conflict markers are gone.", "The `json` import is now unused", "Starting
# with the first two tasks", "Wait, I need to check ...", what the editor's diagnostics show: where the work stands, a
# chore or a step, no finding
_SAYS_NOTHING_RE = re.compile(r"\b(?:is|are) (?:now |still |all )?(?:working|gone|resolved)\b|\bstraightforward\b|"
                              r"\bunused\b|\bdiagnostics?\b|\blsp\b|\bconflict markers?\b|"
                              r"^(?:starting|wait|got it|so|but|or|and|this will)\b|\b(?:i|we) need to\b|"
                              r"^the user (?:wants|asked|needs|is asking|would like)\b",
                              re.IGNORECASE)
_SPAN_RE = re.compile(r"`[^`]*`")  # code spans: a finding says in words what it found
_WRITTEN_OUT_RE = re.compile(r"[{}]|=>")  # code written out of backticks: no finding in words
_REASON_AHEAD_RE = re.compile(r"\b(?:because|since|why|following|below)\s*:$", re.IGNORECASE)  # the reason: a list
_NUMBERED_RUN_RE = re.compile(r"\b[A-Z]\w* \d+:.*\b[A-Z]\w* \d+:")  # "Fix 1: ... Fix 2: ...": a list run together


# "Since they're in the same package, ...", "This ensures ...", "It should be removed ...", "Lines 228 and 331 ...",
# a code name's kind with no name ("The function is ..."): what the finding is about is in the sentence before it
_NO_REFERENT_RE = re.compile(r"^(?:(?:since|because|so)\s+)?(?:this|that|it|they|these|those|them|lines? \d+)\b|"
                             r"^\w+ (?:it|them)\b|"  # "Persist it in checkpoint metadata ..."
                             r"^(?:the|all the) (?:function|method|callers?|app|class|handler|command)s? "
                             r"(?:is|are|was|were|has|have|generates?)\b",  # "The function is too complex ..."
                             re.IGNORECASE)


def findings_before_edits(found: tuple[Sentence, ...]) -> list[Insight]:
    """The last statement of a message the agent edited after, reads and narration between ("The comment says output
    goes to `/dev/null`, but `nil` actually inherits the parent's file descriptors."): the finding the edit follows
    from, the reason a label folds into its decision. Not a step, a status, a report, a case or a question."""
    for sentence in reversed(found):
        text = sentence.text
        if sentence.listed or not 30 <= len(text) <= 220 or text.endswith(("?", ":", "…")) \
                or _NARRATION_RE.match(text) or _STEP_RE.match(text) or _hedged(text) \
                or NEXT_LINE_RE.match(text) or _REPLY_RE.match(text) or outcome(text) is not None \
                or _NO_FINDING_RE.search(text) or _CHORE_RE.search(text) or _SCENARIO_RE.match(text) \
                or _NOT_MINE_RE.search(text) or _SAYS_NOTHING_RE.search(text) or _INSTRUCTION_RE.match(text) \
                or _CONTRAST_OPENING_RE.match(text) \
                or _WRITTEN_OUT_RE.search(_SPAN_RE.sub(" ", text)) or _NUMBERED_RUN_RE.search(text) \
                or len(_named(_words(_SPAN_RE.sub(" ", text)))) < 3:
            continue
        return [Insight("Found", topic_of(text), text, BEFORE_EDIT)]
    return []


# "Co-Authored-By: ...", "Generated with [Claude Code](...)": a commit message's trailers, not its reasons
_TRAILER_RE = re.compile(r"^\W*(?:[\w-]+-by:|generated with\b)", re.IGNORECASE | re.MULTILINE)
# "- Add deprecated LastTranscriptLineCount field to PrePromptState with old\n  JSON tag, ...": an item wrapped at 72
_WRAPPED_RE = re.compile(r"\n[ \t]+(?=[^\s*+\d-])")
COMMIT_STRENGTH = 0  # ranked with the weakest choices stated in a message, before the changes reported
MIN_REASON_WORDS = 6


def commit_reasons(session: Session) -> list[Insight]:
    """The sentences of the commit messages' bodies the session wrote: what a subject leaves out, most often why."""
    result: list[Insight] = []
    for body in commit_bodies(session):
        prose = "\n".join(line for line in body.splitlines() if not _TRAILER_RE.match(line))
        for sentence in sentences(_WRAPPED_RE.sub(" ", prose)):
            text = sentence.text
            # "settings/settings.go (the dedicated package)": an item of a list of what changed, no reason
            if 40 <= len(text) <= 300 and len(text.split()) >= MIN_REASON_WORDS and not text.endswith((":", "…")):
                result.append(Insight("Decision", topic_of(text), text, COMMIT_STRENGTH))
    return result


# "Uses git CLI instead of go-git because ...", "intentionally excluded to avoid ...", "We buffer stdin so we can
# parse it twice": what a comment says of why the code is so
_WHY_RE = re.compile(r"\b(?:because|so that|so we(?: can)?|(?<=[,;] )so|instead|rather than|to avoid|to prevent|since|"
                     r"best[- ]effort|intentional(?:ly)?|deliberately|on purpose|trade-?off|in order to|"
                     r"(?:clearer|simpler|safer|cheaper|faster) than|for (?:consistency|security|safety))\b",
                     re.IGNORECASE)
WRITTEN_WORDS = 30  # words of a comment's sentence kept: one a phone shows on a line or two


# The body of a pull request a command opens: `--body "..."`, a heredoc inside it or after it
_PR_BODY_RE = re.compile(r"""\s(?:--body|-b)[\s=]+(["'])(.+?)(?<!\\)\1""", re.DOTALL)


def _posted(command: str) -> str:
    """What a command posts on GitHub in the agent's words: a review reply or PR comment, or the body of the pull
    request it opens; "" for any other command."""
    posted = posted_reply(command)
    if posted or not opens_pr(command):
        return posted
    body = _PR_BODY_RE.search(command)
    text = body.group(2) if body else command
    heredoc = HEREDOC_RE.search(text)
    return heredoc.group("body") if heredoc else unescaped(text) if body else ""


def _own_writing(session: Session) -> list[str]:
    """The prose the session wrote outside its messages, each piece as text: the comments it added to code (not to
    documents or tests) and what it posted on GitHub (review replies, PR comments, PR bodies)."""
    found: list[str] = []
    for call in session.tool_calls:
        if call.is_error or call.rejected:
            continue
        if call.name == "Bash":
            found.append(_posted(str(call.input.get("command", ""))))
            continue
        path = str(call.input.get("file_path", ""))
        if call.comments and not DOC_FILE_RE.search(path) and not TEST_FILE_RE.search(path):
            found += call.comments
    return [text for text in found if text]


SUPPRESSION_WORDS = 2  # words of the reason a silenced linter is given: "best-effort" alone says too little
# "The linter's `fix: true` setting stripped the nolint comment" (9e44573d): the directive did not stay in the code;
# "removed the `nolint:ireturn` comments" (ca8cc13b) names the rules it took, so other directives stayed
_STRIPPED_RE = re.compile(rf"\b(?:strip|remov|delet|dropp)\w*\s+(?:the\s+|that\s+|its\s+)?`?(?://\s*)?"
                          rf"({SUPPRESSION_MARKS})(?:[:=]([\w,.@/-]+))?", re.IGNORECASE)


def _mark(found: str) -> str:
    """A directive's mark as one spelling: "type:ignore", "Type: ignore" -> "type: ignore"."""
    return re.sub(r":\s*", ": ", found.lower()) if found.lower().startswith(("type", "pylint")) else found.lower()


def _suppressed(silenced: re.Match[str]) -> Insight:
    """A linter silenced in the code with the reason written beside it: "Suppressed `exhaustive` with a `nolint`
    comment: default case handles all other agent types"."""
    mark = _mark(silenced["mark"])
    names = tuple(name for name in silenced["names"].split(",") if name)
    said = " and ".join(f"`{name}`" for name in names) or "the linter"
    reason = silenced["reason"].rstrip(" .")
    return Insight("Decision", silenced["names"] or mark, f"Suppressed {said} with a `{mark}` comment: {reason}.",
                   WRITTEN, mark, names)


def written_reasons(session: Session) -> list[Insight]:
    """The sentences the session wrote outside its messages that say why the code is so: in the comments it wrote into
    code ("Uses git CLI instead of go-git because go-git doesn't respect global gitignore", "APIKey and Endpoint are
    intentionally excluded to avoid exposing them in process listings") and in what it posted on GitHub ("The
    duplication is a conscious trade-off to avoid import cycles"): a choice and its reason, said to the code's readers
    rather than to the person. Not a step left ("TODO: ..."), a test plan's box, a code dump, or a few words."""
    result: list[Insight] = []
    seen: set[str] = set()
    stripped: set[tuple[str, frozenset[str]]] | None = None  # the marks (and rules) the agent said were stripped
    for sentence in (s for block in _own_writing(session) for s in sentences(block)):
        if sentence.text.endswith("…") or _NO_REFERENT_RE.match(sentence.text):  # cut where it was stored; "This ..."
            continue
        text = clause(sentence.text, WRITTEN_WORDS)
        if (silenced := SUPPRESSION_RE.match(text)) is not None:
            if stripped is None:
                stripped = {(_mark(found.group(1)), frozenset((found.group(2) or "").lower().split(",")) - {""})
                            for event in session.events if event.kind == "assistant"
                            for found in _STRIPPED_RE.finditer(event.text or "")}
            item = _suppressed(silenced)
            names = {name.lower() for name in item.names}
            if text not in seen and len(_PROSE_WORD_RE.findall(silenced["reason"])) >= SUPPRESSION_WORDS \
                    and not any(item.mark.startswith(gone) and (not rules or rules & names)
                                for gone, rules in stripped):
                seen.add(text)
                result.append(item)
            continue
        if text in seen or not _WHY_RE.search(text) or LEFT_FOR_LATER_RE.match(text) or text.startswith("[") \
                or _WRITTEN_OUT_RE.search(_SPAN_RE.sub(" ", text)) \
                or len(_PROSE_WORD_RE.findall(_SPAN_RE.sub(" ", text))) < CLOSING_WORDS:
            continue
        seen.add(text)
        result.append(Insight("Decision", topic_of(text), text[:1].upper() + text[1:], WRITTEN))
    return result


# "[ ] Verify ...", "`TestX` - verifies ...": a test plan's box or a test's description, no choice
_NOT_CLOSING_RE = re.compile(r"^\[[ x]\]|^`?test\w*`?\s*(?:[-—–:(]|verifies|checks|tests)|\bverif(?:y|ies)\b|"
                             r"\btests? that\b|\b(?:committed|pushed)\b", re.IGNORECASE)
# "### Tests", "**`checkpoint_test.go`** — ...", "Verified:", "**Required Setup (manual steps):**": a list of what the
# tests check or of steps left to the person, not of what was settled
_UNSETTLED_LEAD_RE = re.compile(r"\btests?\b|\btesting\b|\bverif|\bcoverage\b|_test\.|\btest_\w|\bsetup\b|\bmanual\b|"
                                r"\bnext steps?\b|\bremaining\b|\byou(?:'ll)? need\b", re.IGNORECASE)
CLOSING_WORDS = 5  # words outside code a closing line says: "`parseInput()` - Parse and validate input" says little
_PROSE_WORD_RE = re.compile(r"[A-Za-z][\w'-]*")
# "Sorts by timestamp (most recent first) to maintain consistent ordering", "use `omitempty` so they're empty when ...",
# "All operations use the existing `SaveTaskCheckpoint()`": a purpose or a reuse, beside `DONE_REASON_RE`'s reasons
_PURPOSE_RE = re.compile(r"\bso (?:it|they|that|the)\b|\bto maintain\b|\b(?:preventing|avoiding|ensuring)\b|"
                         r"\b(?:use[sd]?|using|reus(?:e[sd]?|ing)) (?:the )?existing\b", re.IGNORECASE)


def _settled(text: str, written: str) -> bool:
    """Whether a report's line says why it was so done or what it replaced ('"restart your terminal" - concrete action
    instead of "rerun installation"'), and what it is about ("This prevents ..." leaves it to the line before); or
    names code the session wrote (`written`)."""
    if (DONE_REASON_RE.search(text) or _REPLACED_RE.search(text) or _PURPOSE_RE.search(text)) \
            and not _NO_REFERENT_RE.match(text):
        return True
    # a change it names code of, with no reason: What Happened's line (`report_changes`), not a decision
    return bool(written) and not outcome(text) and any(code.strip("()") in written for code in _CODE_RE.findall(text))


def closing_lines(found: tuple[Sentence, ...], written: str) -> list[Insight]:
    """The lines of a report's lists that give their reason or what they replaced, or (`written`: the code the session
    wrote, given for its last report) that name code the session wrote ("Now uses `paths.RepoRoot()` with fallback to
    CWD"): where a reader of the whole session finds what was settled, the places left free take them last. Not a test
    plan's box, a list of what the tests check or of steps left to the person, a status ("committed and pushed"), a
    chore, a question or a lead into a list."""
    result: list[Insight] = []
    shown = next((s.text for s in found if outcome(s.text)), None)  # What Happened's bullet: it stays there
    lead, heading = "", ""  # the line that leads into the list, under its heading
    for sentence in found:
        text = sentence.text
        if sentence.heading != heading:
            lead, heading = "", sentence.heading
        if not sentence.listed:
            lead = text
            continue
        if text == shown or not 40 <= len(text) <= 300 or text.endswith(("?", ":")) \
                or _UNSETTLED_LEAD_RE.search(f"{heading} {lead}") or _NOT_CLOSING_RE.search(text) \
                or _CHORE_RE.search(text) \
                or len(_PROSE_WORD_RE.findall(_SPAN_RE.sub(" ", text))) < CLOSING_WORDS \
                or not _settled(text, written):
            continue
        result.append(Insight("Decision", topic_of(text), text, CLOSING))
    return result


_FIX_RE = re.compile(r"\bthe (?:\w+ )?fix (?:is|was)\b", re.IGNORECASE)  # "The fix is to add ...": the choice


# "At the user's request: ", "At the user's word, instead of `git merge origin/main`: ": words every such line shares
_ASCRIBED_RE = re.compile(r"^At the user's (?:request|word)\b[^:]*:\s*")


def _fix_of(fix: Insight, cause: Insight) -> bool:
    """Whether `fix` states the fix ("The fix is to add ...") beside `cause`, a root cause, in either one's place."""
    return fix.kind == "Decision" and fix.strength != FOLLOWED and cause.cause and bool(_FIX_RE.search(fix.text))


def _repeats(item: Insight, kept: list[Insight]) -> bool:
    """Whether `item` says again what one already kept says: most of the shorter one's words, or one
    recommendation said twice in other words ("I'd suggest putting test secrets in ...", "I'd recommend against
    putting test secrets in the README": the words that name what it is about recur). A fix beside its root cause
    (either ranked first) names the same code and says what was done, not what was wrong: no repeat. Two choices of
    the user's are weighed without the words that ascribe them ("At the user's ...") to the user."""
    ascribed = bool(_ASCRIBED_RE.match(item.text))
    # b2273d7d: "Add `//nolint:ireturn` directives ..." kept: another `nolint:ireturn`'s reason adds little
    if item.names and any(item.mark in k.text.lower() and all(name in k.text for name in item.names) for k in kept):
        return True
    for k in kept:
        if _fix_of(item, k) or _fix_of(k, item):
            continue
        both = ascribed and bool(_ASCRIBED_RE.match(k.text))
        mine, other = _words(item.text, both), _words(k.text, both)
        if len(mine & other) >= REPEAT_SHARE * min(len(mine), len(other)):
            return True
        named, named_other = _named(mine), _named(other)
        if FOLLOWED not in (item.strength, k.strength) and \
                len(named & named_other) >= max(NAMED_REPEAT, REPEAT_SHARE * min(len(named), len(named_other))):
            return True  # (a step joined to its finding names the finding's things too: weighed by its words alone)
    words = _words(item.text)
    return bool(_RECOMMENDED_RE.search(item.text)) and any(
        len(_named(words) & _named(_words(k.text))) >= RESTATED_WORDS
        for k in kept if _RECOMMENDED_RE.search(k.text))


# "the command fails entirely", "The tests are failing because ...": a fault's symptom in the present tense (not "when
# `x` fails, ...": a case)
_SYMPTOM_RE = re.compile(r"^(?!.*\b(?:when|if|whenever)\b[^,;]{0,80}\bfails\b).*?\b(?:fails|(?:is|are) failing|"
                         r"(?:cause|make)s? [^.]{0,40}\bto fail|crashes|panics)\b", re.IGNORECASE)
_BEFORE_FIX, _BEFORE = f"{BEFORE_FIX} ", f"{BEFORE} "  # a lack a later edit filled: no word a change's label could miss


def _before_fix(item: Insight, prefix: str = _BEFORE_FIX) -> Insight:
    """A root cause its turn then fixed, said as it was: "Before the fix: the command fails entirely ..."."""
    text = _AGREED_RE.sub("", item.text)
    said = f"{text[:1].lower() if text[1:2].islower() else text[:1]}{text[1:]}"  # ("`x` fails", "API ..." kept)
    return replace(item, topic=item.topic if text == item.text else topic_of(text), text=prefix + said)


# "`session.State` does NOT have a TokenUsage field", "Comment on `x` still says ...", "Need to handle old `x` files",
# "... isn't being included because I'm not setting the `AgentID` field": a fault or lack of code said as it stands
_LACK_RE = re.compile(r"\b(?:does not|doesn't|do not|don't) (?:have|include)\b|\bstill (?:says|references|uses|"
                      r"refers to|mentions|has|contains)\b|\bshould (?:say|reference)\b|"
                      r"\b(?:is|are) missing\b|^(?:we )?need(?:s)? to handle\b|"
                      r"\b(?:isn't|aren't|is not|are not) being\b|"
                      r"\b(?:I'm|I am|we're|we are) not (?:setting|passing|including|calling|using)\b", re.IGNORECASE)
# "The `--agent` flag code path calls `ag.IsInstalled()` directly without checking the env var", "doesn't track or
# pass the transcript position fields to `WriteCommitted`": a fault of named code, fixed only if a check then passed
_FAULT_RE = re.compile(r"\b(?:does not|doesn't|do not|don't) (?:track|pass|check|call|set|handle|honou?r|respect)\b|"
                       r"\bwithout (?:checking|calling|passing|setting|honou?ring|respecting)\b", re.IGNORECASE)
_CAMEL_RE = re.compile(r"\b[A-Z][a-z]+[A-Z]\w*\b")  # "TokenUsage" named bare
_FILE_NAME_RE = re.compile(r"^[\w./@-]*\.[a-z]{1,5}$")  # "strategy.go", not "session.State"


def _fixed_since(item: Insight, at: int, undone: Undone) -> bool:
    """Whether `item`, said at event `at`, states a fault or lack of code (a finding or a root cause, not one said as it
    was already) that one later edit wrote every name of into the file it names: what it says no longer holds. A
    fault said of what code does ("without checking", "doesn't pass") also needs a check that passed after an edit."""
    if item.text.startswith(_BEFORE_FIX) or not (_LACK_RE.search(item.text) or _FAULT_RE.search(item.text)
                                                  and undone.passed_after_edit(at)):
        return False
    spans = [code.strip("()").split(":")[0] for code in _CODE_RE.findall(item.text)]
    files = {name for name in spans if _FILE_NAME_RE.match(name)}
    # (a flag, `--agent`, names no code)
    code = {name for name in spans if name not in files and _IDENTIFIER_RE.match(name)} | set(_CAMEL_RE.findall(
        _SPAN_RE.sub(" ", item.text)))
    return bool(code) and undone.touched_after(at, {name for name in code if len(name) >= 3}, files)


# "removing those `//nolint:ireturn` directives will break linting", "this won't compile": a check foretold to fail
# (not "this test will fail if someone reverts ...": a case), with the kind of check it names
_FORETOLD_RE = re.compile(r"^(?!.*\b(?:if|unless|when|once|until)\b).*?\b(?:(?:will|would|is going to)(?: \w+)? "
                          r"(?:break|fail)(?: the)? (lint|test|build|compil|type)|won't (compil|build))", re.IGNORECASE)
_FORETOLD_KINDS = {"lint": {"lint"}, "test": {"tests"}, "build": {"build", "tests"}, "compil": {"build", "tests"},
                   "type": {"types"}}  # (a test run that passed compiled the code)


def _foretold_wrong(item: Insight, at: int, undone: Undone) -> bool:
    """Whether `item`, said at event `at`, foretells that a kind of check will fail, and the next run of that kind
    passed: the session disproved it ("will break linting", then "Lint passes cleanly")."""
    foretold = _FORETOLD_RE.search(item.text)
    return foretold is not None and undone.passed_next(
        at, _FORETOLD_KINDS[(foretold.group(1) or foretold.group(2)).lower()])


# "I found the issue!", "**FOUND THE ROOT CAUSE!**", "You're right, sorry. The issue is ...": a cause found anew, the
# one said before it a guess ("Now I see the issue clearly" restates it)
_FOUND_ANEW_RE = re.compile(r"^\W*(?:i(?:'ve)? found|found (?:it|the)\b|you(?:'re| are) (?:absolutely )?right\W+sorry|"
                            r"sorry\b|my mistake|the (?:real|actual) (?:issue|problem|cause|bug)\b)", re.IGNORECASE)


def _revised_causes(session: Session, said: list[int]) -> set[int]:
    """Of the event indices `said` of the messages stating a root cause, those the agent's next such message revised
    before anything was done on it: in the same turn, no edit gone through between, the next found anew
    (`_FOUND_ANEW_RE`: "The checkpoint wasn't created because no files were modified", then staging them changed
    nothing and "I found the issue! The test harness creates a mock transcript without tool_use blocks"): a guess the
    session replaced, not what it found."""
    stated = sorted(set(said))
    revised: set[int] = set()
    for at, then in itertools.pairwise(stated):
        acted = any(event.kind == "user" and event.text or event.tool is not None and event.tool.name in WRITE_TOOLS
                    and not (event.tool.is_error or event.tool.rejected) for event in session.events[at + 1:then])
        if not acted and _FOUND_ANEW_RE.match(session.events[then].text):
            revised.add(at)
    return revised


JUDGED = 2  # the strength of a choice with a strong cue ("the cleanest fix is", "I'd recommend") or under a heading


def _place(item: Insight) -> tuple[bool, bool, bool, bool, int]:
    """Where an insight ranks for the places of a handoff: the choices first, then the findings (a finding with no
    choice yields its place to a choice). Among the choices: those stated with their reason, the user's and the commit
    bodies' (what was done), then those the agent judged plainly ("The cleanest fix is ...", "My recommendation: ..."),
    often a proposal, then the changes with a reason, reported, announced and the steps taken on a finding; among the
    findings: a root cause, then the rest, the most plainly stated first."""
    finding = item.cause or item.kind == "Found"
    return finding, not item.cause, item.strength < 0, not finding and item.strength >= JUDGED, -item.strength


def chosen(session: Session, undone: Undone | None = None, facts: Facts | None = None) -> list[Insight]:
    """The best few decisions and root causes of a session: the choices first (stated, the user's, the changes
    with a reason, reported or announced, the steps taken on a finding), then a root cause (at most `MAX_CAUSES`)
    and the findings: a finding with no choice yields its place to a choice. The most plainly stated first, in the
    session's order among equals; a repeat of one already kept (most of its words) left out. Places still free then
    take the further root causes (most often the reason a decision was made, said apart from it), findings in plain
    words, the findings stated right before an edit and, when the session wrote code, the list lines of the turns'
    reports. Shown root causes first, then in the session's order. `undone`, `facts`: the session's `Undone` and
    `Facts`, when the caller has them already."""
    found: list[tuple[int, int, Insight]] = []
    written = written_text(session)
    messages = agent_texts(session)
    edited_after = _edited_after(session, messages)
    refused_after = _refused_after(session, messages)
    replies = _replies(session, messages)
    undone = (undone or Undone(session)) if written else None  # a value the session wrote, then took back
    overruled = _overruled(session, messages)
    for order, (index, text) in enumerate(messages):
        said = sentences(text)
        stated = insights_in(said, replies[order], index in edited_after)
        texts = {item.text for item in stated}
        changes = [item for item in changes_in(said, written) if item.text not in texts] if written else []
        # a step on a finding whose edit the user refused was not taken: no decision (a reader judged them false)
        steps = [] if index in refused_after else steps_on_findings(said)
        items = [*stated, *changes, *steps]
        if refused_after.get(index):  # a change announced whose edit the user refused outright: a step not taken
            items = [_not_done(item, refused_after[index]) if _ANNOUNCING_RE.match(item.text) else item
                     for item in items]
        if undone is not None and undone.fixed_after(index):  # its turn then edited and tests passed: fixed since
            items = [_before_fix(item) if item.cause and _SYMPTOM_RE.search(item.text) else item for item in items]
        if index in edited_after:
            items += [item for item in findings_before_edits(said)
                      if item.text not in texts and not _NO_REFERENT_RE.match(item.text)]
            # a finding that goes on with what to do on it, then done: the choice, its reason said first
            items = [replace(item, kind="Decision", strength=REASONED)
                     if item.kind == "Found" and _CHOSEN_ON_RE.search(item.text) else item for item in items]
        if undone is not None:  # a fault or lack of code a later edit wrote the code of: said as it was
            items = [_before_fix(item, _BEFORE) if _fixed_since(item, index, undone) else item for item in items]
            items = [item for item in items if not _foretold_wrong(item, index, undone)]
        if index in overruled:  # a decision or cause the person then overruled
            items = [item for item in items if not ((item.kind == "Decision" or item.cause)
                                                    and len(_named(_words(item.text)) & overruled[index])
                                                    >= OVERRULED_WORDS)]
        found += [(order, position, item) for position, item in enumerate(items)
                  if undone is None or item.kind != "Decision" or not undone.superseded(index, item.text)]
    found += [(order, -1, item) for order, item in user_directions(session)]
    found += [(order, -1, Insight("Decision", "", text, ACTED)) for order, text in acted_choices(session, facts)]
    for order, step, item in lint_steps(session):
        # the step said bare among the choices: the same step with its reason takes its place and rank
        bare = next((at for at, entry in enumerate(found) if as_stated(entry[2].text).rstrip(":.") == step), None)
        if bare is None:
            found.append((order, -1, item))
        else:
            found[bare] = (*found[bare][:2], replace(item, strength=found[bare][2].strength))
    reports = turn_reports(session, messages)
    # what a report lists of documents it updated ("Updated step 6 to mention token usage ...") describes the text
    code = written_text(session, docs=False) if reports else ""
    # a session that wrote no code settled nothing in it: its reports explain or propose ("Use interface pattern ...")
    if code:  # an earlier turn's report: only its lines that give a reason (one naming code may describe it)
        found += [(order, len(found) + position, item) for order in reports for position, item in enumerate(
            closing_lines(sentences(messages[order][1]), code if order == reports[-1] else ""))
            if undone is None or item.kind != "Decision" or not undone.superseded(messages[order][0], item.text)]
    found += [(len(messages), position, item) for position, item in enumerate(commit_reasons(session))]
    found += [(len(messages), position, item) for position, item in enumerate(written_reasons(session))]
    found = [entry for entry in found if not _unread_alone(entry[2].text)]
    revised = _revised_causes(session, [messages[order][0] for order, _, item in found
                                        if item.cause and order < len(messages)])
    found = [entry for entry in found if not (entry[2].cause and entry[0] < len(messages)
                                              and messages[entry[0]][0] in revised)]
    ranked = sorted(found, key=lambda f: (*_place(f[2]), f[0], f[1]))
    kept: list[tuple[int, int, Insight]] = []
    held: list[tuple[int, int, Insight]] = []
    causes = 0
    notes: Counter[int] = Counter()
    for entry in ranked:
        item = entry[2]
        if item.cause and causes == MAX_CAUSES or item.strength < FOLLOWED:
            held.append(entry)
        elif notes[item.strength] == NOTES_OF_A_KIND.get(item.strength):
            continue
        elif len(kept) < MAX_INSIGHTS and not _repeats(item, [k for _, _, k in kept]):
            kept.append(entry)
            causes += item.cause
            notes[item.strength] += 1
    kept.sort(key=lambda f: (not f[2].cause, f[0], f[1]))
    for entry in sorted(held, key=lambda e: (e[2].strength == WRITTEN, e[2].strength == CLOSING,
                                             e[2].strength == LINTED)):
        item = entry[2]
        if len(kept) < MAX_INSIGHTS and not _repeats(item, [k for _, _, k in kept]):
            kept.append(entry)
    return [item for _, _, item in kept]


def insights(session: Session, undone: Undone | None = None, facts: Facts | None = None) -> list[str]:
    """The `chosen` insights as handoff lines (`**topic** -- explanation` where a frame opens it, else the text)."""
    return [item.line() for item in chosen(session, undone, facts)]
