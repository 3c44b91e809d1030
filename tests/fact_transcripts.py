"""Regenerates the committed session-facts sessions (tests/fixtures/agents-facts/) by running the real Codex CLI,
Gemini CLI and Claude Code (pinned, tests/tools.py) headless against scripted model servers on 127.0.0.1, one
session a scenario and agent:

    .venv/bin/python -m tests.fact_transcripts [SCENARIO ...]     # after changing tests/agent_clis/package.json

Each scenario (SCENARIOS) is a list of steps, the same for every agent, that each takes with its own tools as the
CLI really runs them: a file written (Codex `apply_patch` "Add File", Gemini CLI `write_file`, Claude Code `Write`),
a file edited (`apply_patch` "Update File", `replace`, `Edit`), a shell command (`exec_command`,
`run_shell_command`, `Bash`: git, pytest, ruff run for real), a todo list (Gemini CLI's `write_todos`; Codex 0.171
offers no `update_plan` in `codex exec`, Claude Code's task tools are tests/claude_scenarios.py's), and a closing
message. The repository `widgets` is set up first (`Scenario.setup`: a bare repository in the scratch folder as
`origin` where a push is wanted, a first commit). Commits carry fixed dates, so their hashes do not change between
runs; the transcripts name /tmp/eywa-agents for the scratch folder (tests/tools.py `map_paths`). What each
handoff must say: tests/test_real_cli_facts.py.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.agent_transcripts import Codex, Gemini
from tests.claude_harness import ClaudeCode, ScriptedModel, tool
from tests.claude_harness_regen import copy_transcripts
from tests.fake_agent_models import PLANS, RUNNING, ScriptedModels, Turn
from tests.more_agent_transcripts import Copilot, Qwen
from tests.tools import map_paths, stand_in

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "agents-facts"
COMMITTED_WORK = Path("/tmp/eywa-agents")
AGENTS = ("codex", "gemini", "claude")
EVERY_AGENT = (*AGENTS, "copilot", "qwen")  # Copilot CLI and Qwen Code: the repository-state and check scenarios
GIT_DATES = {"GIT_AUTHOR_DATE": "2026-12-01T10:00:00+00:00", "GIT_COMMITTER_DATE": "2026-12-01T10:00:00+00:00"}
# The agents' commands: on this machine only (npm asks its registry for a newer npm unless told not to), and no
# bytecode cache (an edit of the same size in the same second as the first run would leave pytest the stale module).
COMMAND_ENV = {"NPM_CONFIG_UPDATE_NOTIFIER": "false", "NPM_CONFIG_OFFLINE": "true", "PYTHONDONTWRITEBYTECODE": "1"}
WIDGET = "def widget(size):\n    return size * 2\n"
BUGGY = "def widget(size):\n    return size + 2\n"
TEST = "from widget import widget\n\n\ndef test_widget_doubles():\n    assert widget(3) == 6\n"
SLOW_TEST = "import time\n\n" + TEST.replace("    assert", "    time.sleep(2)\n    assert")
UNUSED = "import os\n\n\ndef widget(size):\n    return size * 2\n"
UNITTEST = ("import unittest\n\nfrom widget import widget\n\n\nclass WidgetTest(unittest.TestCase):\n"
            "    def test_widget_doubles(self):\n        self.assertEqual(widget(3), 6)\n\n\n"
            "if __name__ == \"__main__\":\n    unittest.main()\n")
NODE_TEST = ("const test = require('node:test');\nconst assert = require('node:assert');\n"
             "const { widget } = require('./widget');\n\ntest('widget doubles', () => {\n"
             "  assert.strictEqual(widget(3), 6);\n});\n")
DOC_OLD, DOC_NEW = "def widget(size):\n", 'def widget(size):\n    """Twice the size."""\n'
TESTS = "python3 -m pytest -q"
# GitHub's CLI, stood in for: `gh pr create` pushes the branch (to the bare origin) and prints the new PR's address.
GH = """#!/bin/sh
[ "$1 $2" = "pr create" ] || { echo "gh stand-in: only pr create" >&2; exit 1; }
git push -q -u origin HEAD 2>/dev/null && echo https://github.com/acme/widgets/pull/7
"""


@dataclass(frozen=True)
class Write:
    path: str
    content: str


@dataclass(frozen=True)
class Edit:
    path: str
    old: str
    new: str


@dataclass(frozen=True)
class Shell:
    command: str
    yield_ms: int = 0  # Codex's `exec_command` returns after this long, the process still running (0: its default)
    workdir: str = ""  # the folder it runs in (Codex's `workdir`, Gemini CLI's `dir_path`, a `cd` in Claude Code's)


@dataclass(frozen=True)
class Poll:
    """Codex's `write_stdin` to the process still running, until it ends; the other agents' shells wait anyway."""


@dataclass(frozen=True)
class Plan:
    """Gemini CLI's plan mode: `enter_plan_mode`, the plan written into its plans folder, `exit_plan_mode`."""

    filename: str
    content: str


