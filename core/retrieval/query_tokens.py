"""The query tokenizer of the `keywords` scorer (docs/architecture.md, "The keywords formula"), also the words of the
full-text query of the `bm25` scorer so both see the same terms; `fts_phrases` adds what only the full
text can match (dates and version numbers).
"""

from __future__ import annotations

import functools
import re

from eywa.core.archive.columns import MONTHS

_SPLIT_RE = re.compile(r"[^a-z0-9-]+")

# Tokens under 3 characters are noise except these well-known short terms.
SHORT_TOKENS: frozenset[str] = frozenset(
    {"ai", "ml", "ui", "ux", "api", "cli", "os", "mcp", "llm", "gpu", "tg", "qa", "kb", "hr", "3d"}
)

_ENGLISH = """
a about above after again against all almost also although always am among an and another any anybody
anyone anything anyway anywhere are around as at be became because become becomes been before
being below beside besides between beyond both but by can cannot could couldn did didn do does doesn doing
don done down during each either else enough etc even ever every everybody everyone everything everywhere
except few for from further had hadn has hasn have haven having he her here hers herself him himself his
how however i if in into is isn it its itself just least less let like ll many may me might mine more
most mostly much must mustn my myself neither never nevertheless no nobody none nor not nothing now
nowhere of off often on once one only onto or other others otherwise ought our ours ourselves out over
own per perhaps please quite rather re really same several shall shan she should shouldn since so some
somebody someone something sometime sometimes somewhere still such than that the their theirs them
themselves then there thereby therefore these they this those though through throughout thru thus to
together too toward towards under until up upon us very via was wasn we well were weren what whatever
when whenever where whereas wherever whether which while who whoever whole whom whose why will with
within without won would wouldn yet you your yours yourself yourselves
"""

# Words people put around the topic when asking a memory ("what did we do in the session about ...").
_QUERY_FILLER = """
ago anything asked ask back bit did do earlier find found get got give go going help hey hi know last
let look looked looking made make me mentioned need past previous previously recall recent recently
remember remind said say see session sessions show stuff tell thing things think time today told tried
try use used want was week worked work working yesterday
"""

STOPWORDS: frozenset[str] = frozenset(_ENGLISH.split()) | frozenset(_QUERY_FILLER.split())
_CONTENT_WORD_RE = re.compile(r"[a-z0-9_]+")


def content_words(text: str, shortest: int = 3, stopwords: frozenset[str] = STOPWORDS) -> set[str]:
    """The words of `text` of `shortest` characters or more that are no `stopwords`: what two texts share when they
    are about one thing."""
    return {w for w in _CONTENT_WORD_RE.findall(text.lower()) if len(w) >= shortest and w not in stopwords}


def tokenize_query(text: str) -> list[str]:
    """Lowercased query terms, stopwords and short noise dropped, first occurrence order, no duplicates."""
    seen: dict[str, None] = {}
    for raw in _SPLIT_RE.split(text.lower()):
        token = raw.strip("-")
        if not token or token in STOPWORDS:
            continue
        if len(token) < 3 and token not in SHORT_TOKENS:
            continue
        seen.setdefault(token, None)
    return list(seen)


_MONTHS = tuple(month.lower() for month in MONTHS)
_MONTH_NAMES = {name: name for name in _MONTHS} | {name[:3]: name for name in _MONTHS} | {"sept": "september"}
_MONTH = "(" + "|".join(sorted(_MONTH_NAMES, key=len, reverse=True)) + r")\.?"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?:,?\s+(\d{4}))?"


@functools.cache
def _dates() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """Versions, day and month, month and day, ISO dates: compiled at the first query holding a digit, which
    each of them needs (most queries hold none)."""
    return (re.compile(r"(?<![\w.])v?(\d+(?:\.\d+)+)(?![\w.]*\w)"),
            re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH}{_YEAR}\b"), re.compile(rf"\b{_MONTH}\s+{_DAY}\b{_YEAR}"),
            re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b"))


def fts_phrases(text: str) -> list[str]:
    """Phrases for the full-text query only, made of the numbers `tokenize_query` drops (under 3
    characters): the calendar days a query names, written as the index writes a session's days
    (`fulltext.py`: "on 9 November, 2022", "Nov 9th", "2022-11-09" -> "9 november 2022", "9 november",
    "9 november 2022"), and version numbers ("go 1.25.6" -> "1 25 6", as the tokenizer splits them).
    Without them a date matches every session of its month and a version nothing at all.
    """
    lowered = text.lower()
    found: dict[str, None] = {}
    if not any(char.isdecimal() for char in lowered):  # what `\d` matches
        return []
    version, day_month, month_day, iso = _dates()
    for match in version.finditer(lowered):
        found.setdefault(match.group(1).replace(".", " "), None)
    for match in day_month.finditer(lowered):
        _add_day(found, match.group(1), _MONTH_NAMES[match.group(2)], match.group(3))
    for match in month_day.finditer(lowered):
        _add_day(found, match.group(2), _MONTH_NAMES[match.group(1)], match.group(3))
    for match in iso.finditer(lowered):
        month = int(match.group(2))
        if 1 <= month <= 12:
            _add_day(found, match.group(3), _MONTHS[month - 1], match.group(1))
    return list(found)


def _add_day(found: dict[str, None], day: str, month: str, year: str | None) -> None:
    if 1 <= int(day) <= 31:
        found.setdefault(" ".join(part for part in (str(int(day)), month, year) if part), None)
