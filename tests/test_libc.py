"""The C library's functions by name (core/libc.py), for the allocator's bounds and the index's page-out."""

from __future__ import annotations

import sys

import pytest

from eywa.core import libc


def test_a_function_the_c_library_lacks_is_none_not_an_error() -> None:
    assert libc.function("eywa_no_such_function") is None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's functions are Linux's")
def test_the_allocator_and_the_pager_find_theirs() -> None:
    assert libc.function("mallopt") is not None and libc.function("madvise") is not None
