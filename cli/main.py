"""`eywa`: the command line front end. Thin: parses arguments, calls `eywa.core.api`, prints.

Imports stay inside the commands so that a quick command pays only for what it uses.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from eywa.cli.terminal import SHELLS, HelpFormatter, complete, examples, fail, flushed, paint, program, reported
from eywa.core.sources import KINDS


def _count(text: str) -> int:
    """A count of at least 1 (`eywa last 0` or `-5` is a mistake, not one row)."""
    try:
        number = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"{number} is not a count: give 1 or more")
    return number


def _agent(text: str) -> str:
    """An agent name, in any letter case (`--agent Codex`)."""
    return text.strip().lower()


def _command(commands: argparse._SubParsersAction, name: str, help: str, *lines: str) -> argparse.ArgumentParser:
    return commands.add_parser(name, help=help, description=help[0].upper() + help[1:] + ".",
                               epilog=examples(*lines), formatter_class=HelpFormatter)


def _parser(get_only: bool = False) -> argparse.ArgumentParser:
    """Every command's parser, or `get`'s alone: `eywa get` is the command a user waits on (bench/RESULTS.md)."""
    parser = program("eywa", "Memory for coding agents: Claude Code, Codex CLI and Gemini CLI sessions to handoffs.",
                     "eywa ingest", 'eywa get "rewind gemini"', "eywa last 10",
                     "eywa COMMAND --help   (every option of a command, with an example)")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    if not get_only:
        ingest = _command(commands, "ingest", "read new and changed transcripts into handoffs", "eywa ingest",
                          "eywa ingest --progress never   # no bar, for a cron job")
        ingest.add_argument("--progress", choices=["auto", "always", "never"],
                            help="progress bar: auto shows it on a terminal only (default: ingest.show_progress)")

    get = _command(commands, "get", "print the handoffs that best match a query", 'eywa get "rewind gemini"',
                   'eywa get "what did I do yesterday on the bot"',
                   'eywa get --project cli --days-back 30 --max 5 --json "transcript parsing"')
    get.add_argument("query", nargs="*", help="words to look for, time words too (\"last week\", \"in March\"); "
                                             "none means the most recent sessions")
    get.add_argument("--days-back", type=int, metavar="N",
                     help="only sessions of the last N days (default: retrieval.days_back, else any day)")
    get.add_argument("--max", type=int, metavar="K", help="number of handoffs, 1-5 (default 3)")
    get.add_argument("--project", metavar="P", help="only handoffs of projects whose name contains P")
    get.add_argument("--agent", type=_agent, choices=KINDS, help="only sessions of this agent")
    get.add_argument("--machine", metavar="M", help="only sessions that ran on machine M (see `eywa last`)")
    get.add_argument("--mode", choices=["keywords", "bm25", "hybrid"], help="scorer (default: retrieval.mode)")
    get.add_argument("--json", action="store_true", help="ranked results as a JSON list")
    if get_only:
        return parser

    last = _command(commands, "last", "list the latest sessions, one line each", "eywa last 10",
                    "eywa last --agent codex --project cli")
    last.add_argument("count", nargs="?", type=_count, default=5, help="how many sessions (default 5)")
    last.add_argument("--project", metavar="P", help="only projects whose name contains P")
    last.add_argument("--agent", type=_agent, choices=KINDS, help="only sessions of this agent")
    last.add_argument("--machine", metavar="M", help="only sessions that ran on machine M")
    last.add_argument("--json", action="store_true", help="the sessions as a JSON list")

    show = _command(commands, "show", "print one handoff by id or unique prefix", "eywa show 4f8c11")
    show.add_argument("id", help="a session id, short id, or any unique prefix of either")
    show.add_argument("--json", action="store_true", help="the handoff's fields and body as JSON")

    reindex = _command(commands, "reindex", "rebuild the index from the handoff files alone", "eywa reindex",
                       "eywa reindex --import ~/old/handoffs")
    reindex.add_argument("--import", dest="import_dir", type=Path, metavar="DIR",
                         help="first import a folder of handoffs written by the original eywa-mcp")

    stats = _command(commands, "stats", "what is indexed, the last ingest and LLM usage", "eywa stats",
                     "eywa stats --verbose   # also each Claude Code version read")
    stats.add_argument("--json", action="store_true", help="every figure as JSON")
    stats.add_argument("--verbose", "-v", action="store_true",
                       help="also list each Claude Code version read and what it held that Eywa did not know")

    extract = _command(commands, "extract", "extract one session now, or every old one with --all (LLM)",
                       "eywa extract 4f8c11", "eywa extract --all --batch --yes")
    extract.add_argument("id", nargs="?", help="session id or unique prefix")
    extract.add_argument("--all", action="store_true", help="every settled session not yet extracted by the LLM")
    extract.add_argument("--batch", action="store_true", help="with --all: the Message Batches API (half price)")
    extract.add_argument("--yes", action="store_true", help="with --all: start without asking")
    extract.add_argument("--progress", choices=["auto", "always", "never"],
                         help="progress bar: auto shows it on a terminal only (default: ingest.show_progress)")

    resume = _command(commands, "continue", "open an interactive claude in a session's working directory, "
                      "on its Continue prompt", "eywa continue 4f8c11", "eywa continue 4f8c11 --print")
    resume.add_argument("id", help="session id or unique prefix")
    resume.add_argument("--print", dest="dry_run", action="store_true",
                        help="print the directory and the prompt, start nothing")

    push = _command(commands, "push", "send this machine's new transcripts to the hub (rsync over SSH)",
                    "eywa push", "eywa push --install   # every push.every_minutes")
    schedule = push.add_mutually_exclusive_group()
    schedule.add_argument("--install", action="store_true",
                          help="push every push.every_minutes (a systemd user timer, or a launchd agent on macOS)")
    schedule.add_argument("--uninstall", action="store_true", help="remove that schedule")
    push.add_argument("--files-only", action="store_true", help="with --(un)install: leave systemd or launchd alone")
    push.add_argument("--quiet", action="store_true", help="print nothing unless it fails")

    forget = _command(commands, "forget", "remove sessions from everything Eywa keeps, and keep them out",
                      "eywa forget 4f8c11", "eywa forget --project scratch --yes", "eywa forget --before 2026-01-01",
                      "eywa forget --undo 4f8c11   # the next ingest reads it again")
    forget.add_argument("ids", nargs="*", metavar="ID", help="session ids or unique prefixes")
    forget.add_argument("--project", metavar="P", help="every session of project P (its exact name)")
    forget.add_argument("--before", metavar="DATE", help="every session dated before DATE (YYYY-MM-DD)")
    forget.add_argument("--undo", action="store_true", help="bring a forgotten session back at the next ingest")
    forget.add_argument("--yes", action="store_true", help="forget without asking")

    completion = _command(commands, "completion", "print the shell completion script for eywa",
                          'eval "$(eywa completion bash)"   # in ~/.bashrc',
                          "eywa completion fish > ~/.config/fish/completions/eywa.fish")
    completion.add_argument("shell", choices=SHELLS, help="the shell to complete in")

    # Inside Claude Code (docs/claude-code.md): these three skip the settings loading below.
    mcp = _command(commands, "mcp", "run the MCP server (tools eywa_get, eywa_extract) over stdio or HTTP",
                   "claude mcp add --scope user eywa -- \"$(command -v eywa)\" mcp",
                   "eywa mcp --transport http --port 8765")
    mcp.add_argument("--transport", choices=["stdio", "http"], default="stdio",
                     help="http: streamable HTTP for other machines, behind mcp.token (default stdio)")
    mcp.add_argument("--port", type=int, help="with http: the port (default mcp.port)")
    hook = _command(commands, "hook", "run a Claude Code hook (hook JSON on stdin; never fails)",
                    "eywa hook session-start < hook-input.json")
    hook.add_argument("event", choices=["session-start", "session-end"], help="the Claude Code hook event")
    hooks = _command(commands, "hooks", "install or uninstall the hooks in Claude Code's settings",
                     "eywa hooks install", "eywa hooks install --print   # show the change only")
    hooks.add_argument("action", choices=["install", "uninstall"], help="add Eywa's hooks, or remove them")
    hooks.add_argument("--settings", type=Path, metavar="PATH", help="settings file (default ~/.claude/settings.json)")
    hooks.add_argument("--print", dest="dry_run", action="store_true", help="show the change, write nothing")
    return parser


def _fail(message: str) -> int:
    return fail("eywa", message)


def main(argv: Sequence[str] | None = None) -> int:
    """The command line (`argv` None) or a call with these arguments: the exit code, always returned (`run` is
    the program)."""
    given = sys.argv[1:] if argv is None else list(argv)
    return flushed(lambda: _main(given, _command_of(given) == "get", own_process=argv is None))


def run() -> None:
    """The program `eywa`. Its `eywa get` ends without the interpreter's finalization once `main` has flushed its
    output and its exit handlers have run: it writes nothing else, and tearing its modules down is a share of the
    wait (bench/RESULTS.md, "Why the code is as it is")."""
    code = main()
    if _command_of(sys.argv[1:]) != "get":
        raise SystemExit(code)
    import atexit
    import os

    atexit._run_exitfuncs()  # what the path registered still runs (a read-only index's stand-in folder removed)
    os._exit(code)  # skips threading's join too: the get path starts no thread (tests/test_cli.py proves it)


def _command_of(argv: Sequence[str]) -> str | None:
    """The command named in `argv`, past the options before it."""
    given = list(argv)
    while given and given[0].startswith("-"):
        if given.pop(0) == "--config" and given:
            given.pop(0)
    return given[0] if given else None


def _main(argv: list[str], get_only: bool, *, own_process: bool) -> int:
    """`own_process`: the command line of this process (not a call of `main` with arguments), which a command may
    replace with another program (`eywa reindex`'s last step)."""
    parser = _parser(get_only)
    complete(parser)
    args = parser.parse_args(argv)
    args.own_process = own_process
    if args.command == "completion":
        from eywa.cli.terminal import completion_script

        sys.stdout.write(completion_script("eywa", args.shell))
        return 0
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

    eywa = Eywa(settings)

    def command() -> int:
        with eywa.faults():
            return _COMMANDS[args.command](eywa, args)

    try:
        return reported("eywa", command, settings.data_dir)
    finally:
        eywa.close()


def _cmd_ingest(eywa, args) -> int:
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
    from eywa.core.config.light import check_every_key, light_settings
    from eywa.core.errors import ConfigError, StoreError
    from eywa.core.index.readonly import reading_current
    from eywa.core.retrieval.recall import RecallDefaults, format_handoffs, query_handoffs

    if args.max is not None and not 1 <= args.max <= 5:
        return _fail("--max must be between 1 and 5")
    if args.days_back is not None and args.days_back < 1:
        return _fail("--days-back must be at least 1")
    try:
        settings = light_settings(args.config)
        check_every_key(settings)
        defaults = RecallDefaults(settings.data_dir / "handoffs", settings.mode, settings.days_back,
                                  settings.max_handoffs, settings.zone)
    except ConfigError as exc:
        return _fail(_config_problem(args.config, exc))
    try:
        with reading_current(settings.db_path) as conn:
            results = query_handoffs(conn, " ".join(args.query) or None, defaults, days_back=args.days_back,
                                     max_results=args.max, project=args.project, mode=args.mode, agent=args.agent,
                                     machine=args.machine)
    except StoreError as exc:
        return _fail(str(exc))
    if args.json:
        _print_json([r.to_json() for r in results])
    else:
        sys.stdout.write(format_handoffs(results))
    return 0


def _config_problem(config: Path | None, light: Exception) -> str:
    """What `load_settings` says of a config the light reader refused, so that every command words a broken
    config file alike (pydantic is imported only on this error path)."""
    from eywa.core.config.settings import load_settings
    from eywa.core.errors import ConfigError

    try:
        load_settings(config)
    except ConfigError as full:
        return str(full)
    return str(light)


def _cmd_last(eywa, args) -> int:
    records = eywa.last(args.count, project=args.project, agent=args.agent, machine=args.machine)
    if args.json:
        _print_json([r.to_json() for r in records])
        return 0
    if not records:
        filters = " ".join(f"--{name} {value}" for name, value in
                           (("project", args.project), ("agent", args.agent), ("machine", args.machine)) if value)
        if filters and eywa.last(1):
            print(f"No session matches {filters}; `eywa last` without it lists the latest.")
        else:
            print("No sessions indexed yet: run `eywa ingest`.")
    for r in records:
        project = ",".join(r.projects) or "-"
        print(f"{paint(r.short_id, 'yellow')}  {paint(r.date, 'dim')}  {r.duration_min:>4}m  {r.agent:<11} "
              f"{r.machine or '-':<10} {paint(f'{project:<16}', 'cyan')} {r.headline}")
    return 0


def _cmd_show(eywa, args) -> int:
    record = eywa.show(args.id)
    if args.json:
        _print_json({**record.to_json(), "body": record.body})
    else:
        sys.stdout.write(record.body.rstrip("\n") + "\n")
    return 0


def _cmd_reindex(eywa, args) -> int:
    # The program builds the full-text index last in a lean process that replaces this one (cli/reindex_build.py),
    # so that what the staging left held is not under the build's peak.
    lean = args.own_process
    indexed, imported, problems = eywa.reindex(args.import_dir, build_text_index=not lean)
    for problem in problems:
        print(f"skipped {problem}", file=sys.stderr)
    note = f", {imported} imported" if args.import_dir else ""
    report = f"{indexed} handoffs indexed{note}; {len(problems)} files skipped"
    if lean:
        from eywa.cli.reindex_build import replace_process

        eywa.close()
        replace_process(eywa.settings.db_path, report)
    print(report)
    return 0


def _cmd_stats(eywa, args) -> int:
    from eywa.core.api import drift_lines
    from eywa.core.ingest.run import counted

    stats = eywa.stats()
    if args.json:
        _print_json(stats.__dict__)
        return 0

    def line(label: str, text: str) -> None:
        print(f"{paint(f'{label:<16}', 'bold')} {text}")

    last = stats.last_ingest
    line("data directory", f"{stats.data_dir} (index {stats.index_bytes / 1e6:.1f} MB)")
    line("handoffs", f"{stats.handoffs} ({stats.substantial} with work, {stats.imported} imported)")
    line("dates", f"{stats.first_date or '-'} .. {stats.last_date or '-'}")
    line("source files", f"{stats.sources} ({counted(stats.sessions_skipped, 'session')} skipped: empty or not "
                         "transcripts)")
    line("bad lines", f"{stats.bad_lines} skipped")
    if stats.drift:
        unknown = {version: counts for version, counts in stats.drift.items() if set(counts) - {"files"}}
        files = sum(counts.get("files", 0) for counts in stats.drift.values())
        found = f"unknown records in {counted(len(unknown), 'version')}" if unknown else "nothing unknown"
        line("versions read", f"{counted(files, 'file')} of {counted(len(stats.drift), 'version')}, {found}"
                              + ("" if args.verbose else " (--verbose: by version)"))
        for detail in drift_lines(stats.drift if args.verbose else unknown):
            print(f"{'':<17}{detail}")
    if stats.last_ingest_at:
        line("last ingest", f"{stats.last_ingest_at}: {counted(last.get('sessions_updated', 0), 'session')} updated "
                            f"in {last.get('seconds', 0):.1f}s")
    redaction = stats.redaction
    if redaction:
        last = redaction.get("last")
        line("redaction rules", f"{redaction['rules']}"
             + (f", {counted(redaction['pending'], 'session')} still to redact again (the next ingest does)"
                if redaction["pending"] else "")
             + (f"; re-redacted under them {last['at']}: {last['redrafted']} redrafted, {last['in_place']} in place,"
                f" {last['copies']} spoke {'copy' if last['copies'] == 1 else 'copies'}, in {last['seconds']:.1f}s"
                if last else ""))
    if stats.agents:
        read = stats.agent_bytes
        line("by agent", ", ".join(f"{a} {counted(n, 'session')} ({read.get(a, 0) / 1e6:.1f} MB of transcripts)"
                                   for a, n in stats.agents.items()))
    if stats.projects:
        line("projects", ", ".join(f"{p} ({n})" for p, n in stats.projects))
    from eywa.cli.extract import stats_lines

    for text in stats_lines(stats.llm):
        print(text)
    return 0


def _cmd_continue(eywa, args) -> int:
    import os

    plan = eywa.continue_plan(args.id)
    if args.dry_run:  # the prompt always: the message says to paste it where the project is now
        import shlex

        if plan.problem:
            print(f"{paint('eywa:', 'yellow', sys.stderr)} {plan.problem}", file=sys.stderr)
        if plan.folder is not None:
            print(f"cd {shlex.quote(str(plan.folder))}")
        print(plan.prompt)
        return 0
    if plan.problem or plan.folder is None or plan.argv is None:
        return _fail(plan.problem or "cannot start claude here")
    eywa.close()
    os.chdir(plan.folder)
    os.execv(plan.argv[0], plan.argv)  # the owner's terminal is claude's now; no return
def _cmd_push(eywa, args) -> int:
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


def _cmd_forget(eywa, args) -> int:
    from eywa.cli.forget import cmd_forget

    return cmd_forget(eywa, args)


def _cmd_extract(eywa, args) -> int:
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
    "forget": _cmd_forget,
}

if __name__ == "__main__":
    raise SystemExit(main())
