"""How long a session ran, as handoffs show it. Its own module with no imports, so that the hooks,
which must start in milliseconds, can use it without the handoff model."""


def format_duration(minutes: int) -> str:
    """`70` -> `1h 10m`, `5` -> `5m`."""
    hours, rest = divmod(max(0, int(minutes)), 60)
    return f"{hours}h {rest}m" if hours else f"{rest}m"
