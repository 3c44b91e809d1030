"""Key files: the files a session changed by any tool of any agent (edit tools, the shell, subagents, Codex's
apply_patch), scratch files left out, most worked on kept, in the order a reader of the session lists them; beside a
few changes, the files it read that its work turned on."""

from __future__ import annotations

import json
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from eywa.core.extract.deterministic import draft
from eywa.core.extract.key_files import (
    MAX_KEY_FILES,
    MAX_READ_KEY_FILES,
    changed_files,
    files_committed,
    files_read,
    key_files,
)
from eywa.core.session import Event, Session, SubagentRun, ToolCall
from eywa.core.sources.codex import build_codex_session

from .test_extractor import corpus_session


def listed(session: Session) -> list[str]:
    return [line.split("`")[1] for line in key_files(changed_files(session))]


def session_of(calls: list[tuple[str, dict]], cwd: str = "/r") -> Session:
    return Session("s", cwd=cwd, events=[Event("tool", None, tool=ToolCall(str(i), name, args))
                                         for i, (name, args) in enumerate(calls)])


def test_a_file_a_subagent_reports_writing_is_a_key_file_when_its_transcript_is_not_kept() -> None:
    # 70fc6d83's first reviewer: "The review has been written to `.../docs/requirements/soph-chunking/review-01.md`."
    handoff = draft(corpus_session("70fc6d83-147d-4fdf-b015-bd67eeb11883"), ZoneInfo("UTC"))
    assert handoff.key_files == ["`docs/requirements/soph-chunking/review-01.md` (1 edit)"]


def test_a_subagent_describing_where_code_writes_names_no_key_file() -> None:
    # 130d7b7e's explorer: "- Written to `.entire/logs/<session-id>.log`", how the logger works, not a file it wrote
    handoff = draft(corpus_session("130d7b7e-5801-4345-9bd6-f32fd9b8429b"), ZoneInfo("UTC"))
    assert handoff.key_files and not any(".entire/logs" in line for line in handoff.key_files)
    described = ToolCall("t", "Task", {}, result="Logs are written to `logs/app.log`. Created `.gitignore` with `a/`.")
    assert listed(Session("s", cwd="/r", events=[Event("tool", None, tool=described)])) == []


def test_the_agents_own_plan_files_are_no_key_files() -> None:
    # 38917d7d edits its plan in ~/.claude/plans between two rounds of work on the repository
    files = listed(corpus_session("38917d7d-9f69-4210-a3b0-eed0a9e97575"))
    assert files == ["cmd/entire/cli/setup.go", "cmd/entire/main.go", "cmd/entire/cli/telemetry/telemetry.go"]


def test_files_copied_into_another_repository_and_a_submodule_added_are_key_files() -> None:
    # 9e953218 copies the tokenizer into its own repository (`cp ... favicons/`) and mounts it with `git submodule add`
    files = listed(corpus_session("9e953218-585f-4692-89df-9e0747a31c68"))
    assert ".gitmodules" in files and "/Users/dain/workspace/online-llm-tokenizer/favicons/token.svg" in files
    assert len(files) == MAX_KEY_FILES


def test_past_the_cap_files_still_there_stay_before_files_deleted() -> None:
    # 9e953218 moves four files out of `public/` (deleted there) and writes a README beside them in their new repository
    files = listed(corpus_session("9e953218-585f-4692-89df-9e0747a31c68"))
    assert "/Users/dain/workspace/online-llm-tokenizer/README.md" in files
    assert "public/tokenizer.js" in files and "public/tokenizer.html" not in files


def test_scratch_files_in_a_temporary_folder_are_no_key_files_whatever_tool_wrote_them() -> None:
    session = session_of([("Write", {"file_path": "/tmp/probe.go", "content": ""}),
                          ("Bash", {"command": "cp /r/a.go /private/tmp/x/a.go"}),
                          ("Edit", {"file_path": "/r/a.go"}),
                          ("Bash", {"command": "cp a.go ../sibling/a.go"})])
    assert listed(session) == ["a.go", "../sibling/a.go"]


def test_code_comes_before_tests_and_documents_each_in_the_order_the_session_came_to_them() -> None:
    session = session_of([("Write", {"file_path": "/r/README.md"}), ("Edit", {"file_path": "/r/pkg/a_test.go"}),
                          ("Edit", {"file_path": "/r/pkg/b.go"}), ("Edit", {"file_path": "/r/pkg/a.go"}),
                          ("Edit", {"file_path": "/r/pkg/a.go"}), ("Edit", {"file_path": "/r/tests/test_c.py"})])
    assert listed(session) == ["pkg/b.go", "pkg/a.go", "pkg/a_test.go", "tests/test_c.py", "README.md"]


