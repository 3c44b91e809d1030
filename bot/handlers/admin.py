"""Running the bot: /help, /status, /ingest (with its progress), /digest and their schedules, unknown commands."""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import re
from typing import TYPE_CHECKING

from telegram import Update
from telegram.ext import ContextTypes, Job

from eywa.bot import render
from eywa.bot.render import esc
from eywa.bot.send import edit_html, send_html
from eywa.core.api import Digest
from eywa.core.config.clock import now
from eywa.core.errors import IngestError, StoreError

if TYPE_CHECKING:
    from eywa.bot.app import EywaBot

log = logging.getLogger("eywa.bot")
Ctx = ContextTypes.DEFAULT_TYPE
PROGRESS_EVERY = 2.0  # seconds between edits of the /ingest message (Telegram limits edits)
_TIME_RE = re.compile(r"([01]?\d|2[0-3])[:.h]?([0-5]\d)")


class Admin:
    def __init__(self, bot: EywaBot) -> None:
        self.bot = bot

    async def cmd_help(self, update: Update, context: Ctx) -> None:
        await self.bot.say(update.effective_chat.id, render.HELP.replace("{username}", esc(context.bot.username)))

    async def cmd_unknown(self, update: Update, context: Ctx) -> None:
        command = (update.effective_message.text or "").split()[0][:40]
        addressee = command.partition("@")[2]
        if addressee and addressee.lower() != (context.bot.username or "").lower():
            return  # a group command meant for another bot
        await self.bot.say(update.effective_chat.id, f"I do not know {esc(command)}; /help lists what I do.")

    async def cmd_status(self, update: Update, context: Ctx) -> None:
        bot = self.bot
        chat_id = update.effective_chat.id
        job = bot.ingest_job
        next_ingest = job.next_t if job is not None and not job.removed else None
        text = render.status_html(
            bot.eywa.stats(), now=now(), zone=bot.settings.zone, next_ingest=next_ingest,
            ingest_every=bot.settings.telegram.ingest_every_minutes,
            last_scheduled=bot.state.get("scheduled_ingest"), digest_time=self.digest_time_for(chat_id),
        )
        await bot.say(chat_id, text)

    # -- ingest ---------------------------------------------------------------------------------------
    async def cmd_ingest(self, update: Update, context: Ctx) -> None:
        bot = self.bot
        chat_id = update.effective_chat.id
        if bot.ingest_lock.locked():
            await bot.say(chat_id, "An ingest is already running; /status tells when it is done.")
            return
        message = await send_html(bot.app.bot, chat_id, "Ingesting new transcripts…")
        seen = {"done": 0, "total": 0}

        def progress(done: int, total: int, session_id: str) -> None:  # called in the worker thread
            seen.update(done=done, total=total)

        task = asyncio.create_task(bot.run_ingest(progress))
        shown = ""
        while not task.done():
            await asyncio.wait({task}, timeout=PROGRESS_EVERY)
            text = f"Ingesting… {seen['done']}/{seen['total']} sessions"
            if not task.done() and seen["total"] and text != shown:
                await edit_html(bot.app.bot, chat_id, message.message_id, text)
                shown = text
        try:
            report = task.result()
        except (StoreError, IngestError) as exc:  # the machine's state (a full disk...): the message says what to do
            log.error("ingest failed: %s", exc)
            await edit_html(bot.app.bot, chat_id, message.message_id, f"Ingest failed: {esc(str(exc)[:500])}")
            return
        except Exception as exc:
            log.error("ingest failed", exc_info=exc)
            await edit_html(bot.app.bot, chat_id, message.message_id,
                            f"Ingest failed: {esc(type(exc).__name__)}: {esc(str(exc)[:500])}")
            return
        await edit_html(bot.app.bot, chat_id, message.message_id, f"Ingest done: {esc(report.summary())}")

    async def job_ingest(self, context: Ctx) -> None:
        bot = self.bot
        if bot.ingest_lock.locked():
            return
        stamp = f"{now().astimezone(bot.settings.zone):%d %b %H:%M}"
        try:
            report = await bot.run_ingest()
        except (StoreError, IngestError) as exc:
            log.error("scheduled ingest failed: %s", exc)
            await self._scheduled_ingest_failed(f"failed {stamp}: {str(exc)[:300]}", str(exc))
            return
        except Exception as exc:
            log.error("scheduled ingest failed", exc_info=exc)
            await self._scheduled_ingest_failed(f"failed {stamp}: {type(exc).__name__}: {str(exc)[:300]}", None)
            return
        log.info("scheduled ingest: %s", report.summary())
        self._put_state("scheduled_ingest", f"ok {stamp}: {report.sessions_updated} sessions updated")

    async def _scheduled_ingest_failed(self, status: str, tell: str | None) -> None:
        """Record the failure for /status; tell the owners `tell` when the previous run went well, not at
        every interval while the fault lasts."""
        bot = self.bot
        before = bot.state.get("scheduled_ingest") or ""
        self._put_state("scheduled_ingest", status)
        if tell is None or before.startswith("failed"):
            return
        for chat_id in sorted(bot.allowed):  # an owner's private chat has the owner's id
            try:
                await send_html(bot.app.bot, chat_id, f"The scheduled ingest failed: {esc(tell)}")
            except Exception:
                log.warning("could not tell owner %s about the failed ingest", chat_id, exc_info=True)

    def _put_state(self, key: str, value: str) -> None:
        try:
            self.bot.state.put(key, value)
        except StoreError as exc:  # a full disk fails this small write too; the log line stays
            log.warning("could not record %s: %s", key, exc)

    # -- digest ---------------------------------------------------------------------------------------
    async def cmd_digest(self, update: Update, context: Ctx) -> None:
        bot = self.bot
        chat_id = update.effective_chat.id
        arg = (context.args or [""])[0].strip().lower()
        if not arg:
            await self.send_digest(chat_id, scheduled=False)
            return
        if arg in ("off", "stop", "none", "no"):
            bot.state.set_digest(chat_id, "")
            self.schedule_digest(chat_id)
            await bot.say(chat_id, "Daily digest off for this chat; /digest HH:MM turns it on again.")
            return
        match = _TIME_RE.fullmatch(arg)
        if not match:
            await bot.say(chat_id, "Usage: /digest (now), /digest HH:MM (daily, 24-hour clock), /digest off")
            return
        hhmm = f"{int(match.group(1)):02d}:{match.group(2)}"
        bot.state.set_digest(chat_id, hhmm)
        self.schedule_digest(chat_id)
        await bot.say(chat_id, f"Daily digest at {hhmm} ({esc(bot.settings.timezone)}) for this chat; "
                               "nothing is sent on a day without sessions.")

    def digest_time_for(self, chat_id: int) -> str | None:
        bot = self.bot
        stored = bot.state.digest_times()
        if stored.get(chat_id) is not None:
            return stored[chat_id] or None
        # The configured default goes to the owners' private chats (a private chat's id is the user's id).
        return (bot.settings.telegram.digest_time or None) if chat_id in bot.allowed else None

    def schedule_digest(self, chat_id: int) -> Job | None:
        jobs = self.bot.app.job_queue
        assert jobs is not None
        for job in jobs.get_jobs_by_name(f"digest:{chat_id}"):
            job.schedule_removal()
        hhmm = self.digest_time_for(chat_id)
        if not hhmm:
            return None
        hour, minute = (int(part) for part in hhmm.split(":"))
        when = dt.time(hour, minute, tzinfo=self.bot.settings.zone)
        return jobs.run_daily(self.job_digest, when, chat_id=chat_id, name=f"digest:{chat_id}")

    async def job_digest(self, context: Ctx) -> None:
        chat_id = context.job.chat_id
        assert chat_id is not None  # scheduled for a chat (schedule_digest)
        if not self.bot.ingest_lock.locked():
            try:
                await self.bot.run_ingest()  # so the digest includes this morning's sessions
            except Exception as exc:
                log.error("ingest before the digest failed", exc_info=exc)
        await self.send_digest(chat_id, scheduled=True)

    async def send_digest(self, chat_id: int, *, scheduled: bool) -> None:
        bot = self.bot
        zone = bot.settings.zone
        current = now()
        since = bot.state.last_digest(chat_id) or current - dt.timedelta(days=1)
        digest = bot.eywa.digest(since)
        today = current.astimezone(zone).date()  # up to now: a pinned clock meets later sessions
        digest = Digest(since=since, handoffs=[h for h in digest.handoffs if h.date <= today],
                        open_threads=[(h, threads) for h, threads in digest.open_threads if h.date <= today])
        if not digest.handoffs:
            if not scheduled:  # asked for: say so; on schedule, a day without work sends nothing
                await bot.say(chat_id, f"No sessions since {since.astimezone(zone):%a %d %b %H:%M}.")
            return
        blocks = render.digest_blocks(digest, zone)
        await bot.send_blocks(chat_id, blocks, filename=f"digest-{current:%Y-%m-%d}.md")
        bot.state.mark_digest_sent(chat_id, current)
