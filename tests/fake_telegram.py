"""A fake Telegram Bot API server on 127.0.0.1 over real HTTP, strict where Telegram is strict, and a
harness that runs the bot's real `Application` against it in a thread of its own.

The fake implements what the bot uses (getMe, deleteWebhook, getUpdates as a long poll with offset
and timeout, sendMessage, editMessageText, sendDocument and sendVoice (multipart; a voice note must
decode as OGG/Opus), getFile and file download,
setMyCommands, answerCallbackQuery, answerInlineQuery, sendChatAction) and rejects what Telegram
rejects: text over 4096 characters, empty text, callback data over 64 bytes, HTML or MarkdownV2 it
cannot parse, unknown methods (400), a wrong token (401), and a 429 with retry_after on request.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from email import policy
from email.parser import BytesParser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

TOKEN = "123456789:AAF-fake_token-for-tests"
BOT_USER = {"id": 123456789, "is_bot": True, "first_name": "Eywa", "username": "eywa_test_bot",
            "can_join_groups": True, "can_read_all_group_messages": False, "supports_inline_queries": True}
MAX_TEXT = 4096
MAX_CAPTION = 1024
MAX_CALLBACK_DATA = 64
DROP = 0  # an ApiError code that makes the fake close the connection instead of answering
# Form fields whose value PTB sends JSON-encoded; every other field is a plain string.
_JSON_FIELDS = {"chat_id", "message_id", "offset", "limit", "timeout", "allowed_updates", "reply_markup",
                "entities", "caption_entities", "results", "commands", "cache_time", "is_personal",
                "link_preview_options", "reply_parameters", "show_alert", "disable_notification",
                "drop_pending_updates", "scope", "protect_content", "button"}


class ApiError(Exception):
    def __init__(self, code: int, description: str, retry_after: int | None = None) -> None:
        super().__init__(description)
        self.code, self.description, self.retry_after = code, description, retry_after


def utf16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


# --- what Telegram parses ---------------------------------------------------------------------------

_HTML_TAGS = {"b": "bold", "strong": "bold", "i": "italic", "em": "italic", "u": "underline", "ins": "underline",
              "s": "strikethrough", "strike": "strikethrough", "del": "strikethrough", "tg-spoiler": "spoiler",
              "span": "spoiler", "a": "text_link", "code": "code", "pre": "pre", "blockquote": "blockquote",
              "tg-emoji": "custom_emoji"}
_NAMED_ENTITIES = {"lt": "<", "gt": ">", "amp": "&", "quot": '"'}
_ATTR_RE = re.compile(r"""\s*([a-zA-Z-]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+)))?""")


def parse_html(source: str) -> tuple[str, list[dict[str, Any]]]:
    """Telegram's HTML: (text, entities), or ApiError 400 "can't parse entities" like the real server."""
    out: list[str] = []
    entities: list[dict[str, Any]] = []
    stack: list[tuple[str, int, dict[str, str]]] = []
    pos = 0

    def fail(reason: str) -> ApiError:
        return ApiError(400, f"Bad Request: can't parse entities: {reason}")

    def offset() -> int:
        return utf16("".join(out))

    while pos < len(source):
        char = source[pos]
        if char == "&":
            match = re.match(r"&(#x[0-9a-fA-F]+|#[0-9]+|[a-zA-Z]+);", source[pos:])
            if match:
                name = match.group(1)
                if name.startswith("#x"):
                    out.append(chr(int(name[2:], 16)))
                elif name.startswith("#"):
                    out.append(chr(int(name[1:])))
                elif name in _NAMED_ENTITIES:
                    out.append(_NAMED_ENTITIES[name])
                else:
                    out.append(match.group(0))  # unknown named entity: kept literally, as Telegram does
                pos += len(match.group(0))
                continue
            out.append(char)
            pos += 1
            continue
        if char != "<":
            out.append(char)
            pos += 1
            continue
        end = source.find(">", pos)
        if end < 0:
            raise fail(f"Unclosed start tag at byte offset {len(source[:pos].encode())}")
        inside = source[pos + 1 : end]
        if inside.startswith("/"):
            name = inside[1:].strip().lower()
            if not stack:
                raise fail(f'Unexpected end tag at byte offset {len(source[:pos].encode())}')
            open_name, start, attrs = stack.pop()
            if name != open_name:
                raise fail(f'Unmatched end tag at byte offset {len(source[:pos].encode())}, '
                           f'expected "</{open_name}>", found "</{name}>"')
            length = offset() - start
            if length > 0:
                entity: dict[str, Any] = {"type": _HTML_TAGS[open_name], "offset": start, "length": length}
                if open_name == "a":
                    entity["url"] = attrs.get("href", "")
                entities.append(entity)
        else:
            match = re.match(r"([a-zA-Z][a-zA-Z0-9-]*)", inside)
            name = match.group(1).lower() if match else ""
            if name not in _HTML_TAGS:
                raise fail(f'Unsupported start tag "{name}" at byte offset {len(source[:pos].encode())}')
            attrs = {m.group(1).lower(): next((g for g in m.groups()[1:] if g is not None), "")
                     for m in _ATTR_RE.finditer(inside[len(name):].rstrip("/")) if m.group(1)}
            if name == "span" and attrs.get("class") != "tg-spoiler":
                raise fail('Tag "span" must have class "tg-spoiler"')
            if name == "a" and not attrs.get("href"):
                raise fail('Tag "a" must have attribute "href"')
            if stack and stack[-1][0] in ("code", "pre") and not (stack[-1][0] == "pre" and name == "code"):
                raise fail(f'Entities can\'t be nested inside "{stack[-1][0]}"')
            stack.append((name, offset(), attrs))
        pos = end + 1
    if stack:
        raise fail(f'Can\'t find end tag corresponding to start tag "{stack[-1][0]}"')
    return "".join(out), entities


