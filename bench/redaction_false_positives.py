"""What the redactor replaces on the real corpus, and how fast it runs.

Every JSON string value of every line of every `*.jsonl` under ../shared/corpus (relative to the
project root) goes through `default_redactor().redact`. Secrets there were already replaced upstream
by the word REDACTED, so whatever is redacted now is a false positive unless inspection says it is a
real (or realistic test) secret. Prints the throughput (all values; values of 1,000+ characters;
plain prose, i.e. the text blocks of assistant messages), the count of redactions by kind and samples
with context (`<<...>>` marks the replaced text).

Usage: python bench/redaction_false_positives.py [--samples N] [--kind KIND] [--repeat N]
"""

from __future__ import annotations

import argparse
import collections
import random
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from eywa.core.redaction.scrubber import default_redactor  # noqa: E402
from eywa.core.sources.jsonl import read_records  # noqa: E402
from tests.conftest import json_strings  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus"
_MARKER_START = "[REDACTED:"


def assistant_prose(record: object) -> Iterator[str]:
    """The text blocks of an assistant message: plain prose, mostly without any candidate."""
    if isinstance(record, dict) and record.get("type") == "assistant":
        message = record.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
                yield block["text"]


def corpus_strings(root: Path) -> tuple[list[str], list[str]]:
    """All string values, and the assistant prose among them."""
    values: list[str] = []
    prose: list[str] = []
    for path in sorted(root.rglob("*.jsonl")):
        for record in read_records(path):
            values.extend(json_strings(record))
            prose.extend(assistant_prose(record))
    return values, prose


def throughput(redact: Callable[[str], str], texts: list[str], repeat: int) -> float:
    """Million characters per second, best of `repeat` runs."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for text in texts:
            redact(text)
        best = min(best, time.perf_counter() - start)
    return sum(len(t) for t in texts) / best / 1e6


def redactions(original: str, redacted: str) -> Iterator[tuple[str, str, str, str]]:
    """(kind, replaced text, context before, context after) for each marker in `redacted`.

    Text outside markers is unchanged, so walking both strings in step recovers the replaced parts.
    """
    i = j = 0
    while True:
        k = redacted.find(_MARKER_START, j)
        if k < 0:
            return
        i += k - j
        end = redacted.index("]", k) + 1
        kind = redacted[k + len(_MARKER_START):end - 1]
        # the replaced text runs until the original resumes with what follows the marker
        follow = redacted[end:end + 1]
        nxt = redacted.find(_MARKER_START, end)
        tail = redacted[end:nxt if nxt >= 0 else len(redacted)]
        stop = original.find(tail, i) if tail else len(original)
        if follow == "" and not tail:
            stop = len(original)
        yield kind, original[i:stop], original[max(0, i - 50):i], original[stop:stop + 30]
        i, j = stop, end


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=8, help="samples shown per kind")
    parser.add_argument("--kind", help="show only this kind, with all its distinct samples")
    parser.add_argument("--repeat", type=int, default=3, help="timing runs (best one counts)")
    args = parser.parse_args()

    texts, prose = corpus_strings(CORPUS)
    redactor = default_redactor()
    large = [t for t in texts if len(t) >= 1000]
    print(f"corpus: {len(texts)} string values, {sum(map(len, texts)) / 1e6:.1f} M chars "
          f"({sum(map(len, large)) / 1e6:.1f} M in {len(large)} values of 1,000+ chars; "
          f"{sum(map(len, prose)) / 1e6:.1f} M of assistant prose)")
    print(f"throughput, all values:          {throughput(redactor.redact, texts, args.repeat):6.1f} M chars/s")
    print(f"throughput, values of 1,000+:     {throughput(redactor.redact, large, args.repeat):6.1f} M chars/s")
    print(f"throughput, assistant prose:      {throughput(redactor.redact, prose, args.repeat):6.1f} M chars/s")

    outputs = [redactor.redact(t) for t in texts]
    changed = [(t, o) for t, o in zip(texts, outputs, strict=True) if o != t]

    by_kind: dict[str, list[tuple[str, str, str]]] = collections.defaultdict(list)
    for original, redacted in changed:
        for kind, secret, before, after in redactions(original, redacted):
            by_kind[kind].append((secret, before, after))
    print(f"redactions: {sum(len(v) for v in by_kind.values())} in {len(changed)} values")
    for kind, hits in sorted(by_kind.items(), key=lambda kv: -len(kv[1])):
        distinct = {h[0]: h for h in hits}
        print(f"  {kind:20s} {len(hits):5d}  ({len(distinct)} distinct values)")
    rng = random.Random(0)
    for kind, hits in sorted(by_kind.items()):
        if args.kind and kind != args.kind:
            continue
        distinct = list({h[0]: h for h in hits}.values())
        shown = distinct if args.kind else rng.sample(distinct, min(args.samples, len(distinct)))
        print(f"\n== {kind}")
        for secret, before, after in shown:
            print("   ", repr(before[-40:] + "<<" + secret[:80] + ">>" + after[:25]))


if __name__ == "__main__":
    main()
