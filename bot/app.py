"""The Telegram bot's wiring: every update passes the allow-list gate first, then the handler of its intent
(bot/handlers/: recall, browse, inline, admin, voice, sessions; buttons by their callback data's prefix).
Handlers call eywa.core.api; schedules live on PTB's job queue. `build_application` wires it; `eywa.bot.main`
runs it; tests run the same Application against a fake Bot API server.

Threads: handlers and jobs run on the event loop's thread and share one `Eywa` (reads are
milliseconds); ingest runs in a worker thread with its own `Eywa`, since SQLite connections stay in
the thread that opened them, so the bot keeps answering while it reads transcripts.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import os
from collections.abc import Callable

# PTB 22 returns durations (retry_after, voice.duration) as int with a deprecation warning unless this
# opts in to timedelta, the type they will have (PTB reads it at each access; our code takes both).
os.environ.setdefault("PTB_TIMEDELTA", "true")

from telegram import BotCommand, InlineKeyboardMarkup, LinkPreviewOptions, Update
from telegram.constants import ParseMode
from telegram.error import NetworkError
from telegram.ext import (
    Application,
    ApplicationBuilder,
    ApplicationHandlerStop,
    CallbackQueryHandler,
    CommandHandler,
    ContextTypes,
    Defaults,
    InlineQueryHandler,
    Job,
    MessageHandler,
    TypeHandler,
    filters,
)

from eywa.bot import render
from eywa.bot.handlers import buttons
from eywa.bot.handlers.admin import Admin
from eywa.bot.handlers.browse import Browse
from eywa.bot.handlers.inline import Inline
from eywa.bot.handlers.recall import Recall
from eywa.bot.handlers.sessions import Sessions
from eywa.bot.handlers.voice import VoiceChat
from eywa.bot.render import esc
from eywa.bot.send import call, rate_limiter, send_document, send_html
from eywa.bot.speech import hearing
from eywa.core.api import Eywa, HandoffRecord
from eywa.core.config.clock import now
from eywa.core.config.settings import Settings
from eywa.core.errors import EywaError, StoreError
from eywa.core.index.bot_store import BotState, Page
from eywa.core.ingest.run import IngestReport, Progress

log = logging.getLogger("eywa.bot")
Ctx = ContextTypes.DEFAULT_TYPE

COMMANDS = [
    ("recall", "find past sessions: /recall words"),
    ("last", "the latest sessions: /last [N]"),
    ("show", "one handoff: /show id"),
    ("status", "what is indexed; last and next ingest"),
    ("ingest", "read new transcripts now"),
    ("digest", "digest now; /digest HH:MM or /digest off"),
    ("voice", "spoken answers to voice notes: /voice on|off"),
    ("help", "what I can do"),
]
ALLOWED_UPDATES = Update.ALL_TYPES
FIRST_INGEST_DELAY = 10.0  # seconds after start: the index is fresh soon, but start-up is not slowed
# Every message is HTML without link previews unless a call says otherwise (send.py's plain-text fallback).
DEFAULTS = Defaults(parse_mode=ParseMode.HTML, link_preview_options=LinkPreviewOptions(is_disabled=True))


class MissingToken(EywaError, RuntimeError):
    """No bot token configured; the message says how to set one."""


class EywaBot:
    """What the handlers share: settings, the loop's `Eywa`, the bot state, the ways to reply; and the wiring."""

    def __init__(self, settings: Settings, *, transcriber: hearing.Transcriber | None = None) -> None:
        self.settings = settings
        self.allowed = frozenset(settings.telegram.allowed_user_ids)
        self.eywa = Eywa(settings)  # the event loop's own instance
        self.state = BotState(settings.data_dir / "bot.sqlite3")
        self.transcriber = transcriber or hearing.transcriber(settings)
        self.ingest_lock = asyncio.Lock()
        self.ingest_job: Job | None = None
        self._app: Application | None = None
        self.recall = Recall(self)
        self.browse = Browse(self)
        self.inline = Inline(self)
        self.admin = Admin(self)
        self.sessions = Sessions(self)
        self.voice_chat = VoiceChat(self)

    @property
    def app(self) -> Application:
        assert self._app is not None, "install() first"
        return self._app

    # -- wiring ---------------------------------------------------------------------------------------
    def install(self, app: Application) -> None:
        self._app = app
        app.bot_data["eywa_bot"] = self
        # Group -1 runs first for every update; raising ApplicationHandlerStop there ends it. filters.User
        # would not cover button presses or inline queries, this covers everything.
        app.add_handler(TypeHandler(Update, self.gate), group=-1)
        admin, browse, recall, voice = self.admin, self.browse, self.recall, self.voice_chat
        app.add_handler(CommandHandler(["start", "help"], admin.cmd_help))
        app.add_handler(CommandHandler("recall", recall.cmd_recall))
        app.add_handler(CommandHandler("last", browse.cmd_last))
        app.add_handler(CommandHandler("show", browse.cmd_show))
        app.add_handler(CommandHandler("status", admin.cmd_status))
        app.add_handler(CommandHandler("ingest", admin.cmd_ingest, block=False))  # long: others go on
        app.add_handler(CommandHandler("digest", admin.cmd_digest))
        app.add_handler(CommandHandler("voice", voice.cmd_voice))
        app.add_handler(MessageHandler(filters.COMMAND, admin.cmd_unknown))  # after every command
        app.add_handler(MessageHandler(filters.UpdateType.MESSAGE & filters.VOICE, voice.on_voice, block=False))
        app.add_handler(MessageHandler(filters.UpdateType.MESSAGE & filters.TEXT, recall.on_text))
        for kind, callback in ((buttons.MORE, recall.on_more), (buttons.FILE, browse.on_file),
                               (buttons.CONTINUE, browse.on_continue), (buttons.OPEN, browse.on_open),
                               (buttons.START, self.sessions.on_start), (buttons.READING, voice.on_reading),
                               (buttons.FORGET, browse.on_forget), (buttons.FORGET_YES, browse.on_forget_yes),
                               (buttons.FORGET_NO, browse.on_forget_no)):
            app.add_handler(CallbackQueryHandler(callback, pattern=buttons.pattern(kind)))
        app.add_handler(CallbackQueryHandler(buttons.expired))  # data no handler above knows
        app.add_handler(InlineQueryHandler(self.inline.on_inline))
        app.add_error_handler(self.on_error)

    async def post_init(self, app: Application) -> None:
        if not self.allowed:
            log.warning("telegram.allowed_user_ids is empty: the bot answers nobody. Run `eywa-bot setup` to "
                        "pair your phone, or set EYWA_TELEGRAM__ALLOWED_USER_IDS='[123456789]'; ignored users' ids "
                        "are logged")
        else:
            log.info("answering Telegram user ids %s only", sorted(self.allowed))
        try:
            await call(lambda: app.bot.set_my_commands([BotCommand(c, d) for c, d in COMMANDS]), "setMyCommands")
        except Exception:  # a menu is a convenience: never a reason not to start
            log.warning("could not set the command menu", exc_info=True)
        self.rebuild_schedules()
        choice = await asyncio.to_thread(self.eywa.llm_choice)
        log.info("LLM extraction: %s (%s)", choice.backend, choice.reason)
        log.info("eywa-bot @%s is running", app.bot.username)

    async def post_shutdown(self, app: Application) -> None:
        self.eywa.close()
        self.state.close()

    def rebuild_schedules(self) -> None:
        jobs = self.app.job_queue
        assert jobs is not None, "python-telegram-bot[job-queue] is required"
        every = self.settings.telegram.ingest_every_minutes
        for job in jobs.get_jobs_by_name("ingest"):
            job.schedule_removal()
        self.ingest_job = None
        if every > 0:
            self.ingest_job = jobs.run_repeating(self.admin.job_ingest, interval=every * 60,
                                                 first=FIRST_INGEST_DELAY, name="ingest")
        for chat_id in sorted(self.allowed | set(self.state.digest_times())):
            self.admin.schedule_digest(chat_id)
        for short_id, chat_id in self.state.watched_sessions():
            if not jobs.get_jobs_by_name(f"session:{short_id}"):
                self.sessions.schedule_watch(short_id, chat_id)

    # -- the gate -------------------------------------------------------------------------------------
    async def gate(self, update: Update, context: Ctx) -> None:
        user = update.effective_user
        if user is not None and user.id in self.allowed:
            return
        log.info("ignored an update from %s (not in telegram.allowed_user_ids)",
                 f"user id {user.id}" if user else "no user")
        raise ApplicationHandlerStop

    # -- what handlers share --------------------------------------------------------------------------
    def buttons(self, token: str, index: int, *, more: bool) -> InlineKeyboardMarkup:
        return buttons.result_buttons(token, index, more=more, start=self.settings.telegram.start_sessions)

    def save_page(self, page: Page) -> str:
        return self.state.save_page(page, now())

    async def say(self, chat_id: int, text_html: str, markup: InlineKeyboardMarkup | None = None) -> None:
        await send_html(self.app.bot, chat_id, text_html, markup)

    async def send_blocks(self, chat_id: int, blocks: list[str], *, filename: str,
                          markup: InlineKeyboardMarkup | None = None, caption: str = "") -> None:
        """Blocks as messages split under the limit, or as one .md document when that takes too many."""
        chunks = render.pack(blocks)
        if len(chunks) > render.MAX_MESSAGES:
            text = "\n\n".join(render.to_plain(block) for block in blocks) + "\n"
            await send_document(self.app.bot, chat_id, text.encode(), filename, caption or blocks[0], markup)
            return
        for index, chunk in enumerate(chunks):
            await self.say(chat_id, chunk, markup if index == len(chunks) - 1 else None)

    async def send_handoff(self, chat_id: int, record: HandoffRecord, markup: InlineKeyboardMarkup) -> None:
        chunks = render.handoff_chunks(record)
        if len(chunks) > render.MAX_MESSAGES:
            await send_document(self.app.bot, chat_id, render.handoff_markdown(record).encode(),
                                render.handoff_filename(record), render.header(record), markup)
            return
        for index, chunk in enumerate(chunks):
            await self.say(chat_id, chunk, markup if index == len(chunks) - 1 else None)

    async def run_ingest(self, progress: Progress | None = None) -> IngestReport:
        async with self.ingest_lock:
            return await asyncio.to_thread(self._ingest_in_thread, progress)

    def _ingest_in_thread(self, progress: Progress | None) -> IngestReport:
        eywa = Eywa(self.settings)  # this thread's own SQLite connection
        try:
            return eywa.ingest(progress=progress)
        finally:
            eywa.close()

    # -- errors ---------------------------------------------------------------------------------------
    async def on_error(self, update: object, context: Ctx) -> None:
        error = context.error
        if update is None and isinstance(error, NetworkError):
            log.warning("Telegram unreachable while polling: %s", type(error).__name__)
            return
        owner_chat = None
        if isinstance(update, Update) and update.effective_chat and update.effective_user \
                and update.effective_user.id in self.allowed:
            owner_chat = update.effective_chat.id
        if isinstance(error, StoreError) and owner_chat is not None:
            if not self.settings.db_path.exists():
                await send_html(self.app.bot, owner_chat, "No index yet: /ingest reads your transcripts "
                                                          "(the first time takes a minute).")
                return
            log.error("handling an update failed: %s", error)
            await send_html(self.app.bot, owner_chat, esc(str(error)))  # its message says what to do
            return
        log.error("handling an update failed", exc_info=error)
        if owner_chat is None:
            return
        try:
            await send_html(self.app.bot, owner_chat, f"Sorry, that failed ({esc(type(error).__name__)}); "
                                                      "the details are in the bot's log.")
        except Exception:
            log.warning("could not tell the owner about the failure", exc_info=True)


