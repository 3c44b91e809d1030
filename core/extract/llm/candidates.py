"""Which sessions the LLM pass sends, and when: those ingest drafted from a kept transcript, with
substance, settled (no new line for `llm.idle_minutes`, or a SessionEnd mark), and not answered already
for the same content (the transcript markdown with the model, trim and prompt version)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from eywa.core.config.settings import Settings
from eywa.core.extract.facts import facts_in
from eywa.core.extract.llm.lifecycle import answered
from eywa.core.extract.llm.prompt import (
    SYSTEM_PROMPT,
    answer_schema,
    content_hash,
    estimate_tokens,
    trim_markdown,
    user_content,
)
from eywa.core.index import llm_tables
from eywa.core.index.llm_tables import ExtractedSession, LLMState
from eywa.core.index.store import Store


@dataclass(frozen=True)
class Candidate:
    session: ExtractedSession
    markdown: str  # the archived transcript
    hash: str
    content: str  # the prompt: the trimmed transcript and its hints
    est_input: int
    facts: list[str] = field(default_factory=list)  # the fact threads ingest found: kept in the answer

    @property
    def session_id(self) -> str:
        return self.session.session_id


@dataclass
class Backlog:
    """The sessions to send, those to put back without a request, and why the others are not sent."""

    candidates: list[Candidate] = field(default_factory=list)
    restore: list[Candidate] = field(default_factory=list)  # answered before: put back with no request
    unchanged: int = 0
    waiting: int = 0
    failed: int = 0
    batched: int = 0


class Candidates:
    """Reads the sessions of one index and their transcripts into candidates for `model`."""

    def __init__(self, store: Store, settings: Settings, model: str, clock: Callable[[], float]) -> None:
        self.store = store
        self.settings = settings
        self.model = model
        self._clock = clock
        self._system_tokens = estimate_tokens(SYSTEM_PROMPT + json.dumps(answer_schema()))

    def sessions(self, ids: Iterable[str] | None = None) -> list[ExtractedSession]:
        return llm_tables.extracted_sessions(self.store.conn, ids)

    def read(self, session: ExtractedSession) -> Candidate | None:
        """The session's prompt and content hash; None when its transcript is not kept."""
        try:
            markdown = (self.settings.archive_dir / session.archive_path).read_text(encoding="utf-8")
        except (FileNotFoundError, UnicodeDecodeError):
            return None
        trim_tokens = self.settings.llm.input_token_limit
        text, abridged = trim_markdown(markdown, trim_tokens)
        facts = facts_in(session.body)
        content = user_content(text, projects=session.projects, candidate_keywords=session.keywords,
                               abridged=abridged, facts=facts)
        return Candidate(session=session, markdown=markdown, hash=content_hash(self.model, trim_tokens, markdown),
                         content=content, est_input=self._system_tokens + estimate_tokens(content), facts=facts)

    def current(self, session_id: str) -> Candidate | None:
        """The session as the index and archive have it now."""
        sessions = self.sessions([session_id])
        return self.read(sessions[0]) if sessions else None

    def settled(self, session: ExtractedSession, ended: set[str]) -> bool:
        """No new line for `llm.idle_minutes` (by the transcript files' mtimes), or a SessionEnd mark."""
        idle_ns = self.settings.llm.idle_minutes * 60 * 1_000_000_000
        return session.session_id in ended or self._clock() * 1e9 - session.newest_mtime_ns >= idle_ns

    def backlog(self, states: dict[str, LLMState]) -> Backlog:
        """Not substance 0, not already extracted from the same content, not failed on it, settled."""
        backlog = Backlog()
        for session in self.sessions():
            if session.substance == 0:
                continue
            cand = self.read(session)
            if cand is None:
                continue
            state = states.get(cand.session_id)
            if answered(state, cand.hash):
                if session.extractor.startswith("llm:"):
                    backlog.unchanged += 1
                else:
                    backlog.restore.append(cand)
            elif state and state.status == "batched":
                backlog.batched += 1
            elif state and state.status == "failed" and state.content_hash == cand.hash:
                backlog.failed += 1
            elif not self.settled(session, set()):
                backlog.waiting += 1
            else:
                backlog.candidates.append(cand)
        return backlog

    def due(self, states: dict[str, LLMState], ids: Iterable[str], ended: set[str]) -> Backlog:
        """Of the due sessions `ids`, those settled: to send, or to put back (answered before a crash)."""
        backlog = Backlog()
        for session in self.sessions(ids):
            if session.substance == 0:
                continue
            if not self.settled(session, ended):
                backlog.waiting += 1
                continue
            cand = self.read(session)
            if cand is None:
                continue
            (backlog.restore if answered(states[cand.session_id], cand.hash) else backlog.candidates).append(cand)
        backlog.candidates.sort(key=lambda c: (c.session.ended_at, c.session_id))
        return backlog
