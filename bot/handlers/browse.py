"""Browsing: /last, /show, and the buttons under a handoff (File, Continue, Forget) or a list (its numbers)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from telegram import Update
from telegram.ext import ContextTypes

from eywa.bot import render
from eywa.bot.handlers import buttons
from eywa.bot.render import esc
from eywa.bot.send import edit_html, send_document
from eywa.core.api import Eywa
from eywa.core.errors import AmbiguousId, NotFound
from eywa.core.index.bot_store import Page

if TYPE_CHECKING:
    from eywa.bot.app import EywaBot

Ctx = ContextTypes.DEFAULT_TYPE
LAST_MAX = 20


class Browse:
    def __init__(self, bot: EywaBot) -> None:
        self.bot = bot

    async def cmd_last(self, update: Update, context: Ctx) -> None:
        bot = self.bot
        chat_id = update.effective_chat.id
        count = 5
        if context.args:
            if not context.args[0].isdigit():
                await bot.say(chat_id, "Usage: /last, /last N (a list of N), /last 1 (the newest in full)")
                return
            count = max(1, min(int(context.args[0]), LAST_MAX))
        records = bot.eywa.last(count)
        if not records:
            await bot.say(chat_id, "No sessions indexed yet: /ingest reads them.")
            return
        token = bot.save_page(Page(kind="list", session_ids=[r.session_id for r in records]))
        if count == 1:
            await bot.send_handoff(chat_id, records[0], bot.buttons(token, 0, more=False))
            return
        listing = render.last_list(records, f"Latest {len(records)} sessions")
        await bot.send_blocks(chat_id, [listing], filename="latest.md",
                              markup=buttons.open_buttons(token, len(records)))

    async def cmd_show(self, update: Update, context: Ctx) -> None:
        bot = self.bot
        chat_id = update.effective_chat.id
        if not context.args:
            await bot.say(chat_id, "Usage: /show <i>id</i> (a full id or its first characters; /last lists ids)")
            return
        wanted = context.args[0]
        try:
            record = bot.eywa.show(wanted)
        except AmbiguousId as exc:
            token = bot.save_page(Page(kind="list", session_ids=[c.session_id for c in exc.candidates]))
            listing = render.last_list(exc.candidates, f"“{wanted}” matches several sessions; pick one")
            await bot.send_blocks(chat_id, [listing], filename="matches.md",
                                  markup=buttons.open_buttons(token, len(exc.candidates)))
            return
        except NotFound:
            await bot.say(chat_id, f"No session has the id “{esc(wanted[:80])}”; /last lists recent ones.")
            return
        token = bot.save_page(Page(kind="list", session_ids=[record.session_id]))
        await bot.send_handoff(chat_id, record, bot.buttons(token, 0, more=False))

    async def on_file(self, update: Update, context: Ctx) -> None:
        pressed = await buttons.pressed_record(self.bot, update)
        if pressed is None:
            return
        _, _, record = pressed
        await send_document(self.bot.app.bot, update.effective_chat.id, render.handoff_markdown(record).encode(),
                            render.handoff_filename(record), f"<b>{esc(record.headline)}</b>")

    async def on_continue(self, update: Update, context: Ctx) -> None:
        pressed = await buttons.pressed_record(self.bot, update)
        if pressed is not None:
            await self.bot.say(update.effective_chat.id, render.continue_html(pressed[2]))

    async def on_open(self, update: Update, context: Ctx) -> None:
        pressed = await buttons.pressed_record(self.bot, update)
        if pressed is None:
            return
        token, index, record = pressed
        await self.bot.send_handoff(update.effective_chat.id, record, self.bot.buttons(token, index, more=False))

    async def on_forget(self, update: Update, context: Ctx) -> None:
        """Forget: asks first, naming the session and what goes."""
        pressed = await buttons.pressed_record(self.bot, update)
        if pressed is None:
            return
        token, index, record = pressed
        await self.bot.say(update.effective_chat.id, render.forget_question_html(record),
                           buttons.forget_buttons(token, index))

    async def on_forget_yes(self, update: Update, context: Ctx) -> None:
        pressed = await buttons.pressed_record(self.bot, update)
        if pressed is None:
            return
        record = pressed[2]
        async with self.bot.ingest_lock:  # never while an ingest writes the same session
            await asyncio.to_thread(self._forget_in_thread, record.session_id)
        message = update.callback_query.message
        await edit_html(self.bot.app.bot, message.chat.id, message.message_id, render.forgotten_html(record))

    async def on_forget_no(self, update: Update, context: Ctx) -> None:
        await buttons.answer(update.callback_query, "Kept.")
        message = update.callback_query.message
        await edit_html(self.bot.app.bot, message.chat.id, message.message_id, "Kept: nothing was forgotten.")

    def _forget_in_thread(self, session_id: str) -> None:
        eywa = Eywa(self.bot.settings)  # this thread's own SQLite connection
        try:
            eywa.forget([session_id])
        finally:
            eywa.close()
