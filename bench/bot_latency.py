"""How fast the bot answers: time from a text message (a recall) reaching the Bot API to the bot's first
reply reaching it, and to the last of its three result messages.

Method: ingest the whole corpus into a temporary data directory (deterministic extractor, now pinned
to 2026-02-17), start the bot's real Application against the fake Bot API server of the tests
(tests/fake_telegram.py, real HTTP on 127.0.0.1), and send the first N commit subjects of
corpus/queries/commits.tsv one at a time, 0.3 s apart, as plain text messages from the owner. The clock starts when
the update is queued at the fake (a waiting long poll returns it at once) and stops when each reply
arrives there: update delivery, the allow-list gate, recall, formatting and sendMessage over HTTP are
all inside. Telegram's own network hops are not. The voice figure sends a 5-second note of real speech
(two committed flite clips) through the real transcriber (bundled tiny.en, the index's vocabulary), with
spoken answers on: the spoken answer is timed from the last text result to the voice note (flite,
OGG/Opus, sendVoice) reaching the fake.

Usage: python bench/bot_latency.py [--queries N] [--data-dir DIR] [--markdown]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CORPUS = ROOT.parent / "shared" / "corpus"
QUERIES = CORPUS / "queries" / "commits.tsv"
NOW = "2026-02-17"
OWNER = 42


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(share * (len(ordered) - 1))))]


# The bot keeps Telegram's 30 requests a second (PTB's AIORateLimiter): queries sent back to back would time
# its throttle, not the bot; a person's next query comes after this pause anyway.
BETWEEN_QUERIES_S = 0.3


def measure_text(fake, queries: list[str]) -> dict[str, list[float]]:
    first, last = [], []
    for query in queries:
        time.sleep(BETWEEN_QUERIES_S)
        mark = fake.mark()
        start = time.perf_counter()
        fake.send_text(OWNER, query)
        replies = fake.wait_messages(3, mark, OWNER)
        first.append(replies[0].at - start)
        last.append(replies[-1].at - start)
    return {"first reply": first, "all three results": last}


def five_second_note() -> bytes:
    """A 5-second voice note of real speech: two committed flite clips with a pause between them."""
    import numpy as np

    from eywa.bot.speech.transcribe import decode, encode_opus

    folder = ROOT / "tests" / "fixtures" / "voice"
    parts = [decode((folder / name).read_bytes()) for name in ("plain_query.oga", "claude_code_log.oga")]
    pause = np.zeros(int(16000 * max(0.0, 5.0 - sum(len(p) for p in parts) / 16000)), dtype=np.float32)
    return encode_opus(np.concatenate([parts[0], pause, parts[1]]))


def measure_voice(fake, note: bytes, runs: int) -> dict[str, list[float]]:
    first, results, spoken = [], [], []
    for _ in range(runs):
        time.sleep(BETWEEN_QUERIES_S)
        mark = fake.mark()
        start = time.perf_counter()
        fake.send_voice(OWNER, note, duration=5)
        replies = fake.wait_messages(4, mark, OWNER, timeout=120)  # "heard: ...", then 3 results
        first.append(replies[0].at - start)
        results.append(replies[1].at - start)
        calls = fake.wait_for(lambda calls: any(c.method == "sendVoice" for c in calls), mark, timeout=60)
        voice_note = next(c for c in calls if c.method == "sendVoice")
        spoken.append(voice_note.at - replies[-1].at)
    return {"update to first reply (heard: ...)": first, "update to first result": results,
            "last text result to spoken answer": spoken}


def run(queries: int = 50, data_dir: Path | None = None, voice_runs: int = 5) -> list[dict[str, object]]:
    os.environ["EYWA_NOW"] = NOW
    os.environ.pop("ANTHROPIC_API_KEY", None)  # the deterministic extractor: no network, reproducible
    os.environ["EYWA_VOICE__SPOKEN_ANSWERS"] = "true"  # voice queries are answered by voice too (flite)
    from eywa.bot.app import build_application
    from eywa.core.api import Eywa
    from tests.fake_telegram import BotThread, FakeTelegram, bot_settings

    subjects = [line.split("\t")[0] for line in QUERIES.read_text(encoding="utf-8").splitlines()[1:] if line]
    with tempfile.TemporaryDirectory() as scratch, FakeTelegram() as fake:
        data = data_dir or Path(scratch) / "data"
        settings = bot_settings(fake, data, CORPUS)
        eywa = Eywa(settings)
        eywa.ingest()
        eywa.close()
        with BotThread(build_application(settings)):
            measure_text(fake, subjects[:3])  # warm-up: first connections, first SQLite pages
            results = {f"text recall, update to {k}": v for k, v in measure_text(fake, subjects[:queries]).items()}
            if voice_runs:
                note = five_second_note()
                measure_voice(fake, note, 1)  # warm-up: the speech model loads once per process
                results |= {f"5 s voice recall, {k}": v
                            for k, v in measure_voice(fake, note, voice_runs).items()}
    rows: list[dict[str, object]] = []
    for name, values in results.items():
        rows.append({"measured": name, "n": len(values),
                     "median ms": round(statistics.median(values) * 1000, 1),
                     "p90 ms": round(percentile(values, 0.9) * 1000, 1),
                     "max ms": round(max(values) * 1000, 1)})
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--data-dir", type=Path, help="reuse an ingested data directory")
    parser.add_argument("--voice-runs", type=int, default=5, help="5-second voice notes to time (0: none)")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    rows = run(args.queries, args.data_dir, args.voice_runs)
    if args.markdown:
        print("| measured | n | median ms | p90 ms | max ms |\n|---|---|---|---|---|")
        for row in rows:
            print(f"| {row['measured']} | {row['n']} | {row['median ms']} | {row['p90 ms']} | {row['max ms']} |")
    else:
        for row in rows:
            print(f"{row['measured']:<40} n={row['n']}  median {row['median ms']} ms  p90 {row['p90 ms']} ms  "
                  f"max {row['max ms']} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
