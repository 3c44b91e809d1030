"""The sessions the harness transcripts are made of: each a scripted conversation with the real Claude Code.

`tests/claude_harness_regen.py` runs every scenario in its own throwaway HOME and commits what the CLI
wrote (tests/fixtures/claude-code-<version>/<scenario>/); the transcript tests read those files. A scenario
gets the CLI and the model and returns nothing: its session is whatever the CLI wrote.
"""

from __future__ import annotations

import base64
import signal
import struct
import subprocess
import time
import zlib
from collections.abc import Callable

from tests import check_transcripts as checks
from tests.claude_harness import COMPACT_MARKER, ClaudeCode, Reply, ScriptedModel, text, tool

COMPACT_SUMMARY = ("<analysis>The user asked for the parser fix.</analysis>\n<summary>1. Primary Request: fix the "
                   "date parser in parse.py so that ISO weeks parse.\n2. Pending: run the tests.</summary>")


def print_session(claude: ClaudeCode, model: ScriptedModel) -> None:
    """A plain `--print` session: a file written, a command run, an answer."""
    target = claude.project / "notes.md"
    model.on("write the release notes",
             tool("Write", {"file_path": str(target), "content": "# Release notes\n\n- faster ingest\n"}),
             tool("Bash", {"command": "wc -l notes.md", "description": "Count the lines"}),
             "The release notes are in notes.md (3 lines).")
    claude.run("write the release notes for version 2 into notes.md")


def background_agent(claude: ClaudeCode, model: ScriptedModel) -> None:
    """The Agent tool in the background (this version's default): the run reports by <task-notification>."""
    model.on("find where the retry policy lives",
             tool("Agent", {"description": "Locate the retry policy", "subagent_type": "general-purpose",
                            "prompt": "SUBTASK-BG: list the files and say which one holds the retry policy"}),
             "I started an agent to look; I will report when it finishes.")
    model.on("SUBTASK-BG", tool("Bash", {"command": "ls", "description": "List the files"}),
             "The retry policy lives in core/llm_client.py (RetryPolicy).")
    model.on("<task-notification>", "The agent found it: the retry policy lives in core/llm_client.py.")
    claude.run("find where the retry policy lives")


def background_agent_twice(claude: ClaudeCode, model: ScriptedModel) -> None:
    """One background run asked again after it finished (SendMessage resumes it): it notifies twice."""
    model.on("map the retry code and its tests",
             tool("Agent", {"description": "Map the retry code", "subagent_type": "general-purpose",
                            "name": "retry-mapper", "prompt": "SUBTASK-TWICE: say where the retry policy lives"}),
             "An agent is mapping the retry code.")
    model.on("SUBTASK-TWICE", "RESULT-ONE: the retry policy lives in core/llm_client.py.")
    model.on("RESULT-ONE",
             tool("ToolSearch", {"query": "select:SendMessage"}),
             tool("SendMessage", {"to": "retry-mapper", "summary": "ask for the tests too",
                                  "message": "SUBTASK-AGAIN: now say which tests cover it"}),
             "I asked the agent for the tests too.")
    model.on("SUBTASK-AGAIN", "RESULT-TWO: tests/test_llm_client.py covers RetryPolicy.")
    model.on("RESULT-TWO", "The policy is in core/llm_client.py, covered by tests/test_llm_client.py.")
    claude.run("map the retry code and its tests", allowed_tools="Write Edit Read Bash Agent SendMessage")


def foreground_agent(claude: ClaudeCode, model: ScriptedModel) -> None:
    """The Agent tool with run_in_background false: its report is the tool result."""
    model.on("review the schema change",
             tool("Agent", {"description": "Review the schema", "subagent_type": "general-purpose",
                            "prompt": "SUBTASK-FG: review the schema migration for missing indexes",
                            "run_in_background": False}),
             "The reviewer found one missing index on sources.session_uuid.")
    model.on("SUBTASK-FG", "One index is missing: sources.session_uuid has none.")
    claude.run("review the schema change")


def resumed_session(claude: ClaudeCode, model: ScriptedModel) -> None:
    """A session continued with --resume: one transcript, two prompts."""
    model.on("start the tokenizer work", "I looked at the tokenizer; hyphenated words are split too early.")
    first = claude.run("start the tokenizer work")
    model.on("now keep hyphenated words whole", "Done: hyphenated words are kept as one token now.")
    claude.run("now keep hyphenated words whole", resume=first.session_id)


def manual_compaction(claude: ClaudeCode, model: ScriptedModel) -> None:
    """`/compact` in a resumed -p session: boundary, summary and the /compact command trio."""
    model.on("fix the date parser", "The parser rejects ISO weeks; the fix goes in parse.py.")
    first = claude.run("fix the date parser so that ISO weeks parse")
    model.on(COMPACT_MARKER, COMPACT_SUMMARY)
    claude.run("/compact", resume=first.session_id)


def auto_compaction(claude: ClaudeCode, model: ScriptedModel) -> None:
    """A context nearly full (the answer reports 990k input tokens): the CLI compacts on its own."""
    model.on("load the whole log", Reply(blocks=[text("The log is loaded; it is very long.")],
                                         usage={"input_tokens": 990_000}))
    first = claude.run("load the whole log and look for the timeout")
    model.on(COMPACT_MARKER, COMPACT_SUMMARY)
    model.on("what was the timeout", "The timeout was 30 s, raised to 60 s.")
    claude.run("what was the timeout", resume=first.session_id)


def slash_command(claude: ClaudeCode, model: ScriptedModel) -> None:
    """A local slash command in -p: the caveat, the command and its output (a system local_command)."""
    model.on("explain the context use", "Most of the context is the system prompt.")
    first = claude.run("explain the context use")
    claude.run("/context", resume=first.session_id)


