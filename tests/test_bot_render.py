"""Formatting for Telegram, measured against the fake's copy of Telegram's own parser: every handoff of
the corpus, and arbitrary text, comes out as HTML that Telegram accepts, in chunks under its limit."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from eywa.bot import render
from eywa.core.api import Digest, Eywa, HandoffRecord
from eywa.core.config.settings import load_settings

from .conftest import CORPUS
from .fake_telegram import MAX_TEXT, parse_html, utf16


def record(body: str, headline: str = "Fix the <parser> & co", **fields: object) -> HandoffRecord:
    values: dict = dict(session_id="0d3a8e6f-1111-2222-3333-444444444444", short_id="0d3a8e6f",
                        date=dt.date(2026, 2, 16), headline=headline, projects=["eywa"], keywords=[], substance=2,
                        duration_min=70, model="m", body=body, path=Path("/nonexistent/h.md"))
    values.update(fields)
    return HandoffRecord(**values)


@pytest.fixture(scope="module")
def corpus_records(tmp_path_factory: pytest.TempPathFactory) -> list[HandoffRecord]:
    data = tmp_path_factory.mktemp("render-data")
    with pytest.MonkeyPatch.context() as mp:
        for name in [n for n in os.environ if n.startswith(("EYWA_", "ANTHROPIC_"))]:  # deterministic extractor
            mp.delenv(name)
        eywa = Eywa(load_settings(data_dir=data, projects_dir=CORPUS / "claude-code-log" / "projects"))
        eywa.ingest()
        records = eywa.last(100)
        eywa.close()
    return records


def test_every_corpus_handoff_renders_to_html_telegram_accepts(corpus_records: list[HandoffRecord]) -> None:
    assert len(corpus_records) > 20
    for rec in corpus_records:
        for chunk in render.handoff_chunks(rec):
            text, entities = parse_html(chunk)
            assert utf16(text) <= MAX_TEXT and entities
        text, entities = parse_html(render.continue_html(rec))
        assert [e["type"] for e in entities] == ["pre"] and rec.session_id in text


def test_header_and_sections_keep_their_words_and_markup_becomes_entities() -> None:
    body = ("# Fix the <parser> & co\n\n## What Happened\n- Edited `a<b>.py` and **core** files\n\n"
            "## Open Threads\nNone.\n")
    (chunk,) = render.handoff_chunks(record(body))
    text, entities = parse_html(chunk)
    assert text == ("Fix the <parser> & co\nMon 16 Feb 2026 · eywa · 1h 10m · 0d3a8e6f\n\n"
                    "What Happened\n• Edited a<b>.py and core files\n\nOpen Threads\nNone.")
    assert {(e["type"], text[e["offset"]: e["offset"] + e["length"]]) for e in entities} >= {
        ("bold", "Fix the <parser> & co"), ("code", "a<b>.py"), ("bold", "core"), ("code", "0d3a8e6f")}


def test_a_headline_naming_code_shows_it_as_code_in_the_header_and_the_list_line() -> None:
    """"Fix tests in `reset_test.go`": the file as code inside the bold title, not its backticks."""
    named = record("# Fix tests\n\n## Open Threads\nNone.\n", headline="Fix tests in `reset<1>_test.go`")
    for html_text in (render.header(named), render.short_line(1, named)):
        text, entities = parse_html(html_text)
        assert "Fix tests in reset<1>_test.go" in text and "`" not in text
        assert {(e["type"], text[e["offset"]: e["offset"] + e["length"]]) for e in entities} >= {
            ("bold", "Fix tests in reset<1>_test.go"), ("code", "reset<1>_test.go")}


def test_the_machine_a_session_ran_on_is_shown_in_its_header_and_list_line() -> None:
    laptop = record("# Fix it\n\n## Open Threads\nNone.\n", headline="Fix it", machine="laptop")
    text, _ = parse_html(render.handoff_chunks(laptop)[0])
    assert text.splitlines()[1] == "Mon 16 Feb 2026 · eywa · 1h 10m · on laptop · 0d3a8e6f"
    assert "16 Feb · eywa · 1h 10m · on laptop" in parse_html(render.short_line(1, laptop))[0]


def test_long_body_is_split_on_section_boundaries_under_the_limit() -> None:
    sections = "\n\n".join(f"## Section {s}\n" + "\n".join(f"- item {s}.{i} " + "y" * 90 for i in range(15))
                           for s in range(5))
    chunks = render.handoff_chunks(record("# H\n\n" + sections))
    assert len(chunks) > 1
    for chunk in chunks:
        assert utf16(chunk) <= render.BUDGET
        assert chunk.startswith(("<b>Fix the", "<b>Section "))  # every chunk starts at a section
    joined = "\n\n".join(parse_html(c)[0] for c in chunks)
    assert all(f"item {s}.{i} " in joined for s in range(5) for i in range(15))


def test_one_enormous_bullet_is_cut_into_valid_pieces() -> None:
    chunks = render.handoff_chunks(record("## Insights\n- " + "<&> " * 3000))
    assert len(chunks) >= 2
    assert all(utf16(parse_html(c)[0]) <= MAX_TEXT for c in chunks)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=300), max_size=30))
def test_any_text_renders_to_html_that_parses_and_fits(lines: list[str]) -> None:
    body = "\n".join(f"## {line}" if i % 7 == 0 else f"- {line}" for i, line in enumerate(lines))
    for chunk in render.pack(render.handoff_blocks(record(body, headline="".join(lines[:1]) or "x"))):
        text, _ = parse_html(chunk)
        assert utf16(chunk) <= render.BUDGET and utf16(text) <= MAX_TEXT


def test_continue_prompt_names_the_session_threads_and_files_and_fits_one_message() -> None:
    body = ("# H\n\n## What Happened\n- Built the **index**\n\n## Key Files\n- `core/index/store.py` (3 edits)\n\n"
            "## Open Threads\n- Wire the bot\n- " + "z" * 5000 + "\n")
    prompt = render.continue_prompt(record(body))
    assert prompt.startswith("Continue from my earlier Claude Code session 0d3a8e6f-1111")
    assert "Open threads:\n- Wire the bot" in prompt and "- `core/index/store.py` (3 edits)" in prompt
    assert "Built the index" in prompt and "Session id: 0d3a8e6f-1111-2222-3333-444444444444" in prompt
    assert prompt.index("Open threads:") < prompt.index("What happened:")  # what is left to do leads
    assert utf16(parse_html(render.continue_html(record(body)))[0]) <= MAX_TEXT


def test_digest_groups_sessions_by_project_and_lists_open_threads() -> None:
    a = record("## Open Threads\n- ship it\n", headline="A", projects=["eywa"])
    b = record("## Open Threads\nNone.\n", headline="B", projects=["eywa"])
    c = record("## Open Threads\nNone.\n", headline="C", projects=[])
    digest = Digest(since=dt.datetime(2026, 2, 16, 8, 0, tzinfo=dt.UTC), handoffs=[a, b, c],
                    open_threads=[(a, a.open_threads)])
    blocks = render.digest_blocks(digest, load_settings().zone)
    texts = [parse_html(b)[0] for b in blocks]
    assert texts[0] == "Digest: 3 sessions since Mon 16 Feb 08:00"
    assert texts[1].startswith("eywa (2)\n• A · 16 Feb") and texts[2].startswith("no project (1)")
    assert texts[3] == "Open threads\neywa\n• ship it (0d3a8e6f)"  # by project


def test_a_recalled_handoff_shows_its_status(tmp_path: Path) -> None:
    path = tmp_path / "h.md"
    path.write_text("---\nsession_id: 0d3a8e6f\ndate: 2026-02-16\nheadline: H\nstatus: partial\n---\n# H\n",
                    encoding="utf-8")
    header = parse_html(render.header(record("# H\n", path=path)))[0]
    assert header.splitlines()[1].split(" · ")[3] == "partial"
    original = record("# H\n")  # an imported original, or a file gone: no status, no empty field
    assert len(parse_html(render.header(original))[0].splitlines()[1].split(" · ")) == 4


def test_a_session_of_another_agent_says_which_in_its_header_and_list_line() -> None:
    codex, claude = record("# Fix\n", agent="codex"), record("# Fix\n")
    assert " · Codex · " in render.header(codex) and "Codex" in render.short_line(1, codex)
    assert "Codex" not in render.header(claude) and "Claude" not in render.short_line(1, claude)
