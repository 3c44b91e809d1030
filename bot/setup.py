"""`eywa-bot setup`: the bot paired with its owner in a minute.

The token BotFather gave is checked at once with getMe (the real PTB `Bot`, as the bot itself runs); then a
one-time code is printed, and the first `/start CODE` sent to the bot within its validity makes that Telegram
user the owner. Token and owner go into the config file (mode 0600, its other keys kept). Until then nothing
is written: a token Telegram refuses, a `/start` from anyone with no code or the wrong one, and a code that
expired each get one line here, and the stranger gets no answer.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from telegram import Bot, Message
from telegram.error import InvalidToken, NetworkError, TelegramError, TimedOut

from eywa.core.config.settings import CONFIG_ENV, DEFAULT_CONFIG_PATH, TOKEN_ENV
from eywa.core.errors import EywaError

_POLL_SECONDS = 5  # one long poll; the code's expiry is checked between polls


class SetupFailed(EywaError, RuntimeError):
    """Setup stopped; the message says why and what to do."""


@dataclass
class Paired:
    owner_id: int
    config_path: Path


def config_path_to_write(config: Path | None) -> Path:
    """The file the settings are read from: `--config`, else $EYWA_CONFIG, else ~/.eywa/config.yaml."""
    if config is not None:
        return Path(config).expanduser()
    named = os.environ.get(CONFIG_ENV, "").strip()
    return Path(named).expanduser() if named else DEFAULT_CONFIG_PATH.expanduser()


def new_code() -> str:
    """Six digits: easy to type on a phone, and a stranger has one chance in a million a guess."""
    return f"{secrets.randbelow(10**6):06d}"


async def pair(token: str, api_base_url: str, file_base_url: str, minutes: float, say: Callable[[str], None]) -> int:
    """Check the token with getMe (the bot's @name shown), print a one-time code, and return the id of the first
    user who sends `/start CODE` before it expires; every other message is ignored with a line through `say`.
    SetupFailed when Telegram refuses the token or the code expires first."""
    if not token or any(c.isspace() for c in token) or ":" not in token:
        raise SetupFailed("that is not a bot token (it looks like 123456789:AAF...): copy it again from @BotFather")
    try:
        async with Bot(token, base_url=api_base_url, base_file_url=file_base_url) as bot:  # getMe
            name = bot.username
            # Messages sent to the bot before the code was shown are nobody's pairing.
            await bot.delete_webhook(drop_pending_updates=True)
            code = new_code()
            say(f"Token accepted: this is @{name}.")
            say(f"From your phone, send @{name} this message (the code is valid {minutes:g} minutes):\n\n"
                f"    /start {code}\n\n(or open https://t.me/{name}?start={code} and tap Start). Waiting...")
            return await _wait_for_owner(bot, code, time.monotonic() + minutes * 60, say)
    except InvalidToken:
        raise SetupFailed("Telegram refused that token: copy it again from @BotFather (/mybots, API Token); "
                          "nothing was written") from None
    except NetworkError as exc:
        raise SetupFailed(f"cannot reach Telegram ({exc.message}); nothing was written") from None


async def _wait_for_owner(bot: Bot, code: str, deadline: float, say: Callable[[str], None]) -> int:
    offset = None
    while (left := deadline - time.monotonic()) > 0:
        try:
            updates = await bot.get_updates(offset=offset, timeout=max(1, min(_POLL_SECONDS, int(left))),
                                            allowed_updates=["message"])
        except TimedOut:  # a long poll cut short: ask again
            continue
        for update in updates:
            offset = update.update_id + 1
            owner = _pairing(update.message, code, time.monotonic() < deadline, say)
            if owner is not None:
                await bot.get_updates(offset=offset, timeout=0)  # confirmed: the bot will not see it again
                await _welcome(bot, update.message)
                return owner
    if offset is not None:
        await bot.get_updates(offset=offset, timeout=0)
    raise SetupFailed("the pairing code expired before the right /start CODE arrived: run `eywa-bot setup` "
                      "again; nothing was written")


def _pairing(message: Message | None, code: str, valid: bool, say: Callable[[str], None]) -> int | None:
    """The sender's id when `message` is `/start CODE` with this code in time; else a line and None."""
    if message is None or message.from_user is None:
        return None
    who = f"Telegram user {message.from_user.id}"
    words = (message.text or "").split()
    if not words or words[0].split("@")[0] != "/start":
        say(f"ignored a message from {who}: it is not /start {code}")
    elif len(words) < 2:
        say(f"ignored /start from {who}: no pairing code")
    elif not secrets.compare_digest(words[1], code):
        say(f"ignored /start from {who}: wrong pairing code")
    elif not valid:
        say(f"ignored /start from {who}: the pairing code expired")
    else:
        return message.from_user.id
    return None


async def _welcome(bot: Bot, message: Message | None) -> None:
    if message is None:
        return
    try:
        await bot.send_message(message.chat.id, "Paired: you own this Eywa now. Start it with `eywa-bot` on "
                                                "your machine; then send me a few words or a voice note to "
                                                "find a past session.")
    except TelegramError:
        pass  # the pairing stands; the welcome is a courtesy


def save(path: Path, token: str, owner_id: int) -> None:
    """The token and the owner into the config file at `path`, atomically, mode 0600; other keys kept."""
    import yaml

    data: dict[str, Any] = {}
    if path.exists():
        loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
        if loaded is not None and not isinstance(loaded, dict):
            raise SetupFailed(f"{path} is not a mapping of settings: fix or move it, then run setup again")
        data = loaded or {}
    telegram = got if isinstance(got := data.get("telegram"), dict) else {}
    data["telegram"] = {**telegram, "token": token, "allowed_user_ids": [owner_id]}
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(temp, "w", encoding="utf-8", opener=lambda name, flags: os.open(name, flags, 0o600)) as out:
            yaml.safe_dump(data, out, sort_keys=False, allow_unicode=True)
        os.chmod(temp, 0o600)  # an existing temp file keeps its mode: make sure
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def run_setup(config: Path | None, *, ask: Callable[[str], str], say: Callable[[str], None],
              api_base_url: str, file_base_url: str, minutes: float) -> Paired:
    """The whole conversation: token, check, code, owner, file. SetupFailed says why it stopped."""
    path = config_path_to_write(config)
    token = ask("Paste the bot token @BotFather gave you (/newbot): ").strip()
    owner = asyncio.run(pair(token, api_base_url, file_base_url, minutes, say))
    save(path, token, owner)
    say(f"Paired with Telegram user {owner}. Saved the token and the owner in {path} (only you can read it).")
    if os.environ.get(TOKEN_ENV, "").strip() not in ("", token):
        say(f"Note: {TOKEN_ENV} is set in this shell and wins over the file: unset it to use the new token.")
    if os.environ.get("EYWA_TELEGRAM__ALLOWED_USER_IDS", "").strip():
        say("Note: EYWA_TELEGRAM__ALLOWED_USER_IDS is set in this shell and wins over the file: unset it.")
    return Paired(owner, path)
