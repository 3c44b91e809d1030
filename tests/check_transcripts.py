"""Regenerates the committed "left failing" sessions (tests/fixtures/agents-checks/) by running the real Codex CLI
and Gemini CLI (pinned, tests/tools.py) headless against scripted model servers on 127.0.0.1:

    .venv/bin/python -m tests.check_transcripts        # after changing tests/agent_clis/package.json

What runs, for each agent, in a git repository `widgets` (remote acme/widgets): it writes retry.py and a test,
commits both, edits retry.py again, runs `python3 -m pytest -q` (one test fails: backoff() does not exist yet;
the python3 on PATH must have pytest), runs `git status`, and ends with "Next: add backoff(attempt) to the retry
loop". The test run is never rerun
green and the last edit is never committed: what a handoff must report open (core/extract/facts.py). The
sessions live apart from tests/fixtures/agents/ so that those fixtures, their goldens and counts stay as they are.
The same session with the real Claude Code: tests/claude_scenarios.py `failing_tests` (its harness fixtures).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from tests.agent_transcripts import Codex, Gemini, _git_repo
from tests.fake_agent_models import ScriptedModels, Turn
from tests.tools import map_paths, stand_in

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "agents-checks"
COMMITTED_WORK = Path("/tmp/eywa-agents")
PROMPT = "Add a retry helper with a test to the widgets repo, commit it, then run the tests"
RETRY = "def retry(fn, attempts=3):\n    for attempt in range(attempts):\n        try:\n            return fn()\n" \
        "        except Exception:\n            if attempt == attempts - 1:\n                raise\n"
TEST = "from retry import retry\n\n\ndef test_retry_returns_the_value():\n    assert retry(lambda: 2) == 2\n\n\n" \
       "def test_backoff_doubles():\n    from retry import backoff\n    assert backoff(2) == 4\n"
COMMIT = "git add retry.py test_retry.py && git -c user.name=Dev -c user.email=dev@example.com commit -q " \
         "-m 'Add retry helper'"
TESTS = "python3 -m pytest -q"
DOCSTRING = '"""Call fn until it succeeds."""'
CLOSING = ("The retry helper is committed, and I gave retry() a docstring since. `python3 -m pytest -q` fails: "
           "test_backoff_doubles imports a backoff() that does not exist yet.\n\n"
           "Next: add backoff(attempt) to the retry loop")


def _patch(path: str, text: str) -> str:
    return f"*** Add File: {path}\n" + "".join(f"+{line}\n" for line in text.splitlines())


def _codex(models: ScriptedModels, codex: Codex, repo: Path) -> None:
    docstring = ("*** Begin Patch\n*** Update File: retry.py\n@@\n def retry(fn, attempts=3):\n"
                 "+    \"\"\"Call fn until it succeeds, at most `attempts` times.\"\"\"\n*** End Patch\n")
    models.turns.extend([
        Turn(text="I'll add retry.py and its test.",
             calls=[("apply_patch", "*** Begin Patch\n" + _patch("retry.py", RETRY) + _patch("test_retry.py", TEST)
                     + "*** End Patch\n")]),
        Turn(calls=[("exec_command", {"cmd": COMMIT})]),
        Turn(text="Adding a docstring.", calls=[("apply_patch", docstring)]),
        # A login shell would reset PATH to one whose python3 may lack pytest.
        Turn(calls=[("exec_command", {"cmd": TESTS, "login": False})]),
        Turn(calls=[("exec_command", {"cmd": "git status"})]),
        Turn(text=CLOSING),
    ])
    codex.exec(repo, PROMPT)


def _gemini(models: ScriptedModels, gemini: Gemini, repo: Path) -> None:
    models.turns.extend([
        Turn(text="I'll add retry.py and its test.", calls=[
            ("write_file", {"file_path": str(repo / "retry.py"), "content": RETRY}),
            ("write_file", {"file_path": str(repo / "test_retry.py"), "content": TEST})]),
        Turn(calls=[("run_shell_command", {"command": COMMIT, "description": "Commit the helper"})]),
        Turn(calls=[("replace", {"file_path": str(repo / "retry.py"), "old_string": "def retry(fn, attempts=3):\n",
                                 "new_string": f"def retry(fn, attempts=3):\n    {DOCSTRING}\n",
                                 "instruction": "Add a docstring"})]),
        Turn(calls=[("run_shell_command", {"command": TESTS, "description": "Run the tests"})]),
        Turn(calls=[("run_shell_command", {"command": "git status", "description": "Show the working tree"})]),
        Turn(text=CLOSING),
    ])
    gemini.prompt(repo, PROMPT)


def generate(out: Path = FIXTURES) -> None:
    """Both sessions as the pinned CLIs write them now, into `out` (`codex/` as ~/.codex, `gemini/` as ~/.gemini)."""
    with stand_in(COMMITTED_WORK) as work:
        home = work / "home"
        staging = out.with_name(out.name + ".new")
        shutil.rmtree(staging, ignore_errors=True)
        snapshot = Turn(text="<state_snapshot>retry.py added to widgets.</state_snapshot>")
        with ScriptedModels([], fallback=snapshot) as models:
            codex, gemini = Codex(home, models), Gemini(home, models)
            for name, run in (("codex", lambda repo: _codex(models, codex, repo)),
                              ("gemini", lambda repo: _gemini(models, gemini, repo))):
                repo = work / name / "widgets"
                _git_repo(repo)
                run(repo)
                subprocess.run(["git", "status", "--short"], cwd=repo, check=True, capture_output=True)
        shutil.copytree(codex.home / "sessions", staging / "codex" / "sessions")
        for chats in (gemini.home / ".gemini" / "tmp").glob("*/chats"):
            shutil.copytree(chats, staging / "gemini" / "tmp" / chats.parent.name / "chats")
            project = staging / "gemini" / "tmp" / chats.parent.name
            shutil.copy2(chats.parent / ".project_root", project / ".project_root")
        map_paths(staging, work, COMMITTED_WORK)
    shutil.rmtree(out, ignore_errors=True)
    staging.rename(out)


def fixture_sessions(root: Path = FIXTURES) -> dict[str, Path]:
    """The Codex rollout and the Gemini chat: `codex`, `gemini`."""
    return {"codex": next(root.glob("codex/sessions/**/*.jsonl")),
            "gemini": next(root.glob("gemini/tmp/*/chats/*.jsonl"))}


if __name__ == "__main__":
    generate()
    print(f"wrote {sum(1 for p in FIXTURES.rglob('*') if p.is_file())} files under {FIXTURES}")
