"""The `eywa` command as a user runs it: a real process, the real corpus, now pinned."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import CORPUS, ROOT

NOW = "2026-02-17"


def run(*args: str, env: dict[str, str], check: bool = True) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([sys.executable, "-m", "eywa.cli.main", *args], cwd=ROOT, env=env, text=True,
                            capture_output=True, timeout=300)
    if check and result.returncode != 0:
        raise AssertionError(f"eywa {' '.join(args)} failed: {result.stderr}")
    return result


@pytest.fixture(scope="module")
def cli_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    home = tmp_path_factory.mktemp("home")
    env = {k: v for k, v in os.environ.items() if not k.startswith("EYWA_")}
    env.update(HOME=str(home), EYWA_DATA_DIR=str(home / "data"), EYWA_PROJECTS_DIR=str(CORPUS), EYWA_NOW=NOW)
    result = run("ingest", env=env)
    assert "183 sessions updated" in result.stdout
    return env


def test_ingest_when_piped_prints_a_summary_and_no_progress_bar(cli_env: dict[str, str]) -> None:
    result = run("ingest", env=cli_env)
    assert result.stdout.startswith("252 files, 0 new or changed; 0 sessions updated")
    assert "\r" not in result.stderr and result.stderr == ""


def test_get_names_each_session_before_its_handoff_so_show_can_follow_it(cli_env: dict[str, str]) -> None:
    out = run("get", "rewind", "gemini", env=cli_env).stdout
    assert out.startswith("## Eywa: 3 past sessions\n\nsession ")
    handoffs = out.split("\n\n", 1)[1].split("\n\n---\n\n")
    assert len(handoffs) == 3
    for handoff in handoffs:
        named, headline = handoff.splitlines()[:2]
        short, day, projects, agent = named.removeprefix("session ").split(" · ")  # one machine: not named
        assert len(short) == 8 and day.startswith("2026-") and projects and agent == "claude-code"
        assert headline.startswith("# ")
        assert run("show", short, env=cli_env).stdout.startswith(headline)
    assert "session_id:" not in out and "substance:" not in out


def test_get_finds_an_old_session_first_with_the_defaults_months_later(cli_env: dict[str, str]) -> None:
    """The issue's case: the right session came first only with --days-back 400; now with nothing given, at the
    corpus' last day and ten months later alike."""
    query = "linear document attached to the issue"
    wide = json.loads(run("get", query, "--days-back", "400", "--json", env=cli_env).stdout)
    assert wide[0]["date"] < "2026-02-01"  # weeks older than the newest sessions
    for now in (NOW, "2026-12-02"):
        found = json.loads(run("get", query, "--json", env={**cli_env, "EYWA_NOW": now}).stdout)
        assert [r["session_id"] for r in found] == [r["session_id"] for r in wide], now


def test_get_days_back_keeps_only_those_days_and_says_so(cli_env: dict[str, str]) -> None:
    out = run("get", "gemini", "--days-back", "7", env=cli_env).stdout
    assert out.startswith("## Eywa: 3 past sessions since Wed 11 Feb\n")
    days = [line.split(" · ")[1] for line in out.splitlines() if line.startswith("session ")]
    assert days and all("2026-02-11" <= day for day in days)


def test_get_understands_time_words_and_says_which_days(cli_env: dict[str, str]) -> None:
    week = json.loads(run("get", "the changelog last week", "--json", env=cli_env).stdout)
    assert "2026-02-09" <= week[0]["date"] <= NOW and "changelog" in week[0]["headline"].lower()
    out = run("get", "the changelog last week", env=cli_env).stdout
    assert out.startswith("## Eywa: 3 past sessions, those since Mon 9 Feb first\n")
    listing = run("get", "what did I do yesterday", env=cli_env).stdout
    assert listing.startswith("## Eywa: 1 past session on Mon 16 Feb\n")  # the one session of that day
    assert {line.split(" · ")[1] for line in listing.splitlines() if line.startswith("session ")} == {"2026-02-16"}


