"""Talking to Telegram without dying of it: PTB's rate limiter keeps under Telegram's rates and waits out
flood limits, `call` retries network drops, and what Telegram refuses is degraded (HTML it cannot parse goes
as plain text, a text too long as a file). HTML without link previews is the Application's default
(eywa.bot.app.DEFAULTS); plain text says so.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

from telegram import Bot, InlineKeyboardMarkup, InputFile, Message
from telegram.error import BadRequest, NetworkError, TimedOut
from telegram.ext import AIORateLimiter

from eywa.bot.render import CAPTION_BUDGET, esc, to_plain, utf16_len

log = logging.getLogger("eywa.bot")

T = TypeVar("T")
ATTEMPTS = 4


def rate_limiter() -> AIORateLimiter:
    """The Application's limiter: Telegram's rates kept (30 messages a second, 20 a minute in a group) and a
    flood limit (429 with retry_after) waited out, ATTEMPTS tries in all."""
    return AIORateLimiter(max_retries=ATTEMPTS - 1)


async def call(factory: Callable[[], Awaitable[T]], what: str = "request") -> T:
    """Run one Bot API call, retrying network drops (flood limits are the rate limiter's); BadRequest is final."""
    for attempt in range(1, ATTEMPTS + 1):
        try:
            return await factory()
        except BadRequest:  # a subclass of NetworkError: what Telegram refused is refused again
            raise
        except (TimedOut, NetworkError) as exc:
            if attempt == ATTEMPTS:
                raise
            log.warning("%s: %s, retry %d", what, type(exc).__name__, attempt)
            await asyncio.sleep(0.5 * 2 ** (attempt - 1))
    raise AssertionError("unreachable")


def _is(exc: BadRequest, *phrases: str) -> bool:
    text = str(exc).lower()
    return any(phrase in text for phrase in phrases)


async def send_document(bot: Bot, chat_id: int, data: bytes, filename: str, caption_html: str = "",
                        markup: InlineKeyboardMarkup | None = None) -> Message:
    caption = caption_html if utf16_len(caption_html) <= CAPTION_BUDGET else esc(to_plain(caption_html)[:300])
    return await call(lambda: bot.send_document(
        chat_id, InputFile(data, filename=filename), caption=caption or None, reply_markup=markup,
    ), "sendDocument")


async def send_html(bot: Bot, chat_id: int, text: str, markup: InlineKeyboardMarkup | None = None) -> Message:
    try:
        return await call(lambda: bot.send_message(chat_id, text, reply_markup=markup), "sendMessage")
    except BadRequest as exc:
        if _is(exc, "can't parse entities", "can't find end"):
            log.warning("Telegram refused our HTML (%s); sending plain text", exc)
            return await call(lambda: bot.send_message(chat_id, to_plain(text), parse_mode=None,
                                                       reply_markup=markup), "sendMessage")
        if _is(exc, "message is too long"):
            log.warning("message too long for Telegram; sending it as a document")
            return await send_document(bot, chat_id, to_plain(text).encode(), "eywa.md", markup=markup)
        raise


async def edit_html(bot: Bot, chat_id: int, message_id: int, text: str,
                    markup: InlineKeyboardMarkup | None = None) -> None:
    try:
        await call(lambda: bot.edit_message_text(text, chat_id=chat_id, message_id=message_id,
                                                 reply_markup=markup), "editMessageText")
    except BadRequest as exc:
        if _is(exc, "not modified"):
            return
        if _is(exc, "can't parse entities", "can't find end", "message is too long"):
            await call(lambda: bot.edit_message_text(to_plain(text)[:4000], chat_id=chat_id, message_id=message_id,
                                                     parse_mode=None, reply_markup=markup), "editMessageText")
            return
        raise