def build_application(settings: Settings, *, transcriber: hearing.Transcriber | None = None,
                      configure: Callable[[ApplicationBuilder], ApplicationBuilder] | None = None) -> Application:
    """The bot's Application, handlers installed; raises MissingToken without a token."""
    token = settings.telegram.token.get_secret_value().strip()
    if not token:
        raise MissingToken("no Telegram bot token: run `eywa-bot setup` (or set TELEGRAM_BOT_TOKEN to the token "
                           "@BotFather gave)")
    eywa_bot = EywaBot(settings, transcriber=transcriber)
    builder = (ApplicationBuilder().token(token)
               .base_url(settings.telegram.api_base_url).base_file_url(settings.telegram.file_base_url)
               .defaults(DEFAULTS).rate_limiter(rate_limiter())
               .post_init(eywa_bot.post_init).post_shutdown(eywa_bot.post_shutdown))
    if configure is not None:
        builder = configure(builder)
    app = builder.build()
    eywa_bot.install(app)
    return app


async def start(app: Application, *, poll_timeout: float = 10.0) -> None:
    """What `run_polling` does before it blocks, for embedding (tests, benchmarks)."""
    await app.initialize()
    if app.post_init is not None:
        await app.post_init(app)
    await app.updater.start_polling(timeout=dt.timedelta(seconds=poll_timeout), poll_interval=0.0,
                                    allowed_updates=ALLOWED_UPDATES)
    await app.start()


async def stop(app: Application) -> None:
    if app.updater.running:
        await app.updater.stop()
    if app.running:
        await app.stop()
    await app.shutdown()
    if app.post_shutdown is not None:
        await app.post_shutdown(app)
