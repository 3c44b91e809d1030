from __future__ import annotations

import ast
import io
import re
import subprocess
import sys
import tokenize
from pathlib import Path

from .conftest import ROOT


def test_ruff_is_clean() -> None:
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "."], cwd=ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_engine_imports_no_front_end_the_index_no_extractor_and_only_core_index_imports_sqlite3() -> None:
    # import-linter reads the real import graph (pyproject.toml [tool.importlinter]), lazy imports included
    result = subprocess.run([sys.executable, "-c", "from importlinter.cli import lint_imports_command; "
                             "lint_imports_command()"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "4 kept, 0 broken" in result.stdout


def test_readme_test_command_is_what_ci_runs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    command = ci.strip().splitlines()[-1]
    assert command in readme
    assert Path(ROOT / ".ci" / "run").stat().st_mode & 0o111


# A benchmark figure in a comment or docstring: a time, size or share; a quality metric's value; "N times
# faster"; a 0.xxx score; "measured" with its number. Figures go to bench/RESULTS.md ("Why the code is as it is").
_FIGURES = (
    re.compile(r"(?<![\w.])\d+(?:[.,]\d+)?\s?(?:ms|us|µs|s|sec|seconds|MB/s|MB|KB|GB|%)(?![\w/])"),
    re.compile(r"\b(?:recall|hit|mrr|ndcg|p50|p90|p95|top-\d|wer|agreement|f1)\b(?:@\d+)?[^.;\n]{0,40}?"
               r"(?<![\w.])\d?\.\d+", re.IGNORECASE),
    re.compile(r"\b\d+(?:\.\d+)?\s?(?:x|times)\s+(?:faster|slower|as long|as much|as fast)\b"),
    re.compile(r"(?<![\w.])0\.\d{3,}\b"),
    re.compile(r"\bmeasured\b[^.;\n]{0,60}?(?<![\w-])\d", re.IGNORECASE),
)
# Facts that look like figures: limits of a protocol or a model, sizes the code chooses, quoted text.
# (file, phrase): a figure inside that phrase of that file passes.
_FIGURE_FACTS = (
    ("bot/speech/transcribe.py", "a Telegram bot downloads 20 MB at most"),  # the Bot API's getFile limit
    ("bot/speech/transcribe.py", "loudest 100 ms window"),  # _WINDOW, a tenth of SAMPLE_RATE
    ("bot/speech/transcribe.py", "every 30 s window"),  # Whisper's input window
    ("core/extract/open_threads.py", '"Wait, only 16ms?"'),  # what Claude wrote
)
_FRONT_AND_ENGINE = ("core", "bot", "cli", "claude_code")


def _comment_texts(source: str) -> list[tuple[int, str]]:
    """(first line, text) of every comment (consecutive whole-line comments joined) and every docstring."""
    texts: list[tuple[int, str]] = []
    joinable = -2  # the line of the last whole-line comment
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            whole_line = tok.line.lstrip().startswith("#")
            if whole_line and tok.start[0] == joinable + 1:
                texts[-1] = (texts[-1][0], texts[-1][1] + " " + tok.string.lstrip("# "))
            else:
                texts.append((tok.start[0], tok.string.lstrip("# ")))
            joinable = tok.start[0] if whole_line else -2
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                texts.append((node.body[0].lineno, doc))
    return sorted((line, " ".join(text.split())) for line, text in texts)


def _figures(path: str, source: str) -> list[tuple[int, str, str]]:
    """(line, figure, its context) of each benchmark figure the comments and docstrings of `source` quote."""
    allowed = [phrase for file, phrase in _FIGURE_FACTS if file == path]
    found = []
    for line, text in _comment_texts(source):
        end = 0  # a figure two patterns find is told once
        for m in sorted((m for pattern in _FIGURES for m in pattern.finditer(text)), key=lambda m: m.start()):
            if m.start() >= end and not any(m.group() in phrase and phrase in text for phrase in allowed):
                found.append((line, m.group(), text[max(0, m.start() - 60):m.end() + 30]))
                end = m.end()
    return found


def test_code_comments_quote_no_benchmark_figures() -> None:
    found = []
    for folder in _FRONT_AND_ENGINE:
        for file in sorted((ROOT / folder).rglob("*.py")):
            path = file.relative_to(ROOT).as_posix()
            found += [f"{path}:{line}: {figure!r} in ...{context}..."
                      for line, figure, context in _figures(path, file.read_text(encoding="utf-8"))]
    assert not found, "a figure belongs in bench/RESULTS.md, a line of why in the code:\n" + "\n".join(found)


def test_every_allowed_figure_is_still_in_its_file() -> None:
    # an entry whose phrase is gone would let a later figure of that file through unseen
    for path, phrase in _FIGURE_FACTS:
        texts = [text for _, text in _comment_texts((ROOT / path).read_text(encoding="utf-8"))]
        assert any(phrase in text for text in texts), (path, phrase)


def test_figure_check_finds_a_figure_and_passes_a_fact() -> None:
    source = ('"""Ranks handoffs.\n\nThe GROUP BY took ~0.25 s at 100k handoffs."""\n'
              "# recall@5 0.63 -> 0.54 without the decay; a button holds 64 bytes\n"
              "X = 1  # deferred: 3.6 s of imports\n"
              "Y = 2  # a WITHOUT ROWID table took 2.5 times as long\n")
    found = _figures("core/example.py", source)
    assert [(line, figure) for line, figure, _ in found] == [
        (1, "0.25 s"), (4, "recall@5 0.63"), (5, "3.6 s"), (6, "2.5 times as long")]
    assert _figures("core/example.py", "# Telegram allows 64 bytes of callback data\n") == []
    limit = "MAX = 1  # what OpenAI's endpoint accepts; a Telegram bot downloads 20 MB at most\n"
    assert _figures("bot/speech/transcribe.py", limit) == []  # an allowed fact, in its own file only
    assert [figure for _, figure, _ in _figures("bot/send.py", limit)] == ["20 MB"]
