"""Scripted model servers on 127.0.0.1 for the real agent CLIs (tests/agent_transcripts.py, tests/fact_transcripts.py).

One server speaks three wire protocols: the OpenAI Responses API with SSE (`POST /v1/responses`, what Codex
sends to a `model_providers.<id>` with `wire_api = "responses"`), Gemini's `generateContent` /
`streamGenerateContent?alt=sse` (what Gemini CLI sends to `GOOGLE_GEMINI_BASE_URL`), and OpenAI's Chat Completions
(Copilot CLI, Qwen Code). Each agent turn takes the next scripted `Turn`. A request the script did not foresee never
takes one, so a CLI's extra request cannot put the script out of order: a side request (JSON asked for, not
streamed, no tools offered, or a conversation under a system prompt none began with, as Qwen Code's memory
extractor) takes only a `match` turn naming it, else `fallback`; a retry (the same conversation sent again, as Qwen
Code and Copilot CLI do after a failed reply) gets the turn it got before. Every request is recorded with its path
and body.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# In a call's arguments: the session id of the process Codex last reported still running (an `exec_command` that
# outlived its yield time), for the `write_stdin` that polls it.
RUNNING = "<running process>"
_RUNNING_RE = re.compile(r"Process running with session ID (\d+)")
# In a call's arguments: the plans folder Gemini CLI's plan mode names in its instructions.
PLANS = "<plans folder>"
_PLANS_RE = re.compile(r"(/[^\s\"'`]*/plans)/")


@dataclass
class Turn:
    """One model answer: text, then tool calls (each `(tool name, arguments)`; Codex's `apply_patch` takes the
    patch text as its argument). `tokens` is the usage reported (a high count makes the CLI compact)."""

    text: str = ""
    calls: list[tuple[str, Any]] = field(default_factory=list)
    tokens: int = 1200
    match: str = ""  # only a request whose body holds this text takes the turn (e.g. a compaction prompt)


@dataclass(frozen=True)
class _Asked:
    """What tells one model request from another: its path and conversation as sent, its system prompt's first line,
    whether the model has answered in it yet, and whether its form makes it a side request."""

    conversation: str
    system: str
    fresh: bool
    side: bool


def _text(content: Any) -> str:
    """A message's text: a string, or the text of its parts."""
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else []
    return "".join(part.get("text", "") for part in parts if isinstance(part, dict))


def _asked(path: str, body: Any) -> _Asked:
    """A request as each protocol says it: Gemini's `contents`, the Responses API's `input`, Chat's `messages`."""
    body = body if isinstance(body, dict) else {}
    conversation = json.dumps([path, *(body.get(key) for key in ("instructions", "systemInstruction", "messages",
                                                                  "input", "contents"))])
    no_tools = not body.get("tools")
    if "contents" in body:  # Gemini
        system = _text((body.get("systemInstruction") or {}).get("parts"))
        fresh = all(content.get("role") != "model" for content in body["contents"])
        json_mode = "json" in str((body.get("generationConfig") or {}).get("responseMimeType", ""))
        side = ":generateContent" in path or json_mode or no_tools
    elif "input" in body:  # the Responses API: Codex's instructions are its first developer message
        items = [item for item in body["input"] if isinstance(item, dict)] if isinstance(body["input"], list) else []
        developer = [_text(item.get("content")) for item in items if item.get("role") == "developer"]
        system = body.get("instructions") or (developer[0] if developer else "")
        fresh = all(item.get("role") != "assistant" and "call" not in str(item.get("type")) for item in items)
        side = "format" in (body.get("text") or {}) or no_tools
    else:  # Chat Completions
        messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
        system = next((_text(m.get("content")) for m in messages if m.get("role") == "system"), "")
        fresh = all(m.get("role") != "assistant" for m in messages)
        side = bool(body.get("response_format")) or not body.get("stream") or no_tools
    return _Asked(conversation, system.split("\n", 1)[0], fresh, side)


