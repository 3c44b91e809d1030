from __future__ import annotations

import datetime as dt

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from eywa.core.handoffs.model import Handoff, _simple_front_matter, split_front_matter

_TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40)
_WORDS = st.lists(st.one_of(_TEXT, st.from_regex(r"[a-z][a-z0-9-]{0,20}", fullmatch=True)), max_size=6)


@settings(max_examples=400, deadline=None)
@given(short=st.one_of(_TEXT, st.from_regex(r"[0-9a-f]{8}", fullmatch=True)), headline=_TEXT, model=_TEXT,
       projects=_WORDS, keywords=_WORDS, substance=st.integers(0, 2), day=st.dates(dt.date(1990, 1, 1)),
       status=st.sampled_from([None, "done", "partial"]), machine=_TEXT, duration=st.sampled_from(["0m", "1h 10m"]))
def test_the_quick_front_matter_reader_reads_what_yaml_reads_from_any_handoff_written(
        short: str, headline: str, model: str, projects: list[str], keywords: list[str], substance: int,
        day: dt.date, status: str | None, machine: str, duration: str) -> None:
    handoff = Handoff(short_id=short or "x", session_id=f"{short}-uuid", date=day, headline=headline or "h",
                      model=model, projects=projects, keywords=keywords, substance=substance, status=status,
                      machine=machine, duration=duration)
    text = handoff.to_markdown()
    block = text[3:text.find("\n---", 3)]
    quick = _simple_front_matter(block)
    try:
        expected = yaml.safe_load(block)
    except yaml.YAMLError:  # characters YAML refuses: the file stays as unreadable as it was
        assert quick is None
        return
    if quick is not None:  # None: left to YAML
        assert quick == expected
    assert split_front_matter(text)[0] == expected


def test_the_originals_front_matter_is_read_quickly_and_as_yaml_reads_it() -> None:
    block = ("\nsession_id: 8735508d\ndate: 2026-02-16\nduration: 10m\nmodel: claude-opus-4-6\n"
             "headline: Generated day plan\nprojects: [pratchett-os, sorbent]\n"
             "keywords: [day-plan, sorbent-commercial, coordinator-background-job]\nsubstance: 1")
    quick = _simple_front_matter(block)
    assert quick is not None and quick == yaml.safe_load(block)
    assert quick["date"] == dt.date(2026, 2, 16) and quick["substance"] == 1


def test_values_yaml_reads_as_other_types_are_left_to_yaml() -> None:
    # An octal-looking id, booleans, floats, nulls, single quotes, a trailing comma: YAML's own reading counts.
    for line in ("session_id: 01142124", "flag: yes", "x: 1.5", "x: .inf", "x: ~", "x: 'quoted'", "x: [a,]",
                 "x: [true]", "x: a: b", "x: \"\\u00e9\"", "x: -y"):
        assert _simple_front_matter(line) is None, line
