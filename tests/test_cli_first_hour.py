"""What a newcomer meets in the first hour with `eywa`, each found by hand once: messages that say what is
true (filters, quotes, counts, plurals, dates), one config check for every command, and what a CLI is
expected to have (--version, completion, help with an example for every argument, colour on a terminal only).
Real processes on the claude-code-log tree (its empty and summary-only files included) and the Codex CLI and
Gemini CLI transcripts the real CLIs wrote."""

from __future__ import annotations

import datetime as dt
import os
import pty
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from eywa.cli.main import _parser

from .conftest import AGENT_FIXTURES, CORPUS, ROOT

LOG_TREE = CORPUS / "claude-code-log" / "projects"
SUMMARY_ONLY = LOG_TREE / "-Users-dain-workspace-claude-code-log-sample" / "4e27c414-a885-46a0-b5c8-d58e1417377d.jsonl"
EYWA = Path(sys.executable).parent / "eywa"


def run(*args: str, env: dict[str, str], stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(EYWA), *args], env=env, cwd=ROOT, text=True, capture_output=True, timeout=300,
                          input=stdin)


def base_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EYWA_", "ANTHROPIC_", "NO_COLOR"))}
    env.update(HOME=str(home), EYWA_DATA_DIR=str(home / "data"), EYWA_PROJECTS_DIR=str(LOG_TREE),
               EYWA_NOW="2026-12-02", TERM="xterm")
    return env


@pytest.fixture(scope="module")
def ingested(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, str], str]:
    home = tmp_path_factory.mktemp("home")
    agents = home / "agents"
    shutil.copytree(AGENT_FIXTURES / "codex", agents / "codex")
    shutil.copytree(AGENT_FIXTURES / "gemini", agents / "gemini")
    env = base_env(home)
    env["EYWA_SOURCES"] = (f'[{{"kind": "codex", "path": "{agents / "codex"}"}}, '
                           f'{{"kind": "gemini", "path": "{agents / "gemini"}"}}]')
    done = run("ingest", env=env)
    assert done.returncode == 0, done.stderr
    return env, done.stdout


# --- messages that say what is true ---------------------------------------------------------------------------
def test_last_with_a_filter_nothing_matches_says_so_and_an_empty_index_says_to_ingest(
        ingested: tuple[dict[str, str], str], tmp_path: Path) -> None:
    env, _ = ingested
    for flags in (["--project", "nonexistent"], ["--machine", "laptop"], ["--project", "cli", "--agent", "gemini"]):
        done = run("last", *flags, env=env)
        assert done.returncode == 0 and done.stdout == (
            f"No session matches {' '.join(flags)}; `eywa last` without it lists the latest.\n")
    empty = base_env(tmp_path)
    empty["EYWA_PROJECTS_DIR"] = str(tmp_path / "nothing-here")
    (tmp_path / "nothing-here").mkdir()
    assert run("ingest", env=empty).returncode == 0
    assert run("last", "--agent", "codex", env=empty).stdout == "No sessions indexed yet: run `eywa ingest`.\n"


def test_agent_names_are_case_insensitive_and_a_count_under_one_is_refused(
        ingested: tuple[dict[str, str], str]) -> None:
    env, _ = ingested
    codex = run("last", "--agent", "Codex", env=env)
    assert codex.returncode == 0 and codex.stdout.count(" codex ") == 4 and "claude-code" not in codex.stdout
    assert run("get", "--agent", "GEMINI", "--json", "farewell", env=env).returncode == 0
    for count in ("0", "-5", "many"):
        done = run("last", count, env=env)
        assert done.returncode == 2 and done.stdout == "" and "argument count:" in done.stderr, count


def test_show_keeps_the_quotes_of_the_id_it_names(ingested: tuple[dict[str, str], str]) -> None:
    env, _ = ingested
    ambiguous = run("show", "a", env=env)
    assert ambiguous.returncode == 1 and ambiguous.stderr.startswith("eywa: 'a' matches ")
    for bad in ("../../etc/passwd", "zz zz"):
        done = run("show", bad, env=env)
        assert done.returncode == 1 and done.stderr == f"eywa: '{bad}' is not a session id (letters, digits and " \
                                                       "'-' only)\n"