@dataclass(frozen=True)
class Todos:
    items: tuple[tuple[str, str], ...]  # (description, status)


Step = Write | Edit | Shell | Poll | Plan | Todos


@dataclass(frozen=True)
class Scenario:
    prompt: str
    steps: tuple[Step, ...]
    closing: str
    # before: "commit" (widget.py committed), "origin" (a README pushed to a bare origin), "nested" (vendor/lib, a
    # repository of its own, pushed to its own)
    setup: tuple[str, ...] = ()
    # files there before, never committed: build configuration, which Gemini CLI's yolo mode refuses to write
    given: tuple[tuple[str, str], ...] = ()
    agents: tuple[str, ...] = AGENTS


SCENARIOS: dict[str, Scenario] = {
    "uncommitted": Scenario(
        "Add a widget module with a test, commit it, then document widget()",
        (Write("widget.py", WIDGET), Write("test_widget.py", TEST),
         Shell("git add widget.py test_widget.py && git commit -m 'Add widget'"),
         Edit("widget.py", DOC_OLD, DOC_NEW)),
        "widget.py and its test are committed, and widget() has a docstring now.", agents=EVERY_AGENT),
    "untracked": Scenario(
        "Add the widget module, commit it, then document widget() and add a helper",
        (Write("widget.py", WIDGET), Shell("git add widget.py && git commit -m 'Add widget'"),
         Edit("widget.py", DOC_OLD, DOC_NEW), Write("helpers.py", "def half(size):\n    return size / 2\n"),
         Shell("git status")),
        "widget() is documented and helpers.py has half(); neither is committed yet.", agents=EVERY_AGENT),
    # a commit in a repository inside the session's folder, run there by the shell tool's own folder argument
    "nested-repo": Scenario(
        "Add lib.py to the vendored lib and commit it there",
        (Write("vendor/lib/lib.py", WIDGET), Shell("git add lib.py && git commit -m 'Add lib'", workdir="vendor/lib")),
        "lib.py is committed in vendor/lib.", setup=("nested",)),
    "unpushed": Scenario(
        "Add the widget module, push it, then document widget() in a second commit",
        (Write("widget.py", WIDGET), Shell("git add widget.py && git commit -m 'Add widget'"), Shell("git push"),
         Edit("widget.py", DOC_OLD, DOC_NEW), Shell("git commit -am 'Document widget'")),
        "Pushed the widget module and committed its docstring.", setup=("origin",), agents=EVERY_AGENT),
    "ahead": Scenario(
        "Add the widget module and its test in two commits and show me the status",
        (Write("widget.py", WIDGET), Shell("git add widget.py && git commit -m 'Add widget'"),
         Write("test_widget.py", TEST), Shell("git add test_widget.py && git commit -m 'Test widget'"),
         Shell("git status")),
        "Both commits are in; the branch is two commits ahead of origin.", setup=("origin",), agents=EVERY_AGENT),
    "not-staged": Scenario(
        "Document widget() and show me the status",
        (Edit("widget.py", DOC_OLD, DOC_NEW), Shell("git status")),
        "widget() has a docstring; the change is not staged yet.", setup=("commit",)),
    "tests-fixed": Scenario(
        "Add a widget module with a test and make the test pass",
        (Write("widget.py", BUGGY), Write("test_widget.py", TEST), Shell(TESTS),
         Edit("widget.py", "    return size + 2\n", "    return size * 2\n"), Shell(TESTS)),
        "widget() doubles its size now and the test passes.", agents=EVERY_AGENT),
    # the login-shell wrapper models trained on Codex's older `shell` tool still write (`bash -lc '...'`)
    "shell-wrapped": Scenario(
        "Add a widget module with a test, commit it and run the tests",
        (Write("widget.py", BUGGY), Write("test_widget.py", TEST),
         Shell("bash -lc 'git add -A && git commit -m \"Add widget\"'"), Shell(f"bash -lc '{TESTS}'")),
        "widget.py and its test are committed; the test fails: widget() adds 2 instead of doubling.",
        agents=EVERY_AGENT),
    # a test run that outlives Codex's yield time: its end comes in the output of the `write_stdin` that polls it
    "long-tests": Scenario(
        "Add a widget module with a slow test and run the tests",
        (Write("widget.py", BUGGY), Write("test_widget.py", SLOW_TEST), Shell(TESTS, yield_ms=250), Poll()),
        "The test ran: it fails, widget() adds 2 instead of doubling."),
    "lint-failing": Scenario(
        "Add a widget module and lint it with ruff",
        (Write("widget.py", UNUSED), Shell("ruff check .")),
        "widget.py is in place; ruff reports an unused import in it.", agents=EVERY_AGENT),
    "npm-tests-failing": Scenario(
        "Add a widget module in JavaScript with a test and run it",
        (Write("widget.js", "exports.widget = (size) => size + 2;\n"),
         Write("widget.test.js", NODE_TEST), Shell("npm test")),
        "widget.js and its test are in place; `npm test` fails: widget() adds 2 instead of doubling.",
        given=(("package.json", '{"name": "widgets", "private": true, "scripts": {"test": "node --test"}}\n'),)),
    # where no runner is installed: the test file run by its interpreter, and Node's own runner
    "script-tests-failing": Scenario(
        "Add a widget module with a unittest and run it",
        (Write("widget.py", BUGGY), Write("test_widget.py", UNITTEST), Shell("python3 test_widget.py")),
        "widget.py and its test are in place; the test fails: widget() adds 2 instead of doubling."),
    "node-test-failing": Scenario(
        "Add a widget module in JavaScript with a test and run it with node",
        (Write("widget.js", "exports.widget = (size) => size + 2;\n"), Write("widget.test.js", NODE_TEST),
         Shell("node --test")),
        "widget.js and its test are in place; `node --test` fails: widget() adds 2 instead of doubling."),
    "types-fixed": Scenario(
        "Add a typed widget module and check it with mypy",
        (Write("widget.py", "def widget(size: int) -> int:\n    return str(size * 2)\n"), Shell("mypy widget.py"),
         Edit("widget.py", "    return str(size * 2)\n", "    return size * 2\n"), Shell("mypy widget.py")),
        "widget() returns an int now; mypy is clean."),
    "build-failing": Scenario(
        "Add the widget module and build it with make",
        (Write("widget.py", "import widgetz\n"), Shell("make")),
        "widget.py is in place; `make` fails: it imports widgetz, which does not exist.",
        given=(("Makefile", "all:\n\tpython3 -c 'import widget'\n"),)),
    "pr-opened": Scenario(
        "Add the widget module on a branch and open a PR",
        (Shell("git switch -c add-widget"), Write("widget.py", WIDGET),
         Shell("git add widget.py && git commit -m 'Add widget'"),
         Shell("gh pr create --title 'Add widget' --body 'Adds widget(), which doubles a size.'")),
        "Opened https://github.com/acme/widgets/pull/7 for the widget module.", setup=("origin",)),
    "todos-left": Scenario(
        "Add a widget module, its test and a README section",
        (Todos((("Add widget.py", "in_progress"), ("Write a test for widget()", "pending"),
                ("Document widget in the README", "pending"))),
         Write("widget.py", WIDGET),
         Todos((("Add widget.py", "completed"), ("Write a test for widget()", "pending"),
                ("Document widget in the README", "pending")))),
        "widget.py is in place.", agents=("gemini",)),  # Claude Code's task tools: tests/claude_scenarios.py
    "plan-left": Scenario(
        "Plan the widget module and its test, then carry the plan out",
        (Plan("widget-plan.md", "# Plan: Add the widget module\n\n## Files to Modify\n- `widget.py` - add widget(), "
              "which doubles a size\n- `test_widget.py` - a test that it doubles\n"),
         Write("widget.py", WIDGET)),
        "widget.py is in place.", agents=("gemini",)),  # Claude Code's plan mode: tests/claude_scenarios.py
    "offer-pr": Scenario(
        "Add the widget module and commit it on a branch",
        (Shell("git switch -c add-widget"), Write("widget.py", WIDGET),
         Shell("git add widget.py && git commit -m 'Add widget'"), Shell("git push -u origin add-widget")),
        "widget.py is committed on add-widget and pushed.\n\nWant me to open a PR with `gh pr create`?",
        setup=("origin",)),
    "remaining-list": Scenario(
        "Start the widget module",
        (Write("widget.py", WIDGET),),
        "Started widget.py with widget().\n\nRemaining:\n- Add a test for widget()\n- Document widget in the README\n"
        "- Wire widget into the CLI"),
    "next-steps": Scenario(
        "Start the widget module",
        (Write("widget.py", WIDGET),),
        "Started widget.py with widget().\n\nNext steps:\n1. Add a test for widget()\n2. Handle negative sizes"),
    "pr-drafted": Scenario(
        "Add the widget module on a branch and write the PR description",
        (Shell("git switch -c add-widget"), Write("widget.py", WIDGET),
         Shell("git add widget.py && git commit -m 'Add widget'"), Shell("git push -u origin add-widget"),
         Write("pr-description.md", "## Summary\n\nAdds widget(), which doubles a size.\n")),
        "widget.py is pushed on add-widget; the PR description is in pr-description.md.", setup=("origin",)),
    "todo-line": Scenario(
        "Start the widget module",
        (Write("widget.py", WIDGET),),
        "Started widget.py with widget().\n\nTODO: handle negative sizes in widget()"),
    # the issue's own words: a closing "Next:" line is what is left
    "next-line": Scenario(
        "Add a retry helper",
        (Write("retry.py", "def retry(call, attempts=3):\n    for _ in range(attempts):\n        try:\n"
                           "            return call()\n        except OSError:\n            pass\n"),),
        "Added retry() to retry.py.\n\nNext: add backoff(attempt) to the retry loop."),
    # Codex's usual closing report: a Summary, then a Testing section that says no check ran
    "tests-not-run": Scenario(
        "Add the widget module",
        (Write("widget.py", WIDGET),),
        "**Summary**\n- Added widget.py with widget(), which doubles a size.\n\n**Testing**\n"
        "- ⚠️ Not run (no test runner in this sandbox)"),
}


