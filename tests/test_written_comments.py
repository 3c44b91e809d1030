"""The comments a write adds to code are read from its whole new text (sources/comments.py), while its input is kept
cut: a reasoned comment past the cut reaches the decisions (`written_reasons`), bounded, redacted, never archived."""

from __future__ import annotations

import json
from pathlib import Path

from eywa.core.archive.renderer import Renderer
from eywa.core.extract.insights import written_reasons
from eywa.core.redaction.scrubber import default_redactor
from eywa.core.sources.claude.builder import build_session
from eywa.core.sources.codex import patch_calls
from eywa.core.sources.comments import SUPPRESSION_RE
from eywa.core.sources.common import COMMENT_KEEP, COMMENTS_KEEP, INPUT_KEEP
from eywa.core.sources.gemini import _tool as gemini_tool

from .test_extractor import corpus_session

CODE = "".join(f"value_{n} = compute({n})\n" for n in range(60))  # past INPUT_KEEP before any comment
REASON = "# Read the token from the keyring instead of the environment, so it never shows in process listings"
GITHUB_TOKEN = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"


def _claude_write(tmp_path: Path, tool_input: dict, name: str = "Write") -> tuple[list[str], str]:
    """The comments kept of one Claude Code write, and the session's archived markdown."""
    record = {"type": "assistant", "timestamp": "2026-02-01T10:00:00Z", "message": {
        "id": "m1", "model": "claude-opus-4-6", "content": [{"type": "tool_use", "id": "t1", "name": name,
                                                              "input": tool_input}]}}
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps(record) + "\n")
    session, _ = build_session("s", [path], [], default_redactor().redact)
    return session.tool_calls[0].comments, Renderer().render(session)


def test_a_comment_past_the_cut_of_a_writes_input_is_kept_and_the_archive_shows_none(tmp_path: Path) -> None:
    assert len(CODE) > INPUT_KEEP
    content = CODE + REASON + "\nTOKEN = keyring.get()\n"
    comments, markdown = _claude_write(tmp_path, {"file_path": "/r/auth.py", "content": content})
    assert comments == ["\n\n" + REASON.removeprefix("# ")]
    assert "keyring" not in markdown and "value_59" not in markdown  # the archive names the file, never its text


def test_a_multiedit_keeps_the_comments_each_edit_adds_and_not_those_it_had(tmp_path: Path) -> None:
    edits = [{"old_string": "# Cache it since it is read twice.\nx = 1\n",
              "new_string": "# Cache it since it is read twice.\nx = 2\n"},
             {"old_string": "y = 1\n", "new_string": CODE + "# Kept in memory because the file is small\ny = 1\n"}]
    comments, _ = _claude_write(tmp_path, {"file_path": "/r/a.py", "edits": edits}, "MultiEdit")
    assert comments == ["\n\nKept in memory because the file is small"]


def test_the_comments_kept_of_a_write_are_a_few_each_cut(tmp_path: Path) -> None:
    content = "".join(f"# Step {n} comes next because the one before wrote its input.\nstep_{n}()\n" for n in range(30))
    content += "# " + "a long reason " * 80 + "\n"
    comments, _ = _claude_write(tmp_path, {"file_path": "/r/steps.py", "content": content})
    assert len(comments) == COMMENTS_KEEP
    assert comments[-1] == "\n\nStep 9 comes next because the one before wrote its input."
    long_one, _ = _claude_write(tmp_path, {"file_path": "/r/long.py", "content": "# " + "a long reason " * 80 + "\n"})
    assert len(long_one[0]) == COMMENT_KEEP and long_one[0].endswith("…")


def test_a_secret_in_a_written_comment_is_redacted(tmp_path: Path) -> None:
    content = CODE + f"# Uses {GITHUB_TOKEN} because the app token has no scope for releases\n"
    comments, _ = _claude_write(tmp_path, {"file_path": "/r/release.py", "content": content})
    assert GITHUB_TOKEN not in "".join(comments) and "[REDACTED:github-token]" in comments[0]


