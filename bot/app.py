"""The Telegram bot: every update passes the allow-list gate, handlers call eywa.core.api, schedules live on
PTB's job queue. `build_application` wires it; `eywa.bot.main` runs it; tests run the same Application
against a fake Bot API server.

Threads: handlers and jobs run on the event loop's thread and share one `Eywa` (reads are
milliseconds); ingest runs in a worker thread with its own `Eywa`, since SQLite connections stay in
the thread that opened them, so the bot keeps answering while it reads transcripts.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import os
import re
import sqlite3
import warnings
from collections.abc import Callable

# PTB 22 returns durations (retry_after, voice.duration) as int with a deprecation warning unless this
# opts in to timedelta, the type they will have (PTB reads it at each access; our code takes both).
os.environ.setdefault("PTB_TIMEDELTA", "true")

from telegram import (
    BotCommand,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    InlineQueryResultArticle,
    InputTextMessageContent,
    Update,
)
from telegram.constants import ChatAction, ParseMode
from telegram.error import NetworkError
from telegram.ext import (
    Application,
    ApplicationBuilder,
    ApplicationHandlerStop,
    CallbackQueryHandler,
    CommandHandler,
    ContextTypes,
    InlineQueryHandler,
    Job,
    MessageHandler,
    TypeHandler,
    filters,
)

from eywa.bot import render
from eywa.bot.render import esc
from eywa.bot.send import call, edit_html, send_document, send_html
from eywa.bot.speech import hearing
from eywa.bot.speech.chat import VoiceChat
from eywa.bot.state import BotState, Page
from eywa.core.api import AmbiguousId, Digest, Eywa, HandoffRecord, NotFound
from eywa.core.claude_sessions import BackgroundSession, LaunchError
from eywa.core.config.clock import now
from eywa.core.config.settings import Settings
from eywa.core.index.store import StoreError
from eywa.core.ingest.run import IngestError, IngestReport, Progress

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
PROGRESS_EVERY = 2.0  # seconds between edits of the /ingest message (Telegram limits edits)
INLINE_CACHE_SECONDS = 10
INLINE_RESULTS = 5
LAST_MAX = 20
QUERY_SHOWN = 200  # characters of a query quoted back; a pasted page would not fit a message
VOCABULARY_SIZE = 2000  # candidates for speech biasing; bot/speech/hearing.py keeps those Whisper may not know
_TIME_RE = re.compile(r"([01]?\d|2[0-3])[:.h]?([0-5]\d)")


class MissingToken(RuntimeError):
    """No bot token configured; the message says how to set one."""


def _seconds(value: int | float | dt.timedelta) -> float:
    return value.total_seconds() if isinstance(value, dt.timedelta) else float(value)


def result_buttons(token: str, index: int, *, more: bool, start: bool = False) -> InlineKeyboardMarkup:
    # Callback data stays tiny ("f:Ab3_x9Qz:0"): Telegram allows 64 bytes, the state is in BotState.
    row = [InlineKeyboardButton("File", callback_data=f"f:{token}:{index}"),
           InlineKeyboardButton("Continue", callback_data=f"c:{token}:{index}")]
    if start:  # telegram.start_sessions: a background Claude Code session on the Continue prompt
        row.append(InlineKeyboardButton("Start", callback_data=f"s:{token}:{index}"))
    if more:
        row.insert(0, InlineKeyboardButton("More", callback_data=f"m:{token}"))
    return InlineKeyboardMarkup([row])


def open_buttons(token: str, count: int) -> InlineKeyboardMarkup:
    buttons = [InlineKeyboardButton(str(i + 1), callback_data=f"o:{token}:{i}") for i in range(count)]
    return InlineKeyboardMarkup([buttons[i : i + 5] for i in range(0, len(buttons), 5)])


class EywaBot:
    def __init__(self, settings: Settings, *, transcriber: hearing.Transcriber | None = None) -> None:
        self.settings = settings
        self.allowed = frozenset(settings.telegram.allowed_user_ids)
        self.eywa = Eywa(settings)  # the event loop's own instance
        self.state = BotState(settings.data_dir / "bot.sqlite3")
        self.transcriber = transcriber or hearing.transcriber(settings)
        self.voice_chat = VoiceChat(self)
        self.ingest_lock = asyncio.Lock()
        self.ingest_job: Job | None = None
        self._app: Application | None = None

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
        app.add_handler(CommandHandler(["start", "help"], self.cmd_help))
        app.add_handler(CommandHandler("recall", self.cmd_recall))
        app.add_handler(CommandHandler("last", self.cmd_last))
        app.add_handler(CommandHandler("show", self.cmd_show))
        app.add_handler(CommandHandler("status", self.cmd_status))
        app.add_handler(CommandHandler("ingest", self.cmd_ingest, block=False))  # long: others go on
        app.add_handler(CommandHandler("digest", self.cmd_digest))
        self.voice_chat.install(app)  # /voice and the "heard:" buttons, before the catch-alls below
        app.add_handler(MessageHandler(filters.COMMAND, self.cmd_unknown))
        app.add_handler(MessageHandler(filters.UpdateType.MESSAGE & filters.VOICE, self.on_voice, block=False))
        app.add_handler(MessageHandler(filters.UpdateType.MESSAGE & filters.TEXT, self.on_text))
        app.add_handler(CallbackQueryHandler(self.on_button))
        app.add_handler(InlineQueryHandler(self.on_inline))
        app.add_error_handler(self.on_error)

    async def post_init(self, app: Application) -> None:
        if not self.allowed:
            log.warning("telegram.allowed_user_ids is empty: the bot answers nobody. Set it, e.g. "
                        "EYWA_TELEGRAM__ALLOWED_USER_IDS='[123456789]'; ignored users' ids are logged")
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
            self.ingest_job = jobs.run_repeating(self.job_ingest, interval=every * 60, first=FIRST_INGEST_DELAY,
                                                 name="ingest")
        for chat_id in sorted(self.allowed | set(self.state.digest_times())):
            self.schedule_digest(chat_id)
        for short_id, chat_id in self.state.watched_sessions():
            if not self.app.job_queue.get_jobs_by_name(f"session:{short_id}"):
                self.schedule_watch(short_id, chat_id)

    def digest_time_for(self, chat_id: int) -> str | None:
        stored = self.state.digest_times()
        if stored.get(chat_id) is not None:
            return stored[chat_id] or None
        # The configured default goes to the owners' private chats (a private chat's id is the user's id).
        return (self.settings.telegram.digest_time or None) if chat_id in self.allowed else None

    def schedule_digest(self, chat_id: int) -> Job | None:
        jobs = self.app.job_queue
        assert jobs is not None
        for job in jobs.get_jobs_by_name(f"digest:{chat_id}"):
            job.schedule_removal()
        hhmm = self.digest_time_for(chat_id)
        if not hhmm:
            return None
        hour, minute = (int(part) for part in hhmm.split(":"))
        when = dt.time(hour, minute, tzinfo=self.settings.zone)
        return jobs.run_daily(self.job_digest, when, chat_id=chat_id, name=f"digest:{chat_id}")

    # -- the gate -------------------------------------------------------------------------------------
    async def gate(self, update: Update, context: Ctx) -> None:
        user = update.effective_user
        if user is not None and user.id in self.allowed:
            return
        log.info("ignored an update from %s (not in telegram.allowed_user_ids)",
                 f"user id {user.id}" if user else "no user")
        raise ApplicationHandlerStop

    # -- helpers --------------------------------------------------------------------------------------
    def buttons(self, token: str, index: int, *, more: bool) -> InlineKeyboardMarkup:
        return result_buttons(token, index, more=more, start=self.settings.telegram.start_sessions)

    def _page(self, page: Page) -> str:
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

    async def answer_recall(self, chat_id: int, query: str | None, offset: int = 0) -> list[HandoffRecord]:
        query = (query or "").strip() or None
        size = self.settings.retrieval.max_handoffs
        records = self.eywa.recall(query, offset=offset, max_results=size)
        if not records:
            await self.say(chat_id, "No more sessions." if offset else "No sessions indexed yet: /ingest reads them.")
            return records
        if query and offset == 0 and all(r.score == 0 for r in records):
            shown = query if len(query) <= QUERY_SHOWN else query[: QUERY_SHOWN - 1] + "…"
            await self.say(chat_id, f"Nothing matches “{esc(shown)}”; the latest sessions instead:")
        token = self._page(Page(kind="recall", query=query, offset=offset,
                                session_ids=[r.session_uuid for r in records]))
        more = len(records) >= size
        for index, record in enumerate(records):
            await self.send_handoff(chat_id, record, self.buttons(token, index, more=more))
        return records

    # -- commands -------------------------------------------------------------------------------------
    async def cmd_help(self, update: Update, context: Ctx) -> None:
        await self.say(update.effective_chat.id, render.HELP.replace("{username}", esc(context.bot.username)))

    async def cmd_unknown(self, update: Update, context: Ctx) -> None:
        command = (update.effective_message.text or "").split()[0][:40]
        addressee = command.partition("@")[2]
        if addressee and addressee.lower() != (context.bot.username or "").lower():
            return  # a group command meant for another bot
        await self.say(update.effective_chat.id, f"I do not know {esc(command)}; /help lists what I do.")

    async def cmd_recall(self, update: Update, context: Ctx) -> None:
        await self.answer_recall(update.effective_chat.id, " ".join(context.args or []))

    async def on_text(self, update: Update, context: Ctx) -> None:
        await self.answer_recall(update.effective_chat.id, update.effective_message.text)

    async def cmd_last(self, update: Update, context: Ctx) -> None:
        chat_id = update.effective_chat.id
        count = 5
        if context.args:
            if not context.args[0].isdigit():
                await self.say(chat_id, "Usage: /last, /last N (a list of N), /last 1 (the newest in full)")
                return
            count = max(1, min(int(context.args[0]), LAST_MAX))
        records = self.eywa.last(count)
        if not records:
            await self.say(chat_id, "No sessions indexed yet: /ingest reads them.")
            return
        token = self._page(Page(kind="list", session_ids=[r.session_uuid for r in records]))
        if count == 1:
            await self.send_handoff(chat_id, records[0], self.buttons(token, 0, more=False))
            return
        listing = render.last_list(records, f"Latest {len(records)} sessions")
        await self.send_blocks(chat_id, [listing], filename="latest.md", markup=open_buttons(token, len(records)))

    async def cmd_show(self, update: Update, context: Ctx) -> None:
        chat_id = update.effective_chat.id
        if not context.args:
            await self.say(chat_id, "Usage: /show <i>id</i> (a full id or its first characters; /last lists ids)")
            return
        wanted = context.args[0]
        try:
            record = self.eywa.show(wanted)
        except AmbiguousId as exc:
            token = self._page(Page(kind="list", session_ids=[c.session_uuid for c in exc.candidates]))
            listing = render.last_list(exc.candidates, f"“{wanted}” matches several sessions; pick one")
            await self.send_blocks(chat_id, [listing], filename="matches.md",
                                   markup=open_buttons(token, len(exc.candidates)))
            return
        except NotFound:
            await self.say(chat_id, f"No session has the id “{esc(wanted[:80])}”; /last lists recent ones.")
            return
        token = self._page(Page(kind="list", session_ids=[record.session_uuid]))
        await self.send_handoff(chat_id, record, self.buttons(token, 0, more=False))

    async def cmd_status(self, update: Update, context: Ctx) -> None:
        chat_id = update.effective_chat.id
        next_ingest = self.ingest_job.next_t if self.ingest_job is not None and not self.ingest_job.removed else None
        text = render.status_html(
            self.eywa.stats(), now=now(), zone=self.settings.zone, next_ingest=next_ingest,
            ingest_every=self.settings.telegram.ingest_every_minutes,
            last_scheduled=self.state.get("scheduled_ingest"), digest_time=self.digest_time_for(chat_id),
        )
        await self.say(chat_id, text)

    async def cmd_ingest(self, update: Update, context: Ctx) -> None:
        chat_id = update.effective_chat.id
        if self.ingest_lock.locked():
            await self.say(chat_id, "An ingest is already running; /status tells when it is done.")
            return
        message = await send_html(self.app.bot, chat_id, "Ingesting new transcripts…")
        seen = {"done": 0, "total": 0}

        def progress(done: int, total: int, session_id: str) -> None:  # called in the worker thread
            seen.update(done=done, total=total)

        task = asyncio.create_task(self.run_ingest(progress))
        shown = ""
        while not task.done():
            await asyncio.wait({task}, timeout=PROGRESS_EVERY)
            text = f"Ingesting… {seen['done']}/{seen['total']} sessions"
            if not task.done() and seen["total"] and text != shown:
                await edit_html(self.app.bot, chat_id, message.message_id, text)
                shown = text
        try:
            report = task.result()
        except (StoreError, IngestError) as exc:  # the machine's state (a full disk...): the message says what to do
            log.error("ingest failed: %s", exc)
            await edit_html(self.app.bot, chat_id, message.message_id, f"Ingest failed: {esc(str(exc)[:500])}")
            return
        except Exception as exc:
            log.error("ingest failed", exc_info=exc)
            await edit_html(self.app.bot, chat_id, message.message_id,
                            f"Ingest failed: {esc(type(exc).__name__)}: {esc(str(exc)[:500])}")
            return
        await edit_html(self.app.bot, chat_id, message.message_id, f"Ingest done: {esc(report.summary())}")

    async def cmd_digest(self, update: Update, context: Ctx) -> None:
        chat_id = update.effective_chat.id
        arg = (context.args or [""])[0].strip().lower()
        if not arg:
            await self.send_digest(chat_id, scheduled=False)
            return
        if arg in ("off", "stop", "none", "no"):
            self.state.set_digest(chat_id, "")
            self.schedule_digest(chat_id)
            await self.say(chat_id, "Daily digest off for this chat; /digest HH:MM turns it on again.")
            return
        match = _TIME_RE.fullmatch(arg)
        if not match:
            await self.say(chat_id, "Usage: /digest (now), /digest HH:MM (daily, 24-hour clock), /digest off")
            return
        hhmm = f"{int(match.group(1)):02d}:{match.group(2)}"
        self.state.set_digest(chat_id, hhmm)
        self.schedule_digest(chat_id)
        await self.say(chat_id, f"Daily digest at {hhmm} ({esc(self.settings.timezone)}) for this chat; "
                                "nothing is sent on a day without sessions.")

    # -- voice, buttons, inline ---------------------------------------------------------------------
    async def on_voice(self, update: Update, context: Ctx) -> None:
        chat_id = update.effective_chat.id
        voice = update.effective_message.voice
        with warnings.catch_warnings():  # PTB 22 warns that the int form of durations is deprecated
            warnings.simplefilter("ignore")
            seconds = _seconds(voice.duration)
        limit = self.settings.voice.max_seconds
        if seconds > limit:  # checked before downloading: a long note costs bandwidth and minutes of CPU
            await self.say(chat_id, f"That voice note is {seconds:.0f} s long; I listen to {limit} s at most. "
                                    "Send a shorter one, or type the words.")
            return
        await call(lambda: context.bot.send_chat_action(chat_id, ChatAction.TYPING), "sendChatAction")
        file = await call(lambda: context.bot.get_file(voice.file_id), "getFile")
        data = bytes(await call(lambda: file.download_as_bytearray(), "file download"))
        try:
            hotwords = self.eywa.vocabulary(VOCABULARY_SIZE)
        except StoreError:
            hotwords = []
        try:
            heard = await asyncio.to_thread(self.transcriber, data, hotwords)
        except hearing.VoiceFailed as exc:
            await self.say(chat_id, esc(str(exc)))
            return
        heard.text = heard.text.strip()
        if not heard.text:
            await self.say(chat_id, "I heard no words in that voice note; try again closer to the phone, "
                                    "or type the words.")
            return
        await self.voice_chat.answer(chat_id, heard)

    async def on_button(self, update: Update, context: Ctx) -> None:
        query = update.callback_query
        kind, _, rest = (query.data or "").partition(":")
        token, _, index = rest.partition(":")
        page = self.state.load_page(token) if token else None
        if page is None:
            await call(lambda: query.answer("This button has expired; ask again."), "answerCallbackQuery")
            return
        chat_id = update.effective_chat.id
        if kind == "m":
            await call(lambda: query.answer(), "answerCallbackQuery")
            await self.answer_recall(chat_id, page.query, page.offset + len(page.session_ids))
            return
        try:
            record = self.eywa.show(page.session_ids[int(index)])
        except (ValueError, IndexError, NotFound):
            await call(lambda: query.answer("That session is no longer indexed."), "answerCallbackQuery")
            return
        await call(lambda: query.answer(), "answerCallbackQuery")
        if kind == "f":
            await send_document(self.app.bot, chat_id, render.handoff_markdown(record).encode(),
                                render.handoff_filename(record), f"<b>{esc(record.headline)}</b>")
        elif kind == "c":
            await self.say(chat_id, render.continue_html(record))
        elif kind == "o":
            await self.send_handoff(chat_id, record, self.buttons(token, int(index), more=False))
        elif kind == "s":
            await self.start_session(chat_id, record)

    # -- Claude Code sessions started from here ------------------------------------------------------------
    async def start_session(self, chat_id: int, record: HandoffRecord) -> None:
        """Start: a background Claude Code session on the handoff, watched until its turn is over."""
        if not self.settings.telegram.start_sessions:  # an old button, or a forged one
            await self.say(chat_id, "Starting Claude sessions from Telegram is off: set "
                                    "<code>telegram.start_sessions: true</code> in Eywa's config to allow it.")
            return
        try:
            session = await asyncio.to_thread(self._start_in_thread, record.session_uuid)
        except (LaunchError, NotFound) as exc:
            await self.say(chat_id, f"Could not start a Claude session: {esc(str(exc))}")
            return
        log.info("started Claude session %s for %s", session.id, record.short_id)
        await self.say(chat_id, render.session_started_html(session, record))
        self.state.watch_session(session.id, chat_id)  # kept across a restart of the bot
        self.schedule_watch(session.id, chat_id)

    def schedule_watch(self, short_id: str, chat_id: int) -> Job:
        jobs = self.app.job_queue
        assert jobs is not None
        every = self.settings.telegram.session_poll_seconds
        return jobs.run_repeating(self.job_watch_session, interval=every, first=every, chat_id=chat_id,
                                  data=short_id, name=f"session:{short_id}")

    def _start_in_thread(self, session_uuid: str) -> BackgroundSession:
        eywa = Eywa(self.settings)  # this thread's own SQLite connection
        try:
            return eywa.start_session(session_uuid)
        finally:
            eywa.close()

    async def job_watch_session(self, context: Ctx) -> None:
        job = context.job
        try:
            session = await asyncio.to_thread(self.eywa.background_session, job.data)
        except LaunchError as exc:  # looked at again at the next interval
            log.warning("could not look at Claude session %s: %s", job.data, exc)
            return
        if session is not None and not session.finished:
            return
        await self.say(job.chat_id, render.session_finished_html(session or BackgroundSession(id=job.data)))
        job.schedule_removal()  # only once told: a failed message is sent again at the next interval
        self.state.unwatch_session(job.data)

    async def on_inline(self, update: Update, context: Ctx) -> None:
        inline_query = update.inline_query
        try:
            records = self.eywa.recall(inline_query.query.strip() or None, max_results=INLINE_RESULTS)
        except StoreError:
            records = []
        results = [
            InlineQueryResultArticle(
                id=record.session_uuid[:64],
                title=record.headline,
                description=f"{record.date:%d %b %Y} · {render.projects_label(record)}",
                input_message_content=InputTextMessageContent(render.continue_html(record),
                                                              parse_mode=ParseMode.HTML),
            )
            for record in records
        ]
        await call(lambda: inline_query.answer(results, cache_time=INLINE_CACHE_SECONDS, is_personal=True),
                   "answerInlineQuery")

    # -- ingest and digest ----------------------------------------------------------------------------
    async def run_ingest(self, progress: Progress | None = None) -> IngestReport:
        async with self.ingest_lock:
            return await asyncio.to_thread(self._ingest_in_thread, progress)

    def _ingest_in_thread(self, progress: Progress | None) -> IngestReport:
        eywa = Eywa(self.settings)  # this thread's own SQLite connection
        try:
            return eywa.ingest(progress=progress)
        finally:
            eywa.close()

    async def job_ingest(self, context: Ctx) -> None:
        if self.ingest_lock.locked():
            return
        stamp = f"{now().astimezone(self.settings.zone):%d %b %H:%M}"
        try:
            report = await self.run_ingest()
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
        before = self.state.get("scheduled_ingest") or ""
        self._put_state("scheduled_ingest", status)
        if tell is None or before.startswith("failed"):
            return
        for chat_id in sorted(self.allowed):  # an owner's private chat has the owner's id
            try:
                await send_html(self.app.bot, chat_id, f"The scheduled ingest failed: {esc(tell)}")
            except Exception:
                log.warning("could not tell owner %s about the failed ingest", chat_id, exc_info=True)

    def _put_state(self, key: str, value: str) -> None:
        try:
            self.state.put(key, value)
        except sqlite3.Error as exc:  # a full disk fails this small write too; the log line stays
            log.warning("could not record %s: %s", key, exc)

    async def job_digest(self, context: Ctx) -> None:
        chat_id = context.job.chat_id
        if not self.ingest_lock.locked():
            try:
                await self.run_ingest()  # so the digest includes this morning's sessions
            except Exception as exc:
                log.error("ingest before the digest failed", exc_info=exc)
        await self.send_digest(chat_id, scheduled=True)

    async def send_digest(self, chat_id: int, *, scheduled: bool) -> None:
        current = now()
        since = self.state.last_digest(chat_id) or current - dt.timedelta(days=1)
        digest = self.eywa.digest(since)
        today = current.astimezone(self.settings.zone).date()  # up to now: a pinned clock meets later sessions
        digest = Digest(since=since, handoffs=[h for h in digest.handoffs if h.date <= today],
                        open_threads=[(h, threads) for h, threads in digest.open_threads if h.date <= today])
        if not digest.handoffs:
            if not scheduled:  # asked for: say so; on schedule, a day without work sends nothing
                await self.say(chat_id, f"No sessions since {since.astimezone(self.settings.zone):%a %d %b %H:%M}.")
            return
        blocks = render.digest_blocks(digest, self.settings.zone)
        await self.send_blocks(chat_id, blocks, filename=f"digest-{current:%Y-%m-%d}.md")
        self.state.mark_digest_sent(chat_id, current)

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
        raise MissingToken("no Telegram bot token: create a bot with @BotFather, then set TELEGRAM_BOT_TOKEN "
                           "(or telegram.token in the config file)")
    eywa_bot = EywaBot(settings, transcriber=transcriber)
    builder = (ApplicationBuilder().token(token)
               .base_url(settings.telegram.api_base_url).base_file_url(settings.telegram.file_base_url)
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