def test_get_matching_nothing_says_so_then_lists_the_latest(cli_env: dict[str, str]) -> None:
    out = run("get", "zanzibar quokka", env=cli_env).stdout.splitlines()
    assert out[:4] == ['## Eywa: nothing matches "zanzibar quokka"', "", "no match; the latest sessions:", ""]
    latest = run("last", "3", env=cli_env).stdout.splitlines()
    assert [line.split(" · ")[0].removeprefix("session ") for line in out[4:]] == [line.split()[0] for line in latest]
    results = json.loads(run("get", "zanzibar quokka", "--json", env=cli_env).stdout)
    assert len(results) == 3 and all(r["match"] is False and r["score"] == 0 for r in results)
    assert all(r["match"] is True for r in json.loads(run("get", "gemini", "--json", env=cli_env).stdout))


def test_get_json_lists_ranked_results(cli_env: dict[str, str]) -> None:
    results = json.loads(run("get", "gemini transcript parsing", "--max", "5", "--json", env=cli_env).stdout)
    assert len(results) == 5
    assert {"session_id", "short_id", "match", "score", "date", "headline", "projects"} <= set(results[0])
    assert [r["score"] for r in results] == sorted((r["score"] for r in results), reverse=True)
    assert all(len(r["session_id"]) == 36 and r["session_id"].startswith(r["short_id"]) for r in results)


def test_get_with_project_filter_only_returns_that_project(cli_env: dict[str, str]) -> None:
    results = json.loads(run("get", "html css", "--project", "claude-code-log", "--days-back", "400", "--json",
                             env=cli_env).stdout)
    assert results and all("claude-code-log" in r["projects"] for r in results)


def test_last_lists_newest_first(cli_env: dict[str, str]) -> None:
    lines = run("last", "4", env=cli_env).stdout.splitlines()
    assert len(lines) == 4
    dates = [line.split()[1] for line in lines]
    assert dates == sorted(dates, reverse=True)


def test_show_accepts_a_unique_prefix(cli_env: dict[str, str]) -> None:
    out = run("show", "4f8c11", env=cli_env).stdout
    assert out.startswith("# ") and "## What Happened" in out


def test_ambiguous_prefix_lists_the_candidates(cli_env: dict[str, str]) -> None:
    result = run("show", "0", env=cli_env, check=False)
    assert result.returncode == 1
    assert "matches" in result.stderr and "give more characters" in result.stderr
    assert result.stderr.count("\n  0") >= 2


def test_unknown_id_and_path_like_ids_fail_clearly(cli_env: dict[str, str]) -> None:
    for bad in ("zzzzzzzz", "../../etc/passwd"):
        result = run("show", bad, env=cli_env, check=False)
        assert result.returncode == 1 and result.stderr.startswith("eywa: ") and "Traceback" not in result.stderr


def test_stats_reports_counts(cli_env: dict[str, str]) -> None:
    stats = json.loads(run("stats", "--json", env=cli_env).stdout)
    assert stats["handoffs"] == 183 and stats["bad_lines"] == 1 and stats["sources"] == 252