def test_a_codex_patch_keeps_the_comments_its_added_lines_add_per_file() -> None:
    patch = ("*** Begin Patch\n*** Update File: src/auth.py\n@@\n-# Read the token from the environment\n"
             "-TOKEN = os.environ['TOKEN']\n+" + REASON + "\n+TOKEN = keyring.get()\n"
             "*** Add File: src/plain.py\n+x = 1\n*** End Patch\n")
    calls = patch_calls("c1", patch, "/r", default_redactor().redact)
    assert [(call.name, call.comments) for call in calls] == [
        ("Edit", ["\n\n" + REASON.removeprefix("# ")]), ("Write", [])]
    assert "keyring" not in json.dumps([call.input for call in calls])  # the patch itself is not kept


def test_a_gemini_replace_keeps_the_comments_its_new_string_adds() -> None:
    call = gemini_tool({"id": "g1", "name": "replace", "args": {
        "file_path": "/r/auth.py", "old_string": "TOKEN = os.environ['TOKEN']\n",
        "new_string": REASON + "\nTOKEN = keyring.get()\n"}}, default_redactor().redact)
    assert call.name == "Edit" and call.comments == ["\n\n" + REASON.removeprefix("# ")]
    assert call.input == {"file_path": "/r/auth.py"}


def test_a_reasoned_comment_past_the_cut_input_of_a_real_session_is_a_decision() -> None:
    # 0bdbfa06 wrote "// Current session has no checkpoints yet - show overview instead" far into an Edit (its label:
    # "When the current session has no data, show an overview ... instead of erroring"): the cut input never held it
    session = corpus_session("0bdbfa06-acf1-473a-b3e4-6a03313d1d0e")
    text = "Current session has no checkpoints yet - show overview instead"
    assert text in [item.text for item in written_reasons(session)]
    assert not any(text in json.dumps(call.input) for call in session.tool_calls)


def test_comments_past_the_cut_that_say_no_reason_are_no_decision() -> None:
    # 569aed7b's edits add a score of comments, most past their inputs' cut, each what the code does ("Check if settings
    # file exists", "promptSettingsTarget interactively asks the user ..."), none why
    session = corpus_session("569aed7b-6ead-4790-a3fe-c7028466112c")
    assert sum(len(call.comments) for call in session.tool_calls) > 20
    assert written_reasons(session) == []


def test_a_linters_directive_is_kept_with_its_reason_and_a_note_mark_is_not(tmp_path: Path) -> None:
    # "//nolint:exhaustive // default case ...": the linter silenced is the choice the reason is of (5e231473)
    content = ("//nolint:exhaustive // default case handles all other agent types\nswitch t {}\n"
               "// Note: the cache is reset by tests\nvar cache = map[string]int{}\n")
    comments, _ = _claude_write(tmp_path, {"file_path": "/r/hooks.go", "content": content})
    assert comments == ["\n\nnolint:exhaustive // default case handles all other agent types",
                        "\n\nthe cache is reset by tests"]


def test_a_directive_names_eslint_rules_of_a_plugin_and_ends_before_a_dash_that_separates() -> None:
    for text, names, reason in (
            ("eslint-disable-next-line react-hooks/exhaustive-deps -- deps are stable", "react-hooks/exhaustive-deps",
             "deps are stable"),
            ("eslint-disable-next-line @typescript-eslint/no-explicit-any -- the API is untyped",
             "@typescript-eslint/no-explicit-any", "the API is untyped"),
            ("noqa:E501- a long URL", "E501", "a long URL"),
            ("eslint-disable-next-line no-console -- output is the CLI's", "no-console", "output is the CLI's")):
        found = SUPPRESSION_RE.match(text)
        assert found is not None and (found["names"], found["reason"]) == (names, reason)
