"""Lines of the handoffs an output snapshot holds (`python -m tests.output_snapshot DIR`) that text handling left
cut or garbled: an unbalanced bracket, backtick or double quote, a shell escape's `\\ ` residue, an "[Image #N]"
marker, a code span cut ("…`"), a home path without its `~` ("if /.bash_profile exists"), a clause opened at the
line's end and left without its object ("Created a plan at `plan.md` that incorporates", "... where the").

    .venv/bin/python bench/text_defects.py DIR [--show]
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

_CODE_SPAN_RE = re.compile(r"`[^`]*`")
# "that incorporates", "which includes", "where the": a relative clause's opener and a verb or lead word, then the end
_STUB_RE = re.compile(r"\b(?:that|which|who|where)\s+(?:[a-z]+s|(?:[a-z]+\s+)?(?:the|a|an|of|to|with|for|in|on|by))"
                      r"[.…]?$")
_CHECKS = {
    "backtick": lambda line: line.count("`") % 2 == 1,
    "paren": lambda line: _unbalanced(_CODE_SPAN_RE.sub("", line), "(", ")"),
    "bracket": lambda line: _unbalanced(_CODE_SPAN_RE.sub("", line), "[", "]"),
    "quote": lambda line: _CODE_SPAN_RE.sub("", line).count('"') % 2 == 1,
    "escape": lambda line: "\\ " in line,
    "image": lambda line: re.search(r"\[Image #\d+\]", line) is not None,
    "cut-code": lambda line: re.search(r"\S…`", line) is not None,  # " …`": cut between a command's arguments
    "lost-tilde": lambda line: re.search(r"(?:^|[\s(])/\.\w", line) is not None,
    "stub": lambda line: _STUB_RE.search(line) is not None,
}


def _unbalanced(text: str, opening: str, closing: str) -> bool:
    """Whether a closing mark comes before its opening one, or an opening one is never closed (a line's "1)" list
    mark left out)."""
    text = re.sub(r"^(?:\d{1,2}|[a-z])\)\s", " ", text)
    depth = 0
    for char in text:
        depth += (char == opening) - (char == closing)
        if depth < 0:
            return True
    return depth != 0


def lines(folder: Path) -> list[tuple[str, str]]:
    """(session id, line) for the headline and each bullet of every handoff under `folder`."""
    found = []
    for path in sorted(folder.rglob("handoffs/**/*.md")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("# ") or line.startswith("- "):
                found.append((path.stem[:8], line[2:]))
    return found


def main(folder: Path, show: bool) -> None:
    counts: Counter[str] = Counter()
    for session, line in lines(folder):
        for name, check in _CHECKS.items():
            if check(line):
                counts[name] += 1
                if show:
                    print(f"{name:10} {session} {line[:220]}")
    for name in _CHECKS:
        print(f"{name:10} {counts[name]}")


if __name__ == "__main__":
    main(Path(sys.argv[1]), "--show" in sys.argv[2:])