_MDV2_RESERVED = set("_*[]()~`>#+-=|{}.!")


def parse_markdown_v2(source: str) -> tuple[str, list[dict[str, Any]]]:
    """Telegram's MarkdownV2 rules, enough to refuse what Telegram refuses (unescaped reserved
    characters, unclosed entities)."""
    out: list[str] = []
    entities: list[dict[str, Any]] = []
    stack: list[tuple[str, int, int]] = []  # (marker, text offset, byte offset)
    pos = 0

    def fail(reason: str) -> ApiError:
        return ApiError(400, f"Bad Request: can't parse entities: {reason}")

    def toggle(marker: str, kind: str) -> None:
        if stack and stack[-1][0] == marker:
            _, start, _ = stack.pop()
            if utf16("".join(out)) > start:
                entities.append({"type": kind, "offset": start, "length": utf16("".join(out)) - start})
        else:
            stack.append((marker, utf16("".join(out)), len(source[:pos].encode())))

    while pos < len(source):
        char = source[pos]
        in_code = bool(stack) and stack[-1][0] in ("`", "```")
        if char == "\\":
            if pos + 1 < len(source) and 0 < ord(source[pos + 1]) < 127:
                out.append(source[pos + 1])
                pos += 2
                continue
            raise fail("Character '\\' is reserved and must be escaped with the preceding '\\'")
        if in_code:
            marker = stack[-1][0]
            if source.startswith(marker, pos):
                pos += len(marker)
                _, start, _ = stack.pop()
                entities.append({"type": "pre" if marker == "```" else "code", "offset": start,
                                 "length": utf16("".join(out)) - start})
                continue
            out.append(char)
            pos += 1
            continue
        if source.startswith("```", pos):
            stack.append(("```", utf16("".join(out)), len(source[:pos].encode())))
            pos += 3
            newline = source.find("\n", pos)
            if newline >= 0 and re.fullmatch(r"[A-Za-z0-9_+-]*", source[pos:newline]):
                pos = newline + 1
            continue
        if char == "`":
            stack.append(("`", utf16("".join(out)), len(source[:pos].encode())))
            pos += 1
            continue
        if source.startswith("__", pos):
            toggle("__", "underline")
            pos += 2
            continue
        if source.startswith("||", pos):
            toggle("||", "spoiler")
            pos += 2
            continue
        if char in "*_~":
            toggle(char, {"*": "bold", "_": "italic", "~": "strikethrough"}[char])
            pos += 1
            continue
        if char == "[":
            stack.append(("[", utf16("".join(out)), len(source[:pos].encode())))
            pos += 1
            continue
        if char == "]" and stack and stack[-1][0] == "[":
            match = re.match(r"\]\(((?:[^)\\]|\\.)*)\)", source[pos:])
            if not match:
                raise fail("Character ']' is reserved and must be escaped with the preceding '\\'")
            _, start, _ = stack.pop()
            entities.append({"type": "text_link", "offset": start, "length": utf16("".join(out)) - start,
                             "url": match.group(1)})
            pos += len(match.group(0))
            continue
        if char == ">" and (pos == 0 or source[pos - 1] == "\n"):
            pos += 1  # a block quote line
            continue
        if char in _MDV2_RESERVED:
            raise fail(f"Character '{char}' is reserved and must be escaped with the preceding '\\'")
        out.append(char)
        pos += 1
    if stack:
        raise fail(f"Can't find end of the entity starting at byte offset {stack[-1][2]}")
    return "".join(out), entities


