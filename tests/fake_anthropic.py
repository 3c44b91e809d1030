"""A fake Anthropic API on 127.0.0.1 for the real `anthropic` client (its `base_url`): Messages, Message
Batches and Models, answering like the real API (version 2026-10-21) in status codes, error bodies and
headers, and rejecting the requests the real one rejects: a missing or wrong key, a missing max_tokens,
sampling parameters, a forced tool call with thinking on, a tool_choice naming no tool, an assistant
turn left last, a tool_use without its tool_result, unknown models.

Every request is recorded (`requests`) with its body, so a test can prove what was and was not sent.
`script` holds what the next POST /v1/messages answers (a `Reply`, `Fail` or `Hang`); when it is empty,
`responder(request)` answers if set (tests/claude_harness.py scripts Claude Code's conversations with it),
else `answer(request)` builds a valid handoff for the session in the request. A request with `"stream": true`
is answered as the API streams: server-sent events (message_start, content blocks and their deltas,
message_delta, message_stop).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import itertools
import json
import re
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

API_VERSIONS = ("2026-10-21", "2023-06-01")
MIN_CACHEABLE_TOKENS = 1024  # a shorter cached prefix is not cached, as on the real API
_TOP_LEVEL = {"model", "max_tokens", "messages", "system", "tools", "tool_choice", "thinking", "metadata",
              "stop_sequences", "stream", "cache_control", "output_config", "service_tier", "container",
              "inference_geo", "speed", "diagnostics", "user_profile_id", "workspace_id",
              "context_management"}  # the last: the context-management beta Claude Code sends
_TOOL_NAME_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_CUSTOM_ID_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
# id -> (display name, lifecycle, retires_at, thinking on by default, thinking can be turned off, forced tools ok)
MODELS: dict[str, tuple[str, str, str | None, bool, bool, bool]] = {
    "claude-haiku-5-5": ("Claude Haiku 5.5", "active", None, True, True, True),
    "claude-sonnet-5-5": ("Claude Sonnet 5.5", "active", None, True, False, True),
    "claude-opus-5-5": ("Claude Opus 5.5", "active", None, True, False, False),
    "claude-fable-5-1": ("Claude Fable 5.1", "active", None, True, False, False),
    "claude-sonnet-4-6": ("Claude Sonnet 4.6", "active", None, False, True, True),
    "claude-sonnet-4-5": ("Claude Sonnet 4.5", "deprecated", "2026-11-30T00:00:00Z", False, True, True),
    "claude-opus-4-5": ("Claude Opus 4.5", "deprecated", "2027-01-22T00:00:00Z", False, True, True),
    "claude-3-haiku-20240307": ("Claude Haiku 3", "retired", "2026-04-20T00:00:00Z", False, True, True),
}


@dataclass
class Reply:
    """A model answer: a tool call with `tool_input` (a dict, or a function of the request), or text, or
    `blocks` given whole (text and tool_use blocks; a tool_use without an id gets one). `usage` overrides
    the counted usage (a huge input_tokens makes Claude Code compact on its own)."""

    tool_input: dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]] | None = None
    text: str | None = None
    stop_reason: str | None = None
    blocks: list[dict[str, Any]] | None = None
    usage: dict[str, int] | None = None


@dataclass
class Fail:
    status: int
    error_type: str
    message: str = "fake failure"
    headers: dict[str, str] = field(default_factory=dict)
    error_code: str | None = None


@dataclass
class Raw:
    """An answer that is not the API's JSON at all (what a misconfigured proxy sends)."""

    status: int = 200
    body: str = "<html><body>Bad gateway</body></html>"
    content_type: str = "text/html"


@dataclass
class Hang:
    """Answer nothing for `seconds` (longer than the client's timeout)."""

    seconds: float = 5.0


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: str


class ApiError(Exception):
    def __init__(self, status: int, error_type: str, message: str, headers: dict[str, str] | None = None,
                 error_code: str | None = None) -> None:
        super().__init__(message)
        self.status, self.error_type, self.message = status, error_type, message
        self.headers = headers or {}
        self.error_code = error_code


