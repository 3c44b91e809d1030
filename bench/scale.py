"""Ingest at scale: throughput and peak memory on the real corpus and on a scaled copy of it, and the
cost of a rescan when nothing changed; and the same on Codex CLI rollouts (the ones the real CLI wrote for
the tests, tests/fixtures/agents, cloned with new ids to about the real corpus's size), beside Claude Code's.

The scaled corpus clones real sessions (new ids, dates shifted by whole months, a few words changed)
into a temporary folder until it holds about `--files` files and `--megabytes` MB; it is not kept unless
`--scaled-dir` names a folder, which is then filled once and reused by later runs (it takes a while).
CPU s is user + system time of the ingest process and its children: less sensitive than wall time to
other work on the machine.

Usage: python bench/scale.py [--files 10000] [--megabytes 1000] [--skip-scaled] [--scaled-dir DIR]
                             [--codex-megabytes 84]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"
_MONTH_RE = re.compile(rb'("timestamp":\s*")(\d{4})-(\d{2})')
_WORDS = [(b"checkpoint", b"checkp0int"), (b"session", b"sessi0n"), (b"transcript", b"transcr1pt")]
CODEX_FIXTURES = ROOT / "tests" / "fixtures" / "agents" / "codex" / "sessions"
_CODEX_ID_RE = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}")


def _shift(data: bytes, months: int) -> bytes:
    def move(match: re.Match[bytes]) -> bytes:
        total = int(match.group(2)) * 12 + int(match.group(3)) - 1 + months
        return match.group(1) + b"%04d-%02d" % (total // 12, total % 12 + 1)

    return _MONTH_RE.sub(move, data)


def make_scaled_corpus(dest: Path, files: int, megabytes: int, source: Path = CORPUS) -> tuple[int, int]:
    """Clone the real main transcripts into `dest` until about `files` files / `megabytes` MB."""
    sources = sorted(p for p in source.rglob("*.jsonl") if "subagents" not in p.parts
                     and not p.name.startswith("agent-") and p.stat().st_size > 0)
    budget = megabytes * 1_000_000
    average = budget / files
    # Small sessions most of the time, so that the file and byte targets are met together.
    small = [p for p in sources if p.stat().st_size <= average]
    large = [p for p in sources if p.stat().st_size > average]
    written = count = 0
    for index in range(files):
        remaining = files - index
        want_large = large and (budget - written) / remaining > average
        pool = large if want_large else small
        src = pool[index % len(pool)]
        data = src.read_bytes()
        new_id = str(uuid.UUID(int=index + 1, version=4))
        data = data.replace(src.stem.encode(), new_id.encode())
        data = _shift(data, months=index % 24)
        old, new = _WORDS[index % len(_WORDS)]
        data = data.replace(old, new, 3)
        target = dest / f"-home-bench-project{index % 40}" / f"{new_id}.jsonl"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        written += len(data)
        count += 1
    return count, written


def make_codex_corpus(dest: Path, megabytes: int) -> tuple[int, int]:
    """Codex rollouts under `dest/sessions/`: the real CLI's, each clone with its own session ids and prompts'
    words changed, until about `megabytes` MB. (files, bytes)."""
    sources = sorted(CODEX_FIXTURES.rglob("rollout-*.jsonl"))
    count = written = 0
    while written < megabytes * 1_000_000:
        source = sources[count % len(sources)]
        raw = source.read_bytes()
        ids = {old: str(uuid.uuid4()).encode() for old in set(_CODEX_ID_RE.findall(raw))}
        data = _CODEX_ID_RE.sub(lambda m, ids=ids: ids[m.group(0)], raw).replace(b"greet", b"greet%d" % count)
        name = _CODEX_ID_RE.sub(lambda m, ids=ids: ids[m.group(0)], source.name.encode()).decode()
        target = dest / "sessions" / "2026" / "12" / f"{1 + count % 28:02d}" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        written += len(data)
        count += 1
    return count, written


def timed_ingest(projects: Path, data: Path, codex: Path | None = None) -> dict[str, float]:
    """`eywa ingest` as a user runs it, in a child process: wall time, its own report, peak RSS. With `codex`,
    only that Codex folder is read."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("EYWA_")}
    env.update(EYWA_PROJECTS_DIR=str(projects), EYWA_DATA_DIR=str(data), EYWA_INGEST__SHOW_PROGRESS="never",
               EYWA_SOURCES=json.dumps([  # one agent's folder at a time, not the machine's own
                   {"kind": "claude-code", "enabled": codex is None}, {"kind": "gemini", "enabled": False},
                   {"kind": "codex", "path": str(codex or data / "none"), "enabled": codex is not None}]))
    probe = (
        "import resource, subprocess, sys, time; t = time.perf_counter();"
        "r = subprocess.run([sys.executable, '-m', 'eywa.cli.main', 'ingest'], capture_output=True, text=True);"
        "w = time.perf_counter() - t;"
        "u = resource.getrusage(resource.RUSAGE_CHILDREN);"
        "print(w, u.ru_maxrss, r.returncode, u.ru_utime + u.ru_stime);"
        "print(r.stdout + r.stderr, file=sys.stderr)"
    )
    result = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True)
    wall, rss_kb, code, cpu = result.stdout.split()
    if code != "0":
        raise RuntimeError(result.stderr)
    db = data / "index.sqlite3"
    report = json.loads(subprocess.run(
        [sys.executable, "-c", "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("
         "\"SELECT value FROM meta WHERE key='last_ingest_report'\").fetchone()[0])", str(db)],
        capture_output=True, text=True, check=True).stdout)
    return {"wall_s": float(wall), "ingest_s": report["seconds"], "mb": report["bytes_read"] / 1e6,
            "files": report["files_seen"], "sessions": report["sessions_updated"], "rss_mb": int(rss_kb) / 1024,
            "cpu_s": float(cpu)}