def plan_mode(claude: ClaudeCode, model: ScriptedModel) -> None:
    """--permission-mode plan: the model reads and plans, writes nothing."""
    model.on("plan the cache eviction",
             tool("Read", {"file_path": str(claude.project / "cache.py")}),
             "# Plan: evict by size\n\n1. Track each entry's bytes.\n2. Evict the oldest past 64 MB.")
    (claude.project / "cache.py").write_text("CACHE = {}\n")
    claude.run("plan the cache eviction", "--permission-mode", "plan")


def task_tools(claude: ClaudeCode, model: ScriptedModel) -> None:
    """The task tools (TaskCreate / TaskUpdate, deferred: loaded through ToolSearch first); one left open."""
    model.on("track the migration work",
             tool("ToolSearch", {"query": "select:TaskCreate,TaskUpdate"}),
             [tool("TaskCreate", {"subject": "Write the migration", "description": "Add the v7 migration",
                                  "activeForm": "Writing the migration"}),
              tool("TaskCreate", {"subject": "Backfill old rows", "description": "Backfill rows before v7",
                                  "activeForm": "Backfilling old rows"})],
             tool("TaskUpdate", {"taskId": "1", "status": "completed"}),
             "The migration is written; the backfill is still to do.")
    claude.run("track the migration work", env={"CLAUDE_CODE_ENABLE_TODO_TOOLS": "1"})


def _png() -> str:
    """A 2x2 PNG, base64 (a real image block, tiny)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    raw = b"".join(b"\x00" + b"\xff\x00\x00" * 2 for _ in range(2))
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0)) + \
        chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")
    return base64.b64encode(png).decode()


def image_prompt(claude: ClaudeCode, model: ScriptedModel) -> None:
    """A prompt with an image attached (streamed in as content blocks)."""
    model.on("what is wrong in this screenshot", "The button is red where the design says blue.")
    claude.run(None, messages=[[{"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                              "data": _png()}},
                                {"type": "text", "text": "what is wrong in this screenshot"}]])


def permission_denied(claude: ClaudeCode, model: ScriptedModel) -> None:
    """A tool call the permission rules refuse (outside the working directory, Bash not allowed): the model
    is told, and goes on."""
    model.on("clean the build folder",
             tool("Bash", {"command": "rm -rf ../build-cache", "description": "Remove the build cache"}),
             "I may not run that here; please remove ../build-cache yourself.")
    claude.run("clean the build folder", allowed_tools="Read")


def interrupted_tool(claude: ClaudeCode, model: ScriptedModel) -> None:
    """SIGINT while a tool runs: the call is left without its result."""
    started = claude.project / "benchmark.started"
    model.on("run the slow benchmark",
             tool("Bash", {"command": "touch benchmark.started && python3 -c 'import time; time.sleep(30)'",
                           "description": "Run the slow benchmark"}), "Finished.")
    process = claude.start("run the slow benchmark")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not started.exists():  # the Bash call is running from then on
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    try:
        process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()


def failing_tests(claude: ClaudeCode, model: ScriptedModel) -> None:
    """A test run left failing and an edit after the commit, as the Codex and Gemini CLI sessions of
    tests/check_transcripts.py: retry.py and its test written and committed, retry.py edited again, `pytest`
    failing, `git status`, and a closing "Next:" line."""
    repo = claude.project
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True, capture_output=True)
    model.on("add a retry helper",
             [tool("Write", {"file_path": str(repo / "retry.py"), "content": checks.RETRY}),
              tool("Write", {"file_path": str(repo / "test_retry.py"), "content": checks.TEST})],
             tool("Bash", {"command": checks.COMMIT, "description": "Commit the helper"}),
             tool("Edit", {"file_path": str(repo / "retry.py"), "old_string": "def retry(fn, attempts=3):\n",
                           "new_string": f"def retry(fn, attempts=3):\n    {checks.DOCSTRING}\n"}),
             tool("Bash", {"command": checks.TESTS, "description": "Run the tests"}),
             tool("Bash", {"command": "git status", "description": "Show the working tree"}),
             checks.CLOSING)
    claude.run(checks.PROMPT.replace("Add a", "add a"))


PLAN = ("Implement the following plan:\n\n# Plan: Back off between retries\n\n## Files to Modify\n"
        "- `retry.py` - sleep backoff(attempt) seconds between attempts\n- `test_retry.py` - a test that the waits "
        "double\n\n## Verification\nRun `python3 -m pytest -q`.")


def plan_left(claude: ClaudeCode, model: ScriptedModel) -> None:
    """A plan given as Claude Code's plan mode hands it over ("Implement the following plan:"), carried out only
    in part: retry.py written, test_retry.py (listed to change) never touched."""
    model.on("Back off between retries",
             tool("Write", {"file_path": str(claude.project / "retry.py"),
                            "content": "def backoff(attempt):\n    return 2 ** attempt\n"}),
             "retry.py now has backoff(attempt).")
    claude.run(PLAN)


SCENARIOS: dict[str, Callable[[ClaudeCode, ScriptedModel], None]] = {
    "print-session": print_session,
    "background-agent": background_agent,
    "background-agent-twice": background_agent_twice,
    "foreground-agent": foreground_agent,
    "resumed-session": resumed_session,
    "manual-compaction": manual_compaction,
    "auto-compaction": auto_compaction,
    "slash-command": slash_command,
    "plan-mode": plan_mode,
    "task-tools": task_tools,
    "image-prompt": image_prompt,
    "permission-denied": permission_denied,
    "interrupted-tool": interrupted_tool,
    "failing-tests": failing_tests,
    "plan-left": plan_left,
}