def test_get_before_any_ingest_says_what_to_do(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EYWA_")}
    env.update(HOME=str(tmp_path), EYWA_DATA_DIR=str(tmp_path / "empty"))
    result = run("get", "anything", env=env, check=False)
    assert result.returncode == 1 and "eywa ingest" in result.stderr


def test_invalid_config_value_fails_at_start_with_the_key(cli_env: dict[str, str]) -> None:
    result = run("get", "x", env={**cli_env, "EYWA_RETRIEVAL__MODE": "semantic"}, check=False)
    assert result.returncode == 1 and "retrieval.mode" in result.stderr and "semantic" in result.stderr


def test_reindex_rebuilds_the_same_results_from_files_alone(cli_env: dict[str, str], tmp_path: Path) -> None:
    before = run("get", "checkpoint", "--json", "--days-back", "60", env=cli_env).stdout
    Path(cli_env["EYWA_DATA_DIR"], "index.sqlite3").unlink()
    for suffix in ("-wal", "-shm"):
        Path(cli_env["EYWA_DATA_DIR"], "index.sqlite3" + suffix).unlink(missing_ok=True)
    out = run("reindex", env=cli_env).stdout
    assert out.startswith("183 handoffs indexed")
    assert run("get", "checkpoint", "--json", "--days-back", "60", env=cli_env).stdout == before


def test_reindex_imports_handoffs_of_the_original(cli_env: dict[str, str], tmp_path: Path) -> None:
    originals = tmp_path / "eywa-mcp" / "handoffs"
    originals.mkdir(parents=True)
    (originals / "8735508d.md").write_text(
        "---\nsession_id: 8735508d\ndate: 2026-02-16\nduration: 1h 10m\nmodel: claude-opus-4-6\n"
        "headline: Wire quetzal digest into the bot\nprojects: [eywa, pratchett-os]\n"
        "keywords: [quetzal-digest, telegram-digest]\nsubstance: 2\n---\n"
        "# Wire quetzal digest into the bot\n\n## What Happened\n- Built it\n\n## Open Threads\nNone.\n",
        encoding="utf-8")
    (originals / "broken.md").write_text("no front matter here", encoding="utf-8")
    result = run("reindex", "--import", str(originals), env=cli_env)
    assert "1 imported" in result.stdout and "broken.md" in result.stderr
    assert (Path(cli_env["EYWA_DATA_DIR"]) / "handoffs/2026/02/16/8735508d.md").is_file()
    found = json.loads(run("get", "quetzal", "--json", env=cli_env).stdout)
    assert found[0]["session_id"] == "8735508d" and found[0]["projects"] == ["eywa", "pratchett-os"]


def test_ingest_without_a_backend_imports_no_llm_prompt(cli_env: dict[str, str]) -> None:
    env = {k: v for k, v in cli_env.items() if k != "ANTHROPIC_API_KEY"}
    env["EYWA_LLM__CLAUDE_CODE_COMMAND"] = "claude-not-installed"
    probe = ("import sys; from eywa.cli.main import main; main(['ingest']);"
             "print(sorted({'eywa.core.extract.llm.cli_backend', 'eywa.core.extract.llm.prompt'} & set(sys.modules)),"
             " file=sys.stderr)")
    result = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=env, text=True, capture_output=True)
    assert result.stderr.strip() == "[]"
    assert "sessions updated" in result.stdout


def test_ingest_shows_a_progress_bar_when_asked(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EYWA_")}
    env.update(HOME=str(tmp_path), EYWA_DATA_DIR=str(tmp_path / "d"),
               EYWA_PROJECTS_DIR=str(CORPUS / "claude-code-log" / "projects"))
    result = run("ingest", "--progress", "always", env=env)
    assert "session" in result.stderr and "%" in result.stderr


@pytest.mark.parametrize("mode", ["keywords", "hybrid"])
def test_get_starts_without_the_settings_model_numpy_or_dataclasses(cli_env: dict[str, str], mode: str) -> None:
    """`eywa get` is the command a user waits on: none of these is on its path (dataclasses imports inspect,
    orjson dataclasses and uuid, uuid platform; argparse's help width shutil; the full-text writer's page-out
    ctypes; the default zone, UTC, zoneinfo), and a query without time words or digits compiles none of the
    patterns that look for them."""
    probe = (f"import sys; from eywa.cli.main import main; main(['get', '--mode', '{mode}', 'rewind']);"
             "heavy = {'pydantic', 'pydantic_settings', 'anthropic', 'mcp', 'telegram', 'numpy', 'dataclasses',"
             " 'inspect', 'orjson', 'uuid', 'platform', 'shutil', 'ctypes', 'zoneinfo'} & set(sys.modules);"
             "from eywa.core.retrieval import query_tokens, time_words;"
             "compiled = time_words._compiled.cache_info().currsize + query_tokens._dates.cache_info().currsize;"
             "print(sorted(heavy), compiled, file=sys.stderr)")
    result = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=cli_env, text=True, capture_output=True)
    assert result.stderr.strip() == "[] 0"
    assert result.stdout.startswith("## Eywa: ")