def test_past_the_cap_the_files_changed_most_then_last_stay() -> None:
    early = [("Edit", {"file_path": f"/r/early{i}.go"}) for i in range(MAX_KEY_FILES)]
    late = [("Edit", {"file_path": f"/r/late{i}.go"}) for i in range(3)]
    files = listed(session_of([*early, ("Edit", {"file_path": "/r/early0.go"}), *late]))
    assert len(files) == MAX_KEY_FILES and "early0.go" in files and {"late0.go", "late1.go", "late2.go"} <= set(files)
    assert "early1.go" not in files and "early11.go" in files


def test_codex_apply_patch_through_the_shell_and_a_moved_file_are_edits(tmp_path: Path) -> None:
    patch = ("*** Begin Patch\n*** Add File: notes.md\n+hi\n*** Update File: old.py\n*** Move to: pkg/new.py\n"
             "@@\n-a\n+b\n*** End Patch\n")
    records = [{"timestamp": "2026-12-01T10:00:00Z", "type": "session_meta", "payload": {"id": "s", "cwd": "/w"}},
               {"timestamp": "2026-12-01T10:00:01Z", "type": "response_item",
                "payload": {"type": "function_call", "name": "shell", "call_id": "c1",
                            "arguments": json.dumps({"command": ["apply_patch", patch]})}},
               {"timestamp": "2026-12-01T10:00:02Z", "type": "response_item",
                "payload": {"type": "function_call", "name": "exec_command", "call_id": "c2",
                            "arguments": json.dumps({"cmd": "bash -lc \"apply_patch <<'EOF'\n" + patch + "EOF\""})}}]
    path = tmp_path / "rollout.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    session = build_codex_session("s", [path], str)[0]
    assert [(c.name, c.input["file_path"]) for c in session.tool_calls[:3]] == [
        ("Write", "/w/notes.md"), ("Edit", "/w/old.py"), ("Write", "/w/pkg/new.py")]
    assert len(session.tool_calls) == 6 and not any(c.name == "Bash" for c in session.tool_calls)
    assert listed(session) == ["old.py", "pkg/new.py", "notes.md"]


def test_a_write_a_subagent_reports_and_its_kept_transcript_names_counts_once() -> None:
    reported = ToolCall("t", "Task", {}, result="The review has been written to `docs/review-01.md`.")
    session = Session("s", cwd="/r", events=[Event("tool", None, tool=reported)],
                      subagents=[SubagentRun("a1", files_written=["/r/docs/review-01.md"])])
    assert key_files(changed_files(session)) == ["`docs/review-01.md` (1 edit)"]


def test_a_short_session_that_wrote_only_scratch_files_is_one_small_task() -> None:
    # substance 2 is what gives a handoff its Key Files: scratch and plan files are none, so a plan or a probe in /tmp
    # alone is substance 1 (searchable like 2); a file of the work makes it 2
    def substance(path: str) -> int:
        session = session_of([("Write", {"file_path": path, "content": "x"})], cwd="/r")
        session.events.insert(0, Event("user", None, text="Sketch a plan for the retry limit of the importer"))
        session.events.append(Event("assistant", None, text="Wrote the plan."))
        return draft(session, ZoneInfo("UTC")).substance
    assert substance("/Users/a/.claude/plans/retry.md") == substance("/tmp/probe.py") == 1
    assert substance("/r/importer.py") == 2


def read_of(session: Session) -> list[str]:
    return files_read(session, changed_files(session))


def test_a_file_the_plan_names_and_the_session_read_is_a_key_file_marked_read() -> None:
    # 38917d7d's plan (refused, then carried out anyway) adds a test in `telemetry_test.go`, which it read, never edited
    handoff = draft(corpus_session("38917d7d-9f69-4210-a3b0-eed0a9e97575"), ZoneInfo("UTC"))
    assert handoff.key_files[3] == "`cmd/entire/cli/telemetry/telemetry_test.go` (read)"
    assert not any("/plans/" in line for line in handoff.key_files)


def test_the_code_a_changed_test_tests_is_a_key_file_when_only_read() -> None:
    # 768de5d6 edits only `redact/redact_test.go`, reading `redact/redact.go` once to write it
    handoff = draft(corpus_session("768de5d6-9fad-475b-8a4f-dfa7ddc01bb0"), ZoneInfo("UTC"))
    assert handoff.key_files == ["`redact/redact_test.go` (12 edits)", "`redact/redact.go` (read)"]


