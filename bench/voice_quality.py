"""Voice-query quality: the commit subjects of ../shared/corpus/queries/commits.tsv spoken by flite's awb
voice, sent through the bot's voice path, and recalled against an index of the corpus.

Method: build the index (as bench/recall.py: now pinned to 2026-02-17, days_back 400), take the bot's
hotwords (`Eywa.vocabulary(2000)`, kept to the terms Whisper may not know by `bot.voice.unfamiliar`),
speak each query with `flite -voice awb` into a temporary directory, encode it as OGG/Opus 48 kHz mono
as Telegram sends it, decode it with bot.voice.decode, and transcribe:

  plain             tiny.en, no bias
  hotwords          faster-whisper `hotwords` = the vocabulary (what the bot does)
  prompt            the vocabulary as `initial_prompt` instead (only with --variants ...,prompt)
  hotwords+correct  hotwords, then bot.voice.correct_query against the same vocabulary (what the bot does)
  plain+correct     plain, then correct_query
  spoken text       no audio: the query as a person would say it (camelCase split, punctuation dropped),
                    typed: the ceiling a perfect recogniser could reach

For each variant: top-1 agreement (share of queries whose first result is the typed query's first
result), top-3 agreement (the typed first result among the three the bot shows), word error rate
against the typed words (lowercase, split on anything but letters and digits), and mean seconds per
clip. Finally the time to transcribe 5 s of speech with hotwords (median of 5, model already loaded).

Usage: python bench/voice_quality.py [--limit N] [--variants plain,hotwords,hotwords+correct]
       [--vocabulary-size 2000] [--data-dir DIR] [--show-misses]
Needs flite (apt-get install flite). 193 clips take several minutes on 2 cores.
"""

from __future__ import annotations

import argparse
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
QUERIES = SHARED / "corpus" / "queries" / "commits.tsv"
NOW = "2026-02-17"
DAYS_BACK = 400
ALL_VARIANTS = ["plain", "plain+correct", "hotwords", "prompt", "hotwords+correct"]
FIVE_SECONDS = "what did we decide about the shadow branch handling for the gemini hooks last week"


def load_queries(path: Path = QUERIES) -> list[str]:
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
    return re.sub(r"[^A-Za-z0-9']+", " ", query).lower().strip()


def speak(text: str, wav: Path) -> bytes:
    """flite's awb voice saying `text`, as the OGG/Opus bytes a Telegram client would send."""
    from bot.voice import decode, encode_opus

    subprocess.run(["flite", "-voice", "awb", "-t", text, "-o", str(wav)], check=True, capture_output=True)
    return encode_opus(decode(wav.read_bytes(), max_seconds=600))


def build_index(data_dir: Path) -> None:
    from core.api import Eywa
    from core.config import load_settings

    eywa = Eywa(load_settings(data_dir=data_dir, projects_dir=SHARED / "corpus"))
    try:
        eywa.ingest()
    finally:
        eywa.close()