def test_get_as_the_program_ends_without_finalizing_yet_writes_its_whole_output(cli_env: dict[str, str]) -> None:
    """The program's `eywa get` (`run`, the installed `eywa`) runs its exit handlers, then leaves through `os._exit`
    once its output is flushed (no module is torn down, so a global's finalizer never runs), with the same output
    and exit code as a call of `main`; other commands finalize as usual."""
    import tomllib

    def program(*args: str) -> subprocess.CompletedProcess[str]:
        probe = ("import atexit, sys\n"
                 "class Torn:\n    def __del__(self): print('torn down', file=sys.stderr)\n"
                 "torn = Torn(); atexit.register(lambda: print('exit handler', file=sys.stderr))\n"
                 f"sys.argv = ['eywa', *{list(args)!r}]; from eywa.cli.main import run; run()")
        return subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=cli_env, text=True, capture_output=True)

    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    assert scripts["eywa"] == "eywa.cli.main:run"

    for args in (["get", "--max", "5", "gemini"], ["get", "--json", "rewind"], ["get", "--max", "9", "x"]):
        ran = program(*args)
        called = subprocess.run([sys.executable, "-c", f"import sys; from eywa.cli.main import main; "
                                 f"sys.exit(main({args!r}))"], cwd=ROOT, env=cli_env, text=True, capture_output=True)
        assert ran.stderr.endswith("exit handler\n") and "torn down" not in ran.stderr
        assert (ran.stdout, ran.stderr.removesuffix("exit handler\n"), ran.returncode) == \
            (called.stdout, called.stderr, called.returncode)
    assert program("get", "--max", "9", "x").returncode == 1
    assert program("last", "1").stderr.endswith("exit handler\ntorn down\n")
    gone, write = os.pipe()
    os.close(gone)  # the reader has left before a byte is written: the flush fails, and that is no error
    for way in (["-c", "from eywa.cli.main import run; run()"], ["-m", "eywa.cli.main"]):
        done = subprocess.run([sys.executable, *way, "get", "gemini"], cwd=ROOT, env=cli_env, stdout=write,
                              stderr=subprocess.PIPE, text=True)
        assert (done.returncode, done.stderr) == (0, "")
    os.close(write)


def test_get_run_in_process_returns_and_keeps_the_callers_exit_work(cli_env: dict[str, str]) -> None:
    """`main` always returns: a caller that runs the module in its own process (a profiler) still does its own
    work at exit (`python -m cProfile -m eywa.cli.main get ...` prints its statistics)."""
    done = subprocess.run([sys.executable, "-m", "cProfile", "-s", "cumulative", "-m", "eywa.cli.main", "get",
                           "gemini"], cwd=ROOT, env=cli_env, text=True, capture_output=True)
    assert done.returncode == 0 and done.stdout.startswith("## Eywa: ") and "function calls" in done.stdout


def test_get_leaves_no_thread_that_its_fast_exit_would_cut_short(cli_env: dict[str, str]) -> None:
    """The program's `eywa get` leaves through `os._exit`, which joins no thread: the get path starts none that is
    still running when its output is out."""
    probe = ("import sys, threading; from eywa.cli.main import main;"
             "code = main(['get', '--mode', 'hybrid', 'rewind']);"
             "running = [t.name for t in threading.enumerate() if not t.daemon and t is not threading.main_thread()];"
             "print(code, running, file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=cli_env, text=True, capture_output=True)
    assert done.stderr.strip() == "0 []" and done.stdout.startswith("## Eywa: ")


@pytest.mark.parametrize("argv", [
    ["get", "rewind", "gemini"], ["--config", "c.yaml", "get", "--mode", "keywords", "--max", "5", "x"],
    ["--config=c.yaml", "get", "--json", "--days-back", "3", "--agent", "Codex", "q"], ["get"]])
def test_get_alone_parses_as_every_command_does(argv: list[str]) -> None:
    """`eywa get` builds only its own parser (the command a user waits on): same arguments, same help."""
    from eywa.cli.main import _command_of, _parser

    assert _command_of(argv) == "get"
    assert vars(_parser(get_only=True).parse_args(argv)) == vars(_parser().parse_args(argv))
    assert _parser(get_only=True)._subparsers._group_actions[0].choices["get"].format_help() == \
        _parser()._subparsers._group_actions[0].choices["get"].format_help()


@pytest.mark.parametrize("columns", [None, "", "x", "0", "57", "200"])
def test_help_is_as_wide_as_argparse_makes_it(columns: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    """The help formatter finds the width without shutil, as argparse's own does through it."""
    import argparse

    from eywa.cli.terminal import HelpFormatter

    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    assert HelpFormatter("eywa")._width == argparse.RawDescriptionHelpFormatter("eywa")._width
    assert HelpFormatter("eywa", width=40)._width == 40
