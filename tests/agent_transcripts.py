"""Regenerates the committed Codex CLI and Gemini CLI transcripts (tests/fixtures/agents/) by running the real
CLIs (tests/tools.py pins them) headless against scripted model servers on 127.0.0.1 (tests/fake_agent_models.py).

    .venv/bin/python -m tests.agent_transcripts        # after changing tests/agent_clis/package.json

What runs: in a git repository `widgets` (remote acme/widgets) Codex edits a file, runs a command that works
and one that fails, compacts its context, and is resumed; Gemini CLI does the same; a second clone of the
repository under another folder name gets a Codex session of its own; and a Claude Code session runs
`codex exec` and `gemini -p` through its Bash tool (the CLIs run for real inside the window of that call; the
Claude Code records around them are written here in 2.1.x's format, as its Bash tool writes them). They run in
a fresh temporary folder, and the transcripts name /tmp/eywa-agents in its place (tests/tools.py `map_paths`), so
their paths do not change between runs and two runs never share a folder. Afterwards the golden renders
(tests/golden/agents/) are rewritten: `pytest tests/test_agent_sources.py` then shows the diff.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import subprocess
import uuid
from pathlib import Path

from tests.fake_agent_models import ScriptedModels, Turn
from tests.tools import agent_cli, encoded_cwd, map_paths, stand_in

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "agents"
GOLDEN = Path(__file__).resolve().parent / "golden" / "agents"
COMMITTED_WORK = Path("/tmp/eywa-agents")  # the folder the committed transcripts name (never written to)
REMOTE = "https://github.com/acme/widgets.git"
CODEX_MODEL = "gpt-5.5"  # a model Codex knows offers apply_patch
SPAWNING_MODEL = "gpt-5.1-codex"  # ... and one it offers its multi_agent_v1 tools (spawn_agent)
GEMINI_MODEL = "gemini-2.5-pro"  # named, so that no routing request goes first

GREET_PATCH = """*** Begin Patch
*** Add File: greet.py
+def hello() -> str:
+    return "hello"
*** End Patch
"""
RENAME_PATCH = """*** Begin Patch
*** Update File: greet.py
@@
-def hello() -> str:
+def greet_user() -> str:
*** End Patch
"""


def _git_repo(folder: Path) -> None:
    folder.mkdir(parents=True)
    for command in (["git", "init", "-q", "-b", "main"], ["git", "remote", "add", "origin", REMOTE]):
        subprocess.run(command, cwd=folder, check=True, capture_output=True)


def _run(command: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise RuntimeError(f"{command[0]} failed ({done.returncode}): {done.stderr[-2000:]}")
    return done


class Codex:
    def __init__(self, home: Path, models: ScriptedModels) -> None:
        self.home = home / "codex"
        self.home.mkdir(parents=True)
        (self.home / "config.toml").write_text(
            f'model = "{CODEX_MODEL}"\nmodel_provider = "scripted"\nmodel_auto_compact_token_limit = 50000\n'
            f'check_for_update_on_startup = false\n\n[model_providers.scripted]\nname = "scripted"\n'
            f'base_url = "{models.url}/v1"\nenv_key = "SCRIPTED_KEY"\nwire_api = "responses"\n')
        self.env = {**_base_env(home), "CODEX_HOME": str(self.home), "SCRIPTED_KEY": "sk-test-not-a-key"}

    def exec(self, cwd: Path, prompt: str, resume: str | None = None, model: str = CODEX_MODEL) -> str:
        command = [str(agent_cli("codex")), "exec", "--skip-git-repo-check", "--sandbox", "danger-full-access",
                   "-m", model]
        command += ["resume", resume, prompt] if resume else [prompt]
        return _run(command, cwd, self.env).stdout

    def newest_session(self) -> str:
        newest = max((self.home / "sessions").rglob("rollout-*.jsonl"), key=lambda p: p.stat().st_mtime_ns)
        return json.loads(newest.open().readline())["payload"]["id"]


class Gemini:
    def __init__(self, home: Path, models: ScriptedModels) -> None:
        self.home = home / "gemini-home"
        (self.home / ".gemini").mkdir(parents=True)
        # No session cleanup: it deletes a session whose resume began in another minute (both its files).
        (self.home / ".gemini" / "settings.json").write_text(json.dumps({
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "general": {"disableAutoUpdate": True, "sessionRetention": {"enabled": False}},
            "privacy": {"usageStatisticsEnabled": False}, "telemetry": {"enabled": False}}))
        self.env = {**_base_env(home), "HOME": str(self.home), "GEMINI_API_KEY": "test-not-a-key",
                    "GOOGLE_GEMINI_BASE_URL": models.url, "GEMINI_CLI_TRUST_WORKSPACE": "true"}

    def prompt(self, cwd: Path, prompt: str, resume: bool = False) -> str:
        command = [str(agent_cli("gemini")), "--approval-mode", "yolo", "-m", GEMINI_MODEL]
        command += ["--resume", "latest", "-p", prompt] if resume else ["-p", prompt]
        return _run(command, cwd, self.env).stdout


def _base_env(home: Path) -> dict[str, str]:
    keep = {name: os.environ[name] for name in ("PATH", "LANG", "TERM") if name in os.environ}
    return {**keep, "HOME": str(home), "NO_COLOR": "1", "NO_PROXY": "127.0.0.1,localhost"}


def _codex_sessions(models: ScriptedModels, codex: Codex, work: Path) -> None:
    repo, clone = work / "widgets", work / "widgets-wt"
    models.turns.extend([
        Turn(text="I'll add greet.py with a hello() function.", calls=[("apply_patch", GREET_PATCH)]),
        Turn(calls=[("exec_command", {"cmd": "python3 -c 'import greet; print(greet.hello())'"})]),
        Turn(calls=[("exec_command", {"cmd": "ls does-not-exist"})]),
        Turn(text="greet.py is in place and hello() prints hello; listing does-not-exist failed: it is missing.",
             tokens=60000),
        Turn(match="CONTEXT CHECKPOINT", text="Summary: greet.py added with hello(), checked by running it; "
             "`ls does-not-exist` failed because the folder is missing."),
    ])
    codex.exec(repo, "Add a greeting module to the widgets repo and check that it runs")
    first = codex.newest_session()
    models.turns.extend([
        Turn(text="Renaming hello to greet_user.", calls=[("apply_patch", RENAME_PATCH)]),
        Turn(text="Renamed hello() to greet_user() in greet.py."),
    ])
    codex.exec(repo, "Rename hello to greet_user", resume=first)
    models.turns.extend([
        Turn(calls=[("exec_command", {"cmd": "git remote -v"})]),
        Turn(text="This clone tracks acme/widgets; nothing to change here."),
    ])
    codex.exec(clone, "Which repository is this clone of?")
    models.turns.extend([
        Turn(calls=[("spawn_agent", {"message": "Count the lines of greet.py and say how many"})]),
        # The subagent's own request, told apart by its prompt (it may come before the parent's next one).
        Turn(match='Count the lines of greet.py and say how many"}]', text="greet.py has 2 lines."),
        Turn(text="A helper is counting the lines of greet.py."),
        # When the helper ends before that answer does, Codex hands its result over in one more request.
        Turn(text="The helper says greet.py has 2 lines."),
    ])
    codex.exec(repo, "Ask a helper agent to count the lines of greet.py", model=SPAWNING_MODEL)
    models.turns.clear()


def _gemini_sessions(models: ScriptedModels, gemini: Gemini, work: Path) -> None:
    repo = work / "widgets"
    models.turns.extend([
        Turn(text="I'll add a farewell function.", calls=[("write_file", {
            "file_path": str(repo / "farewell.py"), "content": "def farewell() -> str:\n    return 'bye'\n"})]),
        # The count reported here passes Gemini CLI's compression threshold: it compresses before the next request.
        Turn(calls=[("run_shell_command", {"command": "python3 -c 'import farewell; print(farewell.farewell())'",
                                           "description": "Run farewell()"})], tokens=900_000),
        Turn(calls=[("run_shell_command", {"command": "cat missing.txt", "description": "Read the notes"})]),
        Turn(text="farewell.py added and prints bye; missing.txt does not exist."),
    ])
    gemini.prompt(repo, "Add a farewell function to the widgets repo and run it")
    models.turns.extend([
        Turn(calls=[("replace", {"file_path": str(repo / "farewell.py"), "old_string": "def farewell() -> str:\n",
                                 "new_string": "def farewell() -> str:\n    \"\"\"Say goodbye.\"\"\"\n",
                                 "instruction": "Add a docstring"})]),
        Turn(text="Added a docstring to farewell()."),
    ])
    gemini.prompt(repo, "Now give farewell a docstring", resume=True)
    report = {"SummaryOfFindings": "farewell() is defined in farewell.py.", "ExplorationTrace": ["grep def farewell"],
              "RelevantLocations": [{"FilePath": "farewell.py", "Reasoning": "defines it", "KeySymbols": ["farewell"]}]}
    models.turns.extend([
        Turn(calls=[("invoke_agent", {"agent_name": "codebase_investigator",
                                      "prompt": "Find where farewell() is defined in the widgets repo."})]),
        Turn(calls=[("grep_search", {"pattern": "def farewell"})]),  # the subagent's own turns
        Turn(calls=[("complete_task", {"report": report})]),
        Turn(text="farewell() is defined in farewell.py."),
    ])
    gemini.prompt(repo, "Where is farewell defined? Ask the codebase investigator")


def _stamp() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _claude_parent(models: ScriptedModels, codex: Codex, gemini: Gemini, work: Path, out: Path) -> None:
    """A Claude Code session whose Bash tool runs `codex exec` and `gemini -p` in the repository."""
    repo = work / "widgets"
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

    add("user", {"role": "user", "content": "Get a second opinion on greet.py from codex and gemini"})
    for number, (command, run) in enumerate((
            ("codex exec 'Review greet.py for style'", lambda: codex.exec(repo, "Review greet.py for style")),
            ("gemini -p 'Summarise greet.py'", lambda: gemini.prompt(repo, "Summarise greet.py")))):
        tool_id = f"toolu_0{number}"
        add("assistant", {"id": f"msg_0{number}", "type": "message", "role": "assistant", "model": "claude-opus-5-5",
                          "content": [{"type": "tool_use", "id": tool_id, "name": "Bash",
                                       "input": {"command": command, "description": "Ask another agent"}}]})
        output = run()
        add("user", {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_id,
                                                  "content": output.strip(), "is_error": False}]},
            toolUseResult={"stdout": output.strip(), "stderr": "", "interrupted": False})
    models.turns.clear()
    add("assistant", {"id": "msg_09", "type": "message", "role": "assistant", "model": "claude-opus-5-5",
                      "content": [{"type": "text", "text": "Both agents find greet.py fine as it is."}]})
    folder = out / "claude" / encoded_cwd(repo)
    folder.mkdir(parents=True)
    (folder / f"{session}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))


def generate(out: Path = FIXTURES) -> None:
    """The transcripts the pinned CLIs write now, into `out`, naming COMMITTED_WORK as the folder they ran in."""
    with stand_in(COMMITTED_WORK) as work:
        _generate(out, work)


def _generate(out: Path, work: Path) -> None:
    _git_repo(work / "widgets")
    _git_repo(work / "widgets-wt")
    home = work / "home"
    # Gemini CLI's side requests (its chat compression among them) get this answer.
    snapshot = Turn(text="<state_snapshot>farewell.py added to widgets; it prints bye.</state_snapshot>")
    with ScriptedModels([], fallback=snapshot) as models:
        codex, gemini = Codex(home, models), Gemini(home, models)
        _codex_sessions(models, codex, work)
        _gemini_sessions(models, gemini, work)
        models.turns.extend([Turn(text="greet.py reads well: one function, typed, nothing to change.")])
        models.turns.extend([Turn(text="greet.py defines greet_user(), which returns 'hello'.")])
        staging = out.with_name(out.name + ".new")
        shutil.rmtree(staging, ignore_errors=True)
        _claude_parent(models, codex, gemini, work, staging)
    shutil.copytree(codex.home / "sessions", staging / "codex" / "sessions")
    for chats in (gemini.home / ".gemini" / "tmp").glob("*/chats"):
        shutil.copytree(chats, staging / "gemini" / "tmp" / chats.parent.name / "chats")
        shutil.copy2(chats.parent / ".project_root", staging / "gemini" / "tmp" / chats.parent.name / ".project_root")
    map_paths(staging, work, COMMITTED_WORK)
    shutil.rmtree(out, ignore_errors=True)
    staging.rename(out)


def fixture_sessions(root: Path = FIXTURES) -> dict[str, Path]:
    """Each committed Codex rollout and Gemini chat by a stable name: `<agent>-<first words of its prompt>`."""
    found = {}
    names = {"Add a greeting": "greeting", "Which repository": "clone", "Review greet": "review",
             "Ask a helper": "spawn", "Count the lines": "",  # the helper's own rollout: in its parent's render
             "Summarise greet": "summarise", "Where is farewell": "investigator", "Add a farewell": "farewell"}
    for path in sorted([*root.glob("codex/sessions/**/*.jsonl"), *root.glob("gemini/tmp/*/chats/*.jsonl")]):
        text = path.read_text()
        # A resume that starts in a later minute than its session also leaves a stub file of the session under
        # that minute's name, holding no prompt: the session is the file that does.
        name = next((name for prompt, name in names.items() if f'"{prompt}' in text), "")
        if name:
            found[f"{path.relative_to(root).parts[0]}-{name}"] = path
    return found


def render(path: Path) -> str:
    """The deterministic markdown of one fixture transcript, as ingest archives it."""
    from eywa.core.archive.renderer import Renderer
    from eywa.core.ingest.prepare import read_session
    from eywa.core.sources.discovery import file_session, group_sessions, scan_files

    agent = "codex" if "codex" in path.parts else "gemini"
    folder = path.parents[2] if agent == "gemini" else path.parents[3]  # tmp/ or sessions/
    files = scan_files(folder, agent)
    group = next(g for g in group_sessions(files, file_session).values() if path in [f.path for f in g.files])
    session, _ = read_session(group, str)
    return Renderer().render(session)


def write_goldens() -> None:
    shutil.rmtree(GOLDEN, ignore_errors=True)
    GOLDEN.mkdir(parents=True)
    for name, path in fixture_sessions().items():
        (GOLDEN / f"{name}.md").write_text(render(path), encoding="utf-8")


if __name__ == "__main__":
    generate()
    write_goldens()
    print(f"wrote {sum(1 for p in FIXTURES.rglob('*') if p.is_file())} files under {FIXTURES}, goldens in {GOLDEN}")
