"""Time words in a query: the days they name, and the query without them.

"what did I do yesterday on the bot", "the rewind work last week", "in March", "two months ago", "since
Monday": each names a window of days counted from the day the query is asked (the clock's,
core/config/clock.py), whose sessions retrieval ranks first (core/retrieval/recall.py). Their words leave the
query, so that "week" or "ago" is not matched as content; a month's name and a year stay, as the index writes
each session's day in words (core/archive/columns.py) and a conversation names months. A leading `7d` or `2w`
("/recall 7d gitleaks") keeps only the sessions of the last 7 days, 2 weeks: a filter, like `--days-back`.
Calendar days ("on 9 November", "2026-02-11") are left to the full text (query_tokens.fts_phrases), which
matches the days each session's text names.

Generous on purpose, as people are with time: "last week" is since the Monday of last week, "last month"
since the first of last month, "two weeks ago" a week either side. Standard library only, no date-parsing
library: `eywa get` imports this on its start-up path (bench/RESULTS.md says what the libraries weighed and
missed).
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from collections.abc import Callable, Iterator
from typing import NamedTuple

from eywa.core.archive.columns import MONTHS


class Window(NamedTuple):
    """The days a query asks for, both ends included; None: open on that side."""

    since: dt.date | None
    until: dt.date | None

    def label(self, today: dt.date) -> str:
        """How an answer names it: "today", "on Tue 1 Dec", "since Mon 23 Nov", "in March 2026", "in 2025"."""
        since, until = self.since, self.until
        if since is None:
            return "at any time" if until is None else f"until {_day(until, today)}"
        if until is None or until >= today:
            return "today" if since == today else f"since {_day(since, today)}"
        if since == until:
            return f"on {_day(since, today)}"
        if (since.month, since.day, until.month, until.day) == (1, 1, 12, 31) and since.year == until.year:
            return f"in {since.year}"
        if since.day == 1 and until == _month_end(since):
            return f"in {since:%B} {since.year}"
        return f"from {_day(since, today)} to {_day(until, today)}"

    def __and__(self, other: object) -> Window:
        """The days in both."""
        assert isinstance(other, Window)
        since = max((d for d in (self.since, other.since) if d is not None), default=None)
        until = min((d for d in (self.until, other.until) if d is not None), default=None)
        return Window(since, until)

    def bounds(self) -> tuple[str | None, str | None]:
        """Both ends as ISO dates, as the index stores a handoff's day."""
        return (self.since.isoformat() if self.since else None, self.until.isoformat() if self.until else None)


def last_days(days: int, today: dt.date) -> Window:
    """The last `days` days, today the first of them (`days_back`; "7d")."""
    try:
        return Window(today - dt.timedelta(days=max(1, days) - 1), None)
    except OverflowError:  # more days than the calendar holds: every day
        return Window(None, None)


class Understood(NamedTuple):
    """A query's words and the days its time words name."""

    words: str  # the query without its time words (a month's name and a year kept)
    first: Window | None  # the days its time words name: their sessions first
    only: Window | None  # the days a leading "7d" keeps, alone


def understood(query: str, today: dt.date) -> Understood:
    """`query` split into its words and the days its time words name (the days all of them allow)."""
    found = sorted(((match, rule) for pattern, rule in _rules(query) for match in pattern.finditer(query)),
                   key=lambda item: (item[0].start(), -item[0].end()))
    windows: dict[bool, Window] = {}  # filter or not -> window
    kept: list[str] = []
    position = taken = 0  # where the words kept resume; the end of the last phrase taken
    for match, rule in found:
        if match.start() < taken:
            continue  # inside a phrase already taken (the longer one wins at a start)
        named = rule(today, match)
        if named is None:
            continue
        only = rule is _short
        windows[only] = named if only not in windows else windows[only] & named
        taken = match.end()
        if rule not in (_month, _year):  # a month's name and a year stay: see the docstring
            kept.append(query[position : match.start()])
            position = match.end()
    if not windows:
        return Understood(query, None, None)
    kept.append(query[position:])
    return Understood(" ".join(" ".join(kept).split()), windows.get(False), windows.get(True))


# -- the phrases ------------------------------------------------------------------------------------------
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
            "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2, "couple of": 2, "a few": 3, "few": 3}
_NUMBER = r"(?P<count>\d{1,3}|" + "|".join(name.replace(" ", r"\s+") for name in
                                            sorted(_NUMBERS, key=len, reverse=True)) + ")"
_UNIT = r"(?P<unit>hour|day|week|month|year)s?"
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_WEEKDAY = {name: index for index, name in enumerate(_WEEKDAYS)} | {
    name[:3]: index for index, name in enumerate(_WEEKDAYS)} | {"tues": 1, "thur": 3, "thurs": 3}
