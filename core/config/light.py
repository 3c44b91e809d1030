"""The few settings the Claude Code hooks and `eywa get` need, read without pydantic.

A hook runs as a fresh process on every session start and end; `eywa.core.config.settings` costs about 0.45 s of
imports (pydantic_settings), more than the whole hook may take. This reader follows the same
precedence as `eywa.core.config.settings.load_settings` (`EYWA_*` environment > YAML file > defaults, the file being
`--config`, else `$EYWA_CONFIG`, else `~/.eywa/config.yaml` when it exists) for the keys it reads, and
tests/test_light_config.py proves that both agree. It validates only those keys; anything it cannot
read is a `LightConfigError`, and a hook that gets one stays silent (fail open).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from eywa.core.config.errors import LightConfigError
from eywa.core.sources import KINDS, Source, resolve_sources

# No dataclasses, typing, zoneinfo or datetime at import: together ~30 ms of the hook's ~100 ms.
TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from zoneinfo import ZoneInfo

ENV_PREFIX = "EYWA_"
CONFIG_ENV = "EYWA_CONFIG"
DEFAULT_CONFIG_PATH = Path("~/.eywa/config.yaml")
PENDING_DIRNAME = "pending"
RETRIEVAL_MODES = ("keywords", "hybrid")


class LightSettings:
    __slots__ = ("data_dir", "projects_dir", "timezone", "days_back", "max_handoffs", "mode", "all_sources",
                 "aliases", "hub_url", "hub_token", "hub_timeout", "push_hub", "push_on_session_end", "config_path")

    def __init__(self, data_dir: Path, projects_dir: Path, timezone: str = "UTC", days_back: int = 14,
                 max_handoffs: int = 3, mode: str = "hybrid", all_sources: tuple[Source, ...] = (),
                 aliases: dict[str, str] | None = None, hub_url: str = "", hub_token: str = "",
                 hub_timeout: float = 1.5, push_hub: str = "", push_on_session_end: bool = False,
                 config_path: Path | None = None) -> None:
        self.data_dir = data_dir
        self.projects_dir = projects_dir
        self.timezone = timezone
        self.days_back = days_back
        self.max_handoffs = max_handoffs
        self.mode = mode
        self.all_sources = all_sources or resolve_sources([], projects_dir)
        self.aliases = aliases or {}  # projects.aliases
        self.hub_url = hub_url  # mcp.hub_url: a spoke's SessionStart asks the hub there
        self.hub_token = hub_token  # mcp.token
        self.hub_timeout = hub_timeout  # mcp.hub_timeout_seconds
        self.push_hub = push_hub  # push.hub
        self.push_on_session_end = push_on_session_end  # push.on_session_end
        self.config_path = config_path  # the file named by --config, for a command the hook starts

    def __repr__(self) -> str:
        return "LightSettings(" + ", ".join(f"{k}={getattr(self, k)!r}" for k in self.__slots__
                                            if k != "hub_token") + ")"

    @property
    def db_path(self) -> Path:
        return self.data_dir / "index.sqlite3"

    @property
    def pending_dir(self) -> Path:
        return self.data_dir / PENDING_DIRNAME

    @property
    def live_dir(self) -> Path:
        return self.data_dir / "live"

    @property
    def zone(self) -> ZoneInfo:
        """The time zone; raises `LightConfigError` for a name that is not one (checked here, lazily)."""
        from zoneinfo import ZoneInfo

        try:
            return ZoneInfo(self.timezone)
        except (ValueError, OSError, KeyError) as exc:
            raise LightConfigError(f"unknown time zone {self.timezone!r}") from exc


def _env() -> dict[str, str]:
    # pydantic-settings matches EYWA_* names case-insensitively.
    return {name.upper(): value for name, value in os.environ.items() if name.upper().startswith(ENV_PREFIX)}


def _config_file(config_path: Path | None) -> Path | None:
    if config_path is not None:
        path = Path(config_path).expanduser()
    elif os.environ.get(CONFIG_ENV, "").strip():
        path = Path(os.environ[CONFIG_ENV].strip()).expanduser()
    else:
        default = DEFAULT_CONFIG_PATH.expanduser()
        return default if default.is_file() else None
    if not path.is_file():
        raise LightConfigError(f"config file {path} does not exist or is not a file")
    return path


def _yaml(path: Path) -> dict[str, object]:
    import yaml  # only when a config file exists

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.MarkedYAMLError as exc:  # one line, as eywa.core.config.settings words it
        mark = exc.problem_mark or exc.context_mark
        where = f", line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = ": ".join(str(part) for part in (exc.context, exc.problem) if part)
        raise LightConfigError(f"YAML syntax error in {path}{where}: {problem or exc}") from None
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise LightConfigError(f"cannot read config file {path}: {exc}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise LightConfigError(f"config file {path} is not a mapping")
    return data


def _path(value: object, key: str) -> Path:
    if not isinstance(value, str | os.PathLike) or not str(value).strip():
        raise LightConfigError(f"{key} must be a non-empty path")
    return Path(value).expanduser()


def _int(value: object, key: str, low: int, high: int | None = None, origin: str | None = None) -> int:
    given = f"invalid configuration: {key} = {value!r}" + (f" (from {origin})" if origin else "")
    not_int = LightConfigError(f"{given}: must be an integer")
    if isinstance(value, bool):
        raise not_int
    try:
        number = int(str(value).strip()) if isinstance(value, str) else int(value)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        raise not_int from None
    if isinstance(value, float) and value != number:
        raise not_int
    if number < low or (high is not None and number > high):
        allowed = f"{low} to {high}" if high is not None else f"at least {low}"
        raise LightConfigError(f"{given}: must be {allowed}")
    return number


def _section(data: dict[str, object], env: dict[str, str], name: str) -> dict[str, object]:
    """A section of the YAML file with its `EYWA_<SECTION>__<KEY>` variables over it."""
    section = data.get(name) or {}
    if not isinstance(section, dict):
        raise LightConfigError(f"{name} must be a mapping")
    section = dict(section)
    prefix = f"{ENV_PREFIX}{name.upper()}__"
    for variable, value in env.items():
        if variable.startswith(prefix):
            section[variable.removeprefix(prefix).lower()] = value
    return section


def _bool(value: object, key: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on", "y", "t"):
        return True
    if text in ("0", "false", "no", "off", "n", "f"):
        return False
    raise LightConfigError(f"invalid configuration: {key} = {value!r}: must be true or false")


def _aliases(value: object) -> dict[str, str]:
    if isinstance(value, str):  # from the environment: JSON, as pydantic-settings reads it
        try:
            value = json.loads(value)
        except ValueError:
            raise LightConfigError("EYWA_PROJECTS__ALIASES is not JSON") from None
    if not isinstance(value, dict):
        raise LightConfigError("projects.aliases must be a mapping of names or folders to project names")
    return {str(key): str(name) for key, name in value.items()}


def _sources(value: object, origin: str) -> list[tuple[str, Path | None, bool]]:
    """The `sources` list as eywa.core.config.settings validates it: kind, optional path, enabled."""
    if value is None:
        return []
    if isinstance(value, str):  # from EYWA_SOURCES: JSON, as pydantic-settings reads a list
        try:
            value = json.loads(value)
        except ValueError:
            raise LightConfigError(f"{origin} is not JSON") from None
    if not isinstance(value, list):
        raise LightConfigError(f"invalid configuration: sources (from {origin}) must be a list")
    listed = []
    for number, item in enumerate(value):
        where = f"invalid configuration: sources[{number}] (from {origin})"
        if not isinstance(item, dict) or set(item) - {"kind", "path", "enabled"}:
            raise LightConfigError(f"{where}: must be a mapping of kind, path and enabled")
        if item.get("kind") not in KINDS:
            raise LightConfigError(f"{where}: kind must be one of {', '.join(KINDS)}")
        path = item.get("path")
        enabled = item.get("enabled", True)
        if not isinstance(enabled, bool):
            raise LightConfigError(f"{where}: enabled must be true or false")
        listed.append((str(item["kind"]), None if path is None else _path(path, f"sources[{number}].path"), enabled))
    return listed


def light_settings(config_path: Path | None = None) -> LightSettings:
    """data_dir, projects_dir, timezone and the retrieval window, as `load_settings` would give them."""
    env = _env()
    path = _config_file(config_path)
    data = _yaml(path) if path is not None else {}
    retrieval = data.get("retrieval") or {}
    if not isinstance(retrieval, dict):
        raise LightConfigError("retrieval must be a mapping")
    retrieval = dict(retrieval)
    origins = dict.fromkeys(retrieval, str(path))  # where each value came from, for error messages
    if f"{ENV_PREFIX}RETRIEVAL" in env:  # a whole section as JSON, merged like pydantic-settings does
        try:
            section = json.loads(env[f"{ENV_PREFIX}RETRIEVAL"])
        except ValueError:
            raise LightConfigError("EYWA_RETRIEVAL is not JSON") from None
        if not isinstance(section, dict):
            raise LightConfigError("EYWA_RETRIEVAL is not a JSON object")
        retrieval.update(section)
        origins.update(dict.fromkeys(section, f"{ENV_PREFIX}RETRIEVAL"))
    for key in ("days_back", "max_handoffs", "mode"):
        name = f"{ENV_PREFIX}RETRIEVAL__{key.upper()}"
        if name in env:
            retrieval[key] = env[name]
            origins[key] = name

    def top(key: str, default: object) -> object:
        name = ENV_PREFIX + key.upper()
        return env[name] if name in env else data.get(key, default)

    mode = retrieval.get("mode", "hybrid")
    if mode not in RETRIEVAL_MODES:
        raise LightConfigError(f"invalid configuration: retrieval.mode = {mode!r}: use 'keywords' or 'hybrid'")
    timezone = top("timezone", "UTC")
    if not isinstance(timezone, str) or not timezone:
        raise LightConfigError("timezone must be a time zone name")
    mcp, push = _section(data, env, "mcp"), _section(data, env, "push")
    try:
        hub_timeout = float(mcp.get("hub_timeout_seconds", 1.5))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise LightConfigError("mcp.hub_timeout_seconds must be a number") from None
    projects_dir = _path(top("projects_dir", "~/.claude/projects"), "projects_dir")
    sources_origin = f"{ENV_PREFIX}SOURCES" if f"{ENV_PREFIX}SOURCES" in env else str(path)
    return LightSettings(
        data_dir=_path(top("data_dir", "~/.eywa"), "data_dir"),
        projects_dir=projects_dir,
        timezone=timezone,
        days_back=_int(retrieval.get("days_back", 14), "retrieval.days_back", 1, origin=origins.get("days_back")),
        max_handoffs=_int(retrieval.get("max_handoffs", 3), "retrieval.max_handoffs", 1, 5,
                          origin=origins.get("max_handoffs")),
        mode=str(mode),
        all_sources=resolve_sources(_sources(top("sources", None), sources_origin), projects_dir),
        aliases=_aliases(_section(data, env, "projects").get("aliases", {})),
        hub_url=str(mcp.get("hub_url") or ""),
        hub_token=str(mcp.get("token") or "").strip(),
        hub_timeout=hub_timeout,
        push_hub=str(push.get("hub") or ""),
        push_on_session_end=_bool(push.get("on_session_end", False), "push.on_session_end"),
        config_path=config_path,
    )
