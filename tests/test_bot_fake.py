"""The fake Bot API server refuses what Telegram refuses; checked through python-telegram-bot's own
client, so the errors the bot handles are the ones PTB raises against the real server."""

from __future__ import annotations

import asyncio
import datetime as dt
import warnings
from collections.abc import Iterator
from typing import Any

import pytest
from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup
from telegram.error import BadRequest, InvalidToken, RetryAfter

from .fake_telegram import FakeTelegram, parse_html, parse_markdown_v2


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeTelegram]:
    # One client for the module: building one (its SSL context) costs a quarter of a second.
    with FakeTelegram() as server, asyncio.Runner() as runner:
        bot = Bot(server.token, base_url=server.base_url, base_file_url=server.base_file_url)
        runner.run(bot.initialize())
        server.client = (runner, bot)  # type: ignore[attr-defined]
        yield server
        runner.run(bot.shutdown())


def retry_seconds(exc: RetryAfter) -> float:
    with warnings.catch_warnings():  # PTB 22 warns that the int form of retry_after is deprecated
        warnings.simplefilter("ignore")
        value = exc.retry_after
    return value.total_seconds() if isinstance(value, dt.timedelta) else float(value)


def call(fake: FakeTelegram, method: str, token: str | None = None, **kwargs: Any) -> Any:
    runner, bot = fake.client  # type: ignore[attr-defined]
    if token is not None:
        bot = Bot(token, base_url=fake.base_url, base_file_url=fake.base_file_url)
    return runner.run(getattr(bot, method)(**kwargs))


@pytest.mark.parametrize("source", ["<b>open", "<b>x</i>", "<blink>x</blink>", "a < b", "<span>x</span>",
                                    "<code><b>x</b></code>", "x</b>"])
def test_html_telegram_cannot_parse_is_refused(fake: FakeTelegram, source: str) -> None:
    with pytest.raises(BadRequest, match="(?i)can't parse entities"):
        call(fake, "send_message", chat_id=1, text=source, parse_mode="HTML")


def test_valid_html_becomes_text_and_entities() -> None:
    text, entities = parse_html('<b>bold <i>both</i></b> &lt;tag&gt; &amp; &#x1F600; <a href="https://e.x">l</a>')
    assert text == "bold both <tag> & \U0001F600 l"
    assert [(e["type"], e["offset"], e["length"]) for e in entities] == [
        ("italic", 5, 4), ("bold", 0, 9), ("text_link", 21, 1)]  # the emoji counts 2 in UTF-16


@pytest.mark.parametrize("source", ["end.", "*open", "a_b", "[x](y", "`code", "1+1=2"])
def test_markdown_v2_with_unescaped_or_unclosed_markup_is_refused(fake: FakeTelegram, source: str) -> None:
    with pytest.raises(BadRequest, match="(?i)can't parse entities"):
        call(fake, "send_message", chat_id=1, text=source, parse_mode="MarkdownV2")


def test_valid_markdown_v2_parses() -> None:
    text, entities = parse_markdown_v2(r"*bold* _it_ `a.b` [link](https://e.x/a\)b) end\.")
    assert text == "bold it a.b link end."
    assert [e["type"] for e in entities] == ["bold", "italic", "code", "text_link"]


def test_text_over_4096_characters_is_refused_and_4096_is_not(fake: FakeTelegram) -> None:
    assert call(fake, "send_message", chat_id=1, text="x" * 4096).text == "x" * 4096
    with pytest.raises(BadRequest, match="(?i)message is too long"):
        call(fake, "send_message", chat_id=1, text="x" * 4097)
    with pytest.raises(BadRequest, match="(?i)message is too long"):
        call(fake, "send_message", chat_id=1, text="\U0001F600" * 2049)  # UTF-16 units, like Telegram


def test_callback_data_over_64_bytes_is_refused(fake: FakeTelegram) -> None:
    ok = InlineKeyboardMarkup([[InlineKeyboardButton("a", callback_data="é" * 32)]])
    assert call(fake, "send_message", chat_id=1, text="t", reply_markup=ok)
    too_long = InlineKeyboardMarkup([[InlineKeyboardButton("a", callback_data="x" * 65)]])
    with pytest.raises(BadRequest, match="(?i)button_data_invalid"):
        call(fake, "send_message", chat_id=1, text="t", reply_markup=too_long)


def test_unknown_method_is_a_400_and_a_wrong_token_a_401(fake: FakeTelegram) -> None:
    with pytest.raises(BadRequest, match="(?i)not found"):
        call(fake, "do_api_request", endpoint="sendTelepathy", api_kwargs={"chat_id": 1})
    with pytest.raises(InvalidToken):
        call(fake, "get_me", token="1:wrong")


def test_a_requested_flood_limit_is_a_429_with_retry_after(fake: FakeTelegram) -> None:
    fake.fail_next("sendMessage", retry_after=7)
    with pytest.raises(RetryAfter) as info:
        call(fake, "send_message", chat_id=1, text="t")
    assert retry_seconds(info.value) == 7
    assert call(fake, "send_message", chat_id=1, text="t")  # only the next call fails


def test_edit_of_an_unchanged_message_is_refused(fake: FakeTelegram) -> None:
    sent = call(fake, "send_message", chat_id=1, text="same")
    with pytest.raises(BadRequest, match="(?i)not modified"):
        call(fake, "edit_message_text", chat_id=1, message_id=sent.message_id, text="same")
    assert call(fake, "edit_message_text", chat_id=1, message_id=sent.message_id, text="new").text == "new"


def test_documents_arrive_whole_through_multipart_and_files_download_by_url(fake: FakeTelegram) -> None:
    data = "# Handoff\n\nnon-ASCII: é ✓\n".encode() * 200
    sent = call(fake, "send_document", chat_id=1, document=data, filename="h.md", caption="<b>c</b>",
                parse_mode="HTML")
    assert fake.file(fake.calls[-1]) == ("h.md", data) and sent.caption == "c"

    file = call(fake, "get_file", file_id=sent.document.file_id)
    runner, _ = fake.client  # type: ignore[attr-defined]
    assert bytes(runner.run(file.download_as_bytearray())) == data  # the URL holds the token %3A-encoded