def parse_text(text: Any, parse_mode: str | None, entities: Any = None, *, limit: int = MAX_TEXT,
               what: str = "message") -> tuple[str, list[dict[str, Any]]]:
    if not isinstance(text, str):
        text = "" if text is None else str(text)
    if parse_mode == "HTML":
        plain, found = parse_html(text)
    elif parse_mode == "MarkdownV2":
        plain, found = parse_markdown_v2(text)
    elif parse_mode in (None, "", "Markdown"):
        plain, found = text, list(entities or [])
        for entity in found:
            if entity.get("offset", -1) < 0 or entity.get("offset", 0) + entity.get("length", 0) > utf16(plain):
                raise ApiError(400, "Bad Request: can't parse entities: entity beyond the end of the text")
    else:
        raise ApiError(400, f"Bad Request: unsupported parse_mode {parse_mode}")
    if what == "message" and not plain.strip():
        raise ApiError(400, "Bad Request: message text is empty")
    if utf16(plain) > limit:
        raise ApiError(400, "Bad Request: message is too long" if what == "message" else
                       "Bad Request: message caption is too long")
    return plain, found


def check_markup(markup: Any) -> None:
    if markup is None:
        return
    if not isinstance(markup, dict):
        raise ApiError(400, "Bad Request: can't parse reply keyboard markup JSON object")
    for row in markup.get("inline_keyboard", []):
        for button in row:
            if not button.get("text"):
                raise ApiError(400, "Bad Request: text buttons are unallowed in the inline keyboard")
            data = button.get("callback_data")
            if data is not None and not 1 <= len(data.encode()) <= MAX_CALLBACK_DATA:
                raise ApiError(400, "Bad Request: BUTTON_DATA_INVALID")
            actions = [k for k in ("callback_data", "url", "switch_inline_query", "switch_inline_query_current_chat",
                                   "copy_text", "web_app", "login_url", "pay", "callback_game") if k in button]
            if len(actions) != 1:
                raise ApiError(400, "Bad Request: BUTTON_TYPE_INVALID")


# --- the server ---------------------------------------------------------------------------------------


@dataclass
class Call:
    """One request the bot made (getUpdates aside), and what the fake answered."""

    method: str
    params: dict[str, Any]
    ok: bool = True
    error: str = ""
    result: Any = None
    files: dict[str, tuple[str, bytes]] = field(default_factory=dict)
    at: float = field(default_factory=time.perf_counter)  # when the request reached the fake

    @property
    def chat_id(self) -> int | None:
        value = self.params.get("chat_id")
        return int(value) if value is not None else None

    @property
    def text(self) -> str:
        """The text a person sees (after entity parsing), for messages and edits."""
        if isinstance(self.result, dict):
            return self.result.get("text") or self.result.get("caption") or ""
        return ""

    @property
    def buttons(self) -> list[dict[str, Any]]:
        markup = self.params.get("reply_markup") or {}
        return [button for row in markup.get("inline_keyboard", []) for button in row]


