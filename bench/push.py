"""Several machines: `eywa push` of new transcripts from a spoke to the hub (its outbox of redacted copies
brought up to date, then real rsync over a real sshd on 127.0.0.1, the tests' tests/ssh_hub.py), the hub's
`eywa ingest` of them, and what a second push with nothing new costs, then one with a line appended to 10
of the files.

Each step is the command a user runs, as a child process, timed whole (interpreter start-up included);
bytes are rsync's own count of what it sent. Loopback: a real link adds its transfer time to the first
push, and little to the others (they send kilobytes).

Usage: python bench/push.py [--files 1000] [--megabytes 100]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from scale_data import make_scaled_corpus  # noqa: E402

from tests.ssh_hub import ssh_hub  # noqa: E402


def _eywa(env: dict[str, str], *args: str) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "eywa.cli.main", *args], cwd=ROOT, env=env, text=True,
                          capture_output=True)
    if done.returncode != 0:
        raise RuntimeError(f"eywa {' '.join(args)} failed: {done.stderr}")
    return time.perf_counter() - started, done.stdout


def _sent(line: str) -> tuple[int, float]:
    words = line.split()
    return int(words[1]), float(words[6].lstrip("("))


def run(files: int, megabytes: int) -> list[dict[str, object]]:
    with tempfile.TemporaryDirectory(prefix="eywa-bench-push-") as tmp:
        folder = Path(tmp)
        base = {k: v for k, v in os.environ.items() if not k.startswith(("EYWA_", "ANTHROPIC_"))}
        hub = {**base, "HOME": str(folder / "hub"), "EYWA_MACHINE": "hub",
               "EYWA_PROJECTS_DIR": str(folder / "hub" / "projects"), "EYWA_DATA_DIR": str(folder / "hub" / "data")}
        (folder / "hub" / "projects").mkdir(parents=True)
        spoke_projects = folder / "spoke" / "projects"
        count, written = make_scaled_corpus(spoke_projects, files, megabytes)
        with ssh_hub(folder / "sshd") as sshd:
            spoke = {**base, "HOME": str(folder / "spoke"), "EYWA_MACHINE": "laptop",
                     "EYWA_PROJECTS_DIR": str(spoke_projects), "EYWA_DATA_DIR": str(folder / "spoke" / "data"),
                     **sshd.push_env(folder / "hub" / "data" / "spokes")}
            rows: list[dict[str, object]] = []
            seconds, out = _eywa(spoke, "push")
            sent, kb = _sent(out)
            rows.append({"step": f"first push: {count} new transcripts ({written / 1e6:.0f} MB)",
                         "seconds": round(seconds, 2), "files sent": sent, "KB sent": kb})
            seconds, _ = _eywa(hub, "ingest")
            report = json.loads(_eywa(hub, "stats", "--json")[1])["last_ingest"]
            rows.append({"step": f"hub ingest of them ({report['sessions_updated']} sessions)",
                         "seconds": round(seconds, 2), "files sent": "", "KB sent": ""})
            seconds, out = _eywa(spoke, "push")
            sent, kb = _sent(out)
            rows.append({"step": "second push, nothing new", "seconds": round(seconds, 2), "files sent": sent,
                         "KB sent": kb})
            for path in sorted(spoke_projects.rglob("*.jsonl"))[:10]:
                with path.open("a") as handle:
                    handle.write(json.dumps({"type": "user", "sessionId": path.stem, "timestamp":
                                             "2026-02-17T10:00:00Z", "message": {"role": "user",
                                                                                 "content": "one more line"}}) + "\n")
            seconds, out = _eywa(spoke, "push")
            sent, kb = _sent(out)
            rows.append({"step": "push after a line appended to 10 files", "seconds": round(seconds, 2),
                         "files sent": sent, "KB sent": kb})
            seconds, _ = _eywa(hub, "ingest")
            rows.append({"step": "hub ingest of those 10", "seconds": round(seconds, 2), "files sent": "",
                         "KB sent": ""})
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--megabytes", type=int, default=100)
    args = parser.parse_args()
    for row in run(args.files, args.megabytes):
        print(row)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
