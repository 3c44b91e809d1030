"""`eywa extract`: one session now, or the backfill of every old session (`--all`, optionally `--batch`),
and the LLM lines of `eywa ingest` and `eywa stats`. Kept out of cli/main.py, which stays a thin table.
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

from eywa.cli.progress import with_progress_bar


def report_notes(report: Any, out: TextIO | None = None) -> None:
    """Warnings and the stop reason of an LLM pass, one line each (to stderr by default)."""
    if report is None:
        return
    out = out or sys.stderr  # looked up now: a default bound at import would outlive a replaced stderr
    for warning in report.warnings:
        print(f"eywa: warning: {warning}", file=out)
    if report.stopped:
        print(f"eywa: LLM extraction stopped: {report.stopped}", file=out)


def cmd_extract(eywa: Any, args: Any) -> int:
    if args.all:
        return _extract_all(eywa, args)
    if not args.id:
        print("eywa: give a session id (or a unique prefix), or --all", file=sys.stderr)
        return 1
    if args.batch:
        print("eywa: --batch goes with --all", file=sys.stderr)
        return 1
    record = eywa.extract(args.id)
    report = eywa.last_llm_report
    report_notes(report)
    if report is not None:
        outcome = report.outcomes.get(record.session_id)
        if outcome:
            print(f"eywa: {record.session_id}: {outcome}", file=sys.stderr)
    elif not eywa.llm_choice().active:
        print(f"eywa: extracted deterministically: {eywa.llm_choice().reason}", file=sys.stderr)
    sys.stdout.write(record.body.rstrip("\n") + "\n")
    return 1 if report is not None and report.stopped else 0


def _extract_all(eywa: Any, args: Any) -> int:
    from eywa.core.errors import LLMStop

    choice = eywa.llm_choice()
    if not choice.active:
        print(f"eywa: LLM extraction needs an Anthropic API key (ANTHROPIC_API_KEY or llm.api_key) or a signed-in "
              f"Claude Code CLI: {choice.reason}", file=sys.stderr)
        return 1
    llm = eywa.llm_pass()
    mode = args.progress or eywa.settings.ingest.show_progress
    try:
        llm.start()  # the model or sign-in check: a deprecated model is named before anything is spent
        if args.batch:
            llm.batch_backend()
    except LLMStop as exc:
        print(f"eywa: {exc}", file=sys.stderr)
        return 1
    for warning in llm.warnings:
        print(f"eywa: warning: {warning}", file=sys.stderr)
    if llm.unfinished_batches():
        print("Waiting for the batch a previous run left unfinished...", file=sys.stderr)
        resumed = with_progress_bar(mode, "request", lambda progress: llm.resume_batches(progress))
        print(resumed.summary())
    plan = llm.plan_all()
    print(plan.describe(batch=args.batch))
    if not plan.candidates and not plan.restore:
        print("Nothing to extract.")
        return 0
    if plan.candidates and not args.yes:
        if not sys.stdin.isatty():
            print("eywa: not a terminal, so nothing is sent without --yes", file=sys.stderr)
            return 1
        answer = input("Start? [y/N] ").strip().lower()
        if answer not in ("y", "yes"):
            print("Nothing sent.")
            return 0
    report = with_progress_bar(mode, "request" if args.batch else "session",
                       lambda progress: llm.run_all(plan, batch=args.batch, progress=progress))
    report_notes(report)
    print(report.summary())
    return 1 if report.stopped and not report.stopped.startswith("spending cap") else 0


def stats_lines(llm: dict[str, Any]) -> list[str]:
    """The `eywa stats` lines about LLM extraction."""
    if not llm:
        return []
    status = f"{llm.get('backend')}, model {llm.get('model')}" if llm.get("active") else "off"
    states = llm.get("states", {})
    waiting = ", ".join(f"{n} {s}" for s, n in sorted(states.items()) if s != "done")
    lines = [f"llm extraction   {status}: {llm.get('extracted', 0)} handoffs by Claude"
             + (f" ({waiting})" if waiting else "")]
    if llm.get("backend_reason"):
        lines.append(f"llm backend      llm.backend {llm.get('wanted', 'auto')}: {llm['backend_reason']}")
    usage = llm.get("usage")
    if usage:
        cost = llm.get("cost_usd")
        lines.append(
            f"llm usage        {llm.get('requests', 0)} requests: {usage['input_tokens']:,} input, "
            f"{usage['cache_creation_input_tokens']:,} cache write, {usage['cache_read_input_tokens']:,} cache read, "
            f"{usage['output_tokens']:,} output tokens; {llm.get('tokens_today', 0):,} today"
            + (f"; about ${cost:.4f}" if cost is not None else ""))
    if llm.get("last_stop"):
        lines.append(f"llm last stop    {llm['last_stop']}")
    return lines
