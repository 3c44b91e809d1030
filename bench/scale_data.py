"""The data the scale benchmarks read, made on the fly in a temporary folder and never kept.

- Synthetic handoffs in the original eywa-mcp's format (`write_handoffs`): its front matter (8-character
  `session_id`, `date`, `duration`, `model`, `headline`, `projects`, `keywords`, `substance`) and sections, one
  file per session under YYYY/MM/DD/, as its users would import them. Words, projects and keywords are drawn
  Zipf-like (a few dominate, as in real use); keywords from a space of millions of lowercase-hyphenated
  terms, so that the vocabulary keeps growing with the number of handoffs (Heaps' law) instead of saturating.
  Dates span three years up to NOW, recent-heavy.
- Transcripts cloned from the shared trees (`make_scaled_corpus`): every UUID rewritten (the session's id
  names the file), timestamps shifted back by whole months, and words of the prose varied with
  clone-specific endings, so that no two clones have the same text and the index's vocabulary grows.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import math
import os
import random
import re
import uuid
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"
NOW = dt.date(2026, 12, 2)  # "today" for every query the scale benchmark times (EYWA_NOW)

# Consonant-vowel syllables: a rank written in base 100 is a pronounceable word, unambiguous to read back.
_SYLLABLES = [c + v for c in "bdfgklmnprstvz" + "chjwxy" for v in "aeiou"]
WORDS = 60_000  # distinct words of headlines and bullets
KEYWORD_SPACE = 10_000_000  # the ranks keywords are drawn from
PROJECTS = 500
_MODELS = ["claude-opus-4-6", "claude-sonnet-4-5", "claude-opus-4-5-20251101", "claude-haiku-4-5"]


def word(rank: int) -> str:
    """A distinct word for each rank; frequent ranks are short words. Each syllable is permuted by the one
    after it (for each value of that one, a bijection: 37 is prime to 100), so that words do not share their
    first syllable."""
    digits, number = [], rank + len(_SYLLABLES)
    while number:
        number, digit = divmod(number, len(_SYLLABLES))
        digits.append(digit)
    syllables = [_SYLLABLES[(digit * 37 + (digits[place - 1] * 13 if place else 0) + 11 * place + 3) % 100]
                 for place, digit in enumerate(digits)]
    return "".join(reversed(syllables))


def _zipf(rng: random.Random, n: int) -> int:
    """A rank in [0, n) with probability about 1/(rank+1): log-uniform."""
    return min(n - 1, int(math.exp(rng.random() * math.log(n))) - 1)


_WORD_LIST: list[str] = []
_LOG_WORDS = math.log(WORDS)


def _words(rng: random.Random, count: int) -> list[str]:
    """`count` words drawn Zipf-like (what `word(_zipf(rng, WORDS))` draws, without its cost)."""
    if not _WORD_LIST:
        _WORD_LIST.extend(word(rank) for rank in range(WORDS))
    draw, exp, words = rng.random, math.exp, _WORD_LIST
    return [words[int(exp(draw() * _LOG_WORDS)) - 1] for _ in range(count)]  # below WORDS - 1: draw() < 1


def keyword(rank: int) -> str:
    """The keyword of a rank: a word, or two or three words joined by hyphens, the words themselves
    chosen Zipf-like by a hash of the rank (frequent words make many keywords, as in real use)."""
    digest = hashlib.blake2b(rank.to_bytes(8, "little"), digest_size=12).digest()
    draws = [int.from_bytes(digest[i:i + 4], "little") / 2**32 for i in (0, 4, 8)]
    parts = 1 if rank < 3000 else 2 if draws[2] < 0.8 else 3
    words = [word(int(math.exp(u * _LOG_WORDS)) - 1) for u in draws[:parts]]
    return "-".join(words) if parts > 1 else word(rank)


def project(rank: int) -> str:
    return word(rank) + ("-" + word(rank * 7 % 997) if rank % 3 == 0 else "")


def short_id(index: int) -> str:
    """8 hex digits, distinct for every index below 2**32 (an odd multiplier is a bijection modulo 2**32)."""
    return f"{index * 2654435761 % 2**32:08x}"


def _sentence(rng: random.Random, words: int) -> str:
    text = " ".join(_words(rng, words))
    return text[:1].upper() + text[1:]


def handoff_text(index: int, seed: int = 29) -> tuple[str, str]:
    """(path relative to the handoffs folder, file text) of synthetic handoff `index`: the same for the same
    index and seed, whatever else is generated."""
    rng = random.Random(index * 1_000_003 + seed)
    days = 1 + _zipf(rng, 1095) if rng.random() < 0.4 else rng.randint(0, 1095)
    date = NOW - dt.timedelta(days=days)
    sid = short_id(index)
    minutes = rng.randint(1, 300)
    duration = f"{minutes // 60}h {minutes % 60}m" if minutes >= 60 else f"{minutes}m"
    headline = _sentence(rng, rng.randint(5, 9))
    projects = [project(_zipf(rng, PROJECTS))]
    keywords = list(dict.fromkeys(keyword(_zipf(rng, KEYWORD_SPACE)) for _ in range(rng.randint(5, 7))))
    substance = rng.choice((1, 2, 2, 2, 2, 0))
    lines = ["---", f"session_id: {sid}", f"date: {date.isoformat()}", f"duration: {duration}",
             f"model: {rng.choice(_MODELS)}", f"headline: {headline}", f"projects: [{', '.join(projects)}]",
             f"keywords: [{', '.join(keywords)}]", f"substance: {substance}", "---", f"# {headline}", ""]
    if substance == 0:
        lines.append("No meaningful work.")
    else:
        lines += ["## What Happened", *(f"- {_sentence(rng, rng.randint(8, 16))}" for _ in range(rng.randint(2, 5))),
                  "", "## Insights", *(f"- **{' '.join(_words(rng, 2))}** -- "
                                       f"{_sentence(rng, rng.randint(8, 14))}" for _ in range(rng.randint(1, 3))), ""]
        if substance == 2:
            lines += ["## Key Files", *(f"- `src/{'/'.join(_words(rng, 2))}.py`"
                                        for _ in range(rng.randint(1, 5))), ""]
        threads = [f"- {_sentence(rng, rng.randint(6, 12))}" for _ in range(rng.randint(0, 3))]
        lines += ["## Open Threads", *(threads or ["None."])]
    return f"{date:%Y/%m/%d}/{sid}.md", "\n".join(lines) + "\n"


def write_handoffs(folder: Path, start: int, stop: int) -> int:
    """Handoffs `start` .. `stop - 1` written under `folder`; the bytes written."""
    written = 0
    made: set[Path] = set()
    for index in range(start, stop):
        relpath, text = handoff_text(index)
        path = folder / relpath
        if path.parent not in made:
            path.parent.mkdir(parents=True, exist_ok=True)
            made.add(path.parent)
        data = text.encode("utf-8")
        path.write_bytes(data)
        written += len(data)
    return written


def queries(count: int, seed: int = 5) -> list[str]:
    """Queries of 2-3 words drawn as the handoffs' words are, with a keyword's first word among them half the
    time (what a user remembers of a session)."""
    rng = random.Random(seed)
    found = []
    for _ in range(count):
        words = [word(_zipf(rng, WORDS)) for _ in range(rng.randint(1, 2))]
        if rng.random() < 0.5:
            words.append(keyword(_zipf(rng, KEYWORD_SPACE)).split("-")[0])
        else:
            words.append(word(_zipf(rng, WORDS)))
        found.append(" ".join(words))
    return found


# -- transcripts --------------------------------------------------------------------------------------------

# A UUID as a JSON value starts after a quote: a pattern that starts with it is scanned for at C speed.
_UUID_RE = re.compile(rb'"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})')
_MONTH_RE = re.compile(rb'("timestamp":\s*")(\d{4})-(\d{2})')
# A word of prose: between spaces, which compact JSON has only inside strings, so a change keeps every line valid.
_PROSE_WORD_RE = re.compile(rb"(?<= )[a-z]{5,12}(?= )")
VARY_EVERY = 2000  # bytes of transcript per word given a clone's own ending
_ENDINGS = 200_000  # the endings drawn from (Zipf-like: common ones recur across clones)


def _shift(data: bytes, months: int) -> bytes:
    def move(match: re.Match[bytes]) -> bytes:
        total = int(match.group(2)) * 12 + int(match.group(3)) - 1 + months
        return match.group(1) + b"%04d-%02d" % (total // 12, total % 12 + 1)

    return _MONTH_RE.sub(move, data)


def _new_ids(data: bytes, session: bytes, new_session: bytes, index: int) -> bytes:
    salt = index.to_bytes(8, "little")
    made = {session: new_session}

    def new(match: re.Match[bytes]) -> bytes:
        old = match.group(1)
        found = made.get(old)
        if found is None:
            found = made[old] = str(uuid.UUID(bytes=hashlib.blake2b(old + salt, digest_size=16).digest(),
                                              version=4)).encode()
        return b'"' + found

    return _UUID_RE.sub(new, data)


def _varied(data: bytes, index: int) -> bytes:
    """Every VARY_EVERY bytes, the next word of prose with an ending of this clone's."""
    rng = random.Random(index)
    parts, at = [], 0
    for position in range(0, len(data), VARY_EVERY):
        match = _PROSE_WORD_RE.search(data, max(position, at))
        if match is None:
            break
        parts += [data[at:match.end()], word(_zipf(rng, _ENDINGS)).encode()]
        at = match.end()
    parts.append(data[at:])
    return b"".join(parts)