def _codex_call(step: Step, repo: Path) -> tuple[str, Any]:
    if isinstance(step, Write):
        body = "".join(f"+{line}\n" for line in step.content.splitlines())
        return "apply_patch", f"*** Begin Patch\n*** Add File: {step.path}\n{body}*** End Patch\n"
    if isinstance(step, Edit):
        old = "".join(f"-{line}\n" for line in step.old.splitlines())
        new = "".join(f"+{line}\n" for line in step.new.splitlines())
        return "apply_patch", f"*** Begin Patch\n*** Update File: {step.path}\n@@\n{old}{new}*** End Patch\n"
    if isinstance(step, Shell):  # not a login shell: it would reset PATH to one without this pytest and ruff
        return "exec_command", {"cmd": step.command, "login": False,
                                **({"yield_time_ms": step.yield_ms} if step.yield_ms else {}),
                                **({"workdir": str(repo / step.workdir)} if step.workdir else {})}
    if isinstance(step, Poll):
        return "write_stdin", {"session_id": RUNNING, "chars": "", "yield_time_ms": 30_000}
    raise ValueError(f"Codex has no tool for {step}")


def _gemini_call(step: Step, repo: Path) -> tuple[str, Any] | None:
    if isinstance(step, Write):
        return "write_file", {"file_path": str(repo / step.path), "content": step.content}
    if isinstance(step, Edit):
        return "replace", {"file_path": str(repo / step.path), "old_string": step.old, "new_string": step.new,
                           "instruction": "Edit the widget"}
    if isinstance(step, Shell):
        return "run_shell_command", {"command": step.command, "description": step.command.split()[0],
                                     **({"dir_path": str(repo / step.workdir)} if step.workdir else {})}
    if isinstance(step, Poll):
        return None
    if isinstance(step, Plan):
        raise ValueError("a plan is three calls: _gemini_calls")
    return "write_todos", {"todos": [{"description": text, "status": status} for text, status in step.items]}


