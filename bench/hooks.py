"""Whole-process latency of the Claude Code hooks and of `eywa get` on a 10,000-handoff index.

Claude Code waits for a SessionStart hook before the session starts and for SessionEnd before it exits,
so what counts is the whole process: interpreter start, imports, config, the query, the output. The
index is synthetic (built through `Store.put_handoff` in a temporary folder, never kept): 40 projects
and a few thousand lowercase-hyphenated keywords drawn Zipf-like (a few dominate, as in real use), a
year of dates ending the day before "now", handoff bodies of 0.5-2 KB and ~2 KB of session text each.
The SessionStart hook runs in the busiest project (the worst case: the most candidate handoffs).

Each command runs once to warm the OS caches (and write bytecode), then `--runs` times; the table shows the median, p95
(nearest rank) and max wall time. Bounds: session-start < 1 s, session-end < 200 ms.

Usage: python bench/hooks.py [--handoffs 10000] [--runs 20] [--keep DIR]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

NOW = dt.date(2026, 2, 17)
PROJECTS = [
    "cli", "eywa", "pratchett-os", "claude-code-log", "api-gateway", "billing", "infra", "dotfiles", "website",
    "mobile-app", "data-pipeline", "ml-ranker", "auth-service", "design-system", "docs", "search", "notifier",
    "scheduler", "payments", "analytics", "crawler", "cms", "chat-bot", "voice", "cache", "terraform",
    "k8s-manifests", "sdk-python", "sdk-go", "benchmarks", "migration-tool", "editor-plugin", "sync-daemon",
    "image-service", "feature-flags", "observability", "rate-limiter", "queue-worker", "backoffice", "status-page",
]
TERMS = [
    "checkpoint", "transcript", "rewind", "session", "hook", "index", "scorer", "parser", "migration", "schema",
    "retry", "timeout", "cache", "token", "auth", "oauth", "webhook", "queue", "worker", "deploy", "rollback",
    "lint", "test", "fixture", "snapshot", "redaction", "secret", "config", "yaml", "json", "sqlite", "postgres",
    "fts5", "bm25", "idf", "embedding", "ranking", "recall", "latency", "memory", "leak", "race", "deadlock",
    "goroutine", "asyncio", "thread", "lock", "wal", "vacuum", "backup", "restore", "compaction", "subagent",
    "prompt", "model", "opus", "sonnet", "gemini", "telegram", "voice", "whisper", "digest", "status", "render",
    "markdown", "handoff", "keyword", "project", "worktree", "branch", "commit", "trailer", "rebase", "merge",
    "diff", "patch", "release", "changelog", "version", "semver", "docker", "kubernetes", "helm", "terraform",
    "metrics", "tracing", "logging", "alert", "dashboard", "billing", "invoice", "stripe", "refund", "coupon",
]
SENTENCES = [
    "Fixed the {a} {b} so that {c} survives a restart",
    "Moved {a} handling out of the {b} loop into its own {c} step",
    "Measured {a} {b}: the {c} path dominated, now cached",
    "Asked: why does {a} break {b} when {c} is enabled",
    "Committed: {a}: handle {b} in {c}",
    "Reviewed the {a} PR and answered the {b} comments about {c}",
]


def _zipf_index(rng: random.Random, n: int) -> int:
    return min(n - 1, int(math.exp(rng.random() * math.log(n))) - 1)


def _sentence(rng: random.Random, terms: list[str]) -> str:
    pick = [terms[_zipf_index(rng, len(terms))] for _ in range(3)]
    return rng.choice(SENTENCES).format(a=pick[0], b=pick[1], c=pick[2])


def build_index(data_dir: Path, count: int, seed: int = 11) -> None:
    """`count` synthetic handoffs in `data_dir/index.sqlite3`."""
    from eywa.core.handoffs.model import Handoff
    from eywa.core.index.store import Store

    rng = random.Random(seed)
    terms = TERMS + [f"{a}-{b}" for a in TERMS for b in TERMS if a != b and rng.random() < 0.3]
    store = Store(data_dir / "index.sqlite3")
    for start in range(0, count, 1000):
        with store.transaction():
            for _ in range(start, min(count, start + 1000)):
                uid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
                # Half the sessions recent-heavy (Zipf over days back), half spread evenly over the year.
                days = 1 + _zipf_index(rng, 365) if rng.random() < 0.5 else rng.randint(1, 365)
                date = NOW - dt.timedelta(days=days)
                handoff = Handoff(
                    short_id=uid[:8], session_id=uid, date=date, duration=f"{rng.randint(2, 240)}m",
                    model="claude-opus-4-6", headline=_sentence(rng, terms)[:70],
                    projects=[PROJECTS[_zipf_index(rng, len(PROJECTS))]],
                    keywords=sorted({terms[_zipf_index(rng, len(terms))] for _ in range(6)}),
                    substance=rng.choice([1, 2, 2, 2]),
                    what_happened=[_sentence(rng, terms) for _ in range(rng.randint(2, 5))],
                    insights=[f"**{terms[_zipf_index(rng, len(terms))]}** -- {_sentence(rng, terms)}"
                              for _ in range(rng.randint(1, 4))],
                    key_files=[f"`src/{terms[_zipf_index(rng, len(terms))]}.py`" for _ in range(rng.randint(1, 5))],
                    open_threads=[_sentence(rng, terms) for _ in range(rng.randint(0, 3))],
                )
                prompts = " ".join(_sentence(rng, terms) for _ in range(4))
                replies = " ".join(_sentence(rng, terms) for _ in range(20))
                transcript = (f"# Session {uid}\n\n- branch: feature/{handoff.keywords[0]}\n\n## {date}\n\n"
                              f"### 10:00 User\n\n{prompts}\n\n### 10:01 Claude\n\n{replies}\n")
                store.put_handoff(handoff, path=f"{date:%Y/%m/%d}/{uid}.md", transcript=transcript)
    store.close()


def _time(command: list[str], env: dict[str, str], stdin: str | None, runs: int,
          vary: callable | None = None) -> list[float]:  # type: ignore[valid-type]
    samples = []
    for run in range(runs + 1):
        text = vary(run) if vary else stdin
        started = time.perf_counter()
        result = subprocess.run(command, input=text, env=env, text=True, capture_output=True, timeout=60)
        elapsed = time.perf_counter() - started
        if result.returncode != 0:
            raise SystemExit(f"{' '.join(command)} failed: {result.stderr}")
        if run:  # the first run only warms the caches
            samples.append(elapsed)
    return samples


def _p95(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]


def run(handoffs: int, runs: int, keep: Path | None = None) -> list[dict[str, object]]:
    with tempfile.TemporaryDirectory(prefix="eywa-bench-hooks-") as tmp:
        data = keep or Path(tmp) / "data"
        if not (data / "index.sqlite3").exists():
            started = time.perf_counter()
            build_index(data, handoffs)
            print(f"built {handoffs} handoffs in {time.perf_counter() - started:.1f}s", file=sys.stderr)
        # Bytecode is written (warm-up run) and reused, as in any installed eywa; without it every run
        # would recompile the modules it imports.
        env = {k: v for k, v in os.environ.items() if not k.startswith(("EYWA_", "ANTHROPIC_"))
               and k != "PYTHONDONTWRITEBYTECODE"}
        env.update(HOME=tmp, EYWA_DATA_DIR=str(data), EYWA_PROJECTS_DIR=tmp, EYWA_NOW=NOW.isoformat())
        eywa = str(Path(sys.executable).parent / "eywa")
        start_json = json.dumps({"session_id": str(uuid.uuid4()), "transcript_path": "/x.jsonl",
                                 "cwd": f"/Users/alex/workspace/{PROJECTS[0]}", "hook_event_name": "SessionStart",
                                 "source": "startup"})
        probe = subprocess.run([eywa, "hook", "session-start"], input=start_json, env=env, text=True,
                               capture_output=True)
        context = json.loads(probe.stdout)["hookSpecificOutput"]["additionalContext"]

        def end_json(run: int) -> str:
            return json.dumps({"session_id": f"bench-{run}-{uuid.uuid4()}", "transcript_path": "/x.jsonl",
                               "cwd": "/tmp", "hook_event_name": "SessionEnd", "reason": "exit"})

        cases = [
            ("python -c pass (interpreter alone)", [sys.executable, "-c", "pass"], None, None),
            ("eywa hook session-start", [eywa, "hook", "session-start"], start_json, None),
            ("eywa hook session-end", [eywa, "hook", "session-end"], None, end_json),
            ('eywa get "checkpoint rewind"', [eywa, "get", "checkpoint rewind"], None, None),
            ('eywa get --mode keywords "checkpoint rewind"', [eywa, "get", "--mode", "keywords", "checkpoint rewind"],
             None, None),
            ("eywa get (no query)", [eywa, "get"], None, None),
        ]
        rows = []
        for label, command, stdin, vary in cases:
            samples = _time(command, env, stdin, runs, vary)
            rows.append({"command": label, "median_ms": statistics.median(samples) * 1000,
                         "p95_ms": _p95(samples) * 1000, "max_ms": max(samples) * 1000})
        rows.append({"context_bytes": len(context.encode("utf-8"))})
        return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--handoffs", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--keep", type=Path, help="build the index here (or reuse it) instead of a temp folder")
    args = parser.parse_args()
    rows = run(args.handoffs, args.runs, args.keep)
    print(f"{args.handoffs} handoffs, {args.runs} runs each, {os.cpu_count()} CPUs\n")
    print(f"| {'command':<36} | median ms | p95 ms | max ms |")
    print(f"|{'-' * 38}|-----------|--------|--------|")
    for row in rows[:-1]:
        print(f"| {row['command']:<36} | {row['median_ms']:>9.0f} | {row['p95_ms']:>6.0f} | {row['max_ms']:>6.0f} |")
    print(f"\nSessionStart context: {rows[-1]['context_bytes']} bytes (limit 10,000)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
