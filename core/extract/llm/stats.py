"""LLM extraction at a glance, for `eywa stats` and the bot's /status: the backend chosen and why, the
sessions by state, requests, tokens and cost (reads only)."""

from __future__ import annotations

from typing import Any

import orjson

from eywa.core.config.clock import now
from eywa.core.config.settings import Settings
from eywa.core.extract.llm.anthropic_client import cost_usd
from eywa.core.extract.llm.backend import Choice, choose_backend
from eywa.core.index import llm_tables
from eywa.core.index.store import Store


def llm_stats(store: Store, settings: Settings, choice: Choice | None = None) -> dict[str, Any]:
    choice = choice or choose_backend(settings)
    model = {"anthropic": settings.llm.model, "claude-code": settings.llm.claude_code_model}.get(choice.backend, "")
    conn = store.conn
    stats: dict[str, Any] = {"active": choice.active, "backend": choice.backend, "backend_reason": choice.reason,
                             "wanted": settings.llm.backend, "model": model}
    stats["extracted"] = llm_tables.llm_handoff_count(conn)
    if not llm_tables.has_usage(conn):
        return stats
    llm_tables.ensure_tables(conn)  # LLM state an older release wrote (no cost column) reads like today's
    stats["states"] = llm_tables.status_counts(conn)
    stats["requests"], usage = llm_tables.usage_total(conn)
    stats["usage"] = dict(usage.__dict__)
    stats["tokens_today"] = llm_tables.tokens_on(conn, now().date())
    cost = llm_tables.recorded_cost(conn)
    known = True
    for unpriced in llm_tables.unpriced_usage(conn):
        part = cost_usd(unpriced.model, unpriced.usage, batch=unpriced.mode == "batch")
        if part is None:
            known = False
            continue
        cost += part
    stats["cost_usd"] = round(cost, 4) if known else None
    last = store.get_meta("last_llm_report")
    stats["last_run"] = orjson.loads(last) if last else {}
    stats["last_stop"] = store.get_meta("llm_last_stop") or ""
    return stats
