"""Settings: sources and their precedence, error messages, EYWA_NOW, and the example file."""

from __future__ import annotations

import datetime as dt
import os
import re
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
import yaml

from eywa.core.config.clock import now
from eywa.core.config.settings import Settings, load_settings
from eywa.core.errors import ConfigError

EXAMPLE = Path(__file__).resolve().parents[1] / "config.example.yaml"


@pytest.fixture(autouse=True)
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty HOME and no EYWA_* variables, so the real ~/.eywa is never read."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in list(os.environ):
        if name.upper().startswith("EYWA_"):
            monkeypatch.delenv(name)
    return home


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults(isolated_env: Path) -> None:
    s = load_settings()
    assert s.data_dir == isolated_env / ".eywa"
    assert s.projects_dir == isolated_env / ".claude" / "projects"
    assert s.timezone == "UTC" and s.zone == ZoneInfo("UTC")
    assert (s.retrieval.mode, s.retrieval.days_back, s.retrieval.max_handoffs) == ("hybrid", None, 3)
    assert s.redaction.extra_patterns == []
    assert s.ingest.show_progress == "auto"
    assert s.handoffs_dir == s.data_dir / "handoffs"
    assert s.archive_dir == s.data_dir / "archive"
    assert s.db_path == s.data_dir / "index.sqlite3"


def test_yaml_file_sets_values_and_keeps_other_defaults(tmp_path: Path, isolated_env: Path) -> None:
    path = write(
        tmp_path / "eywa.yaml",
        "data_dir: ~/somewhere\n"
        "timezone: Europe/Berlin\n"
        "retrieval:\n  days_back: 30\n"
        "redaction:\n  extra_patterns: ['ACME-[0-9]{6}']\n"
        "ingest:\n  show_progress: never\n",
    )
    s = load_settings(path)
    assert s.data_dir == isolated_env / "somewhere"  # ~ expanded
    assert s.zone == ZoneInfo("Europe/Berlin")
    assert s.retrieval.days_back == 30
    assert s.retrieval.mode == "hybrid" and s.retrieval.max_handoffs == 3
    assert s.redaction.extra_patterns == ["ACME-[0-9]{6}"]
    assert s.ingest.show_progress == "never"


def test_yaml_file_found_via_eywa_config_then_home(
    tmp_path: Path, isolated_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(isolated_env / ".eywa" / "config.yaml", "timezone: Asia/Tokyo\n")
    assert load_settings().timezone == "Asia/Tokyo"
    monkeypatch.setenv("EYWA_CONFIG", str(write(tmp_path / "other.yaml", "timezone: America/Lima\n")))
    assert load_settings().timezone == "America/Lima"
    # --config beats EYWA_CONFIG
    assert load_settings(write(tmp_path / "cli.yaml", "timezone: Africa/Cairo\n")).timezone == "Africa/Cairo"


def test_empty_yaml_file_means_defaults(tmp_path: Path) -> None:
    path = write(tmp_path / "empty.yaml", "# nothing set\n")
    assert load_settings(path) == load_settings()


def test_env_override_beats_yaml_and_overrides_beat_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path / "c.yaml", "timezone: Asia/Tokyo\ndata_dir: /from/yaml\n")
    monkeypatch.setenv("EYWA_TIMEZONE", "Europe/Paris")
    monkeypatch.setenv("EYWA_DATA_DIR", "/from/env")
    s = load_settings(path)
    assert (s.timezone, s.data_dir) == ("Europe/Paris", Path("/from/env"))
    s = load_settings(path, data_dir=Path("/from/cli"), timezone=None)  # None means "not given"
    assert (s.timezone, s.data_dir) == ("Europe/Paris", Path("/from/cli"))


def test_eywa_retrieval__mode_merges_with_yaml_section(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path / "c.yaml", "retrieval:\n  mode: hybrid\n  days_back: 7\n")
    monkeypatch.setenv("EYWA_RETRIEVAL__MODE", "keywords")
    s = load_settings(path)
    assert s.retrieval.mode == "keywords"
    assert s.retrieval.days_back == 7  # the rest of the YAML section survives


def test_invalid_mode_message_names_key_value_allowed_and_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path / "c.yaml", "retrieval:\n  mode: semantic\n")
    with pytest.raises(ConfigError) as info:
        load_settings(path)
    message = str(info.value)
    for part in ("retrieval.mode", "'semantic'", "'keywords'", "'hybrid'", str(path)):
        assert part in message

    monkeypatch.setenv("EYWA_RETRIEVAL__MODE", "vector")
    with pytest.raises(ConfigError, match=r"retrieval\.mode = 'vector'.*EYWA_RETRIEVAL__MODE"):
        load_settings(path)


