"""`eywa-bot`: one process that keeps the index fresh and answers its owner on Telegram."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from urllib.parse import quote

NOISY_LOGGERS = ("httpx", "httpcore", "apscheduler")  # httpx logs every request URL, and a URL holds the token


class RedactingFormatter(logging.Formatter):
    """Replaces secrets (and their URL-encoded form) in the whole formatted record, traceback included."""

    def __init__(self, fmt: str, secrets: Iterable[str]) -> None:
        super().__init__(fmt)
        forms = set()
        for secret in secrets:
            if secret:
                forms.update({secret, quote(secret, safe=""), quote(secret)})
        self._forms = sorted(forms, key=len, reverse=True)

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        for form in self._forms:
            text = text.replace(form, "<token>")
        return text


def configure_logging(level: str, secrets: Iterable[str], stream: object = None) -> logging.Handler:
    handler = logging.StreamHandler(stream or sys.stderr)  # type: ignore[arg-type]
    handler.setFormatter(RedactingFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s", secrets))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(level)
    for name in NOISY_LOGGERS:
        logging.getLogger(name).setLevel(max(logging.WARNING, root.level))
    return handler


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="eywa-bot", description="Eywa's Telegram bot: recall, digests, ingest.")
    parser.add_argument("--config", type=Path, help="YAML config file (default: $EYWA_CONFIG or ~/.eywa/config.yaml)")
    parser.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    args = parser.parse_args(argv)

    from core.config import ConfigError, load_settings

    try:
        settings = load_settings(args.config)
    except ConfigError as exc:
        print(f"eywa-bot: {exc}", file=sys.stderr)
        return 1
    token = settings.telegram.token.get_secret_value().strip()
    configure_logging(args.log_level, [token])

    from telegram.error import InvalidToken

    from bot.app import ALLOWED_UPDATES, MissingToken, build_application

    try:
        app = build_application(settings)
    except MissingToken as exc:
        print(f"eywa-bot: {exc}", file=sys.stderr)
        return 1
    try:
        app.run_polling(allowed_updates=ALLOWED_UPDATES)
    except InvalidToken:
        print("eywa-bot: Telegram rejected the bot token; check TELEGRAM_BOT_TOKEN (from @BotFather)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
