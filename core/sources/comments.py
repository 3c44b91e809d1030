"""The comments a write adds to code, read from its whole new text while the tool input itself is kept cut
(`common.INPUT_KEEP`): what the code's readers are told of why it is so, for the extractor's `written_reasons`, and
what it leaves undone ("TODO: ..."), for its `left_in_code`."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

# A comment line of most languages, its opening mark left off: `# ...`, `// ...`, `/* ... */`, ` * ...`, `-- ...`
_COMMENT_RE = re.compile(r"^\s*(?:#+|//+|/\*+|\*+(?!/)|--)\s?(.*)")
_DOCSTRING_RE = re.compile(r'"""(.*?)"""|\'\'\'(.*?)\'\'\'', re.DOTALL)
_NOTE_RE = re.compile(r"^(?:note|nb|important)\s*:\s*", re.IGNORECASE)  # "Note: ...": a mark before what it says
# "nolint:revive // ...", "noqa: E501 - ...": a linter silenced, with the reason after it (kept: a choice made);
# its runs possessive: a long line is read once
SUPPRESSION_MARKS = r"nolint|noqa|eslint-disable(?:-next-line|-line)?|type:\s*ignore|pylint:\s*disable"
# the names: `react-hooks/exhaustive-deps`, `@typescript-eslint/no-explicit-any`; a dash before a blank separates
SUPPRESSION_RE = re.compile(rf"^(?P<mark>{SUPPRESSION_MARKS})[:=\[]?+\s*+(?P<names>(?:[\w,.@]|-(?![-\s])|/(?=[\w@]))*+)"
                            r"\]?\s*+(?://|#|-++|:)\s*+(?P<reason>\S.*)", re.IGNORECASE)
LEFT_FOR_LATER_RE = re.compile(r"^(?:todo|fixme|xxx)\b", re.IGNORECASE)  # "TODO: ...": a step left, no reason
# "TODO: ...", "For now, we don't have file changes", "a usable (if imperfect) path": what the code leaves undone
LEFT_UNDONE_RE = re.compile(rf"{LEFT_FOR_LATER_RE.pattern}|\bfor now\b|\bimperfect\b|\bnot (?:yet )?implemented\b",
                            re.IGNORECASE)
_WORD_OPENS_RE = re.compile(r"^[A-Z][a-z]+(?![A-Za-z])")  # "Use ...", "This ...": not `JSON`, `CheckpointID`


def added_comments(old: str, new: str) -> Iterator[str]:
    """The comments `new` adds to `old` (its lines not in `old`), each run of comment lines as one text: a line after a
    full stop, or opening with a capitalised word or a mark ("TODO:", "Note:"), starts a new sentence, another goes on
    the one before; then each new docstring. Lazily: a caller that wants a few never searches `old` for the rest."""
    before = {line.strip() for line in old.splitlines()}
    block: list[str] = []
    for line in [*new.splitlines(), ""]:
        match = _COMMENT_RE.match(line) if line.strip() not in before else None
        # its closing mark cut off here, not in the pattern: a lazy group before blanks backtracks on a long line
        said = match.group(1).rstrip().removesuffix("*/").rstrip() if match else ""
        if said and not line.lstrip().startswith(("#!", "#include", "#define", "#import")):
            text = _NOTE_RE.sub("", said)
            starts = not block or block[-1].endswith((".", "!", "?", ":")) or text != said \
                or bool(SUPPRESSION_RE.match(text)) \
                or bool(_WORD_OPENS_RE.match(text) or LEFT_FOR_LATER_RE.match(text))
            block.append(("\n\n" if starts else " ") + text)
            continue
        if block:
            yield "".join(block)
        block = []
    for match in _DOCSTRING_RE.finditer(new):
        if (doc := next(g for g in match.groups() if g is not None)) and doc not in old:
            yield doc


def written(arguments: dict) -> list[tuple[str, str]]:
    """The (old, new) texts of a write's input in Claude Code's names, as Gemini CLI and Qwen Code name them too:
    an edit's `old_string` and `new_string`, a new file's `content`, each of a MultiEdit's `edits`."""
    edits = arguments.get("edits")
    return [(old if isinstance(old := edit.get("old_string"), str) else "",
             new if isinstance(new := edit.get("new_string", edit.get("content")), str) else "")
            for edit in (edits if isinstance(edits, list) else [arguments]) if isinstance(edit, dict)]


def patch_texts(section: str) -> tuple[str, str]:
    """The (old, new) lines of one file's part of an apply_patch: its `-` lines and its `+` lines."""
    lines = section.splitlines()
    return ("\n".join(line[1:] for line in lines if line.startswith("-")),
            "\n".join(line[1:] for line in lines if line.startswith("+")))


def comment_blocks(texts: Iterable[tuple[str, str]], keep: int) -> list[str]:
    """The first `keep` comments the (old, new) pairs add, as `added_comments` tells them, then up to `keep` more of
    those past them that say what the code leaves undone (`LEFT_UNDONE_RE`): a TODO deep in a long file is still one."""
    found: list[str] = []
    undone = 0
    for old, new in texts:
        if not new:
            continue
        for block in added_comments(old, new):
            if len(found) < keep:
                found.append(block)
            elif undone < keep and LEFT_UNDONE_RE.search(block.strip()):
                found.append(block)
                undone += 1
    return found