def _gemini_calls(step: Step, repo: Path) -> list[tuple[str, Any]]:
    if isinstance(step, Plan):
        return [("enter_plan_mode", {"reason": "Plan the change first"}),
                ("write_file", {"file_path": f"{PLANS}/{step.filename}", "content": step.content}),
                ("exit_plan_mode", {"plan_filename": step.filename})]
    return [made] if (made := _gemini_call(step, repo)) else []


def _codex_calls(step: Step, repo: Path) -> list[tuple[str, Any]]:
    return [_codex_call(step, repo)]


def _copilot_calls(step: Step, repo: Path) -> list[tuple[str, Any]]:
    if isinstance(step, Write):
        return [("create", {"path": str(repo / step.path), "file_text": step.content})]
    if isinstance(step, Edit):
        return [("edit", {"path": str(repo / step.path), "old_str": step.old, "new_str": step.new})]
    if isinstance(step, Shell):
        command = f"cd {step.workdir} && {step.command}" if step.workdir else step.command
        return [("bash", {"command": command, "description": step.command.split()[0]})]
    return []


def _qwen_calls(step: Step, repo: Path) -> list[tuple[str, Any]]:
    if isinstance(step, Edit):  # Qwen Code edits only a file read in the same session
        return [("read_file", {"file_path": str(repo / step.path)}),
                ("edit", {"file_path": str(repo / step.path), "old_string": step.old, "new_string": step.new})]
    if isinstance(step, Shell):
        return [("run_shell_command", {"command": step.command, "description": step.command.split()[0],
                                       **({"directory": step.workdir} if step.workdir else {})})]
    return [made] if isinstance(step, Write) and (made := _gemini_call(step, repo)) else []


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, env=_git_env())


