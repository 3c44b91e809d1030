"""A corpus of Claude Code transcripts seeded with fake secrets, for proving that none leaves Eywa.

Every secret is realistic in shape (prefix, alphabet, length) but made at runtime from a seeded random
generator, so the repository holds no literal a secret scanner would flag, and the same seed gives the
same corpus. Each kind of secret is planted once per placement (user text, assistant text, tool input,
tool output, file contents, URL, and the rarer channels: slash-command arguments, `!` shell input,
titles, summaries, subagent prompts, to-dos, API errors), each with a value of its own, so a leak names
both. A session of near-misses (git SHAs, UUIDs, base64 image headers, hex digests, paths) holds text
that must come through untouched.

    python -m tests.secrets_corpus OUT_DIR [--seed N]   # writes OUT_DIR/<project>/<session>.jsonl
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import string
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ALNUM = string.ascii_letters + string.digits
B64URL = ALNUM + "-_"
UPPER_DIGITS = string.ascii_uppercase + string.digits
PROJECT = "-home-ana-src-quokka"
CWD = "/home/ana/src/quokka"
DAY = "2026-02-16"
PLACEMENTS = ("user-text", "assistant-text", "tool-input", "tool-output", "file-content", "url", "special")
# The rarer channels of a transcript; kind number i goes to channel i modulo their count.
SPECIAL_CHANNELS = ("command-args", "bash-input", "ai-title", "summary", "subagent-prompt", "todo",
                    "api-error", "compaction-summary", "subagent-answer", "pr-link",
                    # what the session wrote or was shown outside its messages, read for the reasons it gives
                    "code-comment", "github-reply", "pr-body", "pasted-review")


@dataclass(frozen=True)
class Made:
    """One secret: the value as written, its random parts (what must never be seen again), the text
    (a config line, header or command) and the URL it appears in (None: a key block has no URL form)."""

    value: str
    distinctive: tuple[str, ...]
    text: str
    url: str | None


@dataclass(frozen=True)
class Seed:
    kind: str
    placement: str
    channel: str  # how it was placed within the placement (e.g. Write content, Read result)
    session_id: str
    made: Made

    @property
    def label(self) -> str:
        return f"{self.kind} in {self.placement} ({self.channel})"


@dataclass
class SecretsCorpus:
    seeds: list[Seed] = field(default_factory=list)
    near_misses: list[str] = field(default_factory=list)  # texts that must survive intact
    near_miss_session: str = ""
    files: list[Path] = field(default_factory=list)

    @property
    def session_ids(self) -> list[str]:
        return list(dict.fromkeys(s.session_id for s in self.seeds)) + [self.near_miss_session]


def body(rng: random.Random, length: int, alphabet: str = ALNUM) -> str:
    """Random characters; with at least one letter and one digit when the alphabet has both (generated
    keys do)."""
    mixed = any(c.isdigit() for c in alphabet) and any(c.isalpha() for c in alphabet)
    while True:
        text = "".join(rng.choice(alphabet) for _ in range(length))
        if not mixed or (any(c.isdigit() for c in text) and any(c.isalpha() for c in text)):
            return text


def _b64url_json(data: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data, separators=(",", ":")).encode()).decode().rstrip("=")


# --- the kinds ----------------------------------------------------------------------------------------
# Prefixes are split ("sk-" + "ant-") so that no scanner flags this file.


def _prefixed(prefix: str, length: int, line: str, url: str, alphabet: str = ALNUM) -> Callable[[random.Random], Made]:
    """The common kind: a fixed prefix, then random characters; `line` and `url` say it ({v})."""

    def make(r: random.Random) -> Made:
        b = body(r, length, alphabet)
        v = prefix + b
        return Made(v, (b,), line.format(v=v), url.format(v=v))

    return make


def _anthropic(r: random.Random) -> Made:
    b = body(r, 93, B64URL)
    v = "sk-" + "ant-api03-" + b + "AA"
    return Made(v, (b,), f"ANTHROPIC_API_KEY={v}", f"https://llm-proxy.internal/v1/messages?key={v}")




def _github_fine_grained(r: random.Random) -> Made:
    a, b = body(r, 22), body(r, 59)
    v = "github_" + "pat_" + a + "_" + b
    return Made(v, (a, b), f"export GITHUB_TOKEN={v}", f"https://ana:{v}@github.com/ana/private-infra.git")



def _aws_secret(r: random.Random) -> Made:
    v = body(r, 40, ALNUM + "/+")
    return Made(v, (v,), f"aws_secret_access_key = {v}",
                f"https://quokka.s3.amazonaws.com/report.csv?aws_secret_access_key={v}")


def _slack_token(r: random.Random) -> Made:
    b = body(r, 24)
    v = "xo" + "xb-" + body(r, 12, string.digits) + "-" + body(r, 13, string.digits) + "-" + b
    return Made(v, (v[5:],), f'SLACK_BOT_TOKEN="{v}"', f"https://slack.com/api/chat.postMessage?token={v}&channel=C01")


def _slack_webhook(r: random.Random) -> Made:
    b = body(r, 24)
    path = "T" + body(r, 8, UPPER_DIGITS) + "/B" + body(r, 8, UPPER_DIGITS) + "/" + b
    url = "https://hooks.slack.com/" + "services/" + path
    return Made(path, (b,), f"SLACK_WEBHOOK_URL={url}", url)




def _telegram(r: random.Random) -> Made:
    b = body(r, 33, B64URL)
    v = str(r.randrange(10**8, 10**10)) + ":" + "AA" + b
    return Made(v, (b,), f"TELEGRAM_BOT_TOKEN={v}", f"https://api.telegram.org/bot{v}/getMe")


def _jwt(r: random.Random) -> Made:
    payload = _b64url_json({"sub": body(r, 24), "name": "Ana", "iat": 1771200000})
    signature = body(r, 43, B64URL)
    v = _b64url_json({"alg": "HS256", "typ": "JWT"}) + "." + payload + "." + signature
    return Made(v, (payload[12:], signature), f"Cookie: session={v}",
                f"https://app.example.com/auth/callback#access_token={v}&token_type=bearer")


def _bearer(r: random.Random) -> Made:
    v = body(r, 40, B64URL)
    return Made(v, (v,), f'curl -H "Authorization: Bearer {v}" https://api.example.com/v1/me',
                f"https://api.example.com/v1/me?access_token={v}")


def _basic_auth(r: random.Random) -> Made:
    password = body(r, 20)
    v = base64.b64encode(f"deploy:{password}".encode()).decode()
    return Made(v, (v[8:], password), f"Authorization: Basic {v}",
                f"https://deploy:{password}@ci.example.com/job/quokka/build")


def _key_lines(r: random.Random, width: int = 64) -> list[str]:
    return [body(r, width, ALNUM + "+/") for _ in range(6)] + [body(r, 24, ALNUM + "+/") + "=="]


def _pem(label: str, lines: list[str], indent: str = "") -> str:
    block = [f"-----BEGIN {label}-----", *lines, f"-----END {label}-----"]
    return "\n".join(indent + line for line in block)


def _whole(distinctive: tuple[str, ...], text: str) -> Made:
    """A kind whose value is its whole text (a key block has no shorter form, and no URL one)."""
    return Made(text, distinctive, text, None)


def _private_key(r: random.Random) -> Made:
    lines = _key_lines(r)
    return _whole(tuple(lines), _pem("RSA PRIVATE KEY", lines))


# A key block as the value of a secret-looking name: the assignment rule and the key block rule both
# match, and neither may hide the other (the block's body lines must go too).
def _pem_aws_secret(r: random.Random) -> Made:
    lines = _key_lines(r)
    return _whole(tuple(lines), "aws_secret_access_key = " + _pem("RSA PRIVATE KEY", lines))


def _pem_password_colon(r: random.Random) -> Made:
    lines = _key_lines(r, 70)
    return _whole(tuple(lines), "password: " + _pem("OPENSSH PRIVATE KEY", lines))


def _pem_env_line(r: random.Random) -> Made:
    lines = _key_lines(r)
    return _whole(tuple(lines), "DEPLOY_PASSWORD=" + _pem("EC PRIVATE KEY", lines) + "\n"
                  "JWT_PRIVATE_KEY=" + _pem("PRIVATE KEY", lines[::-1]))


def _pem_json(r: random.Random) -> Made:
    """A service-account file: the key is a JSON string with its newlines escaped."""
    lines = _key_lines(r)
    account = {"type": "service_account", "project_id": "quokka-prod",
               "private_key_id": body(r, 40, "0123456789abcdef"), "private_key": _pem("PRIVATE KEY", lines) + "\n",
               "client_email": "exporter@quokka-prod.iam.example"}
    return _whole(tuple(lines), json.dumps(account, indent=2) + "\n"
                  + json.dumps({"password": _pem("RSA PRIVATE KEY", lines[::-1])}))


def _pem_yaml(r: random.Random) -> Made:
    """YAML block scalars: an OpenSSH key under `ssh_key: |`, a PGP key under `password: |-`."""
    ssh, pgp = _key_lines(r, 70), _key_lines(r)
    pgp_block = ["Version: GnuPG v2", "", *pgp, "=" + body(r, 4, ALNUM)]
    text = ("deploy:\n  ssh_key: |\n" + _pem("OPENSSH PRIVATE KEY", ssh, "    ") + "\n  signing:\n"
            "    password: |-\n" + _pem("PGP PRIVATE KEY BLOCK", pgp_block, "      "))
    return _whole((*ssh, *pgp), text)


def _url_password(r: random.Random) -> Made:
    v = body(r, 20)
    url = f"postgres://quokka:{v}@db.internal:5432/quokka"
    return Made(v, (v,), f"DATABASE_URL={url}", url)


def _password_assignment(r: random.Random) -> Made:
    v = body(r, 14) + "!" + body(r, 5)
    return Made(v, (v,), f"password={v}", f"https://intranet.example.com/login?user=ana&password={v}")


def _secret_assignment(r: random.Random) -> Made:
    v = body(r, 32)
    return Made(v, (v,), f"client_secret: {v}",
                f"https://oauth.example.com/token?client_id=quokka&client_secret={v}")


def _env_line(r: random.Random) -> Made:
    v = body(r, 32)
    return Made(v, (v,), f"DB_PASSWORD={v}\nJWT_SIGNING_KEY={v[::-1]}",
                f"https://config.internal/render?DB_PASSWORD={v}")





KINDS: dict[str, Callable[[random.Random], Made]] = {
    "anthropic-key": _anthropic,
    "openai-key": _prefixed("sk-" + "proj-", 156, 'client = OpenAI(api_key="{v}")',
                            "https://api.example.com/chat?openai_key={v}", B64URL),
    "github-classic": _prefixed("gh" + "p_", 36, "gh auth login --with-token <<< {v}",
                                "https://x-access-token:{v}@github.com/ana/quokka.git"),
    "github-fine-grained": _github_fine_grained,
    "aws-access-key": _prefixed("AK" + "IA", 16, "aws_access_key_id = {v}", "https://quokka.s3.amazonaws.com/"
                                "report.csv?X-Amz-Credential={v}%2F20260216%2Fus-east-1%2Fs3", UPPER_DIGITS),
    "aws-secret-key": _aws_secret,
    "slack-token": _slack_token,
    "slack-webhook": _slack_webhook,
    "google-api-key": _prefixed("AI" + "za", 35, "GOOGLE_API_KEY={v}",
                                "https://maps.googleapis.com/maps/api/geocode/json?address=Berlin&key={v}", B64URL),
    # Stripe's own docs use the key as the user name of basic auth, with an empty password
    "stripe-key": _prefixed("sk_" + "live_", 99, "stripe.api_key = '{v}'", "https://{v}:@api.stripe.com/v1/charges"),
    "telegram-bot-token": _telegram,
    "jwt": _jwt,
    "bearer-header": _bearer,
    "basic-auth-header": _basic_auth,
    "pem-private-key": _private_key,
    "pem-aws-secret-assignment": _pem_aws_secret,
    "pem-password-colon": _pem_password_colon,
    "pem-env-lines": _pem_env_line,
    "pem-json-escaped": _pem_json,
    "pem-yaml-block-scalar": _pem_yaml,
    "url-password": _url_password,
    "password-assignment": _password_assignment,
    "secret-assignment": _secret_assignment,
    "env-line": _env_line,
    "gitlab-token": _prefixed("glpat" + "-", 20, "GITLAB_TOKEN={v}", "https://oauth2:{v}@gitlab.com/ana/quokka.git"),
    "npm-token": _prefixed("npm" + "_", 36, "//registry.npmjs.org/:_authToken={v}",
                           "https://registry.npmjs.org/-/whoami?token={v}"),
    "huggingface-token": _prefixed("hf" + "_", 34, "HF_TOKEN={v}",
                                   "https://ana:{v}@huggingface.co/spaces/ana/quokka-demo"),
}

# A 1x1 PNG: what an image pasted into a prompt starts with.
PNG_1X1 = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==")


def near_misses(r: random.Random) -> list[str]:
    """Text that looks a little like a secret and is not one."""
    sha = "".join(r.choice("0123456789abcdef") for _ in range(40))
    digest = "".join(r.choice("0123456789abcdef") for _ in range(64))
    integrity = base64.b64encode(r.randbytes(64)).decode()
    return [
        f"commit {sha}",
        f"git checkout {sha[:12]} && git log -1 {sha[:7]}",
        f"session {uuid.UUID(int=r.getrandbits(128), version=4)}",
        f"request_id={uuid.UUID(int=r.getrandbits(128), version=4)}",
        f"![chart](data:image/png;base64,{PNG_1X1})",
        f"image: ghcr.io/ana/quokka@sha256:{digest}",
        f'"integrity": "sha512-{integrity}"',
        "mask = 0x7fffffffffffffff; color #1e90ff",
        f"{CWD}/src/auth/token_refresh.py:42",
        "~/.config/quokka/credentials.toml",
        "The token usage was 12,345 input tokens; the password field is validated on submit.",
        "Set password=$DB_PASSWORD and token: ${{ secrets.GITHUB_TOKEN }} in the workflow.",
        "AWS documents AKIAIOSFODNN7EXAMPLE as its example key id.",
        "Bearer authentication is the scheme; see RFC 6750.",
    ]


# --- transcript records -----------------------------------------------------------------------------


class _Session:
    """Builds one transcript in the Claude Code format (2.1.x), one record at a time."""

    def __init__(self, session_id: str, hour: int) -> None:
        self.id = session_id
        self.records: list[dict] = []
        self.subagents: dict[str, list[dict]] = {}
        self._n = 0
        self._hour = hour
        self._parent: str | None = None

    def _stamp(self) -> str:
        self._n += 1
        return f"{DAY}T{self._hour:02d}:{self._n // 60:02d}:{self._n % 60:02d}.000Z"

    def _base(self, kind: str) -> dict:
        uid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{self.id}/{len(self.records)}"))
        record = {"parentUuid": self._parent, "isSidechain": False, "userType": "external", "cwd": CWD,
                  "sessionId": self.id, "version": "2.1.37", "gitBranch": "ana/exporter", "type": kind,
                  "uuid": uid, "timestamp": self._stamp()}
        self._parent = uid
        return record

    def user(self, content: object, **extra: object) -> None:
        record = self._base("user")
        record["message"] = {"role": "user", "content": content}
        record.update(extra)
        self.records.append(record)

    def assistant(self, blocks: list[dict]) -> None:
        record = self._base("assistant")
        record["message"] = {"model": "claude-opus-4-6", "id": f"msg_{self.id[:8]}{len(self.records):04d}",
                             "type": "message", "role": "assistant", "content": blocks, "stop_reason": None,
                             "usage": {"input_tokens": 3, "output_tokens": 20}}
        record["requestId"] = f"req_{self.id[:8]}{len(self.records):04d}"
        self.records.append(record)

    def say(self, text: str) -> None:
        self.assistant([{"type": "text", "text": text}])

    def tool(self, name: str, tool_input: dict, result: str, *, is_error: bool = False,
             structured: dict | None = None) -> None:
        tool_id = f"toolu_{self.id[:8]}{len(self.records):04d}"
        self.assistant([{"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}])
        self.user([{"tool_use_id": tool_id, "type": "tool_result", "content": result, "is_error": is_error}],
                  toolUseResult=structured if structured is not None else {"stdout": result, "stderr": "",
                                                                            "interrupted": False})

    def line(self, record: dict) -> None:
        self.records.append(record)

    def system(self, subtype: str, **fields: object) -> None:
        record = self._base("system")
        record.update(subtype=subtype, **fields)
        self.records.append(record)

    def write(self, projects: Path) -> list[Path]:
        folder = projects / PROJECT
        folder.mkdir(parents=True, exist_ok=True)
        main = folder / f"{self.id}.jsonl"
        main.write_text("".join(json.dumps(r) + "\n" for r in self.records), encoding="utf-8")
        paths = [main]
        for agent_id, records in self.subagents.items():
            sub = folder / self.id / "subagents" / f"agent-{agent_id}.jsonl"
            sub.parent.mkdir(parents=True, exist_ok=True)
            sub.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
            (sub.parent / f"agent-{agent_id}.meta.json").write_text(
                json.dumps({"agentType": "general-purpose", "description": "Check the deploy config"}))
            paths.append(sub)
        return paths


def _plant(s: _Session, placement: str, index: int, made: Made) -> str | None:
    """Puts one secret into the session where `placement` says; returns the channel used (None: this
    kind has no form for that placement)."""
    text = made.text
    if placement == "user-text":
        s.user(f"The deploy to staging fails with a 401. My config has:\n{text}\nWhat is wrong with it?")
        return "prompt"
    if placement == "assistant-text":
        s.say(f"The config sets\n\n{text}\n\nso the client authenticates with that; I'll check the endpoint next.")
        return "reply"
    if placement == "tool-input":
        if "\n" in text or index % 2:
            s.tool("Bash", {"command": f"cat >> config/local.env <<'EOF'\n{text}\nEOF",
                            "description": "Append the setting"}, "")
            return "Bash heredoc"
        s.tool("Bash", {"command": f"{text} && ./scripts/smoke.sh", "description": "Run the smoke test"},
               "smoke: 3 passed")
        return "Bash command"
    if placement == "tool-output":
        output = f"loading config/local.env\n{text}\nerror: 401 Unauthorized from api.example.com"
        s.tool("Bash", {"command": "./scripts/smoke.sh --verbose", "description": "Run the smoke test verbosely"},
               output, is_error=index % 2 == 1)
        return "Bash error" if index % 2 else "Bash output"
    if placement == "file-content":
        path = f"{CWD}/config/settings-{index}.env"
        content = f"# quokka settings\nLOG_LEVEL=debug\n{text}\n"
        if index % 3 == 0:
            s.tool("Write", {"file_path": path, "content": content}, f"File created successfully at: {path}",
                   structured={"type": "create", "filePath": path, "content": content})
            return "Write content"
        if index % 3 == 1:
            s.tool("Edit", {"file_path": path, "old_string": "LOG_LEVEL=debug",
                            "new_string": f"LOG_LEVEL=debug\n{text}", "replace_all": False},
                   f"The file {path} has been updated.",
                   structured={"filePath": path, "oldString": "LOG_LEVEL=debug", "newString": text,
                               "originalFile": content})
            return "Edit new_string"
        numbered = "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(content.splitlines(), 1))
        s.tool("Read", {"file_path": path}, numbered,
               structured={"type": "text", "file": {"filePath": path, "content": content, "numLines": 4}})
        return "Read result"
    if placement == "url":
        url = made.url
        if url is None:
            return None
        if index % 2:
            s.user(f"This link fails for me: {url} (it worked yesterday)")
            return "URL in prompt"
        s.tool("WebFetch", {"url": url, "prompt": "What does this endpoint return?"},
               f"Fetched {url}: 401 Unauthorized")
        return "WebFetch url"
    return _plant_special(s, SPECIAL_CHANNELS[index % len(SPECIAL_CHANNELS)], index, made)


def _plant_special(s: _Session, channel: str, index: int, made: Made) -> str:
    text = made.text.replace("\n", " ")
    if channel == "command-args":
        s.user(f"<command-name>/deploy</command-name>\n<command-message>deploy</command-message>\n"
               f"<command-args>--env staging {text}</command-args>")
    elif channel == "bash-input":
        s.user(f"<bash-input>{text} ./scripts/smoke.sh</bash-input>")
    elif channel == "ai-title":
        s.line({"type": "ai-title", "aiTitle": f"Fix staging auth with {text}", "sessionId": s.id})
    elif channel == "summary":
        s.line({"type": "summary", "summary": f"Staging deploy fixed by setting {text}", "leafUuid": s._parent})
    elif channel == "subagent-prompt":
        agent_id = f"a{index:016x}"
        prompt = f"Check the deploy config. It contains {text}; verify the endpoint accepts it."
        s.tool("Task", {"description": "Check the deploy config", "prompt": prompt, "subagent_type": "general-purpose"},
               "The endpoint accepts the key.",
               structured={"agentId": agent_id, "status": "completed", "totalDurationMs": 4000, "totalTokens": 900,
                           "totalToolUseCount": 1})
        s.subagents[agent_id] = _subagent_records(s.id, agent_id, prompt, "All good.")
    elif channel == "subagent-answer":
        agent_id = f"b{index:016x}"
        s.tool("Task", {"description": "Find the staging key", "prompt": "Find the key staging uses.",
                        "subagent_type": "general-purpose"}, f"Staging uses {text}",
               structured={"agentId": agent_id, "status": "completed", "totalDurationMs": 3000, "totalTokens": 700,
                           "totalToolUseCount": 1})
        s.subagents[agent_id] = _subagent_records(s.id, agent_id, "Find the key staging uses.",
                                                  f"Staging uses {text}")
    elif channel == "todo":
        todos = [{"content": f"Rotate {text}", "status": "pending", "activeForm": "Rotating the key"}]
        s.tool("TodoWrite", {"todos": todos}, "Todos have been modified successfully.")
    elif channel == "api-error":
        s.system("api_error", level="error", error={"message": f"upstream rejected credentials {text}"})
    elif channel == "compaction-summary":
        s.system("compact_boundary", compactMetadata={"trigger": "auto", "preTokens": 150000})
        s.user("This session is being continued from a previous conversation that ran out of context. "
               f"Summary: the user configured {text} for staging.", isCompactSummary=True)
    elif channel == "code-comment":
        path = f"{CWD}/quokka/exporter_{index}.py"
        s.tool("Edit", {"file_path": path, "old_string": "client = Client()",
                        "new_string": f"# Reads {text} from the environment because the vault is down in staging.\n"
                                      "client = Client()", "replace_all": False},
               f"The file {path} has been updated.")
    elif channel == "github-reply":
        s.tool("Bash", {"command": "gh api repos/ana/quokka/pulls/7/comments/9/replies "
                                   f"-f body=\"Kept {text} out of the logs on purpose, because the trade-off is "
                                   "worth it.\""},
               '{"id": 10}')
    elif channel == "pr-body":
        s.tool("Bash", {"command": "gh pr create --title \"Fix staging auth\" "
                                   f"--body \"Uses {text} instead of the old key, because the old one expired.\""},
               "https://github.com/ana/quokka/pull/8")
    elif channel == "pasted-review":
        path = f"{CWD}/quokka/client_{index}.py"
        s.user(f"Review comment on the client: it reads {text} at import time, which fails when the config is "
               "reloaded later in the process and the exporter keeps the stale value. Consider loading the "
               "credential lazily on first use so that a reload picks it up.")
        s.tool("Edit", {"file_path": path, "old_string": "TOKEN = load()",
                        "new_string": "def token():\n    return load()", "replace_all": False},
               f"The file {path} has been updated.")
    else:  # pr-link
        s.line({"type": "pr-link", "prUrl": made.url or f"https://github.com/ana/quokka/pull/7?t={made.value}",
                "sessionId": s.id})
    return channel


def _subagent_records(session_id: str, agent_id: str, prompt: str, answer: str) -> list[dict]:
    common = {"isSidechain": True, "agentId": agent_id, "sessionId": session_id, "cwd": CWD, "version": "2.1.37",
              "userType": "external"}
    return [
        {**common, "type": "user", "uuid": f"{agent_id}-1", "parentUuid": None,
         "timestamp": f"{DAY}T20:00:01.000Z", "message": {"role": "user", "content": prompt}},
        {**common, "type": "assistant", "uuid": f"{agent_id}-2", "parentUuid": f"{agent_id}-1",
         "timestamp": f"{DAY}T20:00:09.000Z",
         "message": {"model": "claude-haiku-4-5", "id": f"msg_{agent_id}", "role": "assistant",
                     "content": [{"type": "text", "text": answer}]}},
    ]


def _session_id(seed: int, name: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_DNS, f"secrets-corpus-{seed}-{name}"))


def write_corpus(projects: Path, seed: int = 7) -> SecretsCorpus:
    """Writes the corpus under `projects` (a Claude Code projects folder); what was planted where."""
    rng = random.Random(seed)
    corpus = SecretsCorpus()
    for hour, placement in enumerate(PLACEMENTS, start=13):
        s = _Session(_session_id(seed, placement), hour)
        s.user(f"Let's get the quokka exporter deploying to staging again ({placement} checks).")
        for index, (kind, make) in enumerate(KINDS.items()):
            made = make(rng)
            channel = _plant(s, placement, index, made)
            if channel is not None:
                corpus.seeds.append(Seed(kind, placement, channel, s.id, made))
        s.say("Staging deploys again: the exporter authenticates and the smoke test passes. "
              "Next: rotate every credential that was pasted here.")
        corpus.files.extend(s.write(projects))
    s = _Session(_session_id(seed, "near-misses"), 21)
    misses = near_misses(rng)
    s.user("Review these lines from the quokka release notes:\n" + "\n".join(misses[:7]))
    s.say("Looked at them:\n" + "\n".join(misses[7:]))
    s.user([{"type": "text", "text": "Here is the chart."},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_1X1}}])
    s.say("The chart shows the quokka exporter's latency flat after the fix.")
    corpus.files.extend(s.write(projects))
    corpus.near_misses = misses
    corpus.near_miss_session = s.id
    return corpus


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="a projects folder to write into")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    corpus = write_corpus(args.out, args.seed)
    kinds = {s.kind for s in corpus.seeds}
    print(f"{len(corpus.files)} files, {len(corpus.seeds)} secrets of {len(kinds)} kinds, "
          f"{len(corpus.near_misses)} near-misses under {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
