"""One memory over several machines, simulated on one host: a hub and two spokes, each its own HOME, data
directory and Claude Code folder; a real sshd on 127.0.0.1 and real rsync between them; every command
run as the user runs it (`eywa push`, `eywa ingest`, `eywa get`, `eywa hook`)."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import sqlite3
import string
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import zstandard

from eywa.core.handoffs.model import split_front_matter

from .conftest import AGENT_FIXTURES, AGENT_SESSIONS, ROOT, write_jsonl
from .ssh_hub import SshHub, ssh_hub

pytestmark = pytest.mark.slow  # a real sshd and rsync: a hub and two spokes

NOW = "2026-02-17"


@dataclass
class Machine:
    name: str
    home: Path
    env: dict[str, str]

    @property
    def data(self) -> Path:
        return self.home / ".eywa"

    @property
    def projects(self) -> Path:
        return self.home / ".claude" / "projects"

    def run(self, *args: str, check: bool = True, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([sys.executable, "-m", "eywa.cli.main", *args], cwd=ROOT, env=self.env, text=True,
                              capture_output=True, timeout=timeout)
        if check:
            assert done.returncode == 0, done.stderr
        return done

    def get(self, *args: str) -> list[dict]:
        return json.loads(self.run("get", "--json", "--days-back", "60", *args).stdout)

    def push(self) -> dict[str, int]:
        """`eywa push`; the figures it printed."""
        line = self.run("push").stdout
        words = line.split()
        return {"files": int(words[1]), "kb": float(words[6].lstrip("("))}


def machine(tmp: Path, name: str, hub: SshHub | None, hub_spokes: Path | None) -> Machine:
    home = tmp / name
    (home / ".claude" / "projects").mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EYWA_", "ANTHROPIC_"))}
    env.update(HOME=str(home), EYWA_NOW=NOW, EYWA_MACHINE=name)
    if hub is not None and hub_spokes is not None:
        env.update(hub.push_env(hub_spokes))
    return Machine(name, home, env)


def git_repo(path: Path, remote: str) -> Path:
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    subprocess.run(["git", "-C", str(path), "remote", "add", "origin", remote], check=True)
    return path


def transcript(m: Machine, cwd: Path, words: str, *, day: str = "2026-02-10", padding: int = 0) -> Path:
    """A Claude Code session in `cwd` on machine `m`: a request, an edit, a command and a reply."""
    sid = str(uuid.uuid4())
    base = {"sessionId": sid, "cwd": str(cwd), "version": "2.1.332", "gitBranch": "main"}
    stamp = iter(f"{day}T10:{minute:02d}:00Z" for minute in range(60))
    records = [
        {**base, "type": "user", "uuid": "u1", "timestamp": next(stamp),
         "message": {"role": "user", "content": f"Fix the {words} handling in the parser"}},
        {**base, "type": "assistant", "uuid": "a1", "timestamp": next(stamp), "message": {
            "role": "assistant", "model": "claude-opus-4-6", "content": [
                {"type": "text", "text": f"I'll change the {words} code path."},
                {"type": "tool_use", "id": "t1", "name": "Edit", "input": {
                    "file_path": f"{cwd}/parser.py", "old_string": "a", "new_string": f"{words} = 1"}}]}},
        {**base, "type": "user", "uuid": "u2", "timestamp": next(stamp), "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "The file was edited" + " ." * padding}]}},
        {**base, "type": "assistant", "uuid": "a2", "timestamp": next(stamp), "message": {
            "role": "assistant", "model": "claude-opus-4-6", "content": [
                {"type": "tool_use", "id": "t2", "name": "Bash", "input": {"command": "pytest -q"}}]}},
        {**base, "type": "user", "uuid": "u3", "timestamp": next(stamp), "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t2", "content": "12 passed"}]}},
        {**base, "type": "assistant", "uuid": "a3", "timestamp": next(stamp), "message": {
            "role": "assistant", "model": "claude-opus-4-6",
            "content": [{"type": "text", "text": f"The {words} handling is fixed and the tests pass."}]}},
    ]
    folder = m.projects / str(cwd).replace("/", "-").replace(".", "-")
    return write_jsonl(folder / f"{sid}.jsonl", records)


def append_turn(path: Path, words: str, *, padding: int = 0) -> None:
    first = json.loads(path.read_text().splitlines()[0])
    base = {k: first[k] for k in ("sessionId", "cwd", "version", "gitBranch")}
    with path.open("a") as handle:
        handle.write(json.dumps({**base, "type": "user", "uuid": f"u-{words}", "timestamp": "2026-02-10T11:00:00Z",
                                 "message": {"role": "user", "content": f"Also {words}" + " ." * padding}}) + "\n")


@pytest.fixture(scope="module")
def hub_sshd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SshHub]:
    with ssh_hub(tmp_path_factory.mktemp("sshd")) as hub:
        yield hub


@pytest.fixture
def three(tmp_path: Path, hub_sshd: SshHub) -> tuple[Machine, Machine, Machine]:
    """The Mac running the bot (the hub), a laptop and a home server (spokes)."""
    hub = machine(tmp_path, "mac", None, None)
    spokes = hub.data / "spokes"
    return hub, machine(tmp_path, "laptop", hub_sshd, spokes), machine(tmp_path, "server", hub_sshd, spokes)


def test_sessions_from_each_spoke_arrive_tagged_found_and_one_project_per_repository(three) -> None:
    hub, laptop, server = three
    # The same repository at two paths, cloned by ssh and by https, and the hub's own clone.
    cli_laptop = git_repo(laptop.home / "src" / "cli", "git@github.com:acme/cli.git")
    cli_server = git_repo(server.home / "srv" / "work" / "cli-main", "https://github.com/acme/cli")
    cli_hub = git_repo(hub.home / "code" / "acme-cli", "git@github.com:acme/cli.git")
    on_laptop = transcript(laptop, cli_laptop, "zanzibar")
    on_server = transcript(server, cli_server, "quokka")
    on_hub = transcript(hub, cli_hub, "marmalade")
    elsewhere = transcript(laptop, laptop.home / "private", "secretive").parent
    elsewhere.rename(laptop.home / "private-folder")
    (laptop.projects / "linked").symlink_to(laptop.home / "private-folder", target_is_directory=True)
    assert laptop.push()["files"] == 2 and server.push()["files"] == 2  # a transcript and the repository map
    # What travelled: the transcripts byte for byte, laid out as ~/.claude/projects, under the spoke's name.
    landed = hub.data / "spokes" / "laptop" / "claude-code" / on_laptop.parent.name / on_laptop.name
    assert landed.read_bytes() == on_laptop.read_bytes()
    assert not list((hub.data / "spokes").rglob("*.sqlite3*"))  # never a database
    assert not (landed.parent.parent / "linked").exists()  # a symlink is neither followed nor sent

    hub.run("ingest")
    found = {r["session_id"]: r for r in hub.get("zanzibar quokka marmalade", "--max", "5")}
    assert {found[p.stem]["machine"] for p in (on_laptop, on_server, on_hub)} == {"laptop", "server", "mac"}
    assert {tuple(found[p.stem]["projects"]) for p in (on_laptop, on_server, on_hub)} == {("cli",)}
    assert [r["session_id"] for r in hub.get("--machine", "laptop")] == [on_laptop.stem]
    assert [r["session_id"] for r in hub.get("--machine", "server", "zanzibar quokka")] == [on_server.stem]
    meta, _ = split_front_matter(Path(found[on_server.stem]["path"]).read_text())
    assert meta["machine"] == "server"
    assert "server" in hub.run("last", "--machine", "server").stdout
    hub.run("reindex")  # the machine is in the handoff files: an index rebuilt from them keeps it
    assert [r["session_id"] for r in hub.get("--machine", "laptop")] == [on_laptop.stem]

    # Pushing again sends nothing new; a new line sends that file alone.
    assert laptop.push()["files"] == 0
    append_turn(on_laptop, "xylophone")
    assert laptop.push()["files"] == 1
    hub.run("ingest")
    assert [r["session_id"] for r in hub.get("xylophone", "--max", "1")] == [on_laptop.stem]


def test_codex_and_gemini_sessions_travel_laid_out_as_their_homes_and_keep_their_agent(three) -> None:
    hub, laptop, _ = three
    codex, gemini = laptop.home / ".codex", laptop.home / ".gemini"
    shutil.copytree(AGENT_FIXTURES / "codex", codex, copy_function=shutil.copy)
    shutil.copytree(AGENT_FIXTURES / "gemini", gemini, copy_function=shutil.copy)
    shutil.copytree(AGENT_FIXTURES / "claude", laptop.projects, dirs_exist_ok=True, copy_function=shutil.copy)
    (codex / "auth.json").write_text('{"OPENAI_API_KEY": "sk-never-travels"}')  # beside the sessions
    (gemini / "tmp" / "widgets" / "logs.json").write_text("[]")
    # A key in a rollout's line, in a compressed archived rollout, and in an older single-object Gemini chat.
    body = "".join(random.Random(9).choice(string.ascii_letters + string.digits) for _ in range(93))
    key = "sk-" + "ant-api03-" + body + "AA"
    line = json.dumps({"timestamp": "2026-12-01T10:19:00Z", "type": "event_msg",
                       "payload": {"type": "agent_message", "message": f"export ANTHROPIC_API_KEY={key}"}}) + "\n"
    with next((codex / "sessions").rglob("*.jsonl")).open("a") as handle:
        handle.write(line)
    archived = codex / "archived_sessions" / "rollout-2026-11-30T09-00-00-01a2311d-0000-7000-8000-00000000aa.jsonl.zst"
    archived.parent.mkdir()
    archived.write_bytes(zstandard.ZstdCompressor().compress(line.encode()))
    (gemini / "tmp" / "widgets" / "chats" / "session-old.json").write_text(json.dumps(
        {"sessionId": "0ld", "messages": [{"type": "user", "content": f"my key is {key}"}]}, indent=2))
    laptop.push()
    for copy in (p for p in (hub.data / "spokes").rglob("*") if p.is_file()):
        data = zstandard.ZstdDecompressor().stream_reader(copy.open("rb")).read() if copy.suffix == ".zst" \
            else copy.read_bytes()
        assert body[:40].encode() not in data, copy
    assert json.loads((hub.data / "spokes" / "laptop" / "gemini" / "tmp" / "widgets" / "chats" / "session-old.json")
                      .read_text())["messages"][0]["content"] == "my key is [REDACTED:anthropic-key]"
    landed = hub.data / "spokes" / "laptop"
    assert sorted(p.name for p in landed.iterdir()) == ["claude-code", "codex", "gemini", "repositories.json"]
    assert (landed / "codex" / "sessions").is_dir() and not (landed / "codex" / "auth.json").exists()
    assert (landed / "gemini" / "tmp" / "widgets" / ".project_root").is_file()
    assert not (landed / "gemini" / "tmp" / "widgets" / "logs.json").exists()
    hub.run("ingest")
    found = hub.run("last", "20", "--json", "--machine", "laptop").stdout
    agents = sorted(r["agent"] for r in json.loads(found))
    assert len(agents) == AGENT_SESSIONS and set(agents) == {"claude-code", "codex", "gemini"}
    assert {tuple(r["projects"]) for r in json.loads(found)} == {("widgets",)}


def test_rsync_temporary_files_and_partial_folders_are_never_read(three) -> None:
    hub, laptop, _ = three
    laptop_cli = git_repo(laptop.home / "src" / "cli", "git@github.com:acme/cli.git")
    transcript(laptop, laptop_cli, "zanzibar")
    laptop.push()
    folder = next((hub.data / "spokes" / "laptop" / "claude-code").iterdir())
    half = transcript(laptop, laptop_cli, "halfway")
    # What a transfer in progress (or one SIGKILLed) leaves: rsync's temporary name, a partial folder.
    (folder / f".{half.name}.Xy12Ab").write_bytes(half.read_bytes()[:300])
    (folder / ".rsync-partial").mkdir()
    (folder / ".rsync-partial" / half.name).write_bytes(half.read_bytes()[:300])
    hub.run("ingest")
    assert hub.get("halfway") == [] or all(r["session_id"] != half.stem for r in hub.get("halfway"))
    stats = json.loads(hub.run("stats", "--json").stdout)
    assert stats["sources"] == 1 and stats["bad_lines"] == 0


def _sources(hub: Machine) -> dict[str, int]:
    conn = sqlite3.connect(hub.data / "index.sqlite3")
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        return dict(conn.execute("SELECT path, size FROM sources"))
    finally:
        conn.close()


def slow_push(m: Machine, kbps: int) -> subprocess.Popen[str]:
    env = {**m.env, "EYWA_PUSH__BWLIMIT_KBPS": str(kbps)}
    return subprocess.Popen([sys.executable, "-m", "eywa.cli.main", "push"], cwd=ROOT, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)


def test_a_push_killed_mid_transfer_leaves_the_hub_consistent_and_the_next_push_completes_it(three) -> None:
    hub, laptop, _ = three
    cli = git_repo(laptop.home / "src" / "cli", "git@github.com:acme/cli.git")
    grown = transcript(laptop, cli, "zanzibar")
    laptop.push()
    hub.run("ingest")
    append_turn(grown, "xylophone", padding=400_000)  # 800 KB appended to a file the hub has
    new = transcript(laptop, cli, "quokka", padding=400_000)  # and a new 800 KB one
    pushing = slow_push(laptop, 400)  # about 4 s for both
    spoke_files = hub.data / "spokes" / "laptop" / "claude-code" / grown.parent.name
    landed = spoke_files / grown.name
    deadline = time.monotonic() + 20
    while landed.stat().st_size <= grown.stat().st_size - 700_000 and time.monotonic() < deadline:
        time.sleep(0.02)  # until the append is under way
    os.killpg(pushing.pid, signal.SIGKILL)
    pushing.wait()
    time.sleep(0.3)  # the hub's rsync notices its client is gone
    assert landed.stat().st_size < grown.stat().st_size  # killed mid-transfer indeed
    # A new file is whole or absent under its name (until complete it is a temporary `.name.XXXXXX`).
    assert not (spoke_files / new.name).exists() or (spoke_files / new.name).read_bytes() == new.read_bytes()

    hub.run("ingest")  # the hub reads what is there: consistent, the cut last line skipped
    _sources(hub)
    assert laptop.push()["files"] >= 1  # the rest of the grown file (and the new one, if it was cut)
    assert landed.read_bytes() == grown.read_bytes() and (spoke_files / new.name).read_bytes() == new.read_bytes()
    hub.run("ingest")
    assert [r["session_id"] for r in hub.get("xylophone", "--max", "1")] == [grown.stem]
    assert [r["session_id"] for r in hub.get("quokka", "--max", "1")] == [new.stem]
    assert json.loads(hub.run("stats", "--json").stdout)["bad_lines"] == 0  # the cut line was read again whole


def test_a_spoke_pushing_while_the_hub_ingests_loses_nothing(three) -> None:
    hub, laptop, _ = three
    cli = git_repo(laptop.home / "src" / "cli", "git@github.com:acme/cli.git")
    words = [f"topic{n}word" for n in range(12)]
    sessions = [transcript(laptop, cli, word, padding=20_000) for word in words]
    pushing = slow_push(laptop, 150)  # ~3 s: ingests run while files land
    ingests = 0
    while pushing.poll() is None:
        hub.run("ingest")
        ingests += 1
    assert pushing.returncode == 0, pushing.stderr.read() if pushing.stderr else ""
    assert ingests >= 2
    hub.run("ingest")
    landed = hub.data / "spokes" / "laptop" / "claude-code"
    sizes = _sources(hub)
    for path in sessions:
        copy = landed / path.parent.name / path.name
        assert sizes[str(copy)] == copy.stat().st_size == path.stat().st_size
    for word, path in zip(words, sessions, strict=True):
        assert hub.get(word, "--max", "1")[0]["session_id"] == path.stem


def test_session_end_pushes_in_the_background_without_waiting(three) -> None:
    hub, laptop, _ = three
    cli = git_repo(laptop.home / "src" / "cli", "git@github.com:acme/cli.git")
    done = transcript(laptop, cli, "zanzibar")
    env = {**laptop.env, "EYWA_PUSH__ON_SESSION_END": "true"}
    hook = json.dumps({"session_id": done.stem, "transcript_path": str(done), "cwd": str(cli),
                       "hook_event_name": "SessionEnd", "reason": "exit"})
    started = time.monotonic()
    ended = subprocess.run([sys.executable, "-m", "eywa.cli.main", "hook", "session-end"], cwd=ROOT, env=env,
                           input=hook, text=True, capture_output=True, timeout=30)
    took = time.monotonic() - started
    assert ended.returncode == 0 and ended.stdout == ""
    landed = hub.data / "spokes" / "laptop" / "claude-code" / done.parent.name / done.name
    assert not landed.exists() and took < 1.0  # returned before the push could have arrived
    deadline = time.monotonic() + 30
    while not landed.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert landed.exists(), (laptop.data / "push" / "background.log").read_text()


def test_push_says_what_to_fix(tmp_path: Path, three) -> None:
    _, laptop, _ = three
    transcript(laptop, tmp_path, "zanzibar")
    no_hub = {k: v for k, v in laptop.env.items() if k != "EYWA_PUSH__HUB"}
    done = subprocess.run([sys.executable, "-m", "eywa.cli.main", "push"], cwd=ROOT, env=no_hub, text=True,
                          capture_output=True, timeout=60)
    assert done.returncode == 1 and "push.hub" in done.stderr
    wrong_key = {**laptop.env, "EYWA_PUSH__SSH_KEY": str(tmp_path / "nokey")}
    (tmp_path / "nokey").write_text("not a key\n")
    done = subprocess.run([sys.executable, "-m", "eywa.cli.main", "push"], cwd=ROOT, env=wrong_key, text=True,
                          capture_output=True, timeout=60)
    assert done.returncode == 1 and "rsync to" in done.stderr and "push.ssh_key" in done.stderr


def test_a_spoke_sends_only_redacted_copies_and_no_planted_secret_reaches_the_hub(three) -> None:
    """The secrets corpus (27 kinds in every part of a transcript: tool output, command lines, environment,
    a pasted `.env`, file contents, URLs) planted in a spoke: after push and the hub's ingest, not one
    12-character window of any secret is in any file under the hub's data directory; the spoke's outbox holds
    only redacted copies, each line still valid JSON; an append to a transcript is pushed as an append."""
    from .secrets_corpus import write_corpus
    from .test_secrets_never_leave import _windows, leaks

    hub, laptop, _ = three
    corpus = write_corpus(laptop.projects)
    windows = _windows(corpus)
    token = "gh" + "p_" + "".join(random.Random(5).choice(string.ascii_letters + string.digits) for _ in range(36))
    vault = git_repo(laptop.home / "src" / "vault", f"https://x-access-token:{token}@github.com/acme/vault.git")
    in_vault = transcript(laptop, vault, "vaultwork")  # a remote that carries a token: its map entry travels
    first = laptop.push()
    outbox = laptop.data / "push" / "laptop" / "claude-code"
    copies = sorted(p for p in outbox.rglob("*") if p.is_file())
    assert {p.relative_to(outbox) for p in copies if p.suffix == ".jsonl"} == \
        {p.relative_to(laptop.projects) for p in [*corpus.files, in_vault]}
    assert first["files"] == len(copies) + 1  # and the repository map; each file once
    for copy in copies:
        assert leaks(copy.read_text(), windows) == set(), copy
        for line in copy.read_text().splitlines():
            json.loads(line)
    landed = hub.data / "spokes" / "laptop"
    assert {p.relative_to(landed / "claude-code") for p in (landed / "claude-code").rglob("*") if p.is_file()} \
        == {p.relative_to(outbox) for p in copies}
    hub.run("ingest")
    listed = json.loads(hub.run("last", "20", "--json", "--machine", "laptop").stdout)
    assert len(listed) == len(corpus.session_ids) + 1
    assert [r["projects"] for r in listed if r["session_id"] == in_vault.stem] == [["vault"]]
    found = {str(p): leaks(p.read_bytes().decode("latin-1"), windows) for p in hub.data.rglob("*") if p.is_file()}
    assert {name: labels for name, labels in found.items() if labels} == {}
    assert not [p for p in hub.data.rglob("*") if p.is_file() and token[4:16].encode() in p.read_bytes()]
    # An append travels as an append: the next push sends about the new line, not the file again.
    main = next(p for p in corpus.files if p.parent == laptop.projects / corpus.files[0].parent.name)
    append_turn(main, "xylophone")
    again = laptop.push()
    assert again["files"] == 1 and again["kb"] < first["kb"] / 20
    hub.run("ingest")
    assert [r["session_id"] for r in hub.get("xylophone", "--max", "1")] == [main.stem]


def test_a_hub_upgraded_with_raw_copies_redacts_them_in_place_once(three) -> None:
    """Copies an earlier release pushed raw are redacted where they lie by the hub's next ingest (their lines
    still JSON), and a spoke that now pushes its outbox completes them without sending them again whole."""
    from .secrets_corpus import write_corpus
    from .test_secrets_never_leave import _windows, leaks

    hub, laptop, _ = three
    corpus = write_corpus(laptop.projects)
    raw = hub.data / "spokes" / "laptop" / "claude-code"
    shutil.copytree(laptop.projects, raw)  # what `eywa push` of the releases before the outbox left on the hub
    windows = _windows(corpus)
    hub.run("ingest")
    for copy in (p for p in raw.rglob("*.jsonl")):
        assert leaks(copy.read_text(), windows) == set(), copy
        assert all(json.loads(line) for line in copy.read_text().splitlines())
    found = {str(p): leaks(p.read_bytes().decode("latin-1"), windows) for p in hub.data.rglob("*") if p.is_file()}
    assert {name: labels for name, labels in found.items() if labels} == {}
    stats = json.loads(hub.run("stats", "--json").stdout)["redaction"]
    assert stats["pending"] == 0
    laptop.push()
    outbox = laptop.data / "push" / "laptop" / "claude-code"
    for copy in outbox.rglob("*.jsonl"):
        assert (raw / copy.relative_to(outbox)).read_bytes() == copy.read_bytes()
