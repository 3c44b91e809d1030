"""The suite itself stays on the machine: only 127.0.0.1 can be reached (tests/conftest.py)."""

from __future__ import annotations

import socket

import pytest


def test_a_test_cannot_connect_beyond_loopback() -> None:
    with pytest.raises(ConnectionRefusedError, match="127.0.0.1 only"):
        socket.create_connection(("192.0.2.1", 443), timeout=1)  # TEST-NET-1: never routed


def test_loopback_stays_reachable() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        with socket.create_connection(server.getsockname(), timeout=1):
            pass
