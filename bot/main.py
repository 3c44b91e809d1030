"""`eywa-bot`: one process that keeps the index fresh and answers its owner on Telegram."""

from __future__ import annotations

import argparse
import logging
import re
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

if TYPE_CHECKING:
    from eywa.core.config.settings import Settings

NOISY_LOGGERS = ("httpx", "httpcore", "apscheduler")  # httpx logs every request URL, and a URL holds the token
# PTB logs each update it handles and each Bot API result at DEBUG: a stranger's words, the owner's handoffs.
CONTENT_LOGGERS = ("telegram",)


class RedactingFormatter(logging.Formatter):
    """Replaces secrets (and their URL-encoded form) in the whole formatted record, traceback included."""

    def __init__(self, fmt: str, secrets: Iterable[str]) -> None:
        super().__init__(fmt)
        forms = set()
        for secret in secrets:
            if secret:
                forms.update({secret, quote(secret, safe=""), quote(secret)})
        # In any letter case: PTB capitalizes error descriptions ("Chat not found (...)"), lower-casing the rest.
        alternatives = "|".join(re.escape(form) for form in sorted(forms, key=len, reverse=True))
        self._secrets = re.compile(alternatives, re.IGNORECASE) if alternatives else None

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        return self._secrets.sub("<token>", text) if self._secrets is not None else text


def without_update_data(record: logging.LogRecord) -> bool:
    """PTB logs the raw updates it cannot parse, anyone's messages, at CRITICAL: the line stays, not the data."""
    if record.name.startswith("telegram") and "Received data was %r" in str(record.msg):
        record.msg, record.args = str(record.msg).replace("%r", "(left out of the log)"), ()
    return True


def configure_logging(level: str, secrets: Iterable[str], stream: object = None) -> logging.Handler:
    handler = logging.StreamHandler(stream or sys.stderr)  # type: ignore[arg-type]
    handler.setFormatter(RedactingFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s", secrets))
    handler.addFilter(without_update_data)
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(level)
    for name in NOISY_LOGGERS:
        logging.getLogger(name).setLevel(max(logging.WARNING, root.level))
    for name in CONTENT_LOGGERS:
        logging.getLogger(name).setLevel(max(logging.INFO, root.level))
    return handler


def log_secrets(settings: Settings) -> list[str]:
    """What the log must never show: the bot token, and the API keys (Anthropic, voice) when set."""
    from eywa.core.extract.llm.backend import api_key

    keys = [settings.telegram.token.get_secret_value(), api_key(settings),
            settings.voice.openai_api_key.get_secret_value()]
    return [key.strip() for key in keys if key.strip()]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="eywa-bot", description="Eywa's Telegram bot: recall, digests, ingest.")
    parser.add_argument("--config", type=Path, help="YAML config file (default: $EYWA_CONFIG or ~/.eywa/config.yaml)")
    parser.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    commands = parser.add_subparsers(dest="command", metavar="[service]")
    service = commands.add_parser("service", help="start the bot at login, restarted on failure")
    service.add_argument("action", choices=["install", "uninstall"])
    service.add_argument("--files-only", action="store_true", help="leave systemd or launchd alone")
    args = parser.parse_args(argv)
    if args.command == "service":
        return _service(args.action, args.config, args.files_only)

    from eywa.core.config.settings import load_settings
    from eywa.core.errors import ConfigError

    try:
        settings = load_settings(args.config)
    except ConfigError as exc:
        print(f"eywa-bot: {exc}", file=sys.stderr)
        return 1
    configure_logging(args.log_level, log_secrets(settings))

    from telegram.error import InvalidToken

    from eywa.bot.app import ALLOWED_UPDATES, MissingToken, build_application
    from eywa.core.errors import StoreError

    try:
        app = build_application(settings)
    except MissingToken as exc:
        print(f"eywa-bot: {exc}", file=sys.stderr)
        return 1
    except StoreError as exc:  # its state lives in the data directory: read-only, full...
        print(f"eywa-bot: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"eywa-bot: cannot use {settings.data_dir}: {exc}", file=sys.stderr)
        return 1
    try:
        app.run_polling(allowed_updates=ALLOWED_UPDATES)
    except InvalidToken:
        print("eywa-bot: Telegram rejected the bot token; check TELEGRAM_BOT_TOKEN (from @BotFather)", file=sys.stderr)
        return 1
    return 0


def _service(action: str, config_path: Path | None, files_only: bool) -> int:
    from eywa.core.config.settings import load_settings
    from eywa.core.errors import ConfigError, ServiceError
    from eywa.core.machines.services import hub_services, install, mcp_service, uninstall

    try:
        services = hub_services(load_settings(config_path), config_path)
        if action == "uninstall" and len(services) == 1:
            services.append(mcp_service(config_path))  # installed when a token was set: removed all the same
        change = install if action == "install" else uninstall
        for service in services:
            for line in change(service, files_only=files_only):
                print(line)
    except (ConfigError, ServiceError, OSError) as exc:
        print(f"eywa-bot: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
