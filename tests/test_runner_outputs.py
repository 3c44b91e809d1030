"""Real runners' output, passed and failed (tests/runner_outputs.py made it), read for its verdict: the whole of it,
and its last 15 lines, what `| tail -15` leaves of a run whose exit status the pipe hides."""

from __future__ import annotations

import pytest

from eywa.core.extract import commands
from tests.runner_outputs import FIXTURES, RUNNERS

# runner -> (the failure count its summary prints, 0: none; the failing test's name as `failed_tests` reads it,
# "": its output names it in no form the patterns read; whether its verdict is in its last 15 lines)
EXPECTED: dict[str, tuple[int, str, bool]] = {
    "jest": (1, "fails", True), "vitest": (1, "fails", True), "mocha": (1, "", False), "ava": (1, "", True),
    "bun": (1, "fails", True), "deno": (1, "", True), "pytest": (1, "test_fails", True),
    "unittest": (1, "test_fails", True), "cargo": (1, "fails", True), "go": (1, "TestFails", True),
    "rspec": (1, "", True), "phpunit": (1, "testFails", True), "mix": (1, "fails", True),
    "minitest": (1, "test_fails", True),
}


def _output(runner: str, run: str, tail: bool = False) -> str:
    text = (FIXTURES / f"{runner}-{run}.txt").read_text()
    return "\n".join(text.splitlines()[-15:]) if tail else text


def test_every_runner_has_its_fixtures_and_expectations() -> None:
    assert set(EXPECTED) == set(RUNNERS)
    assert all((FIXTURES / f"{runner}-{run}.txt").is_file() for runner in RUNNERS for run in ("passed", "failed"))


@pytest.mark.parametrize("runner", EXPECTED)
def test_a_failed_run_reads_failed_and_a_passed_one_passed(runner: str) -> None:
    assert (commands.failed(_output(runner, "failed")), commands.failed(_output(runner, "passed"))) == (True, False)


@pytest.mark.parametrize("runner", [runner for runner, (_, _, at_end) in EXPECTED.items() if at_end])
def test_the_last_15_lines_of_a_run_say_its_verdict(runner: str) -> None:
    assert (commands.failed(_output(runner, "failed", tail=True)),
            commands.failed(_output(runner, "passed", tail=True))) == (True, False)


@pytest.mark.parametrize("runner", EXPECTED)
def test_a_failed_run_counts_its_failures_and_a_passed_one_none(runner: str) -> None:
    assert (commands.failures(_output(runner, "failed")), commands.failures(_output(runner, "passed"))) == (
        EXPECTED[runner][0], 0)


@pytest.mark.parametrize("runner", EXPECTED)
def test_a_failed_run_names_its_failing_test_and_a_passed_one_none(runner: str) -> None:
    name = EXPECTED[runner][1]
    assert (commands.failed_tests(_output(runner, "failed")), commands.failed_tests(_output(runner, "passed"))) == (
        (name,) if name else (), ())


@pytest.mark.parametrize("runner", EXPECTED)
def test_a_failed_runs_words_are_a_test_runs_own(runner: str) -> None:
    # on a line of several checks (`npm test && npm run lint`) they say the test run is the one that failed
    assert commands._KIND_FAILED["tests"].search(_output(runner, "failed"))


@pytest.mark.parametrize("text", ["0 failures", "  2 passing tests were rewritten", "see FAILURES! above",
                                  "OK (see the notes)", "a 1 fail rate", "2 examples, no failures yet"])
def test_a_runners_words_in_other_text_say_nothing(text: str) -> None:
    assert commands.failed(text) is None