class FakeTelegram:
    def __init__(self, token: str = TOKEN) -> None:
        self.token = token
        self.calls: list[Call] = []
        self.get_updates_calls = 0
        self.commands: list[dict[str, Any]] = []
        self._updates: list[dict[str, Any]] = []
        self._ids = itertools.count(1)
        self._update_ids = itertools.count(1000)
        self._files: dict[str, bytes] = {}
        self._messages: dict[tuple[int, int], dict[str, Any]] = {}
        self._callbacks: dict[str, bool] = {}  # id -> answered
        self._inline: dict[str, bool] = {}
        self._failures: list[tuple[str, ApiError]] = []
        self._cond = threading.Condition()
        self._closing = False
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go in two writes: no 40 ms delayed-ACK stall

            def log_message(self, *args: object) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                fake._handle(self)

            def do_POST(self) -> None:
                fake._handle(self)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="fake-telegram", daemon=True)

    # -- lifecycle ---------------------------------------------------------------------------------
    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def base_url(self) -> str:
        return f"{self.url}/bot"

    @property
    def base_file_url(self) -> str:
        return f"{self.url}/file/bot"

    def start(self) -> FakeTelegram:
        self._thread.start()
        return self

    def close(self) -> None:
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeTelegram:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- HTTP ----------------------------------------------------------------------------------------
    def _handle(self, request: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(request.path)
        path = unquote(parts.path)  # file URLs carry the token percent-encoded (%3A for the colon)
        length = int(request.headers.get("Content-Length") or 0)
        body = request.rfile.read(length) if length else b""
        try:
            if path.startswith("/file/bot"):
                rest = path[len("/file/bot"):]
                if not rest.startswith(self.token + "/"):
                    raise ApiError(401, "Unauthorized")
                data = self._files.get(rest[len(self.token) + 1:])
                if data is None:
                    raise ApiError(404, "Not Found")
                self._reply(request, 200, data, "application/octet-stream")
                return
            if not path.startswith("/bot"):
                raise ApiError(404, "Not Found")
            token, _, method = path[4:].partition("/")
            if token != self.token:
                raise ApiError(401, "Unauthorized")
            params, files = self._params(request, parts.query, body)
            result = self._dispatch(method, params, files)
            payload = json.dumps({"ok": True, "result": result}).encode()
            self._reply(request, 200, payload, "application/json")
        except ApiError as exc:
            if exc.code == DROP:  # the connection breaks: no status line, no body
                request.close_connection = True
                return
            answer: dict[str, Any] = {"ok": False, "error_code": exc.code, "description": exc.description}
            if exc.retry_after is not None:
                answer["parameters"] = {"retry_after": exc.retry_after}
            self._reply(request, exc.code, json.dumps(answer).encode(), "application/json")
        except (BrokenPipeError, ConnectionResetError):
            pass

    @staticmethod
    def _reply(request: BaseHTTPRequestHandler, code: int, data: bytes, kind: str) -> None:
        try:
            request.send_response(code)
            request.send_header("Content-Type", kind)
            request.send_header("Content-Length", str(len(data)))
            request.end_headers()
            request.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a cancelled long poll)

    @staticmethod
    def _params(request: BaseHTTPRequestHandler, query: str, body: bytes
                ) -> tuple[dict[str, Any], dict[str, tuple[str, bytes]]]:
        raw: dict[str, str] = {key: values[-1] for key, values in parse_qs(query).items()}
        files: dict[str, tuple[str, bytes]] = {}
        kind = request.headers.get("Content-Type", "")
        if kind.startswith("multipart/form-data"):
            message = BytesParser(policy=policy.HTTP).parsebytes(
                f"Content-Type: {kind}\r\n\r\n".encode() + body)
            for part in message.iter_parts():
                name = part.get_param("name", header="content-disposition")
                filename = part.get_filename()
                payload = part.get_payload(decode=True) or b""
                if filename is not None:
                    files[name] = (filename, payload)
                else:
                    raw[name] = payload.decode()
        elif kind.startswith("application/json") and body:
            return json.loads(body), files
        elif body:
            raw.update({key: values[-1] for key, values in parse_qs(body.decode(), keep_blank_values=True).items()})
        params: dict[str, Any] = {}
        for key, value in raw.items():
            if key in _JSON_FIELDS:
                try:
                    params[key] = json.loads(value)
                except json.JSONDecodeError:
                    raise ApiError(400, f"Bad Request: can't parse {key}") from None
            else:
                params[key] = value
        return params, files

    # -- the API -------------------------------------------------------------------------------------
    def _dispatch(self, method: str, params: dict[str, Any], files: dict[str, tuple[str, bytes]]) -> Any:
        if method == "getUpdates":
            return self._get_updates(params)
        call = Call(method, params, files=files)
        with self._cond:
            self.calls.append(call)
            failure = next((f for f in self._failures if f[0] == method), None)
            if failure is not None:
                self._failures.remove(failure)
        try:
            if failure is not None:
                raise failure[1]
            handler = getattr(self, f"_api_{method}", None)
            if handler is None:
                raise ApiError(400, f"Bad Request: method {method} not found")
            result = handler(params, files)
            call.result = result
            return result
        except ApiError as exc:
            call.ok, call.error = False, exc.description
            raise
        finally:
            with self._cond:
                self._cond.notify_all()

    def _get_updates(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        offset = int(params.get("offset") or 0)
        deadline = time.monotonic() + float(params.get("timeout") or 0)
        limit = int(params.get("limit") or 100)
        with self._cond:
            self.get_updates_calls += 1
            self._updates = [u for u in self._updates if u["update_id"] >= offset]  # confirmed ones go
            while not self._updates and not self._closing and (left := deadline - time.monotonic()) > 0:
                self._cond.wait(left)
            return self._updates[:limit]

    def _message(self, chat_id: int, **fields: Any) -> dict[str, Any]:
        message = {"message_id": next(self._ids), "date": int(time.time()),
                   "chat": {"id": chat_id, "type": "private" if chat_id > 0 else "group", "title": "chat"},
                   "from": BOT_USER, **fields}
        self._messages[(chat_id, message["message_id"])] = message
        return message

    def _api_getMe(self, params: dict[str, Any], files: dict[str, Any]) -> Any:
        return BOT_USER

    def _api_deleteWebhook(self, params: dict[str, Any], files: dict[str, Any]) -> Any:
        if params.get("drop_pending_updates"):  # as Telegram does: what was waiting is never delivered
            with self._cond:
                self._updates.clear()
        return True

    def _api_setMyCommands(self, params: dict[str, Any], files: dict[str, Any]) -> Any:
        commands = params.get("commands") or []
        for command in commands:
            if not re.fullmatch(r"[a-z0-9_]{1,32}", command.get("command", "")) \
                    or not 1 <= len(command.get("description", "")) <= 256:
                raise ApiError(400, "Bad Request: BOT_COMMAND_INVALID")
        self.commands = commands
        return True

    def _api_sendChatAction(self, params: dict[str, Any], files: dict[str, Any]) -> Any:
        self._need(params, "chat_id", "action")
        return True

    def _api_sendMessage(self, params: dict[str, Any], files: dict[str, Any]) -> Any:
        self._need(params, "chat_id", "text")
        text, entities = parse_text(params["text"], params.get("parse_mode"), params.get("entities"))
        check_markup(params.get("reply_markup"))
        extra = {"reply_markup": params["reply_markup"]} if params.get("reply_markup") else {}
        return self._message(int(params["chat_id"]), text=text, entities=entities, **extra)

    def _api_editMessageText(self, params: dict[str, Any], files: dict[str, Any]) -> Any:
        self._need(params, "chat_id", "message_id", "text")
        key = (int(params["chat_id"]), int(params["message_id"]))
        message = self._messages.get(key)
        if message is None or "text" not in message:
            raise ApiError(400, "Bad Request: message to edit not found")
        text, entities = parse_text(params["text"], params.get("parse_mode"), params.get("entities"))
        check_markup(params.get("reply_markup"))
        if text == message["text"] and entities == message.get("entities") \
                and params.get("reply_markup") == message.get("reply_markup"):
            raise ApiError(400, "Bad Request: message is not modified: specified new message content and reply "
                                "markup are exactly the same as a current content and reply markup of the message")
        message.update(text=text, entities=entities, edit_date=int(time.time()))
        return message

    def _api_sendDocument(self, params: dict[str, Any], files: dict[str, Any]) -> Any:
        self._need(params, "chat_id")
        if "document" not in files:
            raise ApiError(400, "Bad Request: there is no document in the request")
        filename, data = files["document"]
        if not data:
            raise ApiError(400, "Bad Request: file must be non-empty")
        caption, entities = ("", [])
        if params.get("caption"):
            caption, entities = parse_text(params["caption"], params.get("parse_mode"), params.get("caption_entities"),
                                           limit=MAX_CAPTION, what="caption")
        check_markup(params.get("reply_markup"))
        file_id = f"doc{next(self._ids)}"
        self._files[f"documents/{file_id}"] = data
        fields: dict[str, Any] = {"document": {"file_id": file_id, "file_unique_id": file_id, "file_name": filename,
                                               "file_size": len(data)}}
        if caption:
            fields.update(caption=caption, caption_entities=entities)
        if params.get("reply_markup"):
            fields["reply_markup"] = params["reply_markup"]
        return self._message(int(params["chat_id"]), **fields)

    def _api_sendVoice(self, params: dict[str, Any], files: dict[str, Any]) -> Any:
        """Telegram plays a voice note only as OGG/Opus (MP3 and M4A are sent as audio files): the fake
        decodes the upload and refuses anything else."""
        self._need(params, "chat_id")
        if "voice" not in files:
            raise ApiError(400, "Bad Request: there is no voice in the request")
        filename, data = files["voice"]
        seconds = ogg_opus_seconds(data)
        check_markup(params.get("reply_markup"))
        file_id = f"voice{next(self._ids)}"
        self._files[f"voice/{file_id}.oga"] = data
        voice = {"file_id": file_id, "file_unique_id": file_id, "mime_type": "audio/ogg", "file_size": len(data),
                 "duration": int(params.get("duration") or round(seconds))}
        return self._message(int(params["chat_id"]), voice=voice, decoded_seconds=seconds)

    def _api_getFile(self, params: dict[str, Any], files: dict[str, Any]) -> Any:
        self._need(params, "file_id")
        path = next((p for p in self._files if p.endswith("/" + params["file_id"])), None)
        if path is None:
            raise ApiError(400, "Bad Request: invalid file_id")
        return {"file_id": params["file_id"], "file_unique_id": params["file_id"], "file_size": len(self._files[path]),
                "file_path": path}

    def _api_answerCallbackQuery(self, params: dict[str, Any], files: dict[str, Any]) -> Any:
        self._need(params, "callback_query_id")
        query_id = params["callback_query_id"]
        if self._callbacks.get(query_id, True):  # unknown, or answered already
            raise ApiError(400, "Bad Request: query is too old and response timeout expired or query ID is invalid")
        if len(params.get("text") or "") > 200:
            raise ApiError(400, "Bad Request: MESSAGE_TOO_LONG")
        self._callbacks[query_id] = True
        return True

    def _api_answerInlineQuery(self, params: dict[str, Any], files: dict[str, Any]) -> Any:
        self._need(params, "inline_query_id", "results")
        query_id = params["inline_query_id"]
        if self._inline.get(query_id, True):
            raise ApiError(400, "Bad Request: query is too old and response timeout expired or query ID is invalid")
        results = params["results"]
        if len(results) > 50:
            raise ApiError(400, "Bad Request: RESULTS_TOO_MUCH")
        ids = [r.get("id", "") for r in results]
        if len(set(ids)) != len(ids) or not all(1 <= len(i.encode()) <= 64 for i in ids):
            raise ApiError(400, "Bad Request: RESULT_ID_INVALID")
        for result in results:
            if result.get("type") == "article" and not result.get("title"):
                raise ApiError(400, "Bad Request: RESULT_TITLE_EMPTY")
            content = result.get("input_message_content") or {}
            parse_text(content.get("message_text"), content.get("parse_mode"), content.get("entities"))
            check_markup(result.get("reply_markup"))
        self._inline[query_id] = True
        return True

    @staticmethod
    def _need(params: dict[str, Any], *names: str) -> None:
        for name in names:
            if params.get(name) in (None, ""):
                raise ApiError(400, f"Bad Request: {name} is empty")

    # -- what the test does ------------------------------------------------------------------------
    def fail_next(self, method: str, code: int = 429, description: str = "Too Many Requests: retry after 1",
                  retry_after: int | None = 1) -> None:
        """The next call of `method` fails with this error (a flood limit by default)."""
        with self._cond:
            self._failures.append((method, ApiError(code, description, retry_after)))

    def drop_next(self, method: str) -> None:
        """The next call of `method` gets its connection closed without an answer."""
        self.fail_next(method, code=DROP, description="connection dropped", retry_after=None)

    def _push(self, **update: Any) -> dict[str, Any]:
        with self._cond:
            update = {"update_id": next(self._update_ids), **update}
            self._updates.append(update)
            self._cond.notify_all()
        return update

    @staticmethod
    def user(user_id: int) -> dict[str, Any]:
        return {"id": user_id, "is_bot": False, "first_name": f"User{user_id}", "language_code": "en"}

    def _incoming(self, user_id: int, chat_id: int | None, **fields: Any) -> dict[str, Any]:
        chat = chat_id if chat_id is not None else user_id
        return {"message_id": next(self._ids), "date": int(time.time()), "from": self.user(user_id),
                "chat": {"id": chat, "type": "private" if chat > 0 else "group", "first_name": f"User{user_id}"},
                **fields}

    def push(self, **update: Any) -> dict[str, Any]:
        """Any update as Telegram sends it (`edited_message=...`, `channel_post=...`, `poll_answer=...`)."""
        return self._push(**update)

    def message_from(self, user_id: int, chat_id: int | None = None, **fields: Any) -> dict[str, Any]:
        """A message object from `user_id` with `fields` (text, caption, document, photo...), for `push`."""
        return self._incoming(user_id, chat_id, **fields)

    def send_text(self, user_id: int, text: str, chat_id: int | None = None) -> dict[str, Any]:
        fields: dict[str, Any] = {"text": text}
        if text.startswith("/"):
            fields["entities"] = [{"type": "bot_command", "offset": 0, "length": utf16(text.split()[0])}]
        return self._push(message=self._incoming(user_id, chat_id, **fields))

    def send_voice(self, user_id: int, data: bytes, duration: int, chat_id: int | None = None) -> dict[str, Any]:
        file_id = f"voice{next(self._ids)}"
        self._files[f"voice/{file_id}.oga"] = data
        voice = {"file_id": f"{file_id}.oga", "file_unique_id": file_id, "duration": duration,
                 "mime_type": "audio/ogg", "file_size": len(data)}
        return self._push(message=self._incoming(user_id, chat_id, voice=voice))

    def press(self, user_id: int, message: dict[str, Any], data: str) -> str:
        """A button press on one of the bot's messages; returns the callback query id."""
        query_id = f"cb{next(self._ids)}"
        with self._cond:
            self._callbacks[query_id] = False
        self._push(callback_query={"id": query_id, "from": self.user(user_id), "message": message,
                                   "chat_instance": "ci1", "data": data})
        return query_id

    def inline_query(self, user_id: int, query: str) -> str:
        query_id = f"iq{next(self._ids)}"
        with self._cond:
            self._inline[query_id] = False
        self._push(inline_query={"id": query_id, "from": self.user(user_id), "query": query, "offset": "",
                                 "chat_type": "sender"})
        return query_id

    # -- what the test checks -----------------------------------------------------------------------
    def mark(self) -> int:
        with self._cond:
            return len(self.calls)

    def since(self, mark: int, method: str | None = None) -> list[Call]:
        with self._cond:
            return [c for c in self.calls[mark:] if method is None or c.method == method]

    def wait_for(self, predicate: Callable[[list[Call]], bool], mark: int = 0, timeout: float = 20.0) -> list[Call]:
        """Blocks until `predicate(calls since mark)` holds; the calls. A generous limit, only against hangs."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while not predicate(self.calls[mark:]):
                left = deadline - time.monotonic()
                if left <= 0:
                    shown = "\n".join(f"  {c.method} ok={c.ok} {c.error} {c.text[:80]!r}" for c in self.calls[mark:])
                    raise AssertionError(f"the bot did not do what was expected; it did:\n{shown}")
                self._cond.wait(left)
            return list(self.calls[mark:])

    def wait_messages(self, count: int, mark: int, chat_id: int | None = None, timeout: float = 20.0) -> list[Call]:
        """The first `count` successful sendMessage/sendDocument calls since `mark` (to `chat_id`)."""
        def sent(calls: list[Call]) -> list[Call]:
            return [c for c in calls if c.ok and c.method in ("sendMessage", "sendDocument")
                    and (chat_id is None or c.chat_id == chat_id)]
        return sent(self.wait_for(lambda calls: len(sent(calls)) >= count, mark, timeout))[:count]

    def unanswered_callback(self, query_id: str) -> bool:
        with self._cond:
            return not self._callbacks.get(query_id, False)

    def file(self, call: Call) -> tuple[str, bytes]:
        return call.files["document"]


def ogg_opus_seconds(data: bytes) -> float:
    """The length of an OGG/Opus file, decoded whole; ApiError 400 for anything else, as Telegram."""
    import io

    import av

    try:
        with av.open(io.BytesIO(data), mode="r") as container:
            streams = container.streams.audio
            if container.format.name != "ogg" or not streams or streams[0].codec_context.name != "opus":
                raise ApiError(400, "Bad Request: VOICE_MESSAGE_INVALID: not OGG/Opus")
            samples = sum(frame.samples for frame in container.decode(streams[0]))
            rate = streams[0].codec_context.sample_rate
    except av.FFmpegError:
        raise ApiError(400, "Bad Request: VOICE_MESSAGE_INVALID: cannot decode") from None
    if not samples:
        raise ApiError(400, "Bad Request: VOICE_MESSAGE_INVALID: no sound")
    return samples / rate


def html_text(source: str) -> str:
    """The text a reader sees for an HTML message (what the fake would store)."""
    return parse_html(source)[0]


# --- running the bot ----------------------------------------------------------------------------------


class BotThread:
    """The bot's real Application (as `eywa.bot.app.build_application` makes it) polling the fake from a thread
    with its own event loop, the way `run_polling` would, with a short poll timeout."""

    def __init__(self, app: Any, poll_timeout: float = 1.0) -> None:
        self.app = app
        self.poll_timeout = poll_timeout
        self.loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="eywa-bot", daemon=True)

    def _run(self) -> None:
        from eywa.bot.app import start

        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_until_complete(start(self.app, poll_timeout=self.poll_timeout))
        except BaseException as exc:
            self._error = exc
            self._ready.set()
            self.loop.close()
            return
        self._ready.set()
        self.loop.run_forever()
        self.loop.run_until_complete(self.loop.shutdown_default_executor())  # the ingest worker threads
        self.loop.close()

    def start(self) -> BotThread:
        self._thread.start()
        self._ready.wait(30)
        if self._error is not None:
            raise self._error
        return self

    def run(self, coroutine: Any, timeout: float = 30.0) -> Any:
        """Runs a coroutine on the bot's loop (e.g. a job's callback) and returns its result."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    def stop(self) -> None:
        from eywa.bot.app import stop

        try:
            self.run(stop(self.app))
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(30)

    def __enter__(self) -> BotThread:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@dataclass
