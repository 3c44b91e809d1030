"""bench/scale.png: time and memory against size, from bench/scale.py's rows, so that growth shows at a glance.

matplotlib is a bench-only dependency (`pip install -e '.[bench]'`).
"""

from __future__ import annotations

from pathlib import Path

# (series, x column, [(y column, label)]) of each panel: time, then memory.
_TIME = [
    ("handoffs", "handoffs", [("reindex s", "reindex (s)"), ("get hybrid p95 ms", "get hybrid p95 (ms)"),
                              ("get keywords p95 ms", "get keywords p95 (ms)"),
                              ("hook p95 ms", "SessionStart hook p95 (ms)")]),
    ("transcripts", "transcripts MB", [("ingest s", "ingest (s)"), ("+1% ingest s", "ingest of 1% new (s)")]),
]
_MEMORY = [
    ("handoffs", "handoffs", [("reindex peak MB", "reindex"), ("reindex peak anon MB", "reindex, anonymous"),
                              ("get hybrid max RSS MB", "get hybrid"),
                              ("bot idle MB", "bot idle"), ("bot after voice MB", "bot after a voice note")]),
    ("transcripts", "transcripts MB", [("ingest peak MB", "ingest"), ("ingest peak anon MB", "ingest, anonymous"),
                                       ("+1% peak MB", "ingest of 1% new")]),
]


def plot(results: dict[str, list[dict[str, object]]], target: Path,
         before: dict[str, list[dict[str, object]]] | None = None) -> None:
    """The rows of bench/scale.py; `before`, the rows of the code before a change, dashed in the same colours."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(2, 2, figsize=(12, 8))
    for column, (panels, unit) in enumerate(((_TIME, "time"), (_MEMORY, "peak memory, MB"))):
        for row, (series, x_column, lines) in enumerate(panels):
            ax = axes[row][column]
            rows = results.get(series) or []
            for number, (y_column, label) in enumerate(lines):
                colour = f"C{number}"
                for found, style, name in ((rows, "-", label), ((before or {}).get(series) or [], "--", "before")):
                    points = [(r[x_column], r[y_column]) for r in found if r.get(y_column) not in (None, "")]
                    if points:
                        ax.plot(*zip(*points, strict=True), style, marker="o", color=colour,
                                label=name if name != "before" else f"{label}, before")
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("handoffs" if series == "handoffs" else "MB of transcripts")
            ax.set_ylabel(unit)
            ax.set_title(f"{series}: {unit}")
            ax.grid(True, which="both", alpha=0.3)
            if ax.lines:
                ax.legend(fontsize=7)
    figure.suptitle("Eywa at scale (bench/scale.py)")
    figure.tight_layout()
    figure.savefig(target, dpi=90)
    plt.close(figure)