def test_the_files_a_session_read_again_come_after_its_changes_at_most_a_few() -> None:
    # c26d2153 writes documents from the code it reads again and again (`auto_commit.go` five times)
    handoff = draft(corpus_session("c26d2153-23c8-42ed-ab6c-808579b64e5b"), ZoneInfo("UTC"))
    read = [line for line in handoff.key_files if line.endswith("(read)")]
    assert read[0] == "`cmd/entire/cli/strategy/auto_commit.go` (read)" and len(read) == MAX_READ_KEY_FILES
    assert not any(line.endswith("(read)") for line in handoff.key_files[:-len(read)])


def test_a_file_the_person_named_and_the_session_read_is_a_key_file_beside_few_changes() -> None:
    # cab865ac: "Can you check if the tests cmd/.../setup_claude_hooks_test.go are now not duplicated?", read once
    handoff = draft(corpus_session("cab865ac-8278-406e-b5c2-c73d24d7f9ad"), ZoneInfo("UTC"))
    assert handoff.key_files[2] == "`cmd/entire/cli/integration_test/setup_claude_hooks_test.go` (read)"


def test_a_file_the_person_named_is_no_key_file_beside_more_changes() -> None:
    # ea0a65af's person pastes failing tests naming `setup_cmd_test.go`, read once; the session changes four files
    assert not any(path.endswith("setup_cmd_test.go") for path in read_of(corpus_session(
        "ea0a65af-b639-46be-b158-dc1a4c599799")))
    named = session_of([("Read", {"file_path": "/r/b.go"}), ("Edit", {"file_path": "/r/a.go"})])
    named.events.insert(0, Event("user", None, text="Why does b.go panic?"))
    assert read_of(named) == ["b.go"]
    named.events += [Event("tool", None, tool=ToolCall(p, "Edit", {"file_path": f"/r/{p}"})) for p in ("c.go", "d.go")]
    assert read_of(named) == []


def test_beside_few_changes_the_files_read_once_are_key_files_after_the_signed_ones() -> None:
    # 87a7858d reads four files once each, to write one test, and names none of them after: they are what it studied
    assert read_of(corpus_session("87a7858d-3f94-4c65-a2d5-307e9337b041")) == [
        "cmd/entire/cli/hooks_claudecode_handlers.go", "cmd/entire/cli/hooks_test.go",
        "cmd/entire/cli/integration_test/testenv.go", "cmd/entire/cli/integration_test/hooks.go"]
    signed = session_of([("Read", {"file_path": "/r/a.go"}), *[("Read", {"file_path": "/r/b.go"})] * 2,
                         ("Edit", {"file_path": "/r/c.go"})])
    assert read_of(signed) == ["b.go", "a.go"]


def test_files_read_once_and_never_named_are_no_key_files_beside_more_changes() -> None:
    # ea0a65af changes three files and reads six others once, naming none of them: its changes are its work
    session = corpus_session("ea0a65af-b639-46be-b158-dc1a4c599799")
    assert len({path for path, _ in changed_files(session)}) > 2 and read_of(session) == []


def test_reads_outside_the_project_scratch_secrets_and_images_are_no_key_files() -> None:
    reads = [("Read", {"file_path": path}) for path in ("/home/u/.zshrc", "/tmp/out.log", "/r/.env", "/r/shot.png",
                                                        "/r/node_modules/x/index.js", "/other/repo/a.go", "/r/b.go")]
    session = session_of([("Edit", {"file_path": "/r/a.go"}), *reads, *reads])
    assert read_of(session) == ["b.go"]
    # a file beside one the session changed in another folder is the project's too
    session = session_of([("Edit", {"file_path": "/other/repo/a.go"}), *reads, *reads])
    assert "/other/repo/a.go" not in read_of(session) and "b.go" in read_of(session)
    assert read_of(session_of([("Edit", {"file_path": "/other/repo/c.go"}), *reads, *reads])) == [
        "/other/repo/a.go", "b.go"]


def test_read_files_take_only_the_places_the_changes_leave() -> None:
    edits = [("Edit", {"file_path": f"/r/e{i}.go"}) for i in range(MAX_KEY_FILES - 1)]
    reads = [("Read", {"file_path": f"/r/r{i}.go"}) for i in range(4)] * 2
    session = session_of([*edits, *reads])
    assert key_files(changed_files(session), read_of(session))[-1] == "`r0.go` (read)"
    assert len(key_files(changed_files(session), read_of(session))) == MAX_KEY_FILES
    few = session_of([edits[0], *reads])
    assert key_files(changed_files(few), read_of(few))[1:] == [f"`r{i}.go` (read)" for i in range(MAX_READ_KEY_FILES)]


