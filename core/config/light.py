"""The settings the Claude Code hooks and `eywa get` need, read without pydantic.

A hook runs as a fresh process on every session start and end, and importing `eywa.core.config.settings`
(pydantic_settings) costs more than the whole hook may take (bench/RESULTS.md). The keys, kinds, defaults and
bounds are not written here: they come from core/config/fields.py, generated from the settings model
(core/config/schema.py), so a key added to the model is readable here by construction. This reader follows the
same precedence as `load_settings` (`EYWA_*` environment > YAML file > defaults, the file being `--config`,
else `$EYWA_CONFIG`, else `~/.eywa/config.yaml` when it exists), and tests/test_light_config.py proves both
give every key alike. Anything it cannot read is a `LightConfigError`, and a hook that gets one stays silent
(fail open).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from eywa.core.config.fields import FIELDS
from eywa.core.errors import LightConfigError
from eywa.core.sources import KINDS, Source, resolve_sources

# No dataclasses, typing, zoneinfo or datetime at import: they weigh on a hook's start-up (bench/RESULTS.md).
TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from datetime import tzinfo

ENV_PREFIX = "EYWA_"
CONFIG_ENV = "EYWA_CONFIG"
DEFAULT_CONFIG_PATH = Path("~/.eywa/config.yaml")
PENDING_DIRNAME = "pending"


# LightSettings attribute -> settings key; every key is one of the generated FIELDS (a KeyError otherwise).
KEYS = {"data_dir": "data_dir", "projects_dir": "projects_dir", "timezone": "timezone",
        "days_back": "retrieval.days_back", "max_handoffs": "retrieval.max_handoffs", "mode": "retrieval.mode",
        "aliases": "projects.aliases", "hub_url": "mcp.hub_url", "hub_token": "mcp.token",
        "hub_timeout": "mcp.hub_timeout_seconds", "push_hub": "push.hub", "push_on_session_end": "push.on_session_end"}


class LightSettings:
    """The keys the hooks and `eywa get` use, by the names in KEYS; `value(key)` reads any other key."""

    __slots__ = (*KEYS, "all_sources", "config_path", "_reader")
    data_dir: Path
    projects_dir: Path
    timezone: str
    days_back: int | None
    max_handoffs: int
    mode: str
    aliases: dict[str, str]
    hub_url: str
    hub_token: str
    hub_timeout: float
    push_hub: str
    push_on_session_end: bool

    def __init__(self, reader: _Reader, config_path: Path | None = None) -> None:
        self._reader = reader
        for attribute, key in KEYS.items():
            setattr(self, attribute, reader.value(key))
        sources, origin = reader.raw("sources")  # checked entry by entry, with the model's messages
        self.all_sources: tuple[Source, ...] = resolve_sources(
            _sources(sources, origin) if origin else [], self.projects_dir)
        self.config_path = config_path  # the file named by --config, for a command the hook starts

    def value(self, key: str) -> object:
        """Any settings key (dotted, as in the YAML file), read and checked like `load_settings` reads it."""
        return self._reader.value(key)

    def __repr__(self) -> str:
        return "LightSettings(" + ", ".join(f"{k}={getattr(self, k)!r}" for k in self.__slots__
                                            if k not in ("hub_token", "_reader")) + ")"

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
    def zone(self) -> tzinfo:
        """The time zone; raises `LightConfigError` for a name that is not one (checked here, lazily). "UTC", the
        default, is datetime's own, with no `.key` (the renderer takes `Settings.zone`): `eywa get` and the hooks
        ask the zone today's date only, the same in either, and skip importing zoneinfo (bench/RESULTS.md)."""
        if self.timezone == "UTC":
            import datetime

            return datetime.UTC
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
    given = _given(key, value, origin)
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


