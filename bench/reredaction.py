"""Re-redaction of a whole corpus under new redaction rules (core/ingest/reredact.py): both corpus trees are
ingested, the index is then marked as written under the rules before today's, and `eywa ingest` (a child
process, timed whole) redacts every stored text again: first with the transcripts kept (deterministic
handoffs drafted again from them), then, marked again, with the transcripts gone (every handoff, archive,
row and term list redacted where it lies). An ingest with nothing to do is the baseline.

Usage: python bench/reredaction.py
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"


def _eywa(env: dict[str, str], *args: str) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "eywa.cli.main", *args], cwd=ROOT, env=env, text=True,
                          capture_output=True)
    if done.returncode != 0:
        raise RuntimeError(f"eywa {' '.join(args)} failed: {done.stderr}")
    return time.perf_counter() - started, done.stdout


def _mark_older(db: Path) -> None:
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("UPDATE meta SET value = '2' WHERE key = 'redaction_rules'")
    conn.close()


def run(trees: tuple[str, ...] = ("entire", "claude-code-log")) -> list[dict[str, object]]:
    with tempfile.TemporaryDirectory(prefix="eywa-bench-reredaction-") as tmp:
        folder = Path(tmp)
        projects, empty = folder / "projects", folder / "empty"
        empty.mkdir()
        for tree in trees:
            for source in (CORPUS / tree / "projects").glob("*/*.jsonl"):
                target = projects / source.parent.name / source.name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.symlink_to(source)
        env = {**{k: v for k, v in os.environ.items() if not k.startswith(("EYWA_", "ANTHROPIC_"))},
               "HOME": str(folder), "EYWA_DATA_DIR": str(folder / "data"), "EYWA_PROJECTS_DIR": str(projects),
               "EYWA_NOW": "2026-12-02", "EYWA_LLM__BACKEND": "deterministic"}
        rows: list[dict[str, object]] = []
        seconds, _ = _eywa(env, "ingest")
        stats = json.loads(_eywa(env, "stats", "--json")[1])
        rows.append({"step": f"first ingest ({stats['handoffs']} sessions)", "seconds": round(seconds, 2)})
        seconds, _ = _eywa(env, "ingest")
        rows.append({"step": "ingest, nothing changed", "seconds": round(seconds, 2)})
        for label, where in (("transcripts kept", projects), ("transcripts gone", empty)):
            _mark_older(folder / "data" / "index.sqlite3")
            seconds, _ = _eywa({**env, "EYWA_PROJECTS_DIR": str(where)}, "ingest")
            last = json.loads(_eywa(env, "stats", "--json")[1])["redaction"]["last"]
            rows.append({"step": f"re-redaction, {label}: {last['redrafted']} redrafted, {last['in_place']} in place",
                         "seconds": round(seconds, 2)})
    return rows


def main() -> int:
    for row in run():
        print(row)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
