"""The tests a write declares and takes out, read from its whole old and new texts while the tool input itself is kept
cut (`common.INPUT_KEEP`): what a handoff names as the tests the session added (core/extract/tests_added.py)."""

from __future__ import annotations

import re
from collections.abc import Iterable

# A test's declaration at a line's start: Go's `func TestX(` (a suite's method too, not `TestMain`), Python's
# `def test_x(`, JavaScript's `it("does x", ` / `test("does x", `; each part bounded, so linear on a long text
_TEST_RE = re.compile(r"^[ \t]*(?:func[ \t]+(?:\([^)\n]{0,80}\)[ \t]*)?(Test(?!Main\b)\w{1,120})[ \t]*\(|"
                      r"(?:async[ \t]+)?def[ \t]+(test_\w{1,120})[ \t]*\(|"
                      r"(?:it|test)[ \t]*\([ \t]*(?:\"([^\"\n]{3,100})\"|'([^'\n]{3,100})'|`([^`\n]{3,100})`))",
                      re.MULTILINE)


def declared(text: str) -> list[str]:
    """The tests `text` declares, in order, each once."""
    return list(dict.fromkeys(next(name for name in match.groups() if name) for match in _TEST_RE.finditer(text)))


def changed_tests(texts: Iterable[tuple[str, str]]) -> tuple[list[str], list[str]]:
    """(the tests the (old, new) texts of a write add, those they take out): declared in one and not the other."""
    added: dict[str, None] = {}
    gone: dict[str, None] = {}
    for old, new in texts:
        before, after = declared(old), declared(new)
        added |= dict.fromkeys(name for name in after if name not in before)
        gone |= dict.fromkeys(name for name in before if name not in after)
    return list(added), list(gone)