def session_of(request: dict[str, Any]) -> str:
    """The session id in a request's transcript ("# Session <id>")."""
    text = json.dumps(request.get("messages", []))
    match = re.search(r"# Session ([0-9A-Za-z-]+)", text)
    return match.group(1) if match else "unknown"


def default_answer(request: dict[str, Any]) -> dict[str, Any]:
    short = session_of(request)[:8].lower()
    return {
        "headline": f"Summarise session {short} for the next one",
        "projects": [],
        "keywords": [f"topic-{short}", "fake-alpha", "fake-beta", "fake-gamma", "fake-delta"],
        "substance": 2,
        "status": "partial",
        "what_happened": [f"Worked on session {short}", "Changed the code and ran the tests"],
        "decisions": ["Kept the fake design: it answers every request"],
        "insights": [{"topic": "Fake topic", "explanation": "what the fake model learned"}],
        "key_files": [{"path": "core/example.py", "change": "the change"}],
        "open_threads": ["Run the fake suite again"],
    }


def _tokens(text: str) -> int:
    return max(1, len(text) // 4)


class FakeAnthropic:
    def __init__(self, api_key: str) -> None:
        self.api_key = api_key
        self.requests: list[Recorded] = []
        self.script: deque[Reply | Fail | Hang | Raw] = deque()
        self.answer: Callable[[dict[str, Any]], dict[str, Any]] = default_answer
        self.responder: Callable[[dict[str, Any]], Reply] | None = None
        self.script_errors: list[str] = []  # a scripted answer the real API could not give
        self.seeded: list[str] = []  # secrets planted in a test's sessions: none may arrive here
        self.batch_polls_until_done = 2
        # Concurrency: requests in flight now and at most; the first `gate` requests are held until that
        # many are in flight together (5 s at most), which proves the client sends them in parallel.
        self.gate = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self._gated = 0
        self._cond = threading.Condition()
        self.batches: dict[str, dict[str, Any]] = {}
        self._cache: set[str] = set()
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # quiet test output
                pass

            def do_GET(self) -> None:
                fake._handle(self, "GET")

            def do_POST(self) -> None:
                fake._handle(self, "POST")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02},
                                        daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(timeout=5)

    @property
    def message_requests(self) -> list[dict[str, Any]]:
        return [json.loads(r.body) for r in self.requests if r.method == "POST" and r.path == "/v1/messages"]

    # -- plumbing -------------------------------------------------------------------------------------
    def _next_id(self, prefix: str) -> str:
        with self._lock:
            return f"{prefix}_fake{next(self._ids):06d}"

    def _handle(self, handler: BaseHTTPRequestHandler, method: str) -> None:
        length = int(handler.headers.get("content-length") or 0)
        body = handler.rfile.read(length).decode("utf-8") if length else ""
        path = handler.path.split("?", 1)[0]
        headers = {k.lower(): v for k, v in handler.headers.items() if k.lower() not in ("authorization", "x-api-key")}
        with self._lock:
            self.requests.append(Recorded(method, path, headers, body))
        request_id = self._next_id("req")
        try:
            self._check_auth(handler)
            if handler.headers.get("anthropic-version") not in API_VERSIONS:
                raise ApiError(400, "invalid_request_error", "anthropic-version: header is required")
            status, payload, extra = self._route(method, path, body)
        except ApiError as exc:
            error: dict[str, Any] = {"type": exc.error_type, "message": exc.message}
            if exc.error_code:
                error["details"] = {"error_code": exc.error_code}
            status, payload, extra = exc.status, {"type": "error", "error": error, "request_id": request_id}, \
                exc.headers
        except _HangUp:
            return
        except _RawAnswer as raw:
            status, payload, extra = raw.action.status, raw.action.body.encode(), {
                "content-type": raw.action.content_type}
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode("utf-8")
        try:
            handler.send_response(status)
            handler.send_header("content-type", extra.pop("content-type", "application/json"))
            handler.send_header("request-id", request_id)
            for name, value in extra.items():
                handler.send_header(name, value)
            handler.send_header("content-length", str(len(data)))
            handler.end_headers()
            handler.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _check_auth(self, handler: BaseHTTPRequestHandler) -> None:
        bearer = handler.headers.get("authorization", "")
        given = bearer.removeprefix("Bearer ").strip() if bearer.startswith("Bearer ") else \
            handler.headers.get("x-api-key", "")
        if not given:
            raise ApiError(401, "authentication_error", "x-api-key header is required")
        if given != self.api_key:
            raise ApiError(401, "authentication_error", "invalid x-api-key")

    def _route(self, method: str, path: str, body: str) -> tuple[int, Any, dict[str, str]]:
        if method == "POST" and path == "/v1/messages":
            request = self._json(body)
            with self._cond:
                self.in_flight += 1
                self.max_in_flight = max(self.max_in_flight, self.in_flight)
                self._cond.notify_all()
                if self._gated < self.gate:
                    self._gated += 1
                    self._cond.wait_for(lambda: self.in_flight >= self.gate or self._stop.is_set(), timeout=5)
            try:
                message = self._message(request, scripted=True)
                if request.get("stream"):
                    return 200, sse_events(message), {"content-type": "text/event-stream"}
                return 200, message, {}
            finally:
                with self._cond:
                    self.in_flight -= 1
        if method == "GET" and path == "/v1/models":
            data = [self._model_info(m) for m in MODELS]
            return 200, {"data": data, "has_more": False, "first_id": data[0]["id"], "last_id": data[-1]["id"]}, {}
        if method == "GET" and path.startswith("/v1/models/"):
            return 200, self._model_info(path.rsplit("/", 1)[1]), {}
        if method == "POST" and path == "/v1/messages/batches":
            return 200, self._create_batch(self._json(body)), {}
        match = re.fullmatch(r"/v1/messages/batches/([^/]+)(/results)?", path)
        if method == "GET" and match:
            batch = self.batches.get(match.group(1))
            if batch is None:
                raise ApiError(404, "not_found_error", f"message batch {match.group(1)} not found")
            if match.group(2):
                if batch["processing_status"] != "ended":
                    raise ApiError(404, "not_found_error", "results are not available until the batch ends")
                lines = "".join(json.dumps(line) + "\n" for line in batch["_results"])
                return 200, lines.encode("utf-8"), {"content-type": "application/binary"}
            return 200, self._poll_batch(batch), {}
        raise ApiError(404, "not_found_error", f"{method} {path} not found")

    @staticmethod
    def _json(body: str) -> dict[str, Any]:
        try:
            data = json.loads(body)
        except json.JSONDecodeError:
            raise ApiError(400, "invalid_request_error", "request body is not valid JSON") from None
        if not isinstance(data, dict):
            raise ApiError(400, "invalid_request_error", "request body must be a JSON object")
        return data

    # -- models ---------------------------------------------------------------------------------------
    def _model_info(self, model_id: str) -> dict[str, Any]:
        if model_id not in MODELS:
            raise ApiError(404, "not_found_error", f"model: {model_id}")
        name, lifecycle, retires, *_ = MODELS[model_id]
        return {"type": "model", "id": model_id, "display_name": name, "created_at": "2026-01-01T00:00:00Z",
                "lifecycle": lifecycle, "retires_at": retires,
                "deprecated_at": "2026-08-01T00:00:00Z" if lifecycle != "active" else None,
                "max_input_tokens": 1_000_000, "max_tokens": 128_000}

    # -- messages -------------------------------------------------------------------------------------
    def validate(self, req: dict[str, Any]) -> None:
        """Raise `ApiError` for what the real API rejects (API version 2026-10-21)."""
        extra = sorted(set(req) - _TOP_LEVEL)
        if extra:
            raise ApiError(400, "invalid_request_error", f"{extra[0]}: Extra inputs are not permitted")
        for name in ("model", "max_tokens", "messages"):
            if name not in req:
                raise ApiError(400, "invalid_request_error", f"{name}: Field required")
        model = req["model"]
        if model not in MODELS or MODELS[model][1] == "retired":
            raise ApiError(404, "not_found_error", f"model: {model}")
        _, _, _, thinks_by_default, can_disable, forced_ok = MODELS[model]
        if not isinstance(req["max_tokens"], int) or not 1 <= req["max_tokens"] <= 128_000:
            raise ApiError(400, "invalid_request_error", "max_tokens: must be an integer from 1 to 128000")
        messages = req["messages"]
        if not isinstance(messages, list) or not messages:
            raise ApiError(400, "invalid_request_error", "messages: at least one message is required")
        previous_tool_ids: set[str] = set()
        for index, message in enumerate(messages):
            role = message.get("role")
            # Consecutive turns of one role are merged, as the real API does; a `system` turn mid-conversation
            # is the per-turn-control beta Claude Code sends (it sits between turns and pairs nothing).
            if role not in ("user", "assistant", "system") or (index == 0 and role != "user"):
                raise ApiError(400, "invalid_request_error",
                               f"messages.{index}.role: must be user or assistant, starting with user")
            if role == "system":
                continue
            blocks = message.get("content")
            blocks = [{"type": "text", "text": blocks}] if isinstance(blocks, str) else blocks
            if not isinstance(blocks, list) or not blocks:
                raise ApiError(400, "invalid_request_error", f"messages.{index}.content: must not be empty")
            results = {b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"}
            if role == "user" and previous_tool_ids - results:
                raise ApiError(400, "invalid_request_error",
                               f"messages.{index}: tool_use ids were found without tool_result blocks "
                               f"immediately after: {sorted(previous_tool_ids - results)[0]}")
            if role == "user" and results - previous_tool_ids:
                raise ApiError(400, "invalid_request_error",
                               f"messages.{index}.content: unexpected tool_use_id in tool_result blocks")
            previous_tool_ids = {b["id"] for b in blocks if b.get("type") == "tool_use"} if role == "assistant" \
                else set()
        if [m for m in messages if m["role"] != "system"][-1]["role"] != "user":
            raise ApiError(400, "invalid_request_error",
                           "This model does not support assistant message prefill. The conversation must end "
                           "with a user message.")
        system = req.get("system")
        if system is not None and not isinstance(system, str):
            if not isinstance(system, list) or any(b.get("type") != "text" for b in system):
                raise ApiError(400, "invalid_request_error", "system: must be a string or a list of text blocks")
        tools = req.get("tools") or []
        names = [t.get("name") for t in tools]
        for i, tool in enumerate(tools):
            if not _TOOL_NAME_RE.match(str(tool.get("name"))):
                raise ApiError(400, "invalid_request_error", f"tools.{i}.name: String should match pattern")
            if (tool.get("input_schema") or {}).get("type") != "object":
                raise ApiError(400, "invalid_request_error", f"tools.{i}.input_schema.type: must be 'object'")
        if len(set(names)) != len(names):
            raise ApiError(400, "invalid_request_error", "tools: tool names must be unique")
        choice = req.get("tool_choice") or {"type": "auto"}
        if choice.get("type") not in ("auto", "any", "tool", "none"):
            raise ApiError(400, "invalid_request_error", "tool_choice.type: must be auto, any, tool or none")
        if choice["type"] in ("any", "tool") and not tools:
            raise ApiError(400, "invalid_request_error", "tool_choice: requires tools")
        if choice["type"] == "tool" and choice.get("name") not in names:
            raise ApiError(400, "invalid_request_error", f"tool_choice.name: no tool named {choice.get('name')!r}")
        thinking = (req.get("thinking") or {}).get("type")
        if thinking == "disabled" and not can_disable:
            raise ApiError(400, "invalid_request_error", f"thinking.type.disabled is not supported for {model}")
        if thinking == "enabled":
            raise ApiError(400, "invalid_request_error", f"thinking.type.enabled is not supported for {model}")
        forced = choice["type"] in ("any", "tool")
        if forced and not forced_ok:
            raise ApiError(400, "invalid_request_error", f"tool_choice forcing tool use is not supported for {model}")
        thinking_on = thinking in ("adaptive", "enabled") or (thinking is None and thinks_by_default)
        if forced and thinking_on:
            raise ApiError(400, "invalid_request_error",
                           "Thinking may not be enabled when tool_choice forces tool use.")
        breakpoints = json.dumps(req).count('"cache_control"')
        if breakpoints > 4:
            raise ApiError(400, "invalid_request_error", "A maximum of 4 blocks with cache_control may be provided")

    def _usage(self, req: dict[str, Any], output: str) -> dict[str, int]:
        prefix_parts: list[Any] = [req.get("tools") or []]
        cached = False
        system = req.get("system")
        if isinstance(system, list):
            for block in system:
                prefix_parts.append(block)
                if "cache_control" in block:
                    cached = True
                    break
        prefix = json.dumps(prefix_parts, sort_keys=True)
        total = _tokens(json.dumps([req.get("tools"), system, req["messages"]]))
        usage = {"input_tokens": total, "output_tokens": _tokens(output), "cache_creation_input_tokens": 0,
                 "cache_read_input_tokens": 0}
        prefix_tokens = _tokens(prefix)
        if cached and prefix_tokens >= MIN_CACHEABLE_TOKENS:
            key = hashlib.sha256((req["model"] + prefix).encode()).hexdigest()
            with self._lock:
                hit = key in self._cache
                self._cache.add(key)
            usage["cache_read_input_tokens" if hit else "cache_creation_input_tokens"] = prefix_tokens
            usage["input_tokens"] = max(1, total - prefix_tokens)
        return usage

    def _message(self, req: dict[str, Any], *, scripted: bool) -> dict[str, Any]:
        self.validate(req)
        action: Reply | Fail | Hang | Raw | None = None
        if scripted:
            with self._lock:
                action = self.script.popleft() if self.script else None
        if isinstance(action, Fail):
            raise ApiError(action.status, action.error_type, action.message, dict(action.headers), action.error_code)
        if isinstance(action, Hang):
            self._stop.wait(action.seconds)
            raise _HangUp
        if isinstance(action, Raw):
            raise _RawAnswer(action)
        if action is None and scripted and self.responder is not None:
            action = self.responder(req)
        return self._reply(req, action or Reply())

    def _reply(self, req: dict[str, Any], reply: Reply) -> dict[str, Any]:
        choice = req.get("tool_choice") or {"type": "auto"}
        forced = choice.get("type") in ("any", "tool")
        tool_names = [t["name"] for t in req.get("tools") or []]
        if reply.blocks is not None:
            content = [{**b, "id": b.get("id") or self._next_id("toolu")} if b.get("type") == "tool_use" else b
                       for b in reply.blocks]
            stop = reply.stop_reason or ("tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn")
        elif reply.text is not None and reply.tool_input is None:
            if forced:
                self.script_errors.append("a text answer scripted for a request that forces a tool call")
            content: list[dict[str, Any]] = [{"type": "text", "text": reply.text}]
            stop = reply.stop_reason or "end_turn"
        else:
            tool_input = reply.tool_input if reply.tool_input is not None else self.answer
            data = tool_input(req) if callable(tool_input) else tool_input
            name = choice.get("name") if choice.get("type") == "tool" else (tool_names[0] if tool_names else "tool")
            content = [{"type": "tool_use", "id": self._next_id("toolu"), "name": name, "input": data}]
            stop = reply.stop_reason or "tool_use"
        return {"id": self._next_id("msg"), "type": "message", "role": "assistant", "model": req["model"],
                "content": content, "stop_reason": stop, "stop_sequence": None,
                "usage": {**self._usage(req, json.dumps(content)), **(reply.usage or {})}}

    # -- message batches ------------------------------------------------------------------------------
    def _create_batch(self, req: dict[str, Any]) -> dict[str, Any]:
        requests = req.get("requests")
        if not isinstance(requests, list) or not requests:
            raise ApiError(400, "invalid_request_error", "requests: at least one request is required")
        seen: set[str] = set()
        for i, item in enumerate(requests):
            custom_id = item.get("custom_id")
            if not isinstance(custom_id, str) or not _CUSTOM_ID_RE.match(custom_id):
                raise ApiError(400, "invalid_request_error", f"requests.{i}.custom_id: String should match pattern")
            if custom_id in seen:
                raise ApiError(400, "invalid_request_error", f"requests.{i}.custom_id: duplicate {custom_id!r}")
            seen.add(custom_id)
            if not isinstance(item.get("params"), dict):
                raise ApiError(400, "invalid_request_error", f"requests.{i}.params: Field required")
        batch_id = self._next_id("msgbatch")
        created = dt.datetime.now(dt.UTC)
        batch = {"id": batch_id, "type": "message_batch", "processing_status": "in_progress",
                 "request_counts": {"processing": len(requests), "succeeded": 0, "errored": 0, "canceled": 0,
                                    "expired": 0},
                 "created_at": created.isoformat(), "expires_at": (created + dt.timedelta(days=1)).isoformat(),
                 "ended_at": None, "archived_at": None, "cancel_initiated_at": None, "results_url": None,
                 "_requests": requests, "_polls": 0, "_results": []}
        self.batches[batch_id] = batch
        return self._public(batch)

    def _poll_batch(self, batch: dict[str, Any]) -> dict[str, Any]:
        batch["_polls"] += 1
        if batch["processing_status"] != "ended" and batch["_polls"] >= self.batch_polls_until_done:
            counts = batch["request_counts"]
            for item in batch["_requests"]:
                try:
                    message = self._message(item["params"], scripted=True)
                    result: dict[str, Any] = {"type": "succeeded", "message": message}
                    counts["succeeded"] += 1
                except ApiError as exc:
                    result = {"type": "errored", "error": {"type": "error", "error": {
                        "type": exc.error_type, "message": exc.message}}}
                    counts["errored"] += 1
                counts["processing"] -= 1
                batch["_results"].append({"custom_id": item["custom_id"], "result": result})
            batch["processing_status"] = "ended"
            batch["ended_at"] = dt.datetime.now(dt.UTC).isoformat()
            batch["results_url"] = f"{self.base_url}/v1/messages/batches/{batch['id']}/results"
        return self._public(batch)

    @staticmethod
    def _public(batch: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in batch.items() if not k.startswith("_")}


def sse_events(message: dict[str, Any]) -> bytes:
    """A whole message as the API streams it: each block started, its content as one delta, stopped."""
    usage = message["usage"]
    start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    events: list[tuple[str, dict[str, Any]]] = [("message_start", {"type": "message_start", "message": start})]
    for index, block in enumerate(message["content"]):
        if block["type"] == "tool_use":
            empty = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        else:
            empty, delta = {"type": "text", "text": ""}, {"type": "text_delta", "text": block["text"]}
        events += [("content_block_start", {"type": "content_block_start", "index": index, "content_block": empty}),
                   ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}),
                   ("content_block_stop", {"type": "content_block_stop", "index": index})]
    events += [("message_delta", {"type": "message_delta", "usage": {"output_tokens": usage["output_tokens"]},
                                  "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None}}),
               ("message_stop", {"type": "message_stop"})]
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events).encode("utf-8")


class _HangUp(Exception):
    """The handler answers nothing (the client has given up by now)."""


class _RawAnswer(Exception):
    def __init__(self, action: Raw) -> None:
        super().__init__("raw answer")
        self.action = action