def test_ingest_and_stats_count_alike_with_plurals_and_other_agents_under_their_own_names(
        ingested: tuple[dict[str, str], str]) -> None:
    env, summary = ingested
    assert ", 21 skipped (empty or not transcripts)" in summary and ", 1 orphan note," in summary
    stats = run("stats", env=env).stdout.splitlines()
    assert any(line.startswith("source files") and "(21 sessions skipped: empty or not transcripts)" in line
               for line in stats)
    drift = [line for line in stats if line.startswith("versions read")]
    # 108 files read: 99 of Claude Code in 21 versions (19 files with no version), 5 Codex rollouts of one
    # version and 4 Gemini CLI chats (which name none).
    assert drift == ["versions read    108 files of 23 versions, nothing unknown (--verbose: by version)"]
    assert len(stats) < 15  # the summary: per-version lines only under --verbose
    by_agent = next(line for line in stats if line.startswith("by agent"))
    assert "codex 4 sessions" in by_agent and "gemini 3 sessions" in by_agent
    verbose = run("stats", "--verbose", env=env).stdout
    assert "2.1.114: 7 files, nothing unknown" in verbose and "no version:" in verbose
    assert "codex 0.171.0: 5 files, nothing unknown" in verbose and "gemini: 4 files, nothing unknown" in verbose
    no_version = next(line for line in verbose.splitlines() if "no version:" in line)
    assert no_version.endswith("no version: 19 files, nothing unknown")  # Claude Code's own: no Codex or Gemini


def test_a_session_no_record_dates_is_dated_by_its_file_and_empty_sessions_stay_out_of_last(
        ingested: tuple[dict[str, str], str]) -> None:
    env, _ = ingested
    data = Path(env["EYWA_DATA_DIR"])
    assert not list((data / "handoffs").glob("1970"))
    day = dt.datetime.fromtimestamp(SUMMARY_ONLY.stat().st_mtime, dt.UTC).date()
    assert (data / "handoffs" / f"{day:%Y/%m/%d}" / f"{SUMMARY_ONLY.stem}.md").is_file()
    listed = run("last", "100", env=env).stdout
    assert "No meaningful work" not in listed and SUMMARY_ONLY.stem[:8] not in listed
    probe = ("import datetime as dt; from eywa.core.api import Eywa; "
             "from eywa.core.config.settings import load_settings;"
             "digest = Eywa(load_settings()).digest(dt.datetime(2000, 1, 1, tzinfo=dt.UTC));"
             "print(len(digest.handoffs), sum(h.substance == 0 for h in digest.handoffs))")
    digest = subprocess.run([sys.executable, "-c", probe], env=env, cwd=ROOT, capture_output=True, text=True)
    assert digest.stdout.split() == ["34", "0"], digest.stderr  # every session with work; no empty one


def test_every_command_refuses_a_broken_config_file_in_the_same_one_line(tmp_path: Path,
                                                                         ingested: tuple[dict[str, str], str]) -> None:
    env = {**ingested[0], "EYWA_CONFIG": str(tmp_path / "config.yaml")}
    for text, says in (("retreival:\n  days_back: 3\n", "did you mean 'retrieval'?"),
                       ("telegram:\n  allowed_user_ids: [me, you]\n", "telegram.allowed_user_ids[1] = 'you'"),
                       ("telegram:\n  digest_time: '25:00'\n", "telegram.digest_time = '25:00'"),
                       ("retrieval:\n  days_back: soon\n", "retrieval.days_back = 'soon'"),
                       ("redaction:\n  extra_patterns: ['(unclosed']\n", "not a valid regular expression")):
        (tmp_path / "config.yaml").write_text(text)
        said = {}
        for command in (["ingest"], ["get", "x"], ["last"], ["stats"], ["show", "abc"]):
            done = run(*command, env=env)
            assert done.returncode == 1 and done.stdout == "", (text, command)
            said[command[0]] = done.stderr
        assert len(set(said.values())) == 1, said
        line = said["get"]
        assert line.count("\n") == 1 and line.startswith("eywa: invalid configuration: ") and says in line, line
    env["EYWA_TELEGRAM__FOO"] = "1"
    (tmp_path / "config.yaml").write_text("")
    assert run("get", "x", env=env).stderr == run("last", env=env).stderr != ""


