"""Inline buttons: their callback data and what every press starts with. The data stays tiny
("f:Ab3_x9Qz:0", kind:token:index; Telegram allows 64 bytes) and keeps its format, so buttons sent by an
earlier release still work: the state is in BotState, under the token.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from telegram import CallbackQuery, InlineKeyboardButton, InlineKeyboardMarkup, Update
from telegram.ext import ContextTypes

from eywa.bot.send import call
from eywa.core.errors import NotFound
from eywa.core.index.bot_store import Page

if TYPE_CHECKING:
    from eywa.bot.app import EywaBot
    from eywa.core.api import HandoffRecord

MORE, FILE, CONTINUE, START, OPEN, READING = "m", "f", "c", "s", "o", "h"
FORGET, FORGET_YES, FORGET_NO = "x", "y", "n"  # Forget asks first; the answer's buttons say yes or no


def pattern(kind: str) -> str:
    """The CallbackQueryHandler pattern of one kind of button."""
    return rf"^{kind}:"


def result_buttons(token: str, index: int, *, more: bool, start: bool = False) -> InlineKeyboardMarkup:
    row = [InlineKeyboardButton("File", callback_data=f"{FILE}:{token}:{index}"),
           InlineKeyboardButton("Continue", callback_data=f"{CONTINUE}:{token}:{index}")]
    if start:  # telegram.start_sessions: a background Claude Code session on the Continue prompt
        row.append(InlineKeyboardButton("Start", callback_data=f"{START}:{token}:{index}"))
    if more:
        row.insert(0, InlineKeyboardButton("More", callback_data=f"{MORE}:{token}"))
    return InlineKeyboardMarkup([row, [InlineKeyboardButton("Forget", callback_data=f"{FORGET}:{token}:{index}")]])


def forget_buttons(token: str, index: int) -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup([[InlineKeyboardButton("Forget it", callback_data=f"{FORGET_YES}:{token}:{index}"),
                                  InlineKeyboardButton("Keep it", callback_data=f"{FORGET_NO}:{token}:{index}")]])


def open_buttons(token: str, count: int) -> InlineKeyboardMarkup:
    buttons = [InlineKeyboardButton(str(i + 1), callback_data=f"{OPEN}:{token}:{i}") for i in range(count)]
    return InlineKeyboardMarkup([buttons[i : i + 5] for i in range(0, len(buttons), 5)])


async def answer(query: CallbackQuery | None, text: str | None = None) -> None:
    """Every press is answered once, so Telegram stops its spinner."""
    await call(lambda: query.answer(text), "answerCallbackQuery")


async def expired(update: Update, context: ContextTypes.DEFAULT_TYPE | None = None) -> None:
    """A button whose page is gone, or data no handler knows."""
    await answer(update.callback_query, "This button has expired; ask again.")


def _parts(update: Update) -> tuple[str, str]:
    _, _, rest = (update.callback_query.data or "").partition(":")
    token, _, index = rest.partition(":")
    return token, index


async def pressed_page(bot: EywaBot, update: Update) -> tuple[Page, str, str] | None:
    """The page the pressed button belongs to, its token and the index part of its data; None (the press
    answered) when that page has expired."""
    token, index = _parts(update)
    page = bot.state.load_page(token) if token else None
    if page is None:
        await expired(update)
        return None
    return page, token, index


async def pressed_record(bot: EywaBot, update: Update) -> tuple[str, int, HandoffRecord] | None:
    """The session the pressed button names (token, index, record), the press answered; None when it is gone."""
    found = await pressed_page(bot, update)
    if found is None:
        return None
    page, token, index = found
    try:
        record = bot.eywa.show(page.session_ids[int(index)])
    except (ValueError, IndexError, NotFound):
        await answer(update.callback_query, "That session is no longer indexed.")
        return None
    await answer(update.callback_query)
    return token, int(index), record
