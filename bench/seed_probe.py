"""The seed's side of bench/scale.py, run by the seed's own interpreter: the original eywa-mcp
(github.com/buildoak/eywa-mcp), whose handoff format and `keywords` formula Eywa keeps. It imports the
seed's `eywa` package, never this project's, and prints one JSON object.

Get it (nothing of it is kept in this repository):
    git clone https://github.com/buildoak/eywa-mcp /tmp/seed
    python3 -m venv /tmp/seed-venv && /tmp/seed-venv/bin/pip install -e /tmp/seed
then pass `--seed-python /tmp/seed-venv/bin/python` to bench/scale.py (or set EYWA_SEED_PYTHON).

Usage (by bench/scale.py):
    seed_probe.py convert TREE            # the seed's transcript -> markdown of every main JSONL, in process
    seed_probe.py index HANDOFFS INDEX    # its JSON index of a folder of handoffs, through its own functions
    seed_probe.py query INDEX HANDOFFS QUERIES_JSON  # each query: a fresh load of the index + get_handoffs
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path


def convert(tree: Path) -> dict[str, object]:
    from eywa.session_convert import jsonl_to_markdown

    paths = sorted(p for p in tree.rglob("*.jsonl") if "subagents" not in p.parts and not p.name.startswith("agent-"))
    started = time.perf_counter()
    converted = sum(1 for path in paths if jsonl_to_markdown(path))
    return {"seconds": time.perf_counter() - started, "files": len(paths), "converted": converted,
            "bytes": sum(p.stat().st_size for p in paths)}


def index(handoffs: Path, target: Path) -> dict[str, object]:
    """What the seed's `rebuild_index` writes, from its own parser and index functions; its YAML read through
    libyaml when PyYAML has it (the same mappings from these front matters, several times sooner: what is
    compared is the seed's load and query, not how long its index takes to build)."""
    import yaml

    if hasattr(yaml, "CSafeLoader"):
        yaml.safe_load = lambda text: yaml.load(text, Loader=yaml.CSafeLoader)
    from eywa.index import _empty_index, _merge_entry, _update_meta, _write_json_atomic, handoff_to_index_entry
    from eywa.parse import parse_handoff

    started = time.perf_counter()
    built = _empty_index()
    for path in sorted(handoffs.rglob("*.md")):
        parsed = parse_handoff(path)
        _merge_entry(built, str(parsed["session_id"]), handoff_to_index_entry(parsed))
    _update_meta(built)
    _write_json_atomic(target, built)
    return {"seconds": time.perf_counter() - started, "handoffs": len(built["handoffs"])}


def query(index_path: Path, handoffs: Path, queries: list[str]) -> dict[str, object]:
    from eywa.retrieval import EywaRetrieval

    times = []
    for text in queries:
        started = time.perf_counter()
        EywaRetrieval(index_path=index_path, handoffs_dir=handoffs).get_handoffs(text, days_back=14, max_handoffs=3)
        times.append(time.perf_counter() - started)
    times.sort()
    return {"median_s": statistics.median(times), "p95_s": times[int(0.95 * (len(times) - 1))], "queries": len(times)}


def main() -> int:
    command, *args = sys.argv[1:]
    if command == "convert":
        result = convert(Path(args[0]))
    elif command == "index":
        result = index(Path(args[0]), Path(args[1]))
    else:
        result = query(Path(args[0]), Path(args[1]), json.loads(Path(args[2]).read_text(encoding="utf-8")))
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
