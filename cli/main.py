"""`eywa`: the command line front end. Thin: parses arguments, calls `eywa.core.api`, prints.

Imports stay inside the commands so that a quick command pays only for what it uses.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from eywa.core.sources import KINDS


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="eywa", description="Memory for Claude Code: transcripts to handoffs.")
    parser.add_argument("--config", type=Path, help="YAML config file (default: $EYWA_CONFIG or ~/.eywa/config.yaml)")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    ingest = commands.add_parser("ingest", help="read new and changed transcripts into handoffs")
    ingest.add_argument("--progress", choices=["auto", "always", "never"], help="progress bar (default: config)")

    get = commands.add_parser("get", help="print the handoffs that best match a query")
    get.add_argument("query", nargs="*", help="words to look for; none means the most recent sessions")
    get.add_argument("--days-back", type=int, metavar="N", help="recency window in days (default 14)")
    get.add_argument("--max", type=int, metavar="K", help="number of handoffs, 1-5 (default 3)")
    get.add_argument("--project", metavar="P", help="only handoffs of projects whose name contains P")
    get.add_argument("--agent", choices=KINDS, help="only sessions of this agent")
    get.add_argument("--machine", metavar="M", help="only sessions that ran on machine M (see `eywa last`)")
    get.add_argument("--mode", choices=["keywords", "bm25", "hybrid"], help="scorer (default: retrieval.mode)")
    get.add_argument("--json", action="store_true", help="ranked results as a JSON list")

    last = commands.add_parser("last", help="list the latest sessions")
    last.add_argument("count", nargs="?", type=int, default=5, help="how many (default 5)")
    last.add_argument("--project", metavar="P")
    last.add_argument("--agent", choices=KINDS, help="only sessions of this agent")
    last.add_argument("--machine", metavar="M", help="only sessions that ran on machine M")
    last.add_argument("--json", action="store_true")

    show = commands.add_parser("show", help="print one handoff by id or unique prefix")
    show.add_argument("id")
    show.add_argument("--json", action="store_true")

    reindex = commands.add_parser("reindex", help="rebuild the index from the handoff files alone")
    reindex.add_argument("--import", dest="import_dir", type=Path, metavar="DIR",
                         help="first import a folder of handoffs written by the original eywa-mcp")

    stats = commands.add_parser("stats", help="what is indexed, and the last ingest")
    stats.add_argument("--json", action="store_true")

    extract = commands.add_parser("extract", help="extract one session now, or every old one with --all (LLM)")
    extract.add_argument("id", nargs="?", help="session id or unique prefix")
    extract.add_argument("--all", action="store_true", help="every settled session not yet extracted by the LLM")
    extract.add_argument("--batch", action="store_true", help="with --all: the Message Batches API (half price)")
    extract.add_argument("--yes", action="store_true", help="with --all: start without asking")
    extract.add_argument("--progress", choices=["auto", "always", "never"], help="progress bar (default: config)")

    resume = commands.add_parser("continue", help="open an interactive claude in a session's working directory, "
                                                  "on its Continue prompt")
    resume.add_argument("id", help="session id or unique prefix")
    resume.add_argument("--print", dest="dry_run", action="store_true",
                        help="print the directory and the prompt, start nothing")
    push = commands.add_parser("push", help="send this machine's new transcripts to the hub (rsync over SSH)")
    schedule = push.add_mutually_exclusive_group()
    schedule.add_argument("--install", action="store_true",
                          help="push every push.every_minutes (a systemd user timer, or a launchd agent on macOS)")
    schedule.add_argument("--uninstall", action="store_true", help="remove that schedule")
    push.add_argument("--files-only", action="store_true", help="with --(un)install: leave systemd or launchd alone")
    push.add_argument("--quiet", action="store_true", help="print nothing unless it fails")

    # Inside Claude Code (docs/claude-code.md): these three skip the settings loading below.
    mcp = commands.add_parser("mcp", help="run the MCP server (tools eywa_get, eywa_extract) over stdio or HTTP")
    mcp.add_argument("--transport", choices=["stdio", "http"], default="stdio",
                     help="http: streamable HTTP for other machines, behind mcp.token (default stdio)")
    mcp.add_argument("--port", type=int, help="with http: the port (default mcp.port)")
    hook = commands.add_parser("hook", help="run a Claude Code hook (hook JSON on stdin; never fails)")
    hook.add_argument("event", choices=["session-start", "session-end"])
    hooks = commands.add_parser("hooks", help="install or uninstall the hooks in Claude Code's settings")
    hooks.add_argument("action", choices=["install", "uninstall"])
    hooks.add_argument("--settings", type=Path, metavar="PATH", help="settings file (default ~/.claude/settings.json)")
    hooks.add_argument("--print", dest="dry_run", action="store_true", help="show the change, write nothing")
    return parser


def _fail(message: str) -> int:
    print(f"eywa: {message}", file=sys.stderr)
    return 1


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command in ("hook", "hooks", "mcp"):
        from eywa.claude_code.commands import run

        return run(args)
    if args.command == "get":
        return _cmd_get(args)
    from eywa.core.config.settings import load_settings
    from eywa.core.errors import ConfigError

    try:
        settings = load_settings(args.config)
    except ConfigError as exc:
        return _fail(str(exc))
    from eywa.core.api import Eywa
    from eywa.core.errors import AmbiguousId, IngestError, LaunchError, NotFound, PushError, ServiceError, StoreError

    eywa = Eywa(settings)
    try:
        with eywa.faults():
            return _COMMANDS[args.command](eywa, args)
    except (ConfigError, StoreError, IngestError, NotFound, AmbiguousId, LaunchError, FileNotFoundError, PushError,
            ServiceError) as exc:
        return _fail(str(exc).strip("'\""))
    except OSError as exc:
        return _fail(_unexpected(exc, settings.data_dir))
    except KeyboardInterrupt:
        return _fail("interrupted; what was done is kept, run the command again to finish")
    finally:
        eywa.close()


def _unexpected(exc: OSError, data_dir: Path) -> str:
    if isinstance(exc, PermissionError):
        return f"permission denied: {exc.filename or exc}; check the data directory {data_dir}"
    return f"{exc.strerror or exc}: {exc.filename or ''} (data directory {data_dir})"


def _cmd_ingest(eywa, args) -> int:  # noqa: ANN001
    from eywa.cli.progress import with_progress_bar

    mode = args.progress or eywa.settings.ingest.show_progress
    report = with_progress_bar(mode, "session", lambda progress: eywa.ingest(progress=progress))
    print(report.summary())
    if eywa.last_llm_report is not None:
        from eywa.cli.extract import report_notes

        report_notes(eywa.last_llm_report)
        print(eywa.last_llm_report.summary())
    return 0


def _print_json(data: object) -> None:
    import orjson

    sys.stdout.write(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n")


def _cmd_get(args: argparse.Namespace) -> int:
    """`eywa get` starts light (no pydantic, no settings model): it is the command a user waits on.
    core/config/light.py reads the same settings as `load_settings`, and a test proves they agree."""
    from eywa.core.config.clock import now
    from eywa.core.config.light import light_settings
    from eywa.core.errors import ConfigError, StoreError
    from eywa.core.index.readonly import reading_current
    from eywa.core.retrieval.recall import format_handoffs, ranked_records

    if args.max is not None and not 1 <= args.max <= 5:
        return _fail("--max must be between 1 and 5")
    if args.days_back is not None and args.days_back < 1:
        return _fail("--days-back must be at least 1")
    try:
        settings = light_settings(args.config)
        today = now().astimezone(settings.zone).date()
    except ConfigError as exc:
        return _fail(str(exc))
    try:
        with reading_current(settings.db_path) as conn:
            records = ranked_records(
                conn, " ".join(args.query) or None, handoffs_dir=settings.data_dir / "handoffs",
                mode=args.mode or settings.mode, today=today, days_back=args.days_back or settings.days_back,
                max_results=args.max or settings.max_handoffs, project=args.project, agent=args.agent,
                machine=args.machine)
    except StoreError as exc:
        return _fail(str(exc))
    if args.json:
        _print_json([r.to_json() for r in records])
    else:
        sys.stdout.write(format_handoffs(records))
    return 0


def _cmd_last(eywa, args) -> int:  # noqa: ANN001
    records = eywa.last(args.count, project=args.project, agent=args.agent, machine=args.machine)
    if args.json:
        _print_json([r.to_json() for r in records])
        return 0
    if not records:
        print("No sessions indexed yet: run `eywa ingest`.")
    for r in records:
        project = ",".join(r.projects) or "-"
        print(f"{r.short_id}  {r.date}  {r.duration_min:>4}m  {r.agent:<11} {r.machine or '-':<10} {project:<16} "
              f"{r.headline}")
    return 0


def _cmd_show(eywa, args) -> int:  # noqa: ANN001
    record = eywa.show(args.id)
    if args.json:
        _print_json({**record.to_json(), "body": record.body})
    else:
        sys.stdout.write(record.body.rstrip("\n") + "\n")
    return 0


def _cmd_reindex(eywa, args) -> int:  # noqa: ANN001
    indexed, imported, problems = eywa.reindex(args.import_dir)
    for problem in problems:
        print(f"skipped {problem}", file=sys.stderr)
    note = f", {imported} imported" if args.import_dir else ""
    print(f"{indexed} handoffs indexed{note}; {len(problems)} files skipped")
    return 0


def _cmd_stats(eywa, args) -> int:  # noqa: ANN001
    stats = eywa.stats()
    if args.json:
        _print_json(stats.__dict__)
        return 0
    last = stats.last_ingest
    print(f"data directory   {stats.data_dir} (index {stats.index_bytes / 1e6:.1f} MB)")
    print(f"handoffs         {stats.handoffs} ({stats.substantial} with work, {stats.imported} imported)")
    print(f"dates            {stats.first_date or '-'} .. {stats.last_date or '-'}")
    print(f"source files     {stats.sources} ({stats.sources_skipped} empty or not transcripts)")
    print(f"bad lines        {stats.bad_lines} skipped")
    from eywa.core.api import drift_lines

    for number, line in enumerate(drift_lines(stats.drift)):
        print(f"{'claude code' if number == 0 else '':<17}{line}")
    if stats.last_ingest_at:
        print(f"last ingest      {stats.last_ingest_at}: {last.get('sessions_updated', 0)} sessions updated "
              f"in {last.get('seconds', 0):.1f}s")
    if stats.agents:
        read = stats.agent_bytes
        print("by agent         " + ", ".join(f"{a} {n} sessions ({read.get(a, 0) / 1e6:.1f} MB of transcripts)"
                                             for a, n in stats.agents.items()))
    if stats.projects:
        print("projects         " + ", ".join(f"{p} ({n})" for p, n in stats.projects))
    from eywa.cli.extract import stats_lines

    for line in stats_lines(stats.llm):
        print(line)
    return 0


def _cmd_continue(eywa, args) -> int:  # noqa: ANN001
    import os

    folder, argv = eywa.continue_command(args.id)
    if args.dry_run:
        import shlex

        print(f"cd {shlex.quote(str(folder))}\n{argv[-1]}")
        return 0
    eywa.close()
    os.chdir(folder)
    os.execv(argv[0], argv)  # the owner's terminal is claude's now; no return
def _cmd_push(eywa, args) -> int:  # noqa: ANN001
    if args.install or args.uninstall:
        from eywa.core.machines.services import install, push_service, uninstall

        service = push_service(eywa.settings, args.config)
        change = install if args.install else uninstall
        for line in change(service, files_only=args.files_only):
            print(line)
        if args.install and not eywa.settings.push.on_session_end:
            print("to push also when a Claude Code session ends: push.on_session_end: true, and `eywa hooks install`")
        return 0
    from eywa.core.machines.push import push

    report = push(eywa.settings)
    if not args.quiet:
        print(report.summary())
    return 0


def _cmd_extract(eywa, args) -> int:  # noqa: ANN001
    from eywa.cli.extract import cmd_extract

    return cmd_extract(eywa, args)


_COMMANDS = {
    "ingest": _cmd_ingest,
    "last": _cmd_last,
    "show": _cmd_show,
    "reindex": _cmd_reindex,
    "stats": _cmd_stats,
    "extract": _cmd_extract,
    "continue": _cmd_continue,
    "push": _cmd_push,
}

if __name__ == "__main__":
    raise SystemExit(main())
