"""Recall: a query typed as /recall words or as plain text, and the More button under its results.

Time words and a leading "7d" are the query's own (core/retrieval/time_words.py); a page keeps the query and
the day it was asked, so More counts them from that day still.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from telegram import Update
from telegram.ext import ContextTypes

from eywa.bot import render
from eywa.bot.handlers import buttons
from eywa.core.index.bot_store import Page

if TYPE_CHECKING:
    from eywa.bot.app import EywaBot
    from eywa.core.api import Results

Ctx = ContextTypes.DEFAULT_TYPE


class Recall:
    def __init__(self, bot: EywaBot) -> None:
        self.bot = bot

    async def answer(self, chat_id: int, query: str | None, offset: int = 0,
                     asked_on: dt.date | None = None) -> Results:
        """The results of `query` from `offset` (asked on `asked_on`, default today), each a handoff with its
        buttons, under a line saying which days were understood or that nothing matched; what was found."""
        bot = self.bot
        query = (query or "").strip() or None
        size = bot.settings.retrieval.max_handoffs
        results = bot.eywa.recall(query, offset=offset, max_results=size, asked_on=asked_on)
        if not results:
            await bot.say(chat_id, "No more sessions." if offset else render.nothing_found(results))
            return results
        note = render.recall_note(results) if offset == 0 else None
        if note:
            await bot.say(chat_id, note)
        token = bot.save_page(Page(kind="recall", query=query, asked_on=results.today, offset=offset,
                                   session_ids=[r.session_id for r in results]))
        more = len(results) >= size
        for index, record in enumerate(results):
            await bot.send_handoff(chat_id, record, bot.buttons(token, index, more=more))
        return results

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
        await self.answer(update.effective_chat.id, page.query, page.offset + len(page.session_ids), page.asked_on)
