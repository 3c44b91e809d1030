"""Scale, measured as it grows: `eywa reindex`, `eywa get`, the SessionStart hook and the bot on 10k, 100k and 1M
synthetic handoffs in the original's format, and `eywa ingest` (first, then with 1% new) on 100 MB, 1 GB and 10 GB
of transcripts cloned from the shared trees; and, in the same run, against the seed (the original eywa-mcp).

Every figure is a whole child process as a user runs it (bench/process_tree.py): wall time, CPU time, the peak
memory of it and its workers (PSS, sampled), the largest process's max RSS, and the load average when it started.
`eywa get`: 20 queries in each mode, each its own process, "above start" = its wall time less the median of
`python -c pass` (the interpreter's own start). The data are made in a temporary folder (bench/scale_data.py) and
deleted afterwards; 1M handoffs and 10 GB of transcripts take about 30 GB of disk while they exist.

Usage:
    python bench/scale.py --max-size 1M          # the whole series (about an hour on a quiet 2-core machine)
    python bench/scale.py --max-size 10k         # a smoke test: 10k handoffs and 100 MB of transcripts
  options: --python PY (the interpreter of the eywa to measure, e.g. another checkout's venv; default this one)
           --seed-python PY (the seed's, see bench/seed_probe.py for how to get it; or EYWA_SEED_PYTHON)
           --only handoffs|transcripts|seed   --queries 20   --work-dir DIR   --out FILE --plot FILE --label TEXT
The results replace the "## Scale" section of bench/RESULTS.md (kept by bench/run.py) and bench/scale.png, unless
--out / --plot say otherwise; --json FILE also keeps the raw rows.

`run()` is bench/run.py's "Ingest" section: the real corpus, Codex rollouts and a scaled corpus, once each.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

import process_tree  # noqa: E402
import scale_data  # noqa: E402
from results_md import merged, table  # noqa: E402
from scale_data import CORPUS, make_scaled_corpus  # noqa: E402

CODEX_FIXTURES = ROOT / "tests" / "fixtures" / "agents" / "codex" / "sessions"
_CODEX_ID_RE = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}")
# (name, handoffs, MB of transcripts): each size of the series, smallest first.
TIERS = [("10k", 10_000, 100), ("100k", 100_000, 1_000), ("1M", 1_000_000, 10_000)]
FILES_PER_MB = 10  # cloned transcripts average 100 KB, as bench/run.py's scaled corpus
SEED_MAX_HANDOFFS = 100_000  # the seed's JSON index is built (through its YAML parser) up to this size
NEW_SHARE = 0.01  # the incremental ingest: this share of new sessions
OWNER = 42


def _sources(codex: Path | None = None) -> str:
    """One agent's folder at a time, not the machine's own."""
    return json.dumps([{"kind": "claude-code", "enabled": codex is None}, {"kind": "gemini", "enabled": False},
                       {"kind": "codex", "path": str(codex or "/nonexistent"), "enabled": codex is not None}])


def eywa_env(data: Path, projects: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EYWA_", "ANTHROPIC_"))
           and k != "PYTHONDONTWRITEBYTECODE"}
    env.update(HOME=str(data.parent / "home"), EYWA_DATA_DIR=str(data), EYWA_PROJECTS_DIR=str(projects),
               EYWA_INGEST__SHOW_PROGRESS="never", EYWA_NOW=scale_data.NOW.isoformat(), EYWA_SOURCES=_sources())
    return env


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


def timed_ingest(projects: Path, data: Path, codex: Path | None = None, python: str = sys.executable,
                 ) -> dict[str, float]:
    """`eywa ingest` as a user runs it, in a child process: wall time, its own report, memory. With `codex`,
    only that Codex folder is read."""
    env = eywa_env(data, projects)
    if codex is not None:
        env["EYWA_SOURCES"] = _sources(codex=codex)
    done = process_tree.run([python, "-m", "eywa.cli.main", "ingest"], cwd=ROOT, env=env)
    report = ingest_report(data / "index.sqlite3")
    return {"wall_s": done.wall_s, "ingest_s": report["seconds"], "mb": report["bytes_read"] / 1e6,
            "files": report["files_seen"], "sessions": report["sessions_updated"], "rss_mb": done.max_rss_mb,
            "peak_mb": done.peak_mb, "cpu_s": done.cpu_s, "load": done.load}


def ingest_report(db: Path) -> dict[str, float]:
    import sqlite3

    conn = sqlite3.connect(db)
    try:
        return json.loads(conn.execute("SELECT value FROM meta WHERE key = 'last_ingest_report'").fetchone()[0])
    finally:
        conn.close()


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


# -- the scale series ------------------------------------------------------------------------------------------

def _ms(seconds: float) -> float:
    return round(seconds * 1000, 1)


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]


class Runner:
    """The eywa measured: its interpreter (and the `eywa` script beside it)."""

    def __init__(self, python: str) -> None:
        self.python = python
        self.eywa = str(Path(python).parent / "eywa")
        self.start_s = self.start_cpu_s = 0.0  # the interpreter's own start, median

    def interpreter_start(self, runs: int) -> float:
        started = [process_tree.run([self.python, "-c", "pass"]) for _ in range(runs + 1)]
        self.start_s = statistics.median(run.wall_s for run in started)
        self.start_cpu_s = statistics.median(run.cpu_s for run in started)
        return self.start_s

    def command(self, env: dict[str, str], *args: str, stdin: str | None = None) -> process_tree.Measured:
        return process_tree.run([self.eywa, *args], env=env, stdin=stdin, cwd=ROOT)

    def timed(self, env: dict[str, str], commands: list[tuple[list[str], str | None]]) -> dict[str, float]:
        """Each command once (after one warm-up run of the first): median and p95 above the interpreter's
        start in ms, the largest max RSS."""
        self.command(env, *commands[0][0], stdin=commands[0][1])
        runs = [self.command(env, *args, stdin=stdin) for args, stdin in commands]
        above = [run.wall_s - self.start_s for run in runs]
        return {"p50": _ms(statistics.median(above)), "p95": _ms(_p95(above)),
                "cpu": _ms(statistics.median(run.cpu_s for run in runs)),
                "rss": round(max(run.max_rss_mb for run in runs), 1), "load": round(runs[0].load, 1)}


def _disk_mb(*paths: Path) -> float:
    return sum(scale_data.du(path) for path in paths if path.exists()) / 1e6


def _index_paths(data: Path) -> list[Path]:
    return [*data.glob("index.sqlite3*"), data / "index.text_index"]


def handoff_series(runner: Runner, work: Path, tiers: list[tuple[str, int, int]], n_queries: int,
                   seed_python: str | None, log) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    data = work / "data"
    handoffs = data / "handoffs"  # where an import leaves them; each size adds to the files of the one before
    queries = scale_data.queries(n_queries)
    made = max((made for _, made, _ in TIERS if made < tiers[0][1]), default=0)  # the sizes before: kept (--keep)
    for name, count, _ in tiers:
        started = time.perf_counter()
        if not (handoffs / scale_data.handoff_text(count - 1)[0]).exists():  # else made by an earlier run (--keep)
            scale_data.write_handoffs(handoffs, made, count)
        made = count
        log(f"{name}: {count} handoff files in {time.perf_counter() - started:.0f}s")
        env = eywa_env(data, work / "no-projects")
        reindex = runner.command(env, "reindex")
        log(f"{name}: reindex {reindex.wall_s:.1f}s, peak {reindex.peak_mb:.0f} MB: {reindex.stdout.strip()}")
        row: dict[str, object] = {"handoffs": count, "reindex s": round(reindex.wall_s, 1),
                                  "reindex CPU s": round(reindex.cpu_s, 1), "reindex peak MB": round(reindex.peak_mb),
                                  "reindex peak anon MB": round(reindex.peak_anon_mb),
                                  "reindex load": round(reindex.load, 1)}
        runner.interpreter_start(10)
        row["interpreter start ms"] = _ms(runner.start_s)
        row["interpreter CPU ms"] = _ms(runner.start_cpu_s)
        for mode in ("keywords", "hybrid"):
            timed = runner.timed(env, [(["get", "--mode", mode, query], None) for query in queries])
            row |= {f"get {mode} p50 ms": timed["p50"], f"get {mode} p95 ms": timed["p95"],
                    f"get {mode} CPU ms": timed["cpu"], f"get {mode} max RSS MB": timed["rss"]}
            row["get load"] = timed["load"]
        hook = json.dumps({"session_id": str(uuid.uuid4()), "transcript_path": "/x.jsonl",
                           "cwd": f"/home/bench/work/{scale_data.project(0)}", "hook_event_name": "SessionStart",
                           "source": "startup"})
        timed = runner.timed(env, [(["hook", "session-start"], hook)] * n_queries)
        row |= {"hook p50 ms": timed["p50"], "hook p95 ms": timed["p95"], "hook CPU ms": timed["cpu"],
                "hook max RSS MB": timed["rss"]}
        row |= bot_memory(runner, env, log)
        row["index KB per handoff"] = round(_disk_mb(*_index_paths(data)) * 1000 / count, 2)
        row["files KB per handoff"] = round(_disk_mb(handoffs) * 1000 / count, 2)
        if seed_python and count <= SEED_MAX_HANDOFFS:
            row |= seed_get(seed_python, handoffs, work, queries, log)
        log(json.dumps(row))
        rows.append(row)
        for path in _index_paths(data):
            _remove(path)
    return rows


def _remove(path: Path) -> None:
    import shutil

    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def seed_get(seed_python: str, handoffs: Path, work: Path, queries: list[str], log) -> dict[str, object]:
    index = work / "seed-index.json"
    built = _seed(seed_python, "index", str(handoffs), str(index))
    given = work / "queries.json"
    given.write_text(json.dumps(queries), encoding="utf-8")
    found = _seed(seed_python, "query", str(index), str(handoffs), str(given))
    log(f"seed: index {built['seconds']:.0f}s, load + query median {found['median_s'] * 1000:.0f} ms")
    index.unlink()
    return {"seed index s": round(built["seconds"], 1), "seed load+query p50 ms": _ms(found["median_s"]),
            "seed load+query p95 ms": _ms(found["p95_s"])}


def _seed(seed_python: str, *args: str) -> dict[str, float]:
    done = process_tree.run([seed_python, str(ROOT / "bench" / "seed_probe.py"), *args])
    return json.loads(done.stdout)


def five_second_note() -> bytes:
    """A 5-second voice note of real speech (two committed flite clips), as bench/bot_latency.py sends."""
    from bot_latency import five_second_note as note

    return note()


def bot_memory(runner: Runner, env: dict[str, str], log) -> dict[str, object]:
    """The bot (`eywa-bot`, against the tests' fake Bot API on 127.0.0.1): its memory once idle, and after it
    answered its first voice note (the speech model loaded, the index's vocabulary read)."""
    from tests.fake_telegram import FakeTelegram

    with FakeTelegram() as fake:
        bot_env = {**env, "EYWA_TELEGRAM__TOKEN": fake.token, "EYWA_TELEGRAM__ALLOWED_USER_IDS": f"[{OWNER}]",
                   "EYWA_TELEGRAM__API_BASE_URL": fake.base_url, "EYWA_TELEGRAM__FILE_BASE_URL": fake.base_file_url,
                   "EYWA_TELEGRAM__INGEST_EVERY_MINUTES": "0", "EYWA_TELEGRAM__DIGEST_TIME": ""}
        bot = subprocess.Popen([str(Path(runner.python).parent / "eywa-bot")], env=bot_env, cwd=ROOT,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True)
        try:
            fake.wait_for(lambda calls: any(c.method == "getMe" for c in calls), timeout=120)
            idle = _settled(bot.pid)
            mark = fake.mark()
            started = time.perf_counter()
            fake.send_voice(OWNER, five_second_note(), duration=5)
            fake.wait_messages(2, mark, OWNER, timeout=300)  # "heard: ...", then the first result
            answered = time.perf_counter() - started
            after = _settled(bot.pid)
        finally:
            bot.terminate()
            bot.wait(30)
    log(f"bot: idle {idle:.0f} MB, after a voice note {after:.0f} MB (answered in {answered:.1f}s)")
    return {"bot idle MB": round(idle), "bot after voice MB": round(after)}


def _settled(pid: int, seconds: float = 3.0) -> float:
    """The process tree's PSS once it has been still for a while: the most over `seconds` after a pause."""
    time.sleep(seconds)
    samples = []
    for _ in range(10):
        samples.append(process_tree.tree_pss_mb(pid))
        time.sleep(0.1)
    return max(samples)


def transcript_series(runner: Runner, work: Path, tiers: list[tuple[str, int, int]], log,
                      ) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    projects = work / "projects"
    made_files = made_bytes = 0
    for name, _, megabytes in tiers:
        started = time.perf_counter()
        files = megabytes * FILES_PER_MB - made_files
        count, written = make_scaled_corpus(projects, files, megabytes - made_bytes / 1e6, start=made_files)
        made_files, made_bytes = made_files + count, made_bytes + written
        log(f"{name}: {made_files} transcripts, {made_bytes / 1e6:.0f} MB ({time.perf_counter() - started:.0f}s)")
        data = work / f"ingest-{name}"
        env = eywa_env(data, projects)
        cold = runner.command(env, "ingest")
        report = ingest_report(data / "index.sqlite3")
        log(f"{name}: ingest {cold.wall_s:.1f}s, peak {cold.peak_mb:.0f} MB: {cold.stdout.strip()}")
        new_files = max(1, round(made_files * NEW_SHARE))
        count, written = make_scaled_corpus(projects, new_files, made_bytes * NEW_SHARE / 1e6, start=made_files)
        made_files, made_bytes = made_files + count, made_bytes + written
        again = runner.command(env, "ingest")
        more = ingest_report(data / "index.sqlite3")
        log(f"{name}: +1% ingest {again.wall_s:.1f}s, peak {again.peak_mb:.0f} MB: {again.stdout.strip()}")
        sessions = report["sessions_updated"] + more["sessions_updated"]
        rows.append({
            "transcripts MB": round(report["bytes_read"] / 1e6), "files": report["files_seen"],
            "sessions": report["sessions_updated"], "ingest s": round(cold.wall_s, 1),
            "ingest MB/s": round(report["bytes_read"] / 1e6 / cold.wall_s, 1), "ingest CPU s": round(cold.cpu_s, 1),
            # Throughput per second of CPU (the process and its workers): what a loaded machine leaves comparable.
            "ingest MB per CPU s": round(report["bytes_read"] / 1e6 / cold.cpu_s, 1),
            "ingest peak MB": round(cold.peak_mb), "ingest peak anon MB": round(cold.peak_anon_mb),
            "ingest max RSS MB": round(cold.max_rss_mb),
            "ingest load": round(cold.load, 1), "+1% files": more["files_changed"],
            "+1% ingest s": round(again.wall_s, 2), "+1% peak MB": round(again.peak_mb),
            "+1% peak anon MB": round(again.peak_anon_mb),
            "disk KB per session": round(_disk_mb(*_index_paths(data), data / "handoffs", data / "archive")
                                         * 1000 / max(1, sessions), 1)})
        log(json.dumps(rows[-1]))
        _remove(data)
    return rows


def seed_series(runner: Runner, seed_python: str | None, work: Path, runs: int, log,
                ) -> list[dict[str, object]]:
    """Ingest of each shared tree, whole process, against the seed's convert-only of it, in process; median of
    `runs` each."""
    rows = []
    for tree in ("entire", "claude-code-log"):
        folder = CORPUS / tree / "projects"
        walls, inside, cpu = [], [], []
        for run in range(runs):
            data = work / f"tree-{tree}-{run}"
            done = runner.command(eywa_env(data, folder), "ingest")
            walls.append(done.wall_s)
            cpu.append(done.cpu_s)
            inside.append(ingest_report(data / "index.sqlite3")["seconds"])
            _remove(data)
        row: dict[str, object] = {"tree": tree, "MB": round(ingest_report_mb(folder), 1),
                                  "eywa ingest, whole process s": round(statistics.median(walls), 3),
                                  "eywa ingest, in process s": round(statistics.median(inside), 3),
                                  "eywa ingest CPU s": round(statistics.median(cpu), 3),
                                  "load": round(os.getloadavg()[0], 1)}
        if seed_python:
            converted = [_seed(seed_python, "convert", str(folder))["seconds"] for _ in range(runs)]
            row["seed convert-only, in process s"] = round(statistics.median(converted), 3)
            row["seed / eywa (whole process)"] = round(statistics.median(converted) / statistics.median(walls), 2)
        log(json.dumps(row))
        rows.append(row)
    return rows


def ingest_report_mb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*.jsonl")) / 1e6


# -- the report ------------------------------------------------------------------------------------------------

SECTION = "## Scale"


def section(results: dict[str, list[dict[str, object]]], label: str, seconds: float) -> str:
    load = os.getloadavg()
    made = (f"Assembled by `python bench/scale.py{label}` from the rows of earlier runs" if "--merge" in label else
            f"Written by `python bench/scale.py{label}` in {seconds / 60:.0f} min")
    parts = [
        f"{SECTION}\n\n{made} on {dt.date.today().isoformat()}, {os.cpu_count()} cores, load average at the end "
        f"{load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} (each row's own is in its load column). Method: "
        "bench/scale.py's docstring; the plot: bench/scale.png. Times are whole processes; `get` and `hook` in ms "
        "above the interpreter's start.\n"]
    if results.get("handoffs"):
        parts.append("Synthetic handoffs in the original's format (`eywa reindex`, then queries, the SessionStart "
                     "hook and the bot on that index):\n\n" + table(results["handoffs"]))
    if results.get("transcripts"):
        parts.append("Transcripts cloned from the shared trees (`eywa ingest` on a new data directory, then "
                     "again after 1% new sessions):\n\n" + table(results["transcripts"]))
    if results.get("seed"):
        parts.append("Against the seed, the shared trees:\n\n" + table(results["seed"]))
    return "\n".join(parts)


def replace_section(out: Path, text: str) -> None:
    """Put `text` in place of the file's "## Scale" section, or at its end."""
    previous = out.read_text(encoding="utf-8") if out.exists() else ""
    out.write_text(merged(previous, [text]), encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-size", choices=[name for name, _, _ in TIERS], default="1M")
    parser.add_argument("--min-size", choices=[name for name, _, _ in TIERS], default="10k",
                        help="the first size measured (with --keep: the data of the sizes before are there)")
    parser.add_argument("--python", default=sys.executable, help="interpreter of the eywa measured")
    parser.add_argument("--seed-python", default=os.environ.get("EYWA_SEED_PYTHON"),
                        help="interpreter with the seed installed (bench/seed_probe.py says how)")
    parser.add_argument("--only", choices=["handoffs", "transcripts", "seed"], action="append")
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--work-dir", type=Path, help="where the data are made (default: a temporary folder)")
    parser.add_argument("--keep", type=Path, help="make the data in this folder and keep them for the next run")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "RESULTS.md")
    parser.add_argument("--plot", type=Path, default=ROOT / "bench" / "scale.png")
    parser.add_argument("--json", type=Path, help="also write the rows here")
    parser.add_argument("--merge", type=Path, action="append", default=[],
                        help="rows of an earlier run (--json) for the series this run does not measure")
    parser.add_argument("--before", type=Path, help="rows of a run of the code before (--json), drawn dashed")
    args = parser.parse_args()
    names = [name for name, _, _ in TIERS]
    tiers = TIERS[names.index(args.min_size):names.index(args.max_size) + 1]
    steps = args.only or ["seed", "handoffs", "transcripts"]
    if args.merge and not args.only:
        steps = []  # only the section and the plot, from the rows given
    started = time.perf_counter()

    def log(message: str) -> None:
        print(f"[{time.perf_counter() - started:6.0f}s load {os.getloadavg()[0]:.1f}] {message}", file=sys.stderr,
              flush=True)

    if not args.seed_python:
        log("no --seed-python: the seed's figures are left out (bench/seed_probe.py says how to get it)")
    runner = Runner(args.python)
    results: dict[str, list[dict[str, object]]] = {}
    for earlier in args.merge:
        results |= {step: rows for step, rows in json.loads(earlier.read_text(encoding="utf-8")).items()
                    if step not in steps}
    with tempfile.TemporaryDirectory(prefix="eywa-scale-", dir=args.work_dir) as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        for step in ("seed", "handoffs", "transcripts"):
            if step not in steps:
                continue
            if step == "seed":
                results[step] = seed_series(runner, args.seed_python, work, 3, log)
            elif step == "handoffs":
                results[step] = handoff_series(runner, work, tiers, args.queries, args.seed_python, log)
            else:
                results[step] = transcript_series(runner, work, tiers, log)
            if args.json:
                args.json.write_text(json.dumps({k: v for k, v in results.items() if k in steps}, indent=1),
                                     encoding="utf-8")
    label = (f" --max-size {args.max_size}" + "".join(f" --only {step}" for step in args.only or [])
             if steps else "".join(f" --merge {path.name}" for path in args.merge))
    replace_section(args.out, section(results, label, time.perf_counter() - started))
    if args.plot:
        import scale_plot

        before = json.loads(args.before.read_text(encoding="utf-8")) if args.before else None
        scale_plot.plot(results, args.plot, before)
    log(f"wrote {args.out} and {args.plot}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
