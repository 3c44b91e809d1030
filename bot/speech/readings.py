"""The other readings of a voice note that the "heard:" buttons offer: the index words that sound or
are spelled like what was heard.

Speech recognition turns words it does not know into words it does ("gitleaks" -> "giant leeks",
"EventPayload" -> "event poll load", "openclaw" -> "open claw"). `matches` finds, for each heard word
and each run of two or three heard words, the index words Whisper may not know (`eywa.bot.speech.transcribe.unfamiliar`)
that read alike: by spelling (rapidfuzz's normalized Indel similarity) and by sound (jellyfish's
Metaphone keys compared the same way), the two averaged. A reading with such a word in place of an
uncertain one is offered when it finds another session; a tap recalls it. Offered, not added to every
spoken query: that lost queries (bench/RESULTS.md). A typed query never comes here.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from eywa.core.retrieval.query_tokens import STOPWORDS

if TYPE_CHECKING:
    from eywa.bot.speech.hearing import Hearing
    from eywa.core.api import Eywa

VOCABULARY_SIZE = 20_000  # every single word `Eywa.vocabulary` offers (the corpus has about 2,000)
# An index word matches when (spelling + sound) / 2 reaches this, on rapidfuzz's 0-100 scale; chosen
# on bench/voice_quality.py (every voice, both sets).
THRESHOLD = 80.0
MIN_KEY = 4  # shorter heard keys ("jth") match too many words
MAX_RUN = 3  # "event poll load" -> "eventpayload"
UNCERTAIN = 0.5  # a word Whisper gives less probability than this may have been another word
MAX_READINGS = 3
MAX_CANDIDATES = 12  # readings tried (one recall each) before giving up on finding three


@dataclass(frozen=True)
class Lexicon:
    """The index words a spoken query is matched against, with their Metaphone keys."""

    words: tuple[str, ...]
    sounds: tuple[str, ...]
    known: frozenset[str]


@dataclass(frozen=True)
class Match:
    """Heard tokens [start, start + length) read like the index word `word`."""

    word: str
    score: float
    start: int
    length: int


@dataclass(frozen=True)
class Reading:
    """Another reading of a voice note: the query it makes and a short label for its button."""

    text: str
    label: str


@functools.lru_cache(maxsize=4)
def lexicon(words: tuple[str, ...]) -> Lexicon:
    import jellyfish

    kept = tuple(w for w in words if w.isalpha() and len(w) >= MIN_KEY)
    return Lexicon(kept, tuple(jellyfish.metaphone(w) for w in kept), frozenset(words))


def index_lexicon(eywa: Eywa) -> Lexicon:
    """The lexicon of `eywa`'s index now (its vocabulary is cached per index version)."""
    from eywa.bot.speech.transcribe import unfamiliar

    return lexicon(tuple(unfamiliar(eywa.vocabulary(VOCABULARY_SIZE, min_sessions=1))))


def tokens_of(text: str) -> list[str]:
    return [w for w in re.split(r"[^a-z0-9]+", text.lower()) if w]


def matches(tokens: list[str], lex: Lexicon) -> list[Match]:
    """Every run of up to MAX_RUN heard tokens that reads like an index word not already heard."""
    import jellyfish
    from rapidfuzz import fuzz, process

    from eywa.core.retrieval.spoken import common_words

    common = common_words()
    found: list[Match] = []
    for n in range(1, MAX_RUN + 1):
        for i in range(len(tokens) - n + 1):
            run = tokens[i : i + n]
            # A single heard word Whisper knows was most likely said; runs of them may be one word it
            # does not ("giant leeks").
            if any(t in STOPWORDS for t in run) or (n == 1 and (run[0] in lex.known or run[0] in common)):
                continue
            key = "".join(run)
            if len(key) < MIN_KEY:
                continue
            spelled = process.extract(key, lex.words, scorer=fuzz.ratio, limit=None,
                                      score_cutoff=THRESHOLD * 2 - 100)
            sound = jellyfish.metaphone(key) if spelled else ""
            for word, spelling, index in spelled:
                score = (spelling + fuzz.ratio(sound, lex.sounds[index])) / 2
                if score >= THRESHOLD and not any(_same_stem(word, t) for t in tokens):
                    found.append(Match(word, score, i, n))
    return sorted(found, key=lambda m: (-m.score, m.start))


def _same_stem(a: str, b: str) -> bool:
    """"agents" for "agent", "entireio" for "entire", "goreleaser" for "releaser": the heard word
    already searches it, and the index word would only weigh it twice."""
    short, long = sorted((a, b), key=len)
    extra = len(long) - len(short)
    return a == b or (long.startswith(short) and extra <= 3) or (long.endswith(short) and extra <= 2)


def readings(hearing: Hearing, eywa: Eywa) -> list[Reading]:
    """Up to MAX_READINGS other readings of a voice note, each of whose first result differs from that
    of `hearing.text` and of the readings before it: what was heard before the correction (when it
    changed words), then each uncertain word (Whisper's probability under UNCERTAIN, or a word the
    correction wrote) read as an index word that sounds like it, or left out."""
    tokens = tokens_of(hearing.text)
    uncertain = {w for w, p in _words(hearing) if p < UNCERTAIN} | (set(tokens) - set(tokens_of(hearing.raw)))
    candidates: list[Reading] = []
    if hearing.raw.strip() and tokens_of(hearing.raw) != tokens:
        candidates.append(Reading(hearing.raw.strip(), _label(tokens_of(hearing.raw), tokens)))
    for m in matches(tokens, index_lexicon(eywa)):
        if any(t in uncertain for t in tokens[m.start : m.start + m.length]):
            text = " ".join([*tokens[: m.start], m.word, *tokens[m.start + m.length :]])
            candidates.append(Reading(text, m.word))
    for i, token in enumerate(tokens):
        if token in uncertain and token not in STOPWORDS and len(tokens) > 2:
            candidates.append(Reading(" ".join(tokens[:i] + tokens[i + 1 :]), f"without “{token}”"))
    seen = {_first(eywa, hearing.text)}
    chosen: list[Reading] = []
    for reading in list(dict.fromkeys(candidates))[:MAX_CANDIDATES]:
        first = _first(eywa, reading.text)
        if first is not None and first not in seen:
            seen.add(first)
            chosen.append(reading)
            if len(chosen) == MAX_READINGS:
                break
    return chosen


def _words(hearing: Hearing) -> list[tuple[str, float]]:
    return [(t, p) for w, p in hearing.words for t in tokens_of(w)]


def _first(eywa: Eywa, text: str) -> str | None:
    found = eywa.recall(text, max_results=1)
    return found[0].session_id if found and found[0].match else None


def _label(words: list[str], other: list[str]) -> str:
    """The words of `words` that `other` lacks, as a button label."""
    different = [w for w in words if w not in other]
    return " ".join(different)[:40] or " ".join(words)[:40]
