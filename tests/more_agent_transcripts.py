"""Regenerates the committed GitHub Copilot CLI and Qwen Code transcripts (tests/fixtures/more-agents/) by running
the real CLIs (pinned in tests/agent_clis/, installed by tests/tools.py) headless against a scripted model server on
127.0.0.1 (tests/fake_agent_models.py, OpenAI's Chat Completions API: Copilot CLI's BYOK provider with
COPILOT_OFFLINE=true, Qwen Code's OPENAI_BASE_URL):

    .venv/bin/python -m tests.more_agent_transcripts      # after changing tests/agent_clis/package.json

What runs, for each agent, in a git repository `widgets` (remote acme/widgets): it writes greet.py, runs it, runs a
command that fails, compacts its context, and is resumed to rename a function; then it delegates a count to a
subagent; and a Claude Code session runs `copilot -p` and `qwen -p` through its Bash tool (the CLIs run for real
inside the window of that call; the Claude Code records around them are written here in 2.1.x's format). Everything
runs in a fresh temporary folder, written into the transcripts as /tmp/eywa-agents (each agent's project folder
renamed to match), so the committed paths do not change between runs and two runs never share a folder.
Afterwards the golden renders and handoffs (tests/golden/more-agents/) are rewritten: `pytest
tests/test_more_agents.py` then shows the diff.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from tests.fake_agent_models import ScriptedModels, Turn
from tests.tools import agent_cli

if TYPE_CHECKING:
    from eywa.core.session import Session

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "more-agents"
GOLDEN = Path(__file__).resolve().parent / "golden" / "more-agents"
NAMED = "/tmp/eywa-agents"  # what the committed transcripts call the folder they ran in
REMOTE = "https://github.com/acme/widgets.git"
MODEL = "scripted-coder"  # Copilot CLI's: any name its provider serves
QWEN_MODEL = "qwen3-coder-plus"  # a model Qwen Code knows (a 1M-token window: the compression below fits in it)
GREETING = "def hello() -> str:\n    return \"hello\"\n"
COPILOT_SUMMARY_PROMPT = "Please create a detailed summary of the conversation so far"
QWEN_SUMMARY_PROMPT = "summarizes a conversation when its context window"


def _git_repo(folder: Path) -> None:
    folder.mkdir(parents=True)
    for command in (["git", "init", "-q", "-b", "main"], ["git", "remote", "add", "origin", REMOTE]):
        subprocess.run(command, cwd=folder, check=True, capture_output=True)


def _run(command: list[str], cwd: Path, env: dict[str, str]) -> str:
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise RuntimeError(f"{command[0]} failed ({done.returncode}): {done.stderr[-2000:]}")
    return done.stdout


def _base_env(home: Path) -> dict[str, str]:
    keep = {name: os.environ[name] for name in ("PATH", "LANG", "TERM") if name in os.environ}
    return {**keep, "HOME": str(home), "NO_COLOR": "1", "NO_PROXY": "127.0.0.1,localhost"}


class Copilot:
    """GitHub Copilot CLI with its own model provider (BYOK) and no GitHub sign-in; COPILOT_OFFLINE keeps it
    from contacting GitHub at all."""

    def __init__(self, home: Path, models: ScriptedModels) -> None:
        self.home = home / "copilot-home"
        self.home.mkdir(parents=True)
        self.env = {**_base_env(self.home), "COPILOT_OFFLINE": "true", "COPILOT_MODEL": MODEL,
                    "COPILOT_PROVIDER_BASE_URL": f"{models.url}/v1", "COPILOT_PROVIDER_API_KEY": "sk-test-not-a-key"}

    @property
    def folder(self) -> Path:
        return self.home / ".copilot"

    def prompt(self, cwd: Path, prompt: str, resume: str | None = None) -> str:
        command = [str(agent_cli("copilot")), "-p", prompt, "--allow-all-tools", "--no-color"]
        return _run(command + ([f"--resume={resume}"] if resume else []), cwd, self.env)

    def newest_session(self) -> str:
        return max((self.folder / "session-state").iterdir(), key=lambda p: p.stat().st_mtime_ns).name


class Qwen:
    """Qwen Code with an OpenAI-compatible provider (OPENAI_BASE_URL), everything approved (--approval-mode yolo)."""

    def __init__(self, home: Path, models: ScriptedModels) -> None:
        self.home = home / "qwen-home"
        (self.home / ".qwen").mkdir(parents=True)
        (self.home / ".qwen" / "settings.json").write_text(json.dumps({
            "privacy": {"usageStatisticsEnabled": False}, "telemetry": {"enabled": False},
            "general": {"disableAutoUpdate": True}}))
        self.env = {**_base_env(self.home), "OPENAI_API_KEY": "sk-test-not-a-key", "OPENAI_MODEL": QWEN_MODEL,
                    "OPENAI_BASE_URL": f"{models.url}/v1", "QWEN_CODE_SUPPRESS_YOLO_WARNING": "1"}

    @property
    def folder(self) -> Path:
        return self.home / ".qwen"

    def prompt(self, cwd: Path, prompt: str, resume: str | None = None) -> str:
        command = [str(agent_cli("qwen")), "--approval-mode", "yolo", "-p", prompt]
        return _run(command + (["--resume", resume] if resume else []), cwd, self.env)

    def newest_session(self) -> str:
        newest = max(self.folder.glob("projects/*/chats/*.jsonl"), key=lambda p: p.stat().st_mtime_ns)
        return newest.stem


def _copilot_sessions(models: ScriptedModels, copilot: Copilot, repo: Path) -> None:
    models.turns.extend([
        Turn(text="I'll add greet.py with a hello() function.",
             calls=[("create", {"path": str(repo / "greet.py"), "file_text": GREETING})]),
        # The usage reported here passes Copilot CLI's compaction threshold: it summarises in the background.
        Turn(calls=[("bash", {"command": "python3 -c 'import greet; print(greet.hello())'",
                              "description": "Run hello()"})], tokens=125_000),
        Turn(match=COPILOT_SUMMARY_PROMPT, text="<overview>greet.py added with hello(), checked by running it."
             "</overview>"),
        Turn(calls=[("bash", {"command": "sleep 2; ls does-not-exist", "description": "List the notes folder"})]),
        Turn(text="greet.py is in place and hello() prints hello; listing does-not-exist failed: it is missing."),
    ])
    copilot.prompt(repo, "Add a greeting module to the widgets repo and check that it runs")
    models.turns.extend([
        Turn(text="Renaming hello to greet_user.", calls=[("edit", {
            "path": str(repo / "greet.py"), "old_str": "def hello() -> str:", "new_str": "def greet_user() -> str:"})]),
        Turn(text="Renamed hello() to greet_user() in greet.py."),
    ])
    copilot.prompt(repo, "Rename hello to greet_user", resume=copilot.newest_session())
    models.turns.extend([
        Turn(calls=[("task", {"description": "Count greet.py lines", "agent_type": "explore", "name": "counter",
                              "prompt": "Count the lines of greet.py and say how many"})]),
        Turn(match="Count the lines of greet.py and say how many", calls=[("bash", {
            "command": "wc -l greet.py", "description": "Count lines"})]),
        Turn(match="wc -l greet.py", text="greet.py has 2 lines."),
        Turn(text="The helper says greet.py has 2 lines."),
    ])
    copilot.prompt(repo, "Ask a helper agent to count the lines of greet.py")
    models.turns.clear()


def _qwen_sessions(models: ScriptedModels, qwen: Qwen, repo: Path) -> None:
    (repo / "greet.py").unlink()  # the same work as Copilot CLI's, from the same start
    models.turns.extend([
        Turn(text="I'll add greet.py with a hello() function.",
             calls=[("write_file", {"file_path": str(repo / "greet.py"), "content": GREETING})]),
        # The usage reported here passes Qwen Code's compression threshold: it compresses before the next request.
        Turn(calls=[("run_shell_command", {"command": "python3 -c 'import greet; print(greet.hello())'",
                                           "description": "Run hello()"})], tokens=900_000),
        Turn(match=QWEN_SUMMARY_PROMPT, text="<state_snapshot>greet.py added with hello(), checked by running it."
             "</state_snapshot>"),
        Turn(calls=[("run_shell_command", {"command": "ls does-not-exist", "description": "List the notes folder"})]),
        Turn(text="greet.py is in place and hello() prints hello; listing does-not-exist failed: it is missing."),
    ])
    qwen.prompt(repo, "Add a greeting module to the widgets repo and check that it runs")
    models.turns.extend([
        # Qwen Code edits only a file read in the same session.
        Turn(calls=[("read_file", {"file_path": str(repo / "greet.py")})]),
        Turn(text="Renaming hello to greet_user.", calls=[("edit", {
            "file_path": str(repo / "greet.py"), "old_string": "def hello() -> str:",
            "new_string": "def greet_user() -> str:"})]),
        Turn(text="Renamed hello() to greet_user() in greet.py."),
    ])
    qwen.prompt(repo, "Rename hello to greet_user", resume=qwen.newest_session())
    models.turns.extend([
        Turn(calls=[("agent", {"description": "Count greet.py lines", "subagent_type": "general-purpose",
                               "prompt": "Count the lines of greet.py and say how many",
                               "run_in_background": False})]),
        Turn(match="Count the lines of greet.py and say how many", calls=[("run_shell_command", {
            "command": "wc -l greet.py", "description": "Count lines"})]),
        Turn(match="wc -l greet.py", text="greet.py has 2 lines."),
        Turn(text="The helper says greet.py has 2 lines."),
    ])
    qwen.prompt(repo, "Ask a helper agent to count the lines of greet.py")
    models.turns.clear()


def _stamp() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def claude_parent(repo: Path, runs: list[tuple[str, Callable[[], str]]], out: Path, prompt: str) -> None:
    """A Claude Code session whose Bash tool runs each (command, run) in turn in `repo`, written to `out` as
    Claude Code 2.1.x writes a project folder: the run happens inside its Bash call's window."""
    session = str(uuid.uuid4())
    records: list[dict] = []
    parent: str | None = None

    def add(kind: str, message: dict, **extra: object) -> None:
        nonlocal parent
        record = {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": str(repo),
                  "sessionId": session, "version": "2.1.332", "gitBranch": "main", "type": kind,
                  "message": message, "uuid": str(uuid.uuid4()), "timestamp": _stamp(), **extra}
        parent = record["uuid"]
        records.append(record)

    add("user", {"role": "user", "content": prompt})
    for number, (command, run) in enumerate(runs):
        tool_id = f"toolu_0{number}"
        add("assistant", {"id": f"msg_0{number}", "type": "message", "role": "assistant", "model": "claude-opus-5-5",
                          "content": [{"type": "tool_use", "id": tool_id, "name": "Bash",
                                       "input": {"command": command, "description": "Ask another agent"}}]})
        output = run().strip()
        add("user", {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_id, "content": output,
                                                  "is_error": False}]},
            toolUseResult={"stdout": output, "stderr": "", "interrupted": False})
    add("assistant", {"id": "msg_09", "type": "message", "role": "assistant", "model": "claude-opus-5-5",
                      "content": [{"type": "text", "text": "Both agents find greet.py fine as it is."}]})
    folder = out / re.sub(r"[^A-Za-z0-9]", "-", str(repo))
    folder.mkdir(parents=True)
    (folder / f"{session}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))


def _rename(tree: Path, work: str) -> None:
    """Every path under `tree` and in its files says NAMED where it said `work` (Qwen Code's project folders,
    named for the working folder, too)."""
    encoded = (re.sub(r"[^A-Za-z0-9]", "-", work), re.sub(r"[^A-Za-z0-9]", "-", NAMED))
    for path in sorted(tree.rglob("*"), key=lambda p: -len(p.parts)):
        if path.is_file():
            data = path.read_bytes()
            if work.encode() in data:
                path.write_bytes(data.replace(work.encode(), NAMED.encode()))
        if encoded[0] in path.name:
            path.rename(path.with_name(path.name.replace(encoded[0], encoded[1])))


def generate(out: Path = FIXTURES) -> None:
    """Run both CLIs and write what they wrote under `out` (`copilot/` as ~/.copilot, `qwen/` as ~/.qwen,
    `claude/` as ~/.claude/projects)."""
    with tempfile.TemporaryDirectory(prefix="eywa-more-agents-") as scratch:
        work = Path(scratch).resolve()
        repo = work / "widgets"
        _git_repo(repo)
        staging = work / "out"
        with ScriptedModels([], fallback=Turn(text="ok")) as models:
            copilot, qwen = Copilot(work, models), Qwen(work, models)
            _copilot_sessions(models, copilot, repo)
            _qwen_sessions(models, qwen, repo)
            models.turns.extend([Turn(text="greet.py reads well: one function, typed, nothing to change."),
                                 Turn(text="greet.py defines greet_user(), which returns 'hello'.")])
            claude_parent(repo, [("copilot -p 'Review greet.py for style' --allow-all-tools",
                                  lambda: copilot.prompt(repo, "Review greet.py for style")),
                                 ("qwen -p 'Summarise greet.py'", lambda: qwen.prompt(repo, "Summarise greet.py"))],
                          staging / "claude", "Get a second opinion on greet.py from copilot and qwen")
        for session in (copilot.folder / "session-state").iterdir():
            shutil.copytree(session, staging / "copilot" / "session-state" / session.name,
                            ignore=lambda folder, names: [n for n in names if n != "events.jsonl"])
        for project in (qwen.folder / "projects").iterdir():
            for kept in ("chats", "subagents"):
                shutil.copytree(project / kept, staging / "qwen" / "projects" / project.name / kept)
        _rename(staging, str(work))
        shutil.rmtree(out, ignore_errors=True)
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(staging, out)


# The first words of each session's prompt -> its stable name (the subagents' own files: in their parent's render).
_NAMES = {"Add a greeting": "greeting", "Review greet": "review", "Summarise greet": "summarise",
          "Ask a helper": "spawn"}


def fixture_sessions(root: Path = FIXTURES) -> dict[str, Path]:
    """Each committed Copilot CLI and Qwen Code main transcript by a stable name: `<agent>-<what it did>`."""
    found = {}
    copilot, qwen = root.glob("copilot/session-state/*/events.jsonl"), root.glob("qwen/projects/*/chats/*.jsonl")
    for path in sorted([*copilot, *qwen]):
        text = path.read_text(encoding="utf-8")
        name = next(name for prompt, name in _NAMES.items() if f'"{prompt}' in text)
        found[f"{path.relative_to(root).parts[0]}-{name}"] = path
    return found


def read(path: Path) -> Session:
    """The session of one fixture transcript as ingest reads it (its subagents and folded runs with it)."""
    from eywa.core.sources.discovery import file_session, group_sessions, scan_files
    from eywa.core.sources.sessions import read_session

    kind = next(part for part in reversed(path.parts) if part in ("copilot", "qwen"))
    folder = path.parents[1] if kind == "copilot" else path.parents[2]  # session-state/ or projects/
    group = next(g for g in group_sessions(scan_files(folder, kind), file_session).values()
                 if path in [f.path for f in g.files])
    return read_session(group, str)[0]


def views(path: Path) -> tuple[str, str]:
    """(render, deterministic handoff) of one fixture transcript, as the golden files hold them."""
    from eywa.core.archive.renderer import Renderer
    from eywa.core.extract.deterministic import draft

    session = read(path)
    return Renderer(ZoneInfo("UTC")).render(session), draft(session, ZoneInfo("UTC")).to_markdown()


def write_goldens() -> None:
    shutil.rmtree(GOLDEN, ignore_errors=True)
    GOLDEN.mkdir(parents=True)
    for name, path in fixture_sessions().items():
        render, handoff = views(path)
        (GOLDEN / f"{name}.md").write_text(render, encoding="utf-8")
        (GOLDEN / f"{name}.handoff.md").write_text(handoff, encoding="utf-8")


if __name__ == "__main__":
    generate()
    write_goldens()
    print(f"wrote {sum(1 for p in FIXTURES.rglob('*') if p.is_file())} files under {FIXTURES}, goldens in {GOLDEN}")
