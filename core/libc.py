"""The C library's own functions, by name, for what Python does not offer (glibc's `mallopt`, Linux's `madvise`):
Linux only; elsewhere, or where the library has no such function, there is none and the caller does without."""

from __future__ import annotations

import ctypes
import sys
from typing import Any


def function(name: str, *argtypes: type) -> Any | None:
    """The C library's function `name` (with `argtypes`, if given; errno kept for `ctypes.get_errno`), or None."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        found = getattr(ctypes.CDLL(None, use_errno=True), name)
    except (OSError, AttributeError):
        return None
    if argtypes:
        found.argtypes = list(argtypes)
    return found