def _git_env() -> dict[str, str]:
    return {**os.environ, **GIT_DATES}


def _setup(repo: Path, scenario: Scenario) -> None:
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.name", "Dev")
    _git(repo, "config", "user.email", "dev@example.com")
    if "origin" in scenario.setup:
        origin = repo.parent / "origin.git"
        subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(origin)], check=True, capture_output=True)
        _git(repo, "remote", "add", "origin", str(origin))
    else:
        _git(repo, "remote", "add", "origin", "https://github.com/acme/widgets.git")
    if scenario.setup:  # a first commit: widget.py to edit, or a README beside the work
        first = "widget.py" if "commit" in scenario.setup else "README.md"
        (repo / first).write_text(WIDGET if first == "widget.py" else "# widgets\n")
        _git(repo, "add", first)
        _git(repo, "commit", "-q", "-m", "Start widgets")
    if "origin" in scenario.setup:
        _git(repo, "push", "-q", "-u", "origin", "main")
    if "nested" in scenario.setup:  # vendor/lib: a repository of its own, pushed to a bare origin of its own
        lib = repo / "vendor" / "lib"
        lib.mkdir(parents=True)
        _git(lib, "init", "-q", "-b", "main")
        _git(lib, "config", "user.name", "Dev")
        _git(lib, "config", "user.email", "dev@example.com")
        subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(repo.parent / "lib.git")], check=True,
                       capture_output=True)
        _git(lib, "remote", "add", "origin", str(repo.parent / "lib.git"))
        (lib / "README.md").write_text("# lib\n")
        _git(lib, "add", "README.md")
        _git(lib, "commit", "-q", "-m", "Start lib")
        _git(lib, "push", "-q", "-u", "origin", "main")
    for path, text in scenario.given:
        (repo / path).write_text(text)