def _bool(value: object, key: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on", "y", "t"):
        return True
    if text in ("0", "false", "no", "off", "n", "f"):
        return False
    raise LightConfigError(f"invalid configuration: {key} = {value!r}: must be true or false")


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


# A key's older names (settings.py's validation aliases), read when the key itself is not given.
_OLD_NAMES: dict[str, list[str]] = {}
for _name, _field in FIELDS.items():
    if "alias_of" in _field:
        _OLD_NAMES.setdefault(_field["alias_of"], []).append(_name)


class _Reader:
    """Settings keys by the model's precedence: `EYWA_<SECTION>__<KEY>` > `EYWA_<SECTION>` (JSON) > YAML > default."""

    def __init__(self, data: dict[str, object], env: dict[str, str], path: Path | None) -> None:
        self._data, self._env, self._path = data, env, path

    def raw(self, key: str) -> tuple[object, str | None]:
        """The value for `key` as given (under its name, else an older name of it), and where it came from
        (None: the default)."""
        value, origin = self._raw(key)
        for old in _OLD_NAMES.get(key, ()) if origin is None else ():
            given, where = self._raw(old)
            if where is not None:
                return given, where
        return value, origin

    def _raw(self, key: str) -> tuple[object, str | None]:
        parts = key.split(".")
        name = ENV_PREFIX + "__".join(parts).upper()
        if name in self._env:
            return self._env[name], name
        if len(parts) == 1:
            return (self._data[key], str(self._path)) if key in self._data else (FIELDS[key]["default"], None)
        section, leaf = parts
        whole = ENV_PREFIX + section.upper()
        if whole in self._env:  # a whole section as JSON, merged like pydantic-settings does
            try:
                given = json.loads(self._env[whole])
            except ValueError:
                raise LightConfigError(f"{whole} is not JSON") from None
            if not isinstance(given, dict):
                raise LightConfigError(f"{whole} is not a JSON object")
            if leaf in given:
                return given[leaf], whole
        mapping = self._data.get(section) or {}
        if not isinstance(mapping, dict):
            raise LightConfigError(f"{section} must be a mapping")
        return (mapping[leaf], str(self._path)) if leaf in mapping else (FIELDS[key]["default"], None)

    def given(self, sections: set[str]) -> list[tuple[str, object]]:
        """Every top-level key the file gives, with its value, then each top-level key and each of `sections` the
        environment names (a section as the mapping of the keys it gives there): what a whole check looks at.
        Other `EYWA_*` names are no settings (EYWA_CONFIG, EYWA_NOW); pydantic-settings passes them by too."""
        given: list[tuple[str, object]] = list(self._data.items())
        for name, text in self._env.items():
            section, _, leaf = name[len(ENV_PREFIX):].lower().partition("__")
            if section in FIELDS and not leaf:
                given.append((section, text))
            if section not in sections:
                continue
            if leaf:
                given.append((section, {leaf: text}))
                continue
            try:
                given.append((section, json.loads(text)))
            except ValueError:
                raise LightConfigError(f"{name} is not JSON") from None
        return given

    def value(self, key: str) -> object:
        field = FIELDS[key]
        value, origin = self.raw(key)
        if value is None and field.get("optional"):
            return None
        return _CHECKS[field["kind"]](value, key, field, origin)


def _given(key: str, value: object, origin: str | None) -> str:
    return f"invalid configuration: {key} = {value!r}" + (f" (from {origin})" if origin else "")


def _check_int(value: object, key: str, field: dict, origin: str | None) -> int:
    return _int(value, key, field.get("ge", -(2**63)), field.get("le"), origin=origin)


def _check_float(value: object, key: str, field: dict, origin: str | None) -> float:
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise LightConfigError(f"{_given(key, value, origin)}: must be a number") from None
    if ("ge" in field and number < field["ge"]) or ("gt" in field and number <= field["gt"]) \
            or ("le" in field and number > field["le"]):
        raise LightConfigError(f"{_given(key, value, origin)}: out of range")
    return number


def _check_choice(value: object, key: str, field: dict, origin: str | None) -> str:
    if value not in field["choices"]:
        allowed = " or ".join(repr(choice) for choice in field["choices"])
        raise LightConfigError(f"{_given(key, value, origin)}: use {allowed}")
    return str(value)


def _check_str(value: object, key: str, field: dict, origin: str | None) -> str:
    if not isinstance(value, str):
        raise LightConfigError(f"{_given(key, value, origin)}: must be text")
    if len(value) < field.get("min_length", 0):
        raise LightConfigError(f"{_given(key, value, origin)}: must not be empty")
    if "pattern" in field:
        import re  # only for the keys that have a pattern

        if not re.search(field["pattern"], value):
            raise LightConfigError(f"{_given(key, value, origin)}: must match {field['pattern']}")
    return value


def _check_item(item: object, kind: str) -> bool:
    if kind == "int":
        return isinstance(item, int) and not isinstance(item, bool) or isinstance(item, str) and item.strip().isdigit()
    if not isinstance(item, str):
        return False
    if kind == "regex":
        import re  # only for a config that lists patterns

        try:
            re.compile(item)
        except re.error:
            return False
    return True


def _check_json(value: object, key: str, field: dict, origin: str | None) -> object:
    if isinstance(value, str):  # from the environment: JSON, as pydantic-settings reads it
        try:
            value = json.loads(value)
        except ValueError:
            raise LightConfigError(f"{origin} is not JSON") from None
    wanted = dict if field["kind"] == "dict" else list
    if not isinstance(value, wanted):
        raise LightConfigError(f"{_given(key, value, origin)}: must be a {'mapping' if wanted is dict else 'list'}")
    items = value.values() if isinstance(value, dict) else value
    if "items" in field and not all(_check_item(item, field["items"]) for item in items):
        raise LightConfigError(f"{_given(key, value, origin)}: each item must be {field['items']}")
    return value


_CHECKS = {
    "int": _check_int, "float": _check_float, "choice": _check_choice, "str": _check_str,
    "secret": lambda value, key, field, origin: _check_str(value, key, field, origin).strip(),
    "path": lambda value, key, field, origin: _path(value, key),
    "bool": lambda value, key, field, origin: _bool(value, key),
    "list": _check_json, "dict": _check_json,
}


def check_every_key(settings: LightSettings) -> None:
    """Raise `LightConfigError` for any key `load_settings` would refuse: one it does not know (in the file, in
    an `EYWA_<SECTION>` JSON object or an `EYWA_<SECTION>__<KEY>` name) or a value of the wrong kind. The hooks
    read only their keys; a command a person runs (`eywa get`) checks them all, as every other command does."""
    reader = settings._reader
    sections = {key.split(".")[0] for key in FIELDS if "." in key}
    for name, given in reader.given(sections):  # a default is valid by construction: only what is given
        if name in sections:
            if not isinstance(given, dict):
                raise LightConfigError(f"{name} must be a mapping")
            keys = [f"{name}.{leaf}" for leaf in given]
        elif name in FIELDS:
            keys = [name] if name != "sources" else []  # sources: checked entry by entry when read
        else:
            keys = [str(name)]
        for key in keys:
            if key not in FIELDS:
                raise LightConfigError(f"unknown key {key!r}")
            reader.value(key)  # the time zone's name is checked where it is used (`LightSettings.zone`)


def light_settings(config_path: Path | None = None) -> LightSettings:
    """The settings the hooks and `eywa get` use, as `load_settings` would give them."""
    path = _config_file(config_path)
    reader = _Reader(_yaml(path) if path is not None else {}, _env(), path)
    settings = LightSettings(reader, config_path)
    if not settings.timezone:
        raise LightConfigError("timezone must be a time zone name")
    settings.aliases = {str(key): str(name) for key, name in settings.aliases.items()}
    return settings
