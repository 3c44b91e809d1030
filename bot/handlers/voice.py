"""Voice queries: a voice note transcribed (bot/speech/), then "heard: ..." with buttons for other readings
(bot/speech/readings.py finds them; a tap recalls that reading), the results (the recall handler's answer), and,
where the chat wants it, a spoken answer (bot/speech/answer.py); `/voice on|off`.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import time
import warnings
from typing import TYPE_CHECKING

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Update
from telegram.constants import ChatAction
from telegram.ext import ContextTypes

from eywa.bot.handlers import buttons
from eywa.bot.render import esc
from eywa.bot.send import call
from eywa.bot.speech import answer as spoken_answer
from eywa.bot.speech import hearing as speech
from eywa.bot.speech import readings as spoken
from eywa.bot.speech.hearing import Hearing
from eywa.core.errors import StoreError
from eywa.core.index.bot_store import Page

if TYPE_CHECKING:
    from eywa.bot.app import EywaBot
    from eywa.core.api import Results

log = logging.getLogger("eywa.bot")
READING_PREFIX = f"{buttons.READING}:"  # callback data "h:<token>:<index>", the readings kept in BotState
VOCABULARY_SIZE = 2000  # candidates for speech biasing; bot/speech/hearing.py keeps those Whisper may not know


def _seconds(value: int | float | dt.timedelta) -> float:
    return value.total_seconds() if isinstance(value, dt.timedelta) else float(value)


def readings_buttons(token: str, readings: list[spoken.Reading]) -> InlineKeyboardMarkup | None:
    if not readings:
        return None
    return InlineKeyboardMarkup([[InlineKeyboardButton(r.label, callback_data=f"{READING_PREFIX}{token}:{i}")]
                                 for i, r in enumerate(readings)])


class VoiceChat:
    def __init__(self, bot: EywaBot) -> None:
        self.bot = bot

    async def on_voice(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        bot = self.bot
        chat_id = update.effective_chat.id
        voice = update.effective_message.voice
        with warnings.catch_warnings():  # PTB 22 warns that the int form of durations is deprecated
            warnings.simplefilter("ignore")
            seconds = _seconds(voice.duration)
        limit = bot.settings.voice.max_seconds
        if seconds > limit:  # checked before downloading: a long note costs bandwidth and minutes of CPU
            await bot.say(chat_id, f"That voice note is {seconds:.0f} s long; I listen to {limit} s at most. "
                                   "Send a shorter one, or type the words.")
            return
        await call(lambda: context.bot.send_chat_action(chat_id, ChatAction.TYPING), "sendChatAction")
        file = await call(lambda: context.bot.get_file(voice.file_id), "getFile")
        data = bytes(await call(lambda: file.download_as_bytearray(), "file download"))
        try:
            hotwords = bot.eywa.vocabulary(VOCABULARY_SIZE)
        except StoreError:
            hotwords = []
        try:
            heard = await asyncio.to_thread(bot.transcriber, data, hotwords)
        except speech.VoiceFailed as exc:
            await bot.say(chat_id, esc(str(exc)))
            return
        heard.text = heard.text.strip()
        if not heard.text:
            await bot.say(chat_id, "I heard no words in that voice note; try again closer to the phone, "
                                   "or type the words.")
            return
        await self.answer(chat_id, heard)

    def wants_voice(self, chat_id: int) -> bool:
        chosen = self.bot.state.spoken_answers(chat_id)
        return self.bot.settings.voice.spoken_answers if chosen is None else chosen

    async def answer(self, chat_id: int, hearing: Hearing) -> None:
        """Answer what a voice note said: "heard: ...", other readings as buttons, results, a voice note."""
        speak = self.wants_voice(chat_id)  # the choice in force when the query came, whatever follows
        eywa = self.bot.eywa
        readings = spoken.readings(hearing, eywa)
        markup = None
        if readings:
            token = self.bot.save_page(Page(kind="readings", session_ids=[], readings=[r.text for r in readings]))
            markup = readings_buttons(token, readings)
        await self.bot.say(chat_id, f"heard: <i>{esc(hearing.text)}</i>", markup)
        await self.recall(chat_id, hearing.text, speak)

    async def recall(self, chat_id: int, heard: str, speak: bool) -> None:
        results = await self.bot.recall.answer(chat_id, heard)
        if results and speak:
            await self.speak(chat_id, results)

    async def speak(self, chat_id: int, results: Results) -> None:
        started = time.perf_counter()
        voice_settings = self.bot.settings.voice
        note = await asyncio.to_thread(spoken_answer.synthesize, spoken_answer.answer_text(results), voice_settings)
        if note is None:
            return
        data, seconds = note
        bot = self.bot.app.bot
        await call(lambda: bot.send_voice(chat_id, voice=data, duration=max(1, round(seconds)),
                                          filename="answer.ogg"), "sendVoice")
        log.debug("spoken answer (%.1f s of speech) sent %.2f s after the text", seconds, time.perf_counter() - started)

    async def on_reading(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        found = await buttons.pressed_page(self.bot, update)
        if found is None:
            return
        page, _, index = found
        if page.kind != "readings" or not index.isdigit() or int(index) >= len(page.readings):
            await buttons.expired(update)
            return
        await buttons.answer(update.callback_query)
        chat_id = update.effective_chat.id
        reading = page.readings[int(index)]
        speak = self.wants_voice(chat_id)
        await self.bot.say(chat_id, f"heard: <i>{esc(reading)}</i>")
        await self.recall(chat_id, reading, speak)

    async def cmd_voice(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        chat_id = update.effective_chat.id
        arg = (context.args or [""])[0].strip().lower()
        if arg in ("on", "off"):
            self.bot.state.set_spoken_answers(chat_id, arg == "on")
        elif arg:
            await self.bot.say(chat_id, "Usage: /voice on (a spoken answer after each voice query), /voice off")
            return
        if not self.wants_voice(chat_id):
            await self.bot.say(chat_id, "Spoken answers are off for this chat: answers to voice notes are text "
                                        "only. /voice on turns them on.")
            return
        missing = "" if spoken_answer.synthesizer(self.bot.settings.voice) else \
            f" (but {esc(self.bot.settings.voice.synthesizer)} is not installed here, so text only for now)"
        await self.bot.say(chat_id, "Spoken answers are on for this chat: after a voice query a short voice note "
                                    f"follows the text{missing}. /voice off turns them off.")