def clone(source: Path, index: int) -> tuple[str, bytes]:
    """(new session id, text) of clone `index` of a main transcript."""
    new_id = str(uuid.UUID(int=index + 1, version=4))
    data = _new_ids(source.read_bytes(), source.stem.encode(), new_id.encode(), index)
    return new_id, _varied(_shift(data, months=-(index % 24)), index)


def main_transcripts(source: Path = CORPUS) -> list[Path]:
    """The main transcripts of the shared trees (no subagent files), in a fixed order."""
    return sorted(p for p in source.rglob("*.jsonl") if "subagents" not in p.parts
                  and not p.name.startswith("agent-") and p.stat().st_size > 0)


def make_scaled_corpus(dest: Path, files: int, megabytes: float, source: Path = CORPUS, start: int = 0,
                       ) -> tuple[int, int]:
    """Clones of the real main transcripts in `dest` until about `files` files and `megabytes` MB: small
    sessions most of the time, so that both targets are met together. Clones `start` .. `start + files - 1`
    (a later call with another `start` adds new sessions). (files, bytes) written."""
    sources = main_transcripts(source)
    budget = megabytes * 1_000_000
    average = budget / files
    small = [p for p in sources if p.stat().st_size <= average]
    large = [p for p in sources if p.stat().st_size > average]
    written = count = 0
    for number in range(files):
        index = start + number
        want_large = large and (budget - written) / (files - number) > average
        pool = large if want_large else small
        new_id, data = clone(pool[index % len(pool)], index)
        target = dest / f"-home-bench-project{index % 40}" / f"{new_id}.jsonl"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        written += len(data)
        count += 1
    return count, written


def du(path: Path) -> int:
    """Bytes of disk the files under `path` (or the file `path`) take: allocated blocks, as `du` counts."""
    if path.is_file():
        return path.stat().st_blocks * 512
    total = 0
    for folder, _, names in os.walk(path):
        for name in names:
            try:
                total += os.lstat(os.path.join(folder, name)).st_blocks * 512
            except OSError:
                pass
    return total


def files_under(path: Path) -> Iterator[Path]:
    for folder, _, names in os.walk(path):
        for name in names:
            yield Path(folder, name)
