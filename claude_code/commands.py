"""The `eywa mcp`, `eywa hook ...` and `eywa hooks ...` commands, kept apart from cli/main.py so that a
hook imports neither `eywa.core.config.settings` (pydantic_settings) nor `eywa.core.api`, and starts fast
(bench/hooks.py)."""

from __future__ import annotations

import argparse
import sys


def _fail(message: str) -> int:
    print(f"eywa: {message}", file=sys.stderr)
    return 1


def run(args: argparse.Namespace) -> int:
    if args.command == "hook":
        from eywa.claude_code.hooks import run_hook

        return run_hook(args.event, args.config)
    if args.command == "hooks":
        from eywa.claude_code.hooks_install import InstallError, change

        try:
            return change(args.action, args.settings, config_path=args.config, dry_run=args.dry_run)
        except InstallError as exc:
            return _fail(str(exc))
        except OSError as exc:
            return _fail(f"{exc.strerror or exc}: {exc.filename or ''}")
    from eywa.core.config.settings import load_settings
    from eywa.core.errors import ConfigError

    try:
        settings = load_settings(args.config)
    except ConfigError as exc:
        return _fail(str(exc))
    if args.transport == "http":
        from eywa.claude_code.mcp_http import BindRefused, serve_http

        try:
            serve_http(settings, args.port)
        except BindRefused as exc:
            return _fail(str(exc))
        return 0
    from eywa.claude_code.mcp_server import serve

    serve(settings)
    return 0
