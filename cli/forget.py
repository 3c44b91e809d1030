"""`eywa forget`: sessions removed from everything Eywa keeps (core/ingest/forget.py), by id or in bulk
(`--project`, `--before`) after a count and a confirmation; `--undo` lifts a tombstone. Kept out of
cli/main.py, which stays a thin table."""

from __future__ import annotations

import datetime as dt
import sys
from typing import Any

_SHOWN = 10  # sessions listed before a bulk confirmation


def cmd_forget(eywa: Any, args: Any) -> int:
    if args.undo:
        if len(args.ids) != 1 or args.project or args.before:
            print("eywa: --undo takes one session id", file=sys.stderr)
            return 1
        uid = eywa.unforget(args.ids[0])
        print(f"{uid} is no longer forgotten: the next `eywa ingest` reads it again if its transcript is still there")
        return 0
    if args.ids and (args.project or args.before):
        print("eywa: give session ids, or --project / --before, not both", file=sys.stderr)
        return 1
    before = None
    if args.before:
        try:
            before = dt.date.fromisoformat(args.before)
        except ValueError:
            print(f"eywa: --before {args.before!r} is not a date (YYYY-MM-DD)", file=sys.stderr)
            return 1
    if not (args.ids or args.project or before):
        print("eywa: give session ids, or --project P and/or --before DATE", file=sys.stderr)
        return 1
    records = eywa.to_forget(args.ids, project=args.project, before=before)
    if not records:
        print("Nothing to forget: no session matches.")
        return 0
    bulk = not args.ids
    if bulk and not args.yes:
        for record in records[:_SHOWN]:
            print(f"  {record.short_id}  {record.date}  {', '.join(record.projects) or '-':<16} {record.headline}")
        if len(records) > _SHOWN:
            print(f"  ... and {len(records) - _SHOWN} more")
        if not sys.stdin.isatty():
            print(f"eywa: not a terminal, so nothing is forgotten without --yes ({len(records)} sessions match)",
                  file=sys.stderr)
            return 1
        answer = input(f"Forget these {len(records)} sessions? Their handoffs, archives and index entries are "
                       "deleted. [y/N] ").strip().lower()
        if answer not in ("y", "yes"):
            print("Nothing forgotten.")
            return 0
    eywa.forget([record.session_id for record in records])
    for record in records if not bulk else []:
        print(f"forgot {record.short_id} ({record.date}: {record.headline})")
    if bulk:
        print(f"forgot {len(records)} sessions")
    print("`eywa forget --undo ID` brings one back at the next ingest while its transcript exists")
    return 0