@pytest.mark.parametrize(
    ("yaml_text", "key"),
    [
        ("retrieval:\n  days_back: 0\n", "retrieval.days_back"),
        ("retrieval:\n  max_handoffs: 6\n", "retrieval.max_handoffs"),
        ("ingest:\n  show_progress: sometimes\n", "ingest.show_progress"),
        ("redaction:\n  extra_patterns: ['ok', '(unclosed']\n", "redaction.extra_patterns[1]"),
        ("data_dir: ''\n", "data_dir"),
    ],
)
def test_out_of_range_values_name_the_key(tmp_path: Path, yaml_text: str, key: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(key)):
        load_settings(write(tmp_path / "c.yaml", yaml_text))


def test_invalid_timezone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EYWA_TIMEZONE", "Mars/Olympus_Mons")
    with pytest.raises(ConfigError) as info:
        load_settings()
    message = str(info.value)
    assert "timezone" in message and "Mars/Olympus_Mons" in message and "EYWA_TIMEZONE" in message


def test_bad_yaml_syntax_message_has_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path / "c.yaml", "timezone: UTC\nretrieval:\n  mode: [hybrid\n  days_back: 3\n")
    with pytest.raises(ConfigError) as info:
        load_settings(path)
    assert str(path) in str(info.value) and "line 4" in str(info.value)


def test_yaml_that_is_not_a_mapping_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="must be a mapping"):
        load_settings(write(tmp_path / "c.yaml", "- timezone: UTC\n"))


@pytest.mark.parametrize(
    ("yaml_text", "expected"),
    [
        ("timezon: UTC\n", r"unknown key 'timezon'.*did you mean 'timezone'"),
        (
            "retrieval:\n  max_handofs: 2\n",
            r"unknown key 'retrieval\.max_handofs'.*did you mean 'max_handoffs'",
        ),
    ],
)
def test_unknown_key_is_an_error(tmp_path: Path, yaml_text: str, expected: str) -> None:
    path = write(tmp_path / "c.yaml", yaml_text)
    with pytest.raises(ConfigError, match=expected) as info:
        load_settings(path)
    assert str(path) in str(info.value)


def test_missing_explicit_file_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    missing = tmp_path / "nope.yaml"
    with pytest.raises(ConfigError, match=r"nope\.yaml.*--config.*does not exist"):
        load_settings(missing)
    monkeypatch.setenv("EYWA_CONFIG", str(missing))
    with pytest.raises(ConfigError, match=r"nope\.yaml.*EYWA_CONFIG.*does not exist"):
        load_settings()


def test_env_list_value_must_be_json(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EYWA_REDACTION__EXTRA_PATTERNS", '["sk-[A-Za-z0-9]+"]')
    assert load_settings().redaction.extra_patterns == ["sk-[A-Za-z0-9]+"]
    monkeypatch.setenv("EYWA_REDACTION__EXTRA_PATTERNS", "sk-[A-Za-z0-9]+")
    with pytest.raises(ConfigError, match="EYWA_REDACTION__EXTRA_PATTERNS.*JSON"):
        load_settings()


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("2026-02-17", dt.datetime(2026, 2, 17, tzinfo=dt.UTC)),
        ("2026-02-17T09:30:00", dt.datetime(2026, 2, 17, 9, 30, tzinfo=dt.UTC)),
        ("2026-02-17T09:30:00+02:00", dt.datetime(2026, 2, 17, 7, 30, tzinfo=dt.UTC)),
        ("2026-02-17T09:30:00Z", dt.datetime(2026, 2, 17, 9, 30, tzinfo=dt.UTC)),
    ],
)
def test_eywa_now_pins_the_clock(monkeypatch: pytest.MonkeyPatch, raw: str, expected: dt.datetime) -> None:
    monkeypatch.setenv("EYWA_NOW", raw)
    pinned = now()
    assert pinned == expected and pinned.utcoffset() == dt.timedelta(0)
    assert load_settings() == Settings()  # EYWA_NOW is not mistaken for a setting


def test_eywa_now_unset_is_current_utc_and_invalid_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    before = dt.datetime.now(dt.UTC)
    assert before <= now() <= dt.datetime.now(dt.UTC)
    monkeypatch.setenv("EYWA_NOW", "next tuesday")
    with pytest.raises(ConfigError, match="EYWA_NOW='next tuesday'"):
        now()


def _key_tree(model: Any) -> dict[str, Any]:
    return {
        name: _key_tree(field.annotation) if hasattr(field.annotation, "model_fields") else None
        for name, field in model.model_fields.items()
    }


def _yaml_tree(data: dict[str, Any]) -> dict[str, Any]:
    # An empty mapping is a value (projects.aliases), a section always holds keys.
    return {key: _yaml_tree(value) if isinstance(value, dict) and value else None for key, value in data.items()}


def test_example_file_equals_defaults() -> None:
    # Loads cleanly, yields exactly the defaults, and documents every key: it cannot drift.
    assert load_settings(EXAMPLE).model_dump() == load_settings().model_dump()
    assert _yaml_tree(yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))) == _key_tree(Settings)