def measure(projects: Path, label: str, codex: Path | None = None) -> list[dict[str, object]]:
    with tempfile.TemporaryDirectory(prefix="eywa-scale-data-") as tmp:
        cold = timed_ingest(projects, Path(tmp), codex)
        again = timed_ingest(projects, Path(tmp), codex)
    return [
        {"what": f"ingest, {label}", "files": cold["files"], "MB": round(cold["mb"], 1),
         "seconds": round(cold["ingest_s"], 2), "MB/s": round(cold["mb"] / cold["ingest_s"], 1),
         "whole process s": round(cold["wall_s"], 2), "CPU s": round(cold["cpu_s"], 2),
         "peak RSS MB": round(cold["rss_mb"])},
        {"what": f"rescan, nothing changed, {label}", "files": again["files"], "MB": 0,
         "seconds": round(again["ingest_s"], 3), "MB/s": "", "whole process s": round(again["wall_s"], 2),
         "CPU s": round(again["cpu_s"], 2), "peak RSS MB": round(again["rss_mb"])},
    ]


def _scaled(dest: Path, files: int, megabytes: int) -> int:
    """Fill `dest` with a scaled corpus unless it already holds one; the number of files."""
    existing = sum(1 for _ in dest.rglob("*.jsonl")) if dest.is_dir() else 0
    if existing:
        return existing
    started = time.perf_counter()
    count, size = make_scaled_corpus(dest, files, megabytes)
    print(f"scaled corpus: {count} files, {size / 1e6:.0f} MB in {time.perf_counter() - started:.0f}s",
          file=sys.stderr)
    return count


def run(files: int, megabytes: int, skip_scaled: bool = False,
        scaled_dir: Path | None = None, codex_megabytes: int = 84) -> list[dict[str, object]]:
    rows = measure(CORPUS, "real corpus")
    with tempfile.TemporaryDirectory(prefix="eywa-codex-") as tmp:
        count, _ = make_codex_corpus(Path(tmp), codex_megabytes)
        rows += measure(CORPUS, f"Codex CLI 0.171.0 rollouts ({count} files)", codex=Path(tmp))
    if skip_scaled:
        return rows
    if scaled_dir is not None:
        count = _scaled(scaled_dir, files, megabytes)
        return rows + measure(scaled_dir, f"scaled corpus ({count} files)")
    with tempfile.TemporaryDirectory(prefix="eywa-scaled-") as tmp:
        count = _scaled(Path(tmp), files, megabytes)
        return rows + measure(Path(tmp), f"scaled corpus ({count} files)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--megabytes", type=int, default=1000)
    parser.add_argument("--skip-scaled", action="store_true")
    parser.add_argument("--scaled-dir", type=Path, help="keep the scaled corpus here and reuse it")
    parser.add_argument("--codex-megabytes", type=int, default=84, help="size of the Codex rollouts read")
    args = parser.parse_args()
    for row in run(args.files, args.megabytes, args.skip_scaled, args.scaled_dir, args.codex_megabytes):
        print(row)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
