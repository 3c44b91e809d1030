"""A session's files -> one `Session`, whatever its agent: its own files through its agent's reader, and the
runs it started folded in as subagent runs: its subagents written as sessions of their own (Codex's, Gemini
CLI's), and the headless runs of other agents' CLIs linked to it (`agent-run` files, core/ingest/agent_runs.py)."""

from __future__ import annotations

from eywa.core.session import Session, SubagentRun
from eywa.core.sources import agent
from eywa.core.sources.jsonl import ReadStats
from eywa.core.sources.plugin import AGENT_RUN, Redact, SessionFiles

_WRITE_TOOLS = ("Edit", "Write")


def read_session(group: SessionFiles, redact: Redact) -> tuple[Session, dict[str, ReadStats]]:
    """A session's files read and its runs folded in; the read statistics of every file read."""
    runs = [f for f in group.subagents if f.role == AGENT_RUN or agent(f.agent).subagents_are_sessions]
    session, stats = agent(group.agent).read(group.session_id, [f for f in group.files if f not in runs], redact)
    for source in runs:
        plugin = agent(source.agent)
        run, run_stats = plugin.read(plugin.own_id(source), [source], redact)
        if source.location in run_stats:
            stats.update(run_stats)
            session.source_files.append(source.location)
            session.bad_lines += run.bad_lines
            if run.events:
                session.subagents.append(plugin.fold(run, redact))
    session.subagents.sort(key=lambda r: (r.started.isoformat() if r.started else "", r.agent_id))
    return session, stats


def as_run(session: Session, prompt: str | None = None, answer: str | None = None) -> SubagentRun:
    """A whole session of an agent, run from a parent's tool call, folded into that parent: what it was asked
    (its first prompt, or `prompt`), what it answered last (or `answer`), its tool calls and the files it wrote."""
    run = SubagentRun(agent_id=session.session_id, agent_type=session.agent, source=AGENT_RUN,
                      started=session.first_ts, ended=session.last_ts)
    prompts = [e.text for e in session.events if e.kind == "user" and e.text]
    answers = [e.text for e in session.events if e.kind == "assistant" and e.text]
    run.prompt = (prompt if prompt is not None else prompts[0] if prompts else "")[:500]
    run.answer = (answer if answer is not None else answers[-1] if answers else "")[:600]
    for call in session.tool_calls:
        run.tool_counts[call.name] = run.tool_counts.get(call.name, 0) + 1
        path = call.input.get("file_path")
        if call.name in _WRITE_TOOLS and isinstance(path, str) and path not in run.files_written:
            run.files_written.append(path)
    return run


def is_transcript(session: Session) -> bool:
    """False for empty files and files of JSON with none of their agent's record types (other programs' logs)."""
    if session.orphan:
        return bool(session.subagents)  # an orphan of nothing but "Warmup" stubs holds no work
    return session.known_records > 0
