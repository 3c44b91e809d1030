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

from eywa.cli.terminal import HelpFormatter, complete, examples, fail, program
from eywa.core.errors import EywaError

if TYPE_CHECKING:
    from eywa.core.config.settings import Settings

NOISY_LOGGERS = ("httpx", "httpcore", "apscheduler")  # httpx logs every request URL, and a URL holds the token
# PTB logs each update it handles and each Bot API result at DEBUG: a stranger's words, the owner's handoffs.
CONTENT_LOGGERS = ("telegram",)
PAIRING_MINUTES = 10.0  # how long `eywa-bot setup`'s code is valid


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


def _parser() -> argparse.ArgumentParser:
    parser = program("eywa-bot", "Eywa's Telegram bot: recall, digests, ingest. Without a command, it runs in the "
                     "foreground.", "eywa-bot setup                # pair a bot with your phone, once",
                     "eywa-bot                      # run it", "eywa-bot service install      # run it at login")
    parser.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"],
                        help="how much the bot logs to stderr (default INFO; content is never logged)")
    commands = parser.add_subparsers(dest="command", metavar="[setup | service]")
    setup = commands.add_parser(
        "setup", formatter_class=HelpFormatter, help="pair a bot with its owner: the token, then /start CODE",
        description="Pair a bot with its owner: paste the token @BotFather gave, then send the bot the "
                    "/start CODE printed here. The token and your user id go into the config file (mode 0600).",
        epilog=examples("eywa-bot setup", "eywa-bot --config ~/eywa.yaml setup --code-minutes 5"))
    setup.add_argument("--code-minutes", type=float, default=PAIRING_MINUTES, metavar="M",
                       help=f"how long the pairing code is valid (default {PAIRING_MINUTES:g})")
    service = commands.add_parser(
        "service", formatter_class=HelpFormatter, help="start the bot at login, restarted on failure",
        description="Start the bot at login, restarted on failure: a systemd user unit, or a launchd agent.",
        epilog=examples("eywa-bot service install", "eywa-bot service uninstall"))
    service.add_argument("action", choices=["install", "uninstall"], help="add the service, or remove it")
    service.add_argument("--files-only", action="store_true", help="write the files, leave systemd or launchd alone")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    complete(parser)
    args = parser.parse_args(argv)
    if args.command == "service":
        return _service(args.action, args.config, args.files_only)
    from eywa.core.config.settings import load_settings
    from eywa.core.errors import ConfigError

    # setup writes the file --config names: one that does not exist yet is no error there
    fresh = args.command == "setup" and args.config is not None and not args.config.expanduser().exists()
    try:
        settings = load_settings(None if fresh else args.config)
    except ConfigError as exc:
        return fail("eywa-bot", str(exc))
    if args.command == "setup":
        return _setup(args.config, settings, args.code_minutes)
    if not settings.telegram.token.get_secret_value().strip():
        if not (sys.stdin.isatty() and sys.stdout.isatty()):
            return fail("eywa-bot", "no Telegram bot token: run `eywa-bot setup` on a terminal (or set "
                                    "TELEGRAM_BOT_TOKEN to the token @BotFather gave)")
        if input("No Telegram bot token yet. Pair a bot now (eywa-bot setup)? [Y/n] ").strip().lower() not in ("", "y",
                                                                                                            "yes"):
            return fail("eywa-bot", "no Telegram bot token: run `eywa-bot setup` when you have one")
        if _setup(args.config, settings, PAIRING_MINUTES):
            return 1
        settings = load_settings(args.config)
    return _run(settings, args.log_level)


def _setup(config: Path | None, settings: Settings, minutes: float) -> int:
    from eywa.bot.setup import SetupFailed, run_setup

    def ask(prompt: str) -> str:
        if sys.stdin.isatty():
            import getpass

            return getpass.getpass(prompt)  # a secret: not echoed, not in the scrollback
        print(prompt, end="", flush=True)
        return sys.stdin.readline()

    try:
        run_setup(config, ask=ask, say=lambda line: print(line, flush=True), minutes=minutes,
                  api_base_url=settings.telegram.api_base_url, file_base_url=settings.telegram.file_base_url)
    except SetupFailed as exc:
        return fail("eywa-bot", str(exc))
    except KeyboardInterrupt:
        return fail("eywa-bot", "setup interrupted; nothing was written")
    except OSError as exc:
        return fail("eywa-bot", f"cannot write the config file: {exc.strerror or exc}: {exc.filename or ''}")
    return 0


def _run(settings: Settings, log_level: str) -> int:
    configure_logging(log_level, log_secrets(settings))

    from telegram.error import InvalidToken

    from eywa.bot.app import ALLOWED_UPDATES, build_application

    try:
        app = build_application(settings)
    except EywaError as exc:  # its state lives in the data directory: read-only, full...
        return fail("eywa-bot", str(exc))
    except OSError as exc:
        return fail("eywa-bot", f"cannot use {settings.data_dir}: {exc}")
    try:
        app.run_polling(allowed_updates=ALLOWED_UPDATES)
    except InvalidToken:
        return fail("eywa-bot", "Telegram rejected the bot token: run `eywa-bot setup` again, or check "
                                "TELEGRAM_BOT_TOKEN (from @BotFather)")
    return 0


def _service(action: str, config_path: Path | None, files_only: bool) -> int:
    from eywa.core.config.settings import load_settings
    from eywa.core.machines.services import hub_services, install, mcp_service, uninstall

    try:
        services = hub_services(load_settings(config_path), config_path)
        if action == "uninstall" and len(services) == 1:
            services.append(mcp_service(config_path))  # installed when a token was set: removed all the same
        change = install if action == "install" else uninstall
        for service in services:
            for line in change(service, files_only=files_only):
                print(line)
    except (EywaError, OSError) as exc:
        return fail("eywa-bot", str(exc))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
