"""A session's LLM state and its transitions. `status` is pending (to send), done (Claude's handoff is in
place for `done_hash`), retry (the last attempt fell back; tried again after a pause, MAX_ATTEMPTS in all),
failed (refused, rejected, or out of attempts: only a change of the session or `eywa extract <id>` tries
again) or batched (in a Message Batch not collected yet). The validated answer is stored before the
handoff is written, so a crash anywhere is resumed without a second request. Each API call is one
usage row. The tables and their SQL are core/index/llm_tables.py's."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeGuard

from eywa.core.config.clock import now
from eywa.core.extract.llm.backend import Call
from eywa.core.index import llm_tables
from eywa.core.index.llm_tables import BatchItem, LLMState, StateChange, UsageRow
from eywa.core.index.store import Store

MAX_ATTEMPTS = 3  # a session that fell back this often waits for a change (or `eywa extract <id>`)
FINAL_KINDS = ("refused", "rejected")  # outcomes no retry can change


def answered(state: LLMState | None, content_hash: str) -> TypeGuard[LLMState]:
    """A validated answer is stored for this very content: it is put back, never asked again."""
    return state is not None and bool(state.result) and state.done_hash == content_hash


class LLMStates:
    """The state rows of one index, changed only through the transitions below."""

    def __init__(self, store: Store, clock: Callable[[], float]) -> None:
        self.store = store
        self._clock = clock
        llm_tables.ensure_tables(store.conn)

    def all(self) -> dict[str, LLMState]:
        return llm_tables.states(self.store.conn)

    def of(self, ids: Iterable[str]) -> dict[str, LLMState]:
        return llm_tables.states(self.store.conn, ids)

    def one(self, session_id: str) -> LLMState | None:
        return self.of([session_id]).get(session_id)

    def overwritten(self) -> list[str]:
        """Sessions done by the LLM whose handoff ingest has since redrafted deterministically."""
        return llm_tables.overwritten(self.store.conn)

    def due(self) -> tuple[dict[str, LLMState], list[str]]:
        """Every state, and the sessions to send now: pending, or retry past its pause."""
        states = self.all()
        return states, [uid for uid, s in states.items()
                        if s.status == "pending" or (s.status == "retry" and s.next_attempt_at <= self._clock())]

    def _put(self, session_id: str, change: StateChange) -> None:
        """Inside the caller's transaction, or alone (it then makes its own)."""
        stamp = now().isoformat(timespec="seconds")
        if self.store.conn.in_transaction:
            llm_tables.put_state(self.store.conn, session_id, change, stamp)
        else:
            with self.store.transaction():
                llm_tables.put_state(self.store.conn, session_id, change, stamp)

    def pending(self, session_id: str, *, content_hash: str | None = None, attempts: int | None = None,
                error: str | None = None) -> None:
        self._put(session_id, StateChange("pending", content_hash=content_hash, attempts=attempts,
                                            last_error=error))

    def answer(self, session_id: str, content_hash: str, result: str) -> None:
        """The validated answer, stored before its handoff is written."""
        self._put(session_id, StateChange("pending", content_hash=content_hash, done_hash=content_hash,
                                            result=result))

    def fell_back(self, session_id: str, content_hash: str, kind: str, error: str) -> None:
        """The deterministic handoff stays: tried again after a pause that doubles, or never (final)."""
        state = self.one(session_id)
        attempts = (state.attempts if state else 0) + 1
        final = kind in FINAL_KINDS or attempts >= MAX_ATTEMPTS
        self._put(session_id, StateChange("failed" if final else "retry", content_hash=content_hash,
                                            attempts=attempts, last_error=error,
                                            next_attempt_at=self._clock() + 3600 * 2 ** (attempts - 1)))

    def done(self, session_id: str) -> None:
        """Claude's handoff is in place (inside the transaction that wrote its row)."""
        llm_tables.mark_done(self.store.conn, session_id, now().isoformat(timespec="seconds"))

    def record_calls(self, session_id: str, calls: list[Call], model: str) -> None:
        llm_tables.add_usage(self.store.conn, [
            UsageRow(session_id, c.model or model, c.mode, c.outcome, c.usage, c.cost_usd) for c in calls], now())

    def tokens_today(self) -> int:
        return llm_tables.tokens_on(self.store.conn, now().date())

    # -- Message Batches ------------------------------------------------------------------------------------
    def add_batch(self, batch_id: str, model: str, items: dict[str, BatchItem]) -> None:
        """Record the batch and mark its sessions batched, in one transaction."""
        with self.store.transaction():
            llm_tables.add_batch(self.store.conn, batch_id, now().isoformat(timespec="seconds"), model, items)
            for item in items.values():
                self._put(item.session_id, StateChange("batched", content_hash=item.content_hash,
                                                         batch_id=batch_id))

    def batch_ids(self) -> list[str]:
        """The batches not collected yet, oldest first."""
        return llm_tables.batch_ids(self.store.conn)

    def batch_items(self, batch_id: str) -> dict[str, BatchItem]:
        return llm_tables.batch_items(self.store.conn, batch_id)

    def close_batch(self, batch_id: str) -> None:
        """The batch is collected: forgotten; a session its results did not mention goes back to pending."""
        with self.store.transaction():
            llm_tables.close_batch(self.store.conn, batch_id)
