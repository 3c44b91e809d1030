"""Inline mode: @bot words in any chat offers the matching sessions' Continue prompts."""

from __future__ import annotations

from typing import TYPE_CHECKING

from telegram import InlineQueryResultArticle, InputTextMessageContent, Update
from telegram.ext import ContextTypes

from eywa.bot import render
from eywa.bot.send import call
from eywa.core.errors import StoreError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from eywa.bot.app import EywaBot
    from eywa.core.retrieval.recall import HandoffRecord

INLINE_CACHE_SECONDS = 10
INLINE_RESULTS = 5


class Inline:
    def __init__(self, bot: EywaBot) -> None:
        self.bot = bot

    async def on_inline(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        inline_query = update.inline_query
        records: Sequence[HandoffRecord] = []
        latest = ""
        try:
            found = self.bot.eywa.recall(inline_query.query.strip() or None, max_results=INLINE_RESULTS)
            records, latest = found, "no match, latest · " if found.no_match else ""
        except StoreError:
            pass
        results = [  # HTML: the Application's Defaults apply to the message content too
            InlineQueryResultArticle(
                id=record.session_id[:64],
                title=record.headline,
                description=f"{latest}{record.date:%d %b %Y} · {render.projects_label(record)}",
                input_message_content=InputTextMessageContent(render.continue_html(record)),
            )
            for record in records
        ]
        await call(lambda: inline_query.answer(results, cache_time=INLINE_CACHE_SECONDS, is_personal=True),
                   "answerInlineQuery")
