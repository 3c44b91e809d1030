"""bench/RESULTS.md's writing, one way for every benchmark: tables of measured rows, and sections written anew in
place while the rest of the file (the voice section, the history, written by hand) stays as it is."""

from __future__ import annotations

import re


def table(rows: list[dict[str, object]]) -> str:
    if not rows:
        return "(nothing measured)\n"
    columns = list(dict.fromkeys(key for row in rows for key in row))
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for row in rows:
        cells = []
        for column in columns:
            value = row.get(column, "")
            cells.append(f"{value:g}" if isinstance(value, float) else str(value))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def merged(previous: str, sections: list[str], header: str | None = None) -> str:
    """`previous` with each of `sections` (known by its "## " heading line) written anew in place, and its header (the
    text before the first section) replaced when `header` is given. A section it lacks goes after the one written
    before it, or at the end."""
    first, *chunks = re.split(r"(?m)^(?=## )", previous)  # each chunk from its heading to the next
    last = -1
    for section in sections:
        text = section if section.endswith("\n") else section + "\n"
        headings = [chunk.partition("\n")[0] for chunk in chunks]
        heading = text.partition("\n")[0]
        if heading in headings:
            last = headings.index(heading)
            chunks[last] = text
        else:
            last = last + 1 if last >= 0 else len(chunks)
            chunks.insert(last, text)
    head = first if header is None else header
    return (head.rstrip("\n") + "\n\n" if head.strip() else "") + "\n".join(
        chunk.rstrip("\n") + "\n" for chunk in chunks)