def run(data_dir: Path, work: Path, queries: list[str], variants: list[str], vocabulary_size: int,
        show_misses: bool) -> dict[str, dict[str, float]]:
    from bot import voice
    from core.api import Eywa
    from core.config import load_settings

    eywa = Eywa(load_settings(data_dir=data_dir, projects_dir=SHARED / "corpus"))
    vocabulary = voice.unfamiliar(eywa.vocabulary(vocabulary_size))

    def top(query: str, k: int) -> list[str]:
        return [h.session_uuid for h in eywa.recall(query, days_back=DAYS_BACK, max_results=k)]

    started = time.perf_counter()
    voice.load_model()
    print(f"model loaded in {time.perf_counter() - started:.2f} s; vocabulary: {len(vocabulary)} terms, prompt: "
          f"{voice.hotword_prompt(vocabulary, voice._Encoder(voice.load_model().hf_tokenizer))!r}")
    print(flush=True)

    stats = {v: {"agree1": 0, "agree3": 0, "errors": 0, "seconds": 0.0} for v in [*variants, "spoken text"]}
    typed_words = 0
    for i, query in enumerate(queries):
        samples = voice.decode(speak(query, work / f"{i:03d}.wav"), max_seconds=600)
        heard: dict[str, tuple[str, float]] = {}
        for bias in ("plain", "hotwords", "prompt"):
            if bias in variants or f"{bias}+correct" in variants:
                t0 = time.perf_counter()
                result = voice.recognize(samples, [] if bias == "plain" else vocabulary,
                                         bias="prompt" if bias == "prompt" else "hotwords")
                heard[bias] = (result.text, time.perf_counter() - t0)
        expected = top(query, 1)
        typed_words += len(words(query))
        heard["spoken text"] = (spoken_form(query), 0.0)
        for variant in [*variants, "spoken text"]:
            base, _, correct = variant.partition("+")
            text, seconds = heard[base]
            if correct:
                t0 = time.perf_counter()
                text = voice.correct_query(text, vocabulary)
                seconds += time.perf_counter() - t0
            found = top(text, 3)
            row = stats[variant]
            row["agree1"] += found[:1] == expected
            row["agree3"] += bool(expected) and expected[0] in found
            row["errors"] += edit_distance(words(query), words(text))
            row["seconds"] += seconds
            if show_misses and found[:1] != expected:
                print(f"  miss [{variant}] {query!r} -> {text!r}")
        if (i + 1) % 20 == 0:
            print(f"  {i + 1}/{len(queries)} clips", flush=True)
    n = len(queries)
    results = {
        v: {"top1": s["agree1"] / n, "top3": s["agree3"] / n, "wer": s["errors"] / max(1, typed_words),
            "seconds": s["seconds"] / n}
        for v, s in stats.items()
    }
    eywa.close()
    return results


def time_five_seconds(work: Path, vocabulary_size: int, data_dir: Path) -> tuple[float, float, float]:
    """(audio seconds, median seconds to transcribe with hotwords, median seconds to decode the OGG)."""
    import numpy as np

    from bot import voice
    from core.api import Eywa
    from core.config import load_settings

    eywa = Eywa(load_settings(data_dir=data_dir, projects_dir=SHARED / "corpus"))
    vocabulary = voice.unfamiliar(eywa.vocabulary(vocabulary_size))
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


def table(results: dict[str, dict[str, float]]) -> str:
    lines = ["| variant | top-1 agreement | top-3 agreement | WER | s per clip |", "|---|---|---|---|---|"]
    for variant, r in results.items():
        lines.append(f"| {variant} | {r['top1']:.3f} | {r['top3']:.3f} | {r['wer']:.3f} | {r['seconds']:.2f} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=0, help="only the first N queries (0: all)")
    parser.add_argument("--variants", default="plain,hotwords,hotwords+correct",
                        help=f"comma-separated, of: {', '.join(ALL_VARIANTS)}")
    parser.add_argument("--vocabulary-size", type=int, default=2000, help="Eywa.vocabulary(N), as the bot")
    parser.add_argument("--data-dir", type=Path, help="reuse an index here (built if missing)")
    parser.add_argument("--show-misses", action="store_true", help="print each transcript whose top result differs")
    args = parser.parse_args()
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    unknown = sorted(set(variants) - set(ALL_VARIANTS))
    if unknown:
        parser.error(f"unknown variants {unknown}; choose from {ALL_VARIANTS}")
    if shutil.which("flite") is None:
        print("flite is missing: apt-get install flite", file=sys.stderr)
        return 1
    os.environ["EYWA_NOW"] = NOW
    sys.path.insert(0, str(ROOT))
    queries = load_queries()
    if args.limit > 0:
        queries = queries[: args.limit]
    with tempfile.TemporaryDirectory(prefix="eywa-voice-") as tmp:
        work = Path(tmp)
        data_dir = args.data_dir or work / "data"
        if not (data_dir / "index.sqlite3").exists():
            build_index(data_dir)
        results = run(data_dir, work, queries, variants, args.vocabulary_size, args.show_misses)
        audio, seconds, decoding = time_five_seconds(work, args.vocabulary_size, data_dir)
    print(f"\ncommits.tsv: {len(queries)} queries spoken by flite awb, now={NOW}, days_back={DAYS_BACK}, "
          f"vocabulary={args.vocabulary_size}, {os.cpu_count()} cores")
    print(table(results))
    print(f"\n{audio:.1f} s of speech: transcribed (tiny.en, hotwords) in {seconds:.2f} s, "
          f"OGG decoded in {decoding * 1000:.0f} ms (median of 5)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
