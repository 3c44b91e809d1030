"""The tests a session's writes added and renamed, by name (core/sources/declared_tests.py read from each write's whole
texts, core/extract/tests_added.py): What Happened's line of them, on the real corpus sessions whose reviewers wanted
the names and on sessions it must not fire on."""

from __future__ import annotations

import time
from zoneinfo import ZoneInfo

from eywa.core.extract.deterministic import draft
from eywa.core.sources.declared_tests import changed_tests, declared

from .test_extractor import corpus_session

UTC = ZoneInfo("UTC")


def _line(session_id: str) -> list[str]:
    return [line for line in draft(corpus_session(session_id), UTC).what_happened if line.startswith("Tests added")
            or line.startswith("Tests renamed")]


def test_a_writes_tests_are_read_by_their_declaration() -> None:
    text = ("func TestA(t *testing.T) {\nfunc (s *Suite) TestB() {\nfunc TestMain(m *testing.M) {\nfunc helper() {\n"
            "    def test_c(self):\nasync def test_d():\nit('renders the list', () => {\n  test(\"adds one\", () => {\n"
            "x.test('no', y)\n// func TestE(t *testing.T)\n")
    assert declared(text) == ["TestA", "TestB", "test_c", "test_d", "renders the list", "adds one"]
    assert changed_tests([("func TestOld(t *testing.T) {", "func TestNew(t *testing.T) {")]) == (["TestNew"],
                                                                                                  ["TestOld"])


def test_a_long_line_is_read_for_tests_in_linear_time() -> None:
    for text in (" " * 200_000 + "x", "func Test" + "A" * 200_000, "it(" + " " * 200_000, "def test_" + "a" * 200_000):
        start = time.perf_counter()
        declared(text + "\n" + text)
        assert time.perf_counter() - start < 1


def test_what_happened_names_the_tests_the_session_added() -> None:
    # the reviewers of cacf6cfb and 87a7858d ("The test has been added and passes") wanted the new tests named; the
    # second of cacf6cfb's lies past the 600 characters of the edit's input kept
    assert _line("cacf6cfb-e843-47af-9dc2-6a5af1137c53") == [
        "Tests added: `TestRunEnableWithStrategy_PreservesExistingSettings`, "
        "`TestRunEnableWithStrategy_PreservesLocalSettings`"]
    # 87a7858d's report names its test with the file and line: that change line says it, not a second one
    assert _line("87a7858d-3f94-4c65-a2d5-307e9337b041") == []
    assert "Added test: `TestSubagentCheckpoints_PostTaskNoFileChanges` in " in "\n".join(
        draft(corpus_session("87a7858d-3f94-4c65-a2d5-307e9337b041"), UTC).what_happened)


def test_what_happened_names_the_tests_the_session_renamed() -> None:
    # 8ee504de renamed two tests to the behaviour they check now: a successor looks for the new names
    assert _line("8ee504de-7ee5-43bc-9e8c-db2d5ec5a9e6") == [
        "Tests renamed: `TestShadow_IncrementalContext` → `TestShadow_FullTranscriptContext`, "
        "`TestShadow_IncrementalCondensationWithIntermediateCommits` → "
        "`TestShadow_FullTranscriptCondensationWithIntermediateCommits`"]


def test_no_tests_line_for_tests_said_already_shown_in_a_plan_or_rewritten_whole() -> None:
    # 4e836284's report names its test; 9ff9c26d's tests are in its plan's text; 07d86da7 wrote a test file it had
    # read whole again (the tests it had before are not known)
    for session_id in ("4e836284-4a0a-44a1-acb3-38c68db78007", "9ff9c26d-319d-4a47-843a-3d60f73295c9",
                       "07d86da7-2e39-4276-a0d5-7b46a85b8750"):
        assert _line(session_id) == []
