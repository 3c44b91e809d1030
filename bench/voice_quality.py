"""Voice-query quality on several voices: query sets spoken by flite's voices, sent through the bot's
voice path, and recalled against an index of the corpus.

Sets: `commits` (the 193 commit subjects of ../shared/corpus/queries/commits.tsv) and `phone` (the short
questions of bench/phone_queries.tsv, asked the way people ask on a phone, each written from one real
session of the corpus). Voices: flite's built-in awb (Scottish male), slt (US female), rms (US male),
kal16 (US male, diphone) and kal (the same at 8 kHz).

Method: build the index (as bench/recall.py: now pinned to 2026-02-17, days_back 400), take the bot's
hotwords (`Eywa.vocabulary(2000)`, kept to the terms Whisper may not know by `eywa.bot.speech.transcribe.unfamiliar`),
speak each query with `flite -voice V` into a temporary directory, encode it as OGG/Opus 48 kHz mono as
Telegram sends it, decode it with eywa.bot.speech.transcribe.decode, and transcribe it as the bot does
(tiny.en, hotwords,
word probabilities). Transcripts are kept in a cache file (--cache), so the recall side can be measured
again without the CPU of speech recognition. Then, per voice:

  before        every word heard, correct_query, then Eywa.recall (the bot before issue 18)
  after         what the bot does now: without the words the model invented at the end (transcribe.kept_text),
                correct_query, then Eywa.recall
  spoken text   no audio: the query as a person would say it (camelCase split, punctuation dropped),
                typed: the ceiling a perfect recogniser could reach (the same for every voice)

For each: top-1 agreement (share of queries whose first result is the typed query's first result), top-3
agreement (the typed first result among the three the bot shows), and word error rate of the text
recalled on against the typed words (lowercase, split on anything but letters and digits); for "after",
top-1 agreement once a miss is retried through one of the "heard:" buttons the bot would offer (the
reading whose results hold the typed first result). Finally the time to transcribe 5 s of speech
(median of 5, model already loaded).

Usage: python bench/voice_quality.py [--sets commits,phone] [--voices awb,slt,rms] [--every K] [--limit N]
       [--cache FILE] [--data-dir DIR] [--show-misses]
`--every 4 --limit 20` runs a subset (every 4th query, at most 20 a set). Needs flite (apt-get install
flite). The whole run is about 750 clips: 10-15 minutes on 2 cores, most of it tiny.en.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
SETS = {"commits": SHARED / "corpus" / "queries" / "commits.tsv", "phone": ROOT / "bench" / "phone_queries.tsv"}
VOICES = ["awb", "slt", "rms", "kal16", "kal"]
NOW = "2026-02-17"
DAYS_BACK = 400
FIVE_SECONDS = "what did we decide about the shadow branch handling for the gemini hooks last week"


def load_queries(path: Path) -> list[str]:
    return [line.split("\t")[0] for line in path.read_text(encoding="utf-8").splitlines()[1:] if line.strip()]


def words(text: str) -> list[str]:
    return [w for w in re.split(r"[^a-z0-9]+", text.lower()) if w]


def edit_distance(a: list[str], b: list[str]) -> int:
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, start=1):
        diagonal, row[0] = row[0], i
        for j, y in enumerate(b, start=1):
            diagonal, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, diagonal + (x != y))
    return row[-1]


def spoken_form(query: str) -> str:
    """What a perfect recogniser would write for a spoken query: "GetGitDir()" -> "get git dir"."""
    query = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", query)
    query = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", query)
    return re.sub(r"[^A-Za-z0-9'.]+", " ", query).lower().strip(" .")


def speak(text: str, wav: Path, voice_name: str = "awb") -> bytes:
    """flite's `voice_name` saying `text`, as the OGG/Opus bytes a Telegram client would send."""
    from eywa.bot.speech.transcribe import decode, encode_opus

    subprocess.run(["flite", "-voice", voice_name, "-t", text, "-o", str(wav)], check=True, capture_output=True)
    return encode_opus(decode(wav.read_bytes(), max_seconds=600))


def open_eywa(data_dir: Path):
    from eywa.core.api import Eywa
    from eywa.core.config.settings import load_settings

    return Eywa(load_settings(data_dir=data_dir, projects_dir=SHARED / "corpus"))


