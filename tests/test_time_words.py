"""Time words in a query: the days they name, counted from the day it is asked, and the words left to match."""

from __future__ import annotations

import datetime as dt

import pytest

from eywa.core.retrieval.time_words import Window, last_days, understood

TODAY = dt.date(2026, 12, 2)  # a Wednesday


def day(text: str) -> dt.date:
    return dt.date.fromisoformat(text)


@pytest.mark.parametrize(("query", "words", "since", "until"), [
    ("what did I do yesterday on the bot", "what did I do on the bot", "2026-12-01", "2026-12-01"),
    ("the rewind work last week", "the rewind work", "2026-11-23", None),
    ("the rewind work this week", "the rewind work", "2026-11-30", None),
    ("in March", "in March", "2026-03-01", "2026-03-31"),
    ("the lint errors in December", "the lint errors in December", "2026-12-01", "2026-12-31"),  # this one
    ("since March the gitleaks work", "since March the gitleaks work", "2026-03-01", None),
    ("the posthog fix back in July 2025", "the posthog fix back in July 2025", "2025-07-01", "2025-07-31"),
    ("in 2025", "in 2025", "2025-01-01", "2025-12-31"),
    ("two months ago", "", "2026-09-02", "2026-11-02"),
    ("about six months ago, the upstream", ", the upstream", "2026-05-02", "2026-07-02"),
    ("3 days ago", "", "2026-11-28", "2026-11-30"),
    ("two weeks ago the templates", "the templates", "2026-11-11", "2026-11-25"),
    ("a year ago", "", "2025-06-02", "2026-06-02"),
    ("on Friday", "", "2026-11-27", "2026-11-27"),
    ("what did I work on last Friday", "what did I work on", "2026-11-27", "2026-11-27"),
    ("what happened wednesday", "what happened", "2026-11-25", "2026-11-25"),  # not today: the one before
    ("since Monday", "", "2026-11-30", None),
    ("over the weekend", "", "2026-11-28", "2026-11-29"),
    ("the week before last, the mermaid test", ", the mermaid test", "2026-11-16", "2026-11-22"),
    ("in the last 3 days, the shadow branch", ", the shadow branch", "2026-11-30", None),
    ("the past week", "", "2026-11-26", None),
    ("last month's release", "'s release", "2026-11-01", None),
    ("this month", "", "2026-12-01", None),
    ("the ruby css last year", "the ruby css", "2025-01-01", "2025-12-31"),
    ("tonight", "", "2026-12-02", "2026-12-02"),
    ("the day before yesterday morning", "", "2026-11-30", "2026-11-30"),
    ("the gitleaks thing yesterday and last week", "the gitleaks thing and", "2026-12-01", "2026-12-01"),
])
def test_time_words_name_days_and_leave_the_other_words(query: str, words: str, since: str, until: str | None) -> None:
    found = understood(query, TODAY)
    assert found.words == words
    assert found.first == Window(day(since), day(until) if until else None)
    assert found.only is None


@pytest.mark.parametrize("query", [
    "gitleaks secret scanning", "may I see the changelog", "the user may see it", "march of the penguins",
    "3d printing", "the last week of march", "the first weekend of August 2023", "on the Monday before July 24",
    "the last two weeks of August", "as mentioned on 3 June, 2023", "How long ago was the release", "recently",
    "the weekend", "a recent weekend", "go 1.25.6", "2026-02-11",
])
def test_words_that_name_no_days_before_today_are_left_alone(query: str) -> None:
    assert understood(query, TODAY) == (query, None, None)


def test_a_leading_7d_or_2w_is_a_filter_of_the_last_days() -> None:
    assert understood("7d gitleaks", TODAY) == ("gitleaks", None, Window(day("2026-11-26"), None))
    assert understood("2w  rewind gemini", TODAY) == ("rewind gemini", None, Window(day("2026-11-19"), None))
    assert understood("7d gitleaks last week", TODAY).first == Window(day("2026-11-23"), None)
    assert understood("the 7d thing", TODAY) == ("the 7d thing", None, None)  # at the start only
    assert last_days(1, TODAY) == Window(TODAY, None)  # today is the first of them, as --days-back counts
    assert last_days(10**9, TODAY) == Window(None, None)


def test_windows_are_named_as_an_answer_says_them() -> None:
    assert Window(day("2026-11-23"), None).label(TODAY) == "since Mon 23 Nov"
    assert Window(day("2026-12-01"), day("2026-12-01")).label(TODAY) == "on Tue 1 Dec"
    assert Window(TODAY, TODAY).label(TODAY) == "today"
    assert Window(day("2026-03-01"), day("2026-03-31")).label(TODAY) == "in March 2026"
    assert Window(day("2025-01-01"), day("2025-12-31")).label(TODAY) == "in 2025"
    assert Window(day("2025-11-16"), day("2025-11-22")).label(TODAY) == "from Sun 16 Nov 2025 to Sat 22 Nov 2025"
    assert Window(day("2026-11-16"), day("2026-12-31")).label(TODAY) == "since Mon 16 Nov"


def test_a_month_to_come_this_year_is_last_years() -> None:
    assert understood("in March", day("2026-02-10")).first == Window(day("2025-03-01"), day("2025-03-31"))


def test_month_ends_and_leap_years_hold() -> None:
    assert understood("in February", day("2028-03-31")).first == Window(day("2028-02-01"), day("2028-02-29"))
    assert understood("a month ago", day("2026-03-31")).first == Window(day("2026-01-31"), day("2026-03-31"))
    assert understood("last month", day("2026-01-15")).first == Window(day("2025-12-01"), None)
