"""Claude Code sessions started from Telegram: the Start button, and the watch that says when one's turn is over."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from telegram import Update
from telegram.ext import ContextTypes, Job

from eywa.bot import render
from eywa.bot.handlers import buttons
from eywa.bot.render import esc
from eywa.core.api import Eywa
from eywa.core.errors import LaunchError, NotFound
from eywa.core.launcher import BackgroundSession

if TYPE_CHECKING:
    from eywa.bot.app import EywaBot
    from eywa.core.api import HandoffRecord

log = logging.getLogger("eywa.bot")
Ctx = ContextTypes.DEFAULT_TYPE


class Sessions:
    def __init__(self, bot: EywaBot) -> None:
        self.bot = bot

    async def on_start(self, update: Update, context: Ctx) -> None:
        pressed = await buttons.pressed_record(self.bot, update)
        if pressed is not None:
            await self.start_session(update.effective_chat.id, pressed[2])

    async def start_session(self, chat_id: int, record: HandoffRecord) -> None:
        """Start: a background Claude Code session on the handoff, watched until its turn is over."""
        bot = self.bot
        if not bot.settings.telegram.start_sessions:  # an old button, or a forged one
            await bot.say(chat_id, "Starting Claude sessions from Telegram is off: set "
                                   "<code>telegram.start_sessions: true</code> in Eywa's config to allow it.")
            return
        try:
            session = await asyncio.to_thread(self._start_in_thread, record.session_id)
        except (LaunchError, NotFound) as exc:
            await bot.say(chat_id, f"Could not start a Claude session: {esc(str(exc))}")
            return
        log.info("started Claude session %s for %s", session.id, record.short_id)
        await bot.say(chat_id, render.session_started_html(session, record))
        bot.state.watch_session(session.id, chat_id)  # kept across a restart of the bot
        self.schedule_watch(session.id, chat_id)

    def schedule_watch(self, short_id: str, chat_id: int) -> Job:
        jobs = self.bot.app.job_queue
        assert jobs is not None
        every = self.bot.settings.telegram.session_poll_seconds
        return jobs.run_repeating(self.job_watch_session, interval=every, first=every, chat_id=chat_id,
                                  data=short_id, name=f"session:{short_id}")

    def _start_in_thread(self, session_id: str) -> BackgroundSession:
        eywa = Eywa(self.bot.settings)  # this thread's own SQLite connection
        try:
            return eywa.start_session(session_id)
        finally:
            eywa.close()

    async def job_watch_session(self, context: Ctx) -> None:
        job = context.job
        session_id, chat_id = str(job.data), job.chat_id  # scheduled with both (watch_session)
        assert chat_id is not None
        try:
            session = await asyncio.to_thread(self.bot.eywa.background_session, session_id)
        except LaunchError as exc:  # looked at again at the next interval
            log.warning("could not look at Claude session %s: %s", session_id, exc)
            return
        if session is not None and not session.finished:
            return
        await self.bot.say(chat_id, render.session_finished_html(session or BackgroundSession(id=session_id)))
        job.schedule_removal()  # only once told: a failed message is sent again at the next interval
        self.bot.state.unwatch_session(session_id)