# Three-letter months, but not "may" alone, the verb; and months only after a word that makes them a time.
_MONTH = {name.lower(): number for number, name in enumerate(MONTHS, 1)} | {
    name[:3].lower(): number for number, name in enumerate(MONTHS, 1) if name != "May"} | {"sept": 9}
_MONTH_NAME = "(?P<month>" + "|".join(sorted(_MONTH, key=len, reverse=True)) + r")\.?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"
_PART_OF_DAY = r"(?:\s+(?:morning|afternoon|evening|night))?"
_NOT_OF = r"(?!\s+of\b)"  # "the last week of March" names no days before today

Rule = Callable[[dt.date, "re.Match[str]"], "Window | None"]


def _count(match: re.Match[str]) -> int:
    text = " ".join(match["count"].lower().split())
    return int(text) if text.isdigit() else _NUMBERS[text]


def _single(days: int) -> Rule:
    return lambda today, match: Window(today - dt.timedelta(days=days), today - dt.timedelta(days=days))


def _ago(today: dt.date, match: re.Match[str]) -> Window | None:
    """About N units before today: the unit either side (a day either side of up to 4 days, a quarter beyond;
    half a year either side of years)."""
    count, unit = _count(match), match["unit"].lower()
    if count <= 0:
        return None
    if unit == "hour":
        return Window(today - dt.timedelta(days=1 + count // 24), today)
    if unit == "day":
        slack = max(1, count // 4)
        return Window(today - dt.timedelta(days=count + slack), today - dt.timedelta(days=max(0, count - slack)))
    if unit == "week":
        return Window(today - dt.timedelta(weeks=count + 1), today - dt.timedelta(weeks=count - 1))
    if unit == "month":
        return Window(_months_back(today, count + 1), _months_back(today, count - 1))
    return Window(_months_back(today, 12 * count + 6), _months_back(today, 12 * count - 6))


def _last(today: dt.date, match: re.Match[str]) -> Window | None:
    """The last N units, today included."""
    count = _count(match) if match.groupdict().get("count") else 1
    unit = match["unit"].lower()
    if count <= 0:
        return None
    days = {"hour": 1 + count // 24, "day": count, "week": 7 * count}.get(unit)
    if days is not None:
        return last_days(days, today)
    return Window(_months_back(today, count if unit == "month" else 12 * count), None)


def _calendar(today: dt.date, match: re.Match[str]) -> Window:
    """This or last calendar week, month or year; the last two open up to today but last year."""
    back = 0 if match["which"].lower() == "this" else 1
    unit = match["unit"].lower()
    if unit == "week":
        return Window(_monday(today) - dt.timedelta(weeks=back), None)
    if unit == "month":
        return Window(_months_back(today.replace(day=1), back), None)
    if back:
        return Window(dt.date(today.year - 1, 1, 1), dt.date(today.year - 1, 12, 31))
    return Window(dt.date(today.year, 1, 1), None)


def _week_before_last(today: dt.date, match: re.Match[str]) -> Window:
    monday = _monday(today)
    return Window(monday - dt.timedelta(weeks=2), monday - dt.timedelta(days=8))


def _weekend(today: dt.date, match: re.Match[str]) -> Window:
    """The last Saturday and Sunday before today (today, if it is that Sunday)."""
    saturday = today - dt.timedelta(days=(today.weekday() - 5) % 7 or 7)
    return Window(saturday, min(today, saturday + dt.timedelta(days=1)))


def _weekday(today: dt.date, match: re.Match[str]) -> Window:
    """The last such day before today; "since Monday" from it on."""
    day = today - dt.timedelta(days=(today.weekday() - _WEEKDAY[(match["day"] or match["day_alone"]).lower()]) % 7 or 7)
    return Window(day, None) if (match["how"] or "").lower() == "since" else Window(day, day)


def _month(today: dt.date, match: re.Match[str]) -> Window:
    """That month of that year, else the last such month up to this one; "since March" from its first day on."""
    number = _MONTH[match["month"].lower()]
    if match["year"]:
        first = dt.date(int(match["year"]), number, 1)
    else:
        first = dt.date(today.year if number <= today.month else today.year - 1, number, 1)
    since = re.match(r"since\b", match.group(0), re.IGNORECASE)
    return Window(first, None) if since else Window(first, _month_end(first))


def _year(today: dt.date, match: re.Match[str]) -> Window:
    year = int(match["year"])
    since = re.match(r"since\b", match.group(0), re.IGNORECASE)
    return Window(dt.date(year, 1, 1), None if since else dt.date(year, 12, 31))


def _short(today: dt.date, match: re.Match[str]) -> Window | None:
    count = int(match["count"])
    return last_days(count * (7 if match["unit"].lower() == "w" else 1), today) if count else None


_MONTH_STEMS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_DAY_STEMS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
# (pattern, needs, rule): each pattern is matched at word boundaries, case aside; where two phrases start at the
# same place the longer is taken. `needs`: a match holds one of these (lowercase), so a query without any skips
# compiling the pattern, most of a query's cost otherwise.
_PHRASES: list[tuple[str, tuple[str, ...], Rule]] = [
    (r"(?:the\s+)?day\s+before\s+yesterday" + _PART_OF_DAY, ("yesterday",), _single(2)),
    (r"yesterday" + _PART_OF_DAY + r"|last\s+night", ("yesterday", "night"), _single(1)),
    (r"(?:earlier\s+)?(?:today|tonight|this\s+(?:morning|afternoon|evening))",
     ("today", "tonight", "morning", "afternoon", "evening"), _single(0)),
    (r"(?:(?:about|around|roughly|some)\s+)?" + _NUMBER + r"\s+" + _UNIT + r"\s+ago", ("ago",), _ago),
    (r"(?:(?:in|over|during|within|for)\s+)?(?:the\s+)?(?:last|past)\s+" + _NUMBER + r"\s+" + _UNIT + _NOT_OF,
     ("last", "past"), _last),
    (r"(?:(?:in|over|during|within)\s+)?(?:the\s+(?:last|past)|past)\s+(?P<unit>day|week|month|year)" + _NOT_OF,
     ("last", "past"), _last),
    (r"(?:in\s+)?(?:the\s+)?week\s+before\s+last", ("last",), _week_before_last),
    (r"(?:(?:earlier|later)\s+)?(?:(?:in|during)\s+)?(?P<which>this|last|previous)\s+(?P<unit>week|month|year)"
     + _NOT_OF, ("week", "month", "year"), _calendar),
    (r"(?:(?:over|during|on|at)\s+the\s+|(?:(?:over|during|on|at)\s+)?(?:this|last|past)\s+)weekend", ("weekend",),
     _weekend),
    (r"(?:(?P<how>on|last|since|this\s+past|past)\s+(?P<day>" + "|".join(sorted(_WEEKDAY, key=len, reverse=True))
     + r")|(?<!the\s)(?P<day_alone>" + "|".join(_WEEKDAYS) + r"))\.?" + _PART_OF_DAY, _DAY_STEMS, _weekday),
    # A month with a day number before or after it is a calendar day: the full text's (see the docstring).
    (r"(?:(?:in|during|since|from|back\s+in|earlier\s+in|in\s+(?:early|late|mid)|early|late|mid|last)(?:\s+|-))+"
     + _MONTH_NAME + r"(?:,?\s+" + _YEAR + r")?(?![\s,]*\d)", _MONTH_STEMS, _month),
    (r"(?<!\d\s)(?<!\d)(?<!of\s)" + _MONTH_NAME + r",?\s+" + _YEAR, _MONTH_STEMS, _month),
    (r"(?:in|during|since|from|back\s+in)\s+" + _YEAR + r"(?![\d.-])", ("19", "20"), _year),
]
_RULES: list[tuple[str, tuple[str, ...], Rule]] = [
    (rf"\b(?:{pattern})\b", needs, rule) for pattern, needs, rule in _PHRASES
] + [(r"^\s*(?!3d\b)(?P<count>\d{1,4})\s?(?P<unit>d|w)(?=\s|$)", tuple("0123456789"), _short)]  # "3d": 3D


@functools.cache
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


def _rules(query: str) -> Iterator[tuple[re.Pattern[str], Rule]]:
    """The rules whose pattern could match `query`; every rule for a query that is not ASCII, some of whose
    letters match ASCII ones case aside (the Kelvin sign, the long s)."""
    lowered = query.lower() if query.isascii() else None
    for pattern, needs, rule in _RULES:
        if lowered is None or any(need in lowered for need in needs):
            yield _compiled(pattern), rule


# -- calendar arithmetic ----------------------------------------------------------------------------------
def _monday(day: dt.date) -> dt.date:
    return day - dt.timedelta(days=day.weekday())


def _month_end(day: dt.date) -> dt.date:
    following = dt.date(day.year + day.month // 12, day.month % 12 + 1, 1)
    return following - dt.timedelta(days=1)


def _months_back(day: dt.date, months: int) -> dt.date:
    """The same day `months` months earlier (negative: later), the month's last day when it has fewer."""
    year, month = divmod(day.year * 12 + day.month - 1 - months, 12)
    first = dt.date(year, month + 1, 1)
    return first.replace(day=min(day.day, _month_end(first).day))


def _day(day: dt.date, today: dt.date) -> str:
    return f"{day:%a} {day.day} {day:%b}" + (f" {day.year}" if day.year != today.year else "")