class Owner:
    """Sugar for tests: what one user does and what they get back."""

    fake: FakeTelegram
    user_id: int

    def says(self, text: str, replies: int = 1, chat_id: int | None = None) -> list[Call]:
        mark = self.fake.mark()
        self.fake.send_text(self.user_id, text, chat_id)
        return self.fake.wait_messages(replies, mark, chat_id if chat_id is not None else self.user_id)

    def presses(self, call: Call, data: str, replies: int = 1) -> tuple[str, list[Call]]:
        mark = self.fake.mark()
        query_id = self.fake.press(self.user_id, call.result, data)
        return query_id, self.fake.wait_messages(replies, mark, self.user_id) if replies else []


def button(call: Call, label: str) -> str:
    """The callback data of the button labelled `label` under a message."""
    for candidate in call.buttons:
        if candidate["text"] == label:
            return candidate["callback_data"]
    raise AssertionError(f"no button {label!r} under {call.text[:60]!r}: {[b['text'] for b in call.buttons]}")


def bot_settings(fake: FakeTelegram, data_dir: Path, projects_dir: Path, **telegram: Any) -> Any:
    """Settings for a bot that talks to `fake`; scheduled work off unless asked for."""
    from eywa.core.config.settings import load_settings

    values = {"token": fake.token, "allowed_user_ids": [42], "api_base_url": fake.base_url,
              "file_base_url": fake.base_file_url, "ingest_every_minutes": 0, "digest_time": "", **telegram}
    return load_settings(data_dir=data_dir, projects_dir=projects_dir, telegram=values)


class StubTranscriber:
    """Stands in for bot/speech/transcribe.py: records what it was given, answers `reply` (text, or a whole
    `eywa.bot.speech.hearing.Hearing` with what was heard before correction and word probabilities; or raises it)."""

    def __init__(self) -> None:
        self.reply: Any = ""
        self.calls: list[tuple[bytes, list[str]]] = []

    def __call__(self, ogg: bytes, hotwords: list[str]) -> Any:
        from eywa.bot.speech.hearing import Hearing

        self.calls.append((ogg, hotwords))
        if isinstance(self.reply, BaseException):
            raise self.reply
        return self.reply if isinstance(self.reply, Hearing) else Hearing(self.reply, raw=self.reply)
