"""Recall: a query typed as /recall words or as plain text, and the More button under its results."""

from __future__ import annotations

from typing import TYPE_CHECKING

from telegram import Update
from telegram.ext import ContextTypes

from eywa.bot.handlers import buttons
from eywa.bot.render import esc
from eywa.core.index.bot_state import Page

if TYPE_CHECKING:
    from eywa.bot.app import EywaBot
    from eywa.core.api import HandoffRecord

Ctx = ContextTypes.DEFAULT_TYPE
QUERY_SHOWN = 200  # characters of a query quoted back; a pasted page would not fit a message


class Recall:
    def __init__(self, bot: EywaBot) -> None:
        self.bot = bot

    async def answer(self, chat_id: int, query: str | None, offset: int = 0) -> list[HandoffRecord]:
        """The results of `query` from `offset`, each a handoff with its buttons; the records sent."""
        bot = self.bot
        query = (query or "").strip() or None
        size = bot.settings.retrieval.max_handoffs
        records = bot.eywa.recall(query, offset=offset, max_results=size)
        if not records:
            await bot.say(chat_id, "No more sessions." if offset else "No sessions indexed yet: /ingest reads them.")
            return records
        if query and offset == 0 and all(r.score == 0 for r in records):
            shown = query if len(query) <= QUERY_SHOWN else query[: QUERY_SHOWN - 1] + "…"
            await bot.say(chat_id, f"Nothing matches “{esc(shown)}”; the latest sessions instead:")
        token = bot.save_page(Page(kind="recall", query=query, offset=offset,
                                   session_ids=[r.session_uuid for r in records]))
        more = len(records) >= size
        for index, record in enumerate(records):
            await bot.send_handoff(chat_id, record, bot.buttons(token, index, more=more))
        return records

    async def cmd_recall(self, update: Update, context: Ctx) -> None:
        await self.answer(update.effective_chat.id, " ".join(context.args or []))

    async def on_text(self, update: Update, context: Ctx) -> None:
        await self.answer(update.effective_chat.id, update.effective_message.text)

    async def on_more(self, update: Update, context: Ctx) -> None:
        found = await buttons.pressed_page(self.bot, update)
        if found is None:
            return
        page, _, _ = found
        await buttons.answer(update.callback_query)
        await self.answer(update.effective_chat.id, page.query, page.offset + len(page.session_ids))
