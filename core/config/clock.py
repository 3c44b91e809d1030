"""Eywa's one clock: every "now" (recency, the digest's day, settled sessions, the per-day cap) comes from here.

`EYWA_NOW` pins it, for tests and reproducible runs. Monotonic timers for durations and timeouts do not
read this clock. Imports nothing at module load: the hooks import it on their start-up path.
"""

from __future__ import annotations

import os

from eywa.core.errors import ConfigError

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    import datetime as dt

NOW_ENV = "EYWA_NOW"


def now() -> dt.datetime:
    """The current time in UTC, or the instant pinned by `EYWA_NOW`; raises `ConfigError` for a bad value.

    `EYWA_NOW` is an ISO date (`2026-02-17`: the start of that day, UTC) or an ISO datetime (naive
    means UTC; an offset is honoured and converted to UTC). Empty counts as unset.
    """
    import datetime as dt  # deferred: datetime weighs on the hooks' start-up

    raw = os.environ.get(NOW_ENV, "").strip()
    if not raw:
        return dt.datetime.now(dt.UTC)
    try:
        pinned = dt.datetime.fromisoformat(raw)  # a date-only string parses as that day's midnight
    except ValueError:
        raise ConfigError(
            f"{NOW_ENV}={raw!r} is not an ISO date or datetime; use e.g. 2026-02-17 or 2026-02-17T09:30:00Z"
        ) from None
    if pinned.tzinfo is None:
        return pinned.replace(tzinfo=dt.UTC)
    return pinned.astimezone(dt.UTC)


def timestamp() -> float:
    """`now()` as seconds since the epoch, to compare with file mtimes (settled sessions, stale marks)."""
    return now().timestamp()