# --- what a CLI is expected to have ---------------------------------------------------------------------------
def test_both_commands_tell_their_version(tmp_path: Path) -> None:
    from importlib.metadata import version

    env = base_env(tmp_path)
    assert run("--version", env=env).stdout == f"eywa {version('eywa')}\n"
    bot = subprocess.run([str(EYWA.with_name("eywa-bot")), "--version"], env=env, capture_output=True, text=True)
    assert bot.stdout == f"eywa-bot {version('eywa')}\n"


def test_every_argument_has_help_and_every_command_an_example() -> None:
    parser = _parser()
    commands = next(a for a in parser._actions if a.dest == "command")
    assert set(commands.choices) >= {"ingest", "get", "last", "show", "stats", "completion", "continue"}
    for name, command in commands.choices.items():
        assert "example" in (command.epilog or "") and f"eywa {name}" in command.format_help() or name == "hook" \
            and "eywa hook" in command.epilog, name
        for action in command._actions:
            assert action.help, f"eywa {name} {action.dest} has no help"
    assert "Memory for coding agents" in parser.format_help() and "Claude Code, Codex CLI and Gemini CLI" in \
        parser.format_help()


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_scripts_complete_commands_and_choices(shell: str, tmp_path: Path) -> None:
    env = base_env(tmp_path)
    script = run("completion", shell, env=env)
    assert script.returncode == 0 and "eywa" in script.stdout and "_ARGCOMPLETE" in script.stdout
    if shell != "bash" or shutil.which("bash") is None:
        return
    (tmp_path / "eywa.bash").write_text(script.stdout)
    probe = (f'source {tmp_path / "eywa.bash"}; '
             'COMP_LINE="eywa la"; COMP_POINT=${#COMP_LINE}; COMP_WORDS=(eywa la); COMP_CWORD=1; '
             '_python_argcomplete eywa; echo "${COMPREPLY[@]}"; '
             'COMP_LINE="eywa last --agent c"; COMP_POINT=${#COMP_LINE}; COMP_WORDS=(eywa last --agent c); '
             'COMP_CWORD=3; _python_argcomplete eywa; echo "${COMPREPLY[@]}"')
    done = subprocess.run(["bash", "-c", probe], env={**env, "PATH": f"{EYWA.parent}:{env['PATH']}"},
                          capture_output=True, text=True, timeout=60)
    commands, agents = done.stdout.splitlines()[-2:]
    assert commands.split() == ["last"] and sorted(agents.split()) == ["claude-code", "codex", "copilot"]


def test_colour_on_a_terminal_only_and_never_with_no_color(ingested: tuple[dict[str, str], str]) -> None:
    env, _ = ingested
    piped = run("last", "2", env=env)
    assert "\033[" not in piped.stdout
    assert "\033[" in on_a_terminal(["last", "2"], env)
    assert "\033[" not in on_a_terminal(["last", "2"], {**env, "NO_COLOR": "1"})
    assert "\033[31m" in on_a_terminal(["show", "../x"], env)  # the error's "eywa:" in red


def on_a_terminal(args: list[str], env: dict[str, str]) -> str:
    """What `eywa ARGS` writes to a terminal (a pty for stdout and stderr)."""
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(ROOT)
        os.execve(str(EYWA), ["eywa", *args], env)
    screen = b""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        screen += chunk
    os.waitpid(pid, 0)
    os.close(fd)
    return screen.decode("utf-8", "replace")


def test_output_cut_short_by_its_reader_is_no_error(ingested: tuple[dict[str, str], str]) -> None:
    env, _ = ingested
    done = subprocess.run(f"'{EYWA}' stats --verbose | head -1", shell=True, env=env, cwd=ROOT, text=True,
                          capture_output=True, timeout=120)
    assert done.stdout.startswith("data directory") and done.stderr == ""
