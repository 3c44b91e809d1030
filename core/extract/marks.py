"""Where a line of a handoff may end: never inside a bracket, a code span or a quotation it opens ("Add detection
for git "sequence operations" (rebase, cherry-pick" reads as garbled), and a command shown so that it can be run
again: whole, or cut between its arguments. Every cut of the extractor ends through here.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterator
from itertools import islice

from eywa.core.extract.terms import HOME_RE

_CLOSERS = {"(": ")", "[": "]", "{": "}", '"': '"', "“": "”"}
_CLOSING = {closer: opener for opener, closer in _CLOSERS.items() if opener != closer}
LEAD_INTO = " ,;:—–->→⇒"  # what leads into a mark or a cut ("->"): left out with it
# a word that leads into what a cut left out ("forbidden because", "now uses `retry@v3` with"): left out with it
DANGLING = frozenset("a an and the of to in on for with by from or as at into that which so but because than like "
                     "then i we you they if what when where whether how why this".split())
# a word that opens a clause: one or two words after it at a line's end say nothing ("... `plan.md` that incorporates")
CLAUSE_OPENERS = frozenset("which that who where while but so".split())
STUB_WORDS = 2  # of a clause opened at a line's end, the words after its opener that read as a stub
LEAST_WORDS = 3  # words before an unclosed mark that read alone; fewer: the mark is closed instead
# a command's argument: a quoted one whole ("TestA|TestB"); one character or quotation per step: linear
_ARGUMENT_RE = re.compile(r"""(?:[^\s"']|"[^"]*"|'[^']*')+""")
COMMAND_CHARS = 120  # of a command shown: the check commands of the corpus, filters and all, fit
# "... data-groupid:\\\n[Image #1]": a line continuation's backslash, a pasted image's marker: no words of the prompt
_PASTED_RE = re.compile(r"\\(?=\n)|\[Image #\d+\]")


# Where a clause ends inside a sentence: ", ", "; ", ": ", " - ", " — ", before " (", a sentence's end.
CLAUSE_END_RE = re.compile(r"[,;:](?=\s)|\s[—–-](?=\s)|\s(?=\()|\.(?=\s|$)")


def _marks_open(text: str) -> Iterator[tuple[list[int], int, bool]]:
    """Before each place of `text`, and past its end: the places of the brackets and quotations open there (one
    list, changed in place: never copied), where an open code span starts (-1: none), and whether a code span or
    quotation is open (a stray closer, "1)" or ":)", closes nothing)."""
    stack: list[int] = []
    quotes = curly = 0  # of the stack: quotations open (counted, not looked for: linear on a long line)
    code = -1  # where the open code span starts; inside it nothing else is a mark
    for at, char in enumerate(text):
        yield stack, code, code >= 0 or quotes + curly > 0
        if char == "`":
            code = at if code < 0 else -1
        elif code >= 0:
            continue
        elif char == '"' and quotes:  # a quotation closed, what it opened too
            while text[opened := stack.pop()] != '"':
                curly -= text[opened] == "“"
            quotes -= 1
        elif char in _CLOSERS:
            stack.append(at)
            quotes += char == '"'
            curly += char == "“"
        elif char in _CLOSING and stack and text[stack[-1]] == _CLOSING[char]:
            curly -= text[stack.pop()] == "“"
    yield stack, code, code >= 0 or quotes + curly > 0


def unclosed(text: str) -> list[int]:
    """The places of the marks `text` opens and never closes, first to last: brackets, a code span, a quotation in
    double quotes."""
    stack, code, _ = deque(_marks_open(text), maxlen=1)[0]
    return stack + [code] * (code >= 0)


def clause_end(text: str, least: int = 0, start: int = 0, stop: int | None = None,
               ends: re.Pattern[str] = CLAUSE_END_RE) -> int:
    """The last place of `text[start:stop]` where a clause ends (`ends`) after at least `least` words, outside a
    code span or quotation (one inside a bracket does: "(rebase, cherry-pick", the bracket then closed by
    `balanced`); -1 when none. One pass over the text: linear on a long line."""
    places = [m.start() for m in ends.finditer(text, start, len(text) if stop is None else stop)]
    found, words, place = -1, 0, 0
    for at, (_, _, inside) in islice(enumerate(_marks_open(text)), places[-1] + 1 if places else 0):
        if at == places[place]:
            found = at if words >= least and not inside else found
            place += 1
        words += not text[at].isspace() and (at == 0 or text[at - 1].isspace())  # a word begun before a place counts
    return found


def stub_dropped(text: str, least: int) -> str:
    """`text` without the clause it ends by opening ("Created a plan at `plan.md` that incorporates", the source's list
    after its colon left out; "... signature which added", cut), when `least` words stay before its opener; not a
    "that" after a preposition ("the tests in that file"): it points, it opens no clause."""
    words = text.split()
    back = next((back for back in range(2, STUB_WORDS + 2) if len(words) - back >= max(least, 1)
                 and words[-back].lower() in CLAUSE_OPENERS and words[-back - 1].lower() not in DANGLING), 0)
    return " ".join(words[:-back]) if back else text


def balanced(text: str, least: int = LEAST_WORDS, cut: bool = True) -> str:
    """`text` with each mark it leaves open closed ("... (rebase, cherry-pick)", "... saying `session not found`"),
    but a quotation (cut, it misquotes) and, when the text was not `cut` (its writer never closed it: "it's an
    inline style (and there's no data-groupid:"), any mark: those are left out with the words that lead into them,
    when `least` words stay before."""
    places = unclosed(text)
    if not places:
        return text
    words = text[:places[0]].rstrip(LEAD_INTO).split(" ")
    while words and words[-1].lower() in DANGLING:
        words.pop()
    if (not cut or text[places[0]] in "\"“") and len(words) >= least:
        return " ".join(words).rstrip(LEAD_INTO)
    code = places[-1] if text[places[-1]] == "`" else len(text)  # a quotation the code span opens, closed in it
    # a quotation's cut said in it ('Say "hello world…"'), a name's not
    closers = ("…" * (text[at] in '"“') + _CLOSERS.get(text[at], "`") for at in reversed(places))
    return text + '"' * (text.count('"', code) % 2) + "".join(closers)


def words_cut(text: str, limit: int) -> str:
    """At most `limit` characters, cut between words and balanced (`balanced`), "…" where it was cut."""
    if len(text) <= limit:
        return text
    return balanced(text[:limit - 1].rsplit(" ", 1)[0].rstrip(LEAD_INTO)) + "…"


def first_line(text: str, limit: int) -> str:
    """The first line with words of `text`, cut as `words_cut` cuts."""
    return words_cut(next((part.strip() for part in text.splitlines() if part.strip()), ""), limit)


def command(text: str, limit: int = COMMAND_CHARS) -> str:
    """A command's first line as a successor runs it again: whole up to `limit` characters, else its arguments that
    fit, each whole (a quoted test filter kept or left out, never cut), then " …"."""
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    if len(line) <= limit:
        return line
    ends = [m.end() for m in _ARGUMENT_RE.finditer(line, 0, limit - 2)]
    fits = [end for end in ends if end < len(line) and line[end].isspace()]
    return (line[:fits[-1]] if fits else line[:limit - 1]) + " …"


def typed(text: str) -> str:
    """What the user typed, as a handoff line shows it (a headline, "Asked: ...", a thread or a decision quoting it):
    no pasted image's marker nor line continuation, a home folder's path from `~/` (the folder names a person)."""
    return _PASTED_RE.sub("", HOME_RE.sub("~/", text))


def counted(items: list[str], shown: int) -> str:
    """"`a`, `b`, `c` and 2 more": the first `shown` of `items` named, the rest counted (a line stays short)."""
    more = len(items) - shown
    return ", ".join(items[:shown]) + (f" and {more} more" if more > 0 else "")