def transcribe_all(data_dir: Path, work: Path, plan: dict[str, list[str]], voices: list[str],
                   cache_path: Path) -> dict[str, dict]:
    """`voice\\tquery` -> {"text", "words", "seconds"}: what the bot's recogniser hears, cached."""
    from eywa.bot.speech import transcribe as voice

    cache: dict[str, dict] = json.loads(cache_path.read_text()) if cache_path.exists() else {}
    eywa = open_eywa(data_dir)
    vocabulary = voice.unfamiliar(eywa.vocabulary(2000))
    eywa.close()
    todo = [(v, q) for v in voices for qs in plan.values() for q in qs if f"{v}\t{q}" not in cache]
    if todo:
        voice.load_model()
    for n, (voice_name, query) in enumerate(todo, start=1):
        samples = voice.decode(speak(query, work / "clip.wav", voice_name), max_seconds=600)
        t0 = time.perf_counter()
        heard = voice.recognize(samples, vocabulary)
        cache[f"{voice_name}\t{query}"] = {"text": heard.text, "words": heard.words,
                                           "seconds": time.perf_counter() - t0}
        if n % 25 == 0 or n == len(todo):
            cache_path.write_text(json.dumps(cache, indent=0))
            print(f"  {n}/{len(todo)} clips transcribed", flush=True)
    return cache


def score(data_dir: Path, plan: dict[str, list[str]], voices: list[str], cache: dict[str, dict],
          show_misses: bool) -> dict[str, dict[str, dict[str, float]]]:
    """set -> row name -> {top1, top3, wer, n}."""
    from eywa.bot.speech import transcribe as voice
    from eywa.bot.speech.hearing import Hearing
    from eywa.bot.speech.readings import readings
    from eywa.core.retrieval import spoken

    eywa = open_eywa(data_dir)
    vocabulary = voice.unfamiliar(eywa.vocabulary(2000))

    def top(query: str, k: int) -> list[str]:
        return [h.session_id for h in eywa.recall(query, days_back=DAYS_BACK, max_results=k)]

    results: dict[str, dict[str, dict[str, float]]] = {}
    for set_name, queries in plan.items():
        expected = {q: top(q, 1) for q in queries}
        typed_words = sum(len(words(q)) for q in queries)
        rows: dict[str, dict[str, float]] = {}
        for voice_name in voices:
            for query in queries:
                heard = cache[f"{voice_name}\t{query}"]["words"]
                before = spoken.correct_query(" ".join(w for w, _ in heard), vocabulary)  # all words, as before
                after = spoken.correct_query(voice.kept_text(heard), vocabulary)  # what the bot recalls on now
                for row, text, found in ((f"{voice_name} before", before, top(before, 3)),
                                         (f"{voice_name} after", after, top(after, 3))):
                    tally(rows, row, query, text, found, expected[query])
                    if show_misses and found[:1] != expected[query]:
                        print(f"  miss [{set_name} {row}] {query!r} -> {text!r}")
                if found[:1] != expected[query]:  # a miss after: would one of the "heard:" buttons fix it?
                    offered = readings(Hearing(after, raw=voice.kept_text(heard), words=heard), eywa)
                    rows[f"{voice_name} after"]["tap"] += any(
                        top(r.text, 1) == expected[query] for r in offered)
        for query in queries:
            text = spoken_form(query)
            tally(rows, "spoken text", query, text, top(text, 3), expected[query])
        n = len(queries)
        results[set_name] = {row: {"top1": r["top1"] / n, "top3": r["top3"] / n, "tap": (r["top1"] + r["tap"]) / n,
                                   "wer": r["errors"] / max(1, typed_words), "n": n} for row, r in rows.items()}
    eywa.close()
    return results


def tally(rows: dict[str, dict[str, float]], row: str, query: str, text: str, found: list[str],
          expected: list[str]) -> None:
    r = rows.setdefault(row, {"top1": 0, "top3": 0, "errors": 0, "tap": 0})
    r["top1"] += found[:1] == expected
    r["top3"] += bool(expected) and expected[0] in found
    r["errors"] += edit_distance(words(query), words(text))