class ScriptedModels:
    def __init__(self, turns: list[Turn], fallback: Turn | None = None) -> None:
        self.turns = deque(turns)
        self.fallback = fallback or Turn(text="ok")
        self.requests: list[dict[str, Any]] = []
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._answered: dict[str, Turn] = {}  # each conversation sent: the turn it took
        self._systems: set[str] = set()  # the first lines of the system prompts agent conversations began with
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:  # quiet test output
                pass

            def do_GET(self) -> None:
                owner._send(self, 200, "application/json", b'{"object": "list", "data": [], "models": []}')

            def do_POST(self) -> None:
                owner._post(self)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        # a short poll: close() waits out one
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> ScriptedModels:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- protocol --------------------------------------------------------------------------------------
    def _next(self, path: str, body: Any, raw: str) -> Turn:
        asked = _asked(path, body)
        agent = not asked.side and (asked.fresh or asked.system in self._systems)
        with self._lock:
            if asked.conversation in self._answered:  # a retry: the reply it got may never have arrived
                return self._answered[asked.conversation]
            for turn in list(self.turns):
                if (turn.match and turn.match in raw) or (agent and not turn.match):
                    self.turns.remove(turn)
                    self._answered[asked.conversation] = turn
                    if agent and asked.fresh and not turn.match:
                        self._systems.add(asked.system)
                    return turn
            return self.fallback

    def _post(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("content-length") or 0)
        raw = handler.rfile.read(length).decode("utf-8", errors="replace")
        try:
            body = json.loads(raw)
        except ValueError:
            body = raw
        path = handler.path
        with self._lock:
            self.requests.append({"path": path, "body": body})
        if path.endswith("/responses"):
            self._codex(handler, self._next(path, body, raw), raw)
        elif path.endswith("/chat/completions"):
            streamed = isinstance(body, dict) and bool(body.get("stream"))
            self._chat(handler, self._next(path, body, raw), stream=streamed)
        elif ":countTokens" in path:
            self._send(handler, 200, "application/json", b'{"totalTokens": 100}')
        elif ":generateContent" in path or ":streamGenerateContent" in path:
            self._gemini(handler, self._next(path, body, raw), raw, stream=":streamGenerateContent" in path)
        else:
            self._send(handler, 404, "application/json", b'{"error": {"message": "not found"}}')

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, status: int, kind: str, data: bytes) -> None:
        handler.send_response(status)
        handler.send_header("content-type", kind)
        handler.send_header("content-length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    def _codex(self, handler: BaseHTTPRequestHandler, turn: Turn, raw: str) -> None:
        number = next(self._ids)
        running = _RUNNING_RE.findall(raw)
        items: list[dict[str, Any]] = []
        if turn.text:
            items.append({"type": "message", "role": "assistant", "id": f"msg_{number}",
                          "content": [{"type": "output_text", "text": turn.text}]})
        for index, (name, arguments) in enumerate(turn.calls):
            call_id = f"call_{number}_{index}"
            if name == "apply_patch":
                items.append({"type": "custom_tool_call", "id": f"ctc_{number}_{index}", "call_id": call_id,
                              "name": name, "input": arguments, "status": "completed"})
            else:
                # Codex's agent tools (spawn_agent, wait_agent, ...) live in its multi_agent_v1 namespace.
                namespace = {"namespace": "multi_agent_v1"} if name.endswith("_agent") else {}
                if running and isinstance(arguments, dict):
                    arguments = {k: int(running[-1]) if v == RUNNING else v for k, v in arguments.items()}
                items.append({"type": "function_call", "id": f"fc_{number}_{index}", "call_id": call_id,
                              "name": name, "arguments": json.dumps(arguments), **namespace})
        usage = {"input_tokens": turn.tokens - 50, "input_tokens_details": {"cached_tokens": 0},
                 "output_tokens": 50, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": turn.tokens}
        events: list[dict[str, Any]] = [{"type": "response.created", "response": {"id": f"resp_{number}"}}]
        events += [{"type": "response.output_item.done", "output_index": i, "item": item}
                   for i, item in enumerate(items)]
        events.append({"type": "response.completed", "response": {"id": f"resp_{number}", "usage": usage}})
        data = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()
        self._send(handler, 200, "text/event-stream", data)

    def _gemini(self, handler: BaseHTTPRequestHandler, turn: Turn, raw: str, *, stream: bool) -> None:
        parts: list[dict[str, Any]] = [{"text": turn.text}] if turn.text else []
        plans = _PLANS_RE.findall(raw)
        fill = (lambda v: v.replace(PLANS, plans[-1]) if isinstance(v, str) else v) if plans else (lambda v: v)
        parts += [{"functionCall": {"name": name, "args": {k: fill(v) for k, v in args.items()}}}
                  for name, args in turn.calls]
        response = {
            "candidates": [{"content": {"role": "model", "parts": parts or [{"text": "ok"}]},
                            "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": turn.tokens - 50, "candidatesTokenCount": 50,
                              "totalTokenCount": turn.tokens},
            "modelVersion": "gemini-2.5-pro",
        }
        if not stream:
            self._send(handler, 200, "application/json", json.dumps(response).encode())
            return
        self._send(handler, 200, "text/event-stream", f"data: {json.dumps(response)}\r\n\r\n".encode())

    def _chat(self, handler: BaseHTTPRequestHandler, turn: Turn, *, stream: bool) -> None:
        """OpenAI's Chat Completions API, streamed as SSE chunks or answered whole."""
        number = next(self._ids)
        calls = [{"id": f"call_{number}_{index}", "type": "function",
                  "function": {"name": name, "arguments": json.dumps(arguments)}}
                 for index, (name, arguments) in enumerate(turn.calls)]
        usage = {"prompt_tokens": turn.tokens - 50, "completion_tokens": 50, "total_tokens": turn.tokens}
        finish = "tool_calls" if calls else "stop"
        head = {"id": f"chatcmpl-{number}", "created": 1764547200, "model": "scripted"}
        if not stream:
            message = {"role": "assistant", "content": turn.text or None, **({"tool_calls": calls} if calls else {})}
            whole = {**head, "object": "chat.completion", "usage": usage,
                     "choices": [{"index": 0, "message": message, "finish_reason": finish}]}
            self._send(handler, 200, "application/json", json.dumps(whole).encode())
            return
        chunks: list[dict[str, Any]] = [{"role": "assistant", "content": turn.text}] if turn.text else [
            {"role": "assistant", "content": ""}]
        chunks += [{"tool_calls": [{"index": index, **call}]} for index, call in enumerate(calls)]
        events = [{**head, "object": "chat.completion.chunk",
                   "choices": [{"index": 0, "delta": delta, "finish_reason": None}]} for delta in chunks]
        events.append({**head, "object": "chat.completion.chunk", "usage": usage,
                       "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
        data = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
        self._send(handler, 200, "text/event-stream", data.encode())