def _claude_turns(steps: tuple[Step, ...], repo: Path) -> list[dict[str, Any]]:
    """The steps as Claude Code's tool calls: Write, Edit (after a Read of a file the session has not seen: Claude
    Code edits only those), Bash."""
    turns, seen = [], set()
    for step in steps:
        if isinstance(step, Edit) and step.path not in seen:
            turns.append(tool("Read", {"file_path": str(repo / step.path)}))
        if isinstance(step, Write | Edit):
            seen.add(step.path)
        if isinstance(step, Write):
            turns.append(tool("Write", {"file_path": str(repo / step.path), "content": step.content}))
        elif isinstance(step, Edit):
            turns.append(tool("Edit", {"file_path": str(repo / step.path), "old_string": step.old,
                                       "new_string": step.new}))
        elif isinstance(step, Shell):
            command = f"cd {step.workdir} && {step.command}" if step.workdir else step.command
            turns.append(tool("Bash", {"command": command, "description": step.command.split()[0]}))
        elif isinstance(step, Todos):
            raise ValueError(f"no Claude Code scenario with {step}: its task tools are tests/claude_scenarios.py's")
    return turns


def _run(name: str, agent: str, models: ScriptedModels, anthropic: ScriptedModel, work: Path) -> Path:
    """One scenario with one agent, in a home of its own: the folder its sessions went to."""
    scenario = SCENARIOS[name]
    repo = work / name / agent / "widgets"
    _setup(repo, scenario)
    home = work / name / agent / "home"
    # the stand-in gh, then this checkout's python3, pytest, ruff and mypy, first on PATH
    first = f"{work / 'bin'}:{Path(sys.executable).parent}"
    profile = f'export PATH="{first}:$PATH"\n'  # a login shell (`bash -lc`) resets PATH: this sets it again
    if agent == "claude":
        claude = ClaudeCode(home.parent, anthropic)
        claude.project = repo
        (claude.home / ".bash_profile").write_text(profile)
        anthropic.on(scenario.prompt, *_claude_turns(scenario.steps, repo), scenario.closing)
        claude.run(scenario.prompt, env={**GIT_DATES, **COMMAND_ENV, "PATH": f"{first}:{claude.env['PATH']}"})
        return claude.projects_dir
    calls = {"codex": _codex_calls, "gemini": _gemini_calls, "copilot": _copilot_calls, "qwen": _qwen_calls}[agent]
    models.turns.extend([Turn(calls=[made]) for step in scenario.steps for made in calls(step, repo)])
    models.turns.append(Turn(text=scenario.closing))
    cli = {"codex": Codex, "gemini": Gemini, "copilot": Copilot, "qwen": Qwen}[agent](home, models)
    cli.env |= {**GIT_DATES, **COMMAND_ENV, "PATH": f"{first}:{cli.env.get('PATH', '')}"}
    (Path(cli.env["HOME"]) / ".bash_profile").write_text(profile)
    if isinstance(cli, Codex):
        cli.exec(repo, scenario.prompt)
        sessions = cli.home / "sessions"
    elif isinstance(cli, Gemini):
        cli.prompt(repo, scenario.prompt)
        sessions = cli.home / ".gemini" / "tmp"
    else:
        cli.prompt(repo, scenario.prompt)
        sessions = cli.folder
    if models.turns:
        raise RuntimeError(f"{name} ({agent}): {len(models.turns)} scripted turns never asked for")
    return sessions