@pytest.mark.parametrize(("test", "code"), [("pkg/x_test.go", "pkg/x.go"), ("tests/test_x.py", "src/x.py"),
                                            ("spec/x_spec.rb", "lib/x.rb"), ("src/x.test.ts", "src/x.ts"),
                                            ("src/XTest.java", "src/X.java")])
def test_the_code_a_changed_test_tests_is_read_by_its_name_in_each_language(test: str, code: str) -> None:
    other = code.replace("x", "y").replace("X", "Y")
    session = session_of([("Read", {"file_path": f"/r/{code}"}), ("Read", {"file_path": f"/r/{other}"}),
                          *[("Edit", {"file_path": f"/r/{path}"}) for path in (test, "a.cfg", "b.cfg")]])
    assert read_of(session) == [code]


@pytest.mark.parametrize("path", ["/r/.env.local", "/r/.env.production", "/r/.envrc", "/r/certs/server.pem",
                                  "/r/deploy/id_rsa", "/r/.npmrc", "/r/package-lock.json", "/r/go.sum",
                                  "/r/yarn.lock", "/r/uv.lock"])
def test_a_secret_or_a_lock_file_read_again_is_no_key_file(path: str) -> None:
    """A secret's place is not the work to show, nor a generated lock file a reader opens to follow it."""
    session = session_of([("Edit", {"file_path": "/r/a.go"}), ("Read", {"file_path": path}),
                          ("Read", {"file_path": path})])
    assert read_of(session) == []


def test_an_env_example_read_again_is_a_key_file() -> None:
    session = session_of([("Edit", {"file_path": "/r/a.go"}), *[("Read", {"file_path": "/r/.env.example"})] * 2])
    assert read_of(session) == [".env.example"]


def test_a_windows_file_read_outside_the_project_is_no_key_file() -> None:
    reads = [("Read", {"file_path": path}) for path in (r"C:\Users\me\other\notes.py", r"C:\Users\me\app\src\b.py",
                                                        r"C:\Users\me\app\docs\c.py")]
    session = session_of([("Edit", {"file_path": r"C:\Users\me\app\src\a.py"}), *reads, *reads],
                         cwd=r"C:\Users\me\app")
    assert read_of(session) == [r"C:\Users\me\app\src\b.py", r"C:\Users\me\app\docs\c.py"]


def test_a_file_read_once_whose_name_another_read_file_shares_is_not_named_by_the_others_mentions() -> None:
    """`src/a/index.ts` named twice does not make `src/b/index.ts`, read once, a key file."""
    session = session_of([*[("Edit", {"file_path": f"/r/src/{name}.ts"}) for name in "cde"],
                          ("Read", {"file_path": "/r/src/a/index.ts"}),
                          ("Read", {"file_path": "/r/src/b/index.ts"})])
    session.events += [Event("assistant", None, text=f"`src/a/index.ts` {said}") for said in ("exports it.", "is it.")]
    assert read_of(session) == ["src/a/index.ts"]


def test_files_a_commit_takes_in_by_name_that_the_session_did_not_edit_are_key_files_marked_committed() -> None:
    # 8897bd54 edits three files, then `git add ... strategy/auto_commit.go strategy/manual_commit.go
    # strategy/registry.go && git commit`: changes made before it, which its commit holds (a blind reader lists them)
    handoff = draft(corpus_session("8897bd54-16f4-4a28-8e23-cb187c639e40"), ZoneInfo("UTC"))
    assert [line for line in handoff.key_files if line.endswith("(committed)")] == [
        "`cmd/entire/cli/strategy/auto_commit.go` (committed)",
        "`cmd/entire/cli/strategy/manual_commit.go` (committed)",
        "`cmd/entire/cli/strategy/registry.go` (committed)"]
    assert "`cmd/entire/cli/hooks.go` (1 edit)" in handoff.key_files


def test_files_staged_whole_edited_by_the_session_or_never_committed_are_not_marked_committed() -> None:
    # 03a1382e commits what it edited: nothing of its own commits is listed twice
    handoff = draft(corpus_session("03a1382e-ecd5-42c4-b3d4-5c659e165904"), ZoneInfo("UTC"))
    assert handoff.key_files and not any(line.endswith("(committed)") for line in handoff.key_files)
    session = session_of([("Edit", {"file_path": "/r/a.go", "old_string": "x", "new_string": "y"}),
                          ("Bash", {"command": "git add a.go b.go && git commit -m 'a'"}),
                          ("Bash", {"command": "git add -A && git commit -m 'all'"}),
                          ("Bash", {"command": "git add c.go"}),
                          ("Bash", {"command": "cd /tmp/try && git add d.go && git commit -m 'try'"})])
    assert files_committed(session, changed_files(session)) == ["b.go"]
