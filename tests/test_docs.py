"""The README and the docs/ pages: every relative link reaches a file, and every #anchor a heading of it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from .conftest import ROOT

PAGES = sorted([ROOT / "README.md", ROOT / "bench" / "RESULTS.md", *(ROOT / "docs").glob("*.md")])
_MARKDOWN = MarkdownIt("commonmark").enable("table")


def github_anchor(title: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")


def _inline_text(token: object) -> str:
    return "".join(child.content for child in token.children or [] if child.type in ("text", "code_inline"))


def anchors(page: Path) -> set[str]:
    """Every heading's anchor, a repeated one numbered as GitHub numbers it (`-1`, `-2`)."""
    tokens = _MARKDOWN.parse(page.read_text(encoding="utf-8"))
    found: dict[str, int] = {}
    for opening, inline in zip(tokens, tokens[1:], strict=False):
        if opening.type == "heading_open":
            anchor = github_anchor(_inline_text(inline))
            found[anchor] = found.get(anchor, -1) + 1
    return {anchor if n == 0 else f"{anchor}-{n}" for anchor, count in found.items() for n in range(count + 1)}


def links(page: Path) -> list[str]:
    """Every link target of the page (code blocks and code spans are not links)."""
    targets = []
    for token in _MARKDOWN.parse(page.read_text(encoding="utf-8")):
        for child in token.children or []:
            if child.type == "link_open":
                targets.append(str(child.attrs["href"]))
    return targets


def broken_links(page: Path) -> list[str]:
    broken = []
    for target in links(page):
        if re.match(r"^[a-z][a-z+.-]*:", target):  # https:, mailto:: nothing local to check
            continue
        path_part, _, anchor = target.partition("#")
        linked = (page.parent / path_part).resolve() if path_part else page
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif anchor and (linked.suffix != ".md" or anchor not in anchors(linked)):
            broken.append(f"{target}: no such heading")
    return broken


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_link_of_the_readme_and_docs_reaches_a_file_and_heading(page: Path) -> None:
    assert broken_links(page) == []


def test_the_link_check_catches_a_missing_file_and_a_missing_heading(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    (tmp_path / "other.md").write_text("# Other page\n\n## The `setup` step: pairing\n\n```\n# not a heading\n```\n")
    page.write_text("[a](other.md#the-setup-step-pairing) [b](gone.md) [c](other.md#not-a-heading) [d](#page)\n"
                    "[e](https://example.com/x) `[f](inside-code.md)`\n\n# Page\n")
    assert broken_links(page) == ["gone.md: no such file", "other.md#not-a-heading: no such heading"]


def test_the_readme_is_a_front_page_whose_first_commands_are_the_two_commands() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 150
    blocks = re.findall(r"```bash\n(.*?)```", text, re.DOTALL)
    assert blocks[0].strip().endswith(".venv/bin/eywa-bot") and "pytest" in blocks[1]
    for page in ("telegram", "claude-code", "agents", "machines", "llm", "retrieval", "architecture",
                 "reliability", "transcripts"):
        assert f"docs/{page}.md" in text, page