def generate(names: list[str] | None = None, out: Path = FIXTURES) -> None:
    """The scenarios `names` (all by default) as the pinned CLIs write them now, into `out/<scenario>/<agent>/`
    (`codex/` as ~/.codex, `gemini/` as ~/.gemini, `claude/` as ~/.claude/projects)."""
    with stand_in(COMMITTED_WORK) as work:
        (work / "bin").mkdir()
        (work / "bin" / "gh").write_text(GH)
        (work / "bin" / "gh").chmod(0o755)
        snapshot = Turn(text="<state_snapshot>widget.py added to widgets.</state_snapshot>")
        with ScriptedModels([], fallback=snapshot) as models, closing(ScriptedModel()) as anthropic:
            for name in names or list(SCENARIOS):
                staging = out / f"{name}.new"
                shutil.rmtree(staging, ignore_errors=True)
                for agent in SCENARIOS[name].agents:
                    sessions = _run(name, agent, models, anthropic, work)
                    if agent == "codex":
                        shutil.copytree(sessions, staging / "codex" / "sessions")
                    elif agent == "claude":  # its request bookkeeping made lighter, as the harness's own
                        copy_transcripts(sessions, staging / "claude")
                    elif agent == "copilot":
                        for session in (sessions / "session-state").glob("*/events.jsonl"):
                            shutil.copy2(session, _made(staging / "copilot" / "session-state" /
                                                        session.parent.name) / "events.jsonl")
                    elif agent == "qwen":
                        for chats in (sessions / "projects").glob("*/chats"):
                            shutil.copytree(chats, staging / "qwen" / "projects" / chats.parent.name / "chats")
                    else:
                        for chats in sessions.glob("*/chats"):
                            project = staging / "gemini" / "tmp" / chats.parent.name
                            shutil.copytree(chats, project / "chats")
                            shutil.copy2(chats.parent / ".project_root", project / ".project_root")
                map_paths(staging, work, COMMITTED_WORK)
                shutil.rmtree(out / name, ignore_errors=True)
                staging.rename(out / name)


def _made(folder: Path) -> Path:
    folder.mkdir(parents=True)
    return folder


def fixture_session(name: str, agent: str, root: Path = FIXTURES) -> Path:
    """The Codex rollout, Gemini CLI chat or Claude Code transcript of one scenario."""
    pattern = {"codex": "codex/sessions/**/*.jsonl", "gemini": "gemini/tmp/*/chats/*.jsonl",
               "claude": "claude/*/*.jsonl", "copilot": "copilot/session-state/*/events.jsonl",
               "qwen": "qwen/projects/*/chats/*.jsonl"}[agent]
    return next((root / name).glob(pattern))


def cases() -> list[tuple[str, str]]:
    """(scenario, agent) of every committed session."""
    return [(name, agent) for name, scenario in SCENARIOS.items() for agent in scenario.agents]


if __name__ == "__main__":
    chosen = sys.argv[1:] or list(SCENARIOS)
    unknown = [name for name in chosen if name not in SCENARIOS]
    if unknown:
        sys.exit(f"unknown scenario(s) {', '.join(unknown)}; known: {', '.join(SCENARIOS)}")
    generate(chosen)
    print(f"wrote {', '.join(chosen)} under {FIXTURES}")