def time_five_seconds(work: Path, data_dir: Path) -> tuple[float, float, float]:
    """(audio seconds, median seconds to transcribe as the bot does, median seconds to decode the OGG)."""
    import numpy as np

    from eywa.bot.speech import transcribe as voice

    eywa = open_eywa(data_dir)
    vocabulary = voice.unfamiliar(eywa.vocabulary(2000))
    eywa.close()
    ogg = speak(FIVE_SECONDS, work / "five.wav")
    samples = voice.decode(ogg)[: 5 * voice.SAMPLE_RATE]
    samples = np.pad(samples, (0, 5 * voice.SAMPLE_RATE - samples.size))  # exactly 5 s: a trailing pause
    decode_times, times = [], []
    for _ in range(5):
        t0 = time.perf_counter()
        voice.decode(ogg)
        decode_times.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        voice.recognize(samples, vocabulary)
        times.append(time.perf_counter() - t0)
    return samples.size / voice.SAMPLE_RATE, statistics.median(times), statistics.median(decode_times)


def table(rows: dict[str, dict[str, float]]) -> str:
    lines = ["| voice, recall | top-1 agreement | top-3 agreement | WER | top-1 after one tap |",
             "|---|---|---|---|---|"]
    for row, r in rows.items():
        tap = f"{r['tap']:.3f}" if row.endswith("after") else ""
        lines.append(f"| {row} | {r['top1']:.3f} | {r['top3']:.3f} | {r['wer']:.3f} | {tap} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default="commits,phone", help=f"comma-separated, of: {', '.join(SETS)}")
    parser.add_argument("--voices", default="awb,slt,rms", help=f"comma-separated, of: {', '.join(VOICES)}")
    parser.add_argument("--every", type=int, default=1, help="only every K-th query of each set (a subset)")
    parser.add_argument("--limit", type=int, default=0, help="at most N queries a set (0: all)")
    parser.add_argument("--cache", type=Path, help="transcripts kept here between runs (default: none kept)")
    parser.add_argument("--data-dir", type=Path, help="reuse an index here (built if missing)")
    parser.add_argument("--show-misses", action="store_true", help="print each transcript whose top result differs")
    parser.add_argument("--no-timing", action="store_true", help="skip the 5-second timing")
    args = parser.parse_args()
    sets = [s.strip() for s in args.sets.split(",") if s.strip()]
    voices = [v.strip() for v in args.voices.split(",") if v.strip()]
    if set(sets) - set(SETS) or set(voices) - set(VOICES):
        parser.error(f"sets are of {list(SETS)}, voices of {VOICES}")
    if shutil.which("flite") is None:
        print("flite is missing: apt-get install flite", file=sys.stderr)
        return 1
    os.environ["EYWA_NOW"] = NOW
    os.environ["EYWA_RETRIEVAL__DAYS_BACK"] = str(DAYS_BACK)  # the window the "heard:" readings are tried in
    sys.path.insert(0, str(ROOT))
    plan = {}
    for name in sets:
        queries = load_queries(SETS[name])[:: max(1, args.every)]
        plan[name] = queries[: args.limit] if args.limit > 0 else queries
    with tempfile.TemporaryDirectory(prefix="eywa-voice-") as tmp:
        work = Path(tmp)
        data_dir = args.data_dir or work / "data"
        if not (data_dir / "index.sqlite3").exists():
            open_eywa(data_dir).ingest()
        cache = transcribe_all(data_dir, work, plan, voices, args.cache or work / "transcripts.json")
        results = score(data_dir, plan, voices, cache, args.show_misses)
        timing = None if args.no_timing else time_five_seconds(work, data_dir)
    for name, rows in results.items():
        n = next(iter(rows.values()))["n"]
        print(f"\n{name}: {n} queries, voices {', '.join(voices)}, now={NOW}, days_back={DAYS_BACK}, "
              f"{os.cpu_count()} cores")
        print(table(rows))
    if timing is not None:
        audio, seconds, decoding = timing
        print(f"\n{audio:.1f} s of speech: transcribed (tiny.en, hotwords, word probabilities) in {seconds:.2f} s, "
              f"OGG decoded in {decoding * 1000:.0f} ms (median of 5)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
