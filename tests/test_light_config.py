"""The hooks' pydantic-free settings reader agrees with eywa.core.config.settings for every key it reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from eywa.core.config import light as light_config
from eywa.core.config.settings import load_settings
from eywa.core.sources import KINDS, Source


def both(config: Path | None = None) -> tuple[object, object]:
    light = light_config.light_settings(config)
    full = load_settings(config)
    return (
        (light.data_dir, light.projects_dir, light.timezone, light.days_back, light.max_handoffs, light.db_path,
         light.pending_dir, light.mode, light.all_sources),
        (full.data_dir, full.projects_dir, full.timezone, full.retrieval.days_back, full.retrieval.max_handoffs,
         full.db_path, full.pending_dir, full.retrieval.mode, full.all_sources),
    )


@pytest.fixture
def clean(env: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    for name in ("EYWA_DATA_DIR", "EYWA_PROJECTS_DIR"):
        monkeypatch.delenv(name, raising=False)
    return env


def test_defaults_agree(clean: dict[str, Path]) -> None:
    light, full = both()
    assert light == full
    assert light[0] == clean["home"] / ".eywa"
    assert light[-1] == (Source("claude-code", clean["home"] / ".claude" / "projects"),
                         Source("codex", clean["home"] / ".codex"), Source("gemini", clean["home"] / ".gemini"),
                         Source("copilot", clean["home"] / ".copilot"), Source("qwen", clean["home"] / ".qwen"))


def test_environment_wins_and_agrees(clean: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EYWA_DATA_DIR", "~/elsewhere")
    monkeypatch.setenv("eywa_timezone", "Europe/Berlin")  # names are case-insensitive in pydantic-settings
    monkeypatch.setenv("EYWA_RETRIEVAL__DAYS_BACK", "30")
    monkeypatch.setenv("EYWA_RETRIEVAL__MAX_HANDOFFS", "5")
    monkeypatch.setenv("EYWA_RETRIEVAL__MODE", "keywords")
    light, full = both()
    assert light == full
    assert light[:4] == (clean["home"] / "elsewhere", clean["home"] / ".claude" / "projects", "Europe/Berlin", 30)


def test_default_yaml_file_agrees(clean: dict[str, Path]) -> None:
    (clean["home"] / ".eywa").mkdir()
    (clean["home"] / ".eywa" / "config.yaml").write_text(
        "data_dir: ~/eywa-data\ntimezone: Asia/Tokyo\nretrieval:\n  days_back: 21\n  mode: keywords\n")
    light, full = both()
    assert light == full
    assert light[0] == clean["home"] / "eywa-data" and light[3] == 21 and light[7] == "keywords"


def test_env_overrides_named_yaml_file_and_sections_merge(clean: dict[str, Path], tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "eywa.yaml"
    config.write_text("data_dir: /from/yaml\nretrieval:\n  days_back: 21\n  max_handoffs: 2\n")
    monkeypatch.setenv("EYWA_CONFIG", str(config))
    monkeypatch.setenv("EYWA_DATA_DIR", str(tmp_path / "from-env"))
    monkeypatch.setenv("EYWA_RETRIEVAL__MAX_HANDOFFS", "4")
    light, full = both()
    assert light == full
    assert light[0] == tmp_path / "from-env" and light[3:5] == (21, 4)


def test_explicit_config_path_and_json_section_agree(clean: dict[str, Path], tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "eywa.yaml"
    config.write_text("data_dir: /from/yaml\nretrieval:\n  days_back: 21\n")
    monkeypatch.setenv("EYWA_RETRIEVAL", '{"max_handoffs": 5}')
    light, full = both(config)
    assert light == full
    assert light[0] == Path("/from/yaml") and light[3:5] == (21, 5)


def test_a_missing_named_config_file_fails_in_both(clean: dict[str, Path], tmp_path: Path) -> None:
    from eywa.core.errors import ConfigError

    with pytest.raises(light_config.LightConfigError):
        light_config.light_settings(tmp_path / "nope.yaml")
    with pytest.raises(ConfigError):
        load_settings(tmp_path / "nope.yaml")


def test_sources_from_the_file_and_the_environment_agree(clean: dict[str, Path], tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "eywa.yaml"
    config.write_text("projects_dir: /cc\nsources:\n  - kind: gemini\n    enabled: false\n"
                      "  - kind: codex\n    path: ~/spokes/laptop/codex\n")
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    light, full = both(config)
    assert light == full
    assert light[-1][:3] == (Source("gemini", clean["home"] / ".gemini", False),
                             Source("codex", clean["home"] / "spokes" / "laptop" / "codex"),
                             Source("claude-code", Path("/cc")))
    assert [s.kind for s in light[-1][3:]] == [kind for kind in KINDS if kind not in ("gemini", "codex", "claude-code")]
    monkeypatch.setenv("EYWA_SOURCES", '[{"kind": "claude-code", "enabled": false}]')
    light, full = both(config)
    assert light == full
    assert light[-1][:3] == (Source("claude-code", Path("/cc"), False), Source("codex", tmp_path / "codex-home"),
                             Source("gemini", clean["home"] / ".gemini"))


@pytest.mark.parametrize("item", ['[{"kind": "cursor"}]', '[{"kind": "codex", "enabled": "maybe"}]',
                                  '[{"kind": "codex", "path": ""}]', '[{"kind": "codex", "folder": "/x"}]', '{"a": 1}'])
def test_a_bad_sources_entry_fails_in_both(clean: dict[str, Path], monkeypatch: pytest.MonkeyPatch, item: str) -> None:
    from eywa.core.errors import ConfigError

    monkeypatch.setenv("EYWA_SOURCES", item)
    with pytest.raises(light_config.LightConfigError, match="sources"):
        light_config.light_settings()
    with pytest.raises(ConfigError, match="sources"):
        load_settings()


def test_the_several_machines_keys_agree(clean: dict[str, Path], tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("projects:\n  aliases: {cli-v2: cli, /srv/scratch: notes}\n"
                      "mcp:\n  hub_url: http://hub:8765/mcp\n  hub_timeout_seconds: 0.8\n"
                      "push:\n  hub: me@hub\n")
    monkeypatch.setenv("EYWA_MCP__TOKEN", "t0k3n")
    monkeypatch.setenv("EYWA_PUSH__ON_SESSION_END", "true")
    light, full = light_config.light_settings(config), load_settings(config)
    assert (light.aliases, light.hub_url, light.hub_token, light.hub_timeout, light.push_hub,
            light.push_on_session_end) == (full.projects.aliases, full.mcp.hub_url,
                                           full.mcp.token.get_secret_value(), full.mcp.hub_timeout_seconds,
                                           full.push.hub, full.push.on_session_end)
    assert light.aliases == {"cli-v2": "cli", "/srv/scratch": "notes"} and light.push_on_session_end is True
    assert "t0k3n" not in repr(light)


def test_the_light_field_table_is_the_one_generated_from_the_settings_model() -> None:
    from eywa.core.config import fields, schema

    assert Path(fields.__file__).read_text(encoding="utf-8") == schema.render(), \
        "core/config/fields.py is stale: run `python -m eywa.core.config.schema`"
    assert set(schema.field_table()) == set(fields.FIELDS)


def _read_both(config: Path | None = None) -> list[tuple[str, object, object]]:
    """Every settings key as the light reader and as load_settings give it."""
    from eywa.core.config.fields import FIELDS
    from eywa.core.config.schema import _plain

    light, full = light_config.light_settings(config), load_settings(config).model_dump()
    rows = []
    for key in (key for key, field in FIELDS.items() if "alias_of" not in field):
        value: object = full
        for part in key.split("."):
            value = value[part]  # type: ignore[index]
        rows.append((key, _plain(light.value(key)), _plain(value)))
    return rows


def test_every_settings_key_has_the_same_default_in_both(clean: dict[str, Path]) -> None:
    rows = _read_both()
    assert len(rows) > 60  # every key of the model, not a chosen few
    assert [row for row in rows if row[1] != row[2]] == []


def _other_than_default(field: dict) -> str | None:
    """A valid value other than the default, as an environment variable gives it; None for kinds left out."""
    low = field.get("ge", field.get("gt", 0))
    if field["kind"] == "int":
        return str(int(low) + 1)
    if field["kind"] == "float":
        return str(float(low) + 0.5)
    if field["kind"] == "bool":
        return str(not field["default"]).lower()
    if field["kind"] == "choice":
        return next(choice for choice in field["choices"] if choice != field["default"])
    return None


def test_every_number_switch_and_choice_from_the_environment_reads_the_same_in_both(
        clean: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    from eywa.core.config.fields import FIELDS

    given = {}
    for key, field in FIELDS.items():
        value = _other_than_default(field)
        if value is not None and "alias_of" not in field:  # an older name given beside its key is refused
            monkeypatch.setenv("EYWA_" + key.replace(".", "__").upper(), value)
            given[key] = value
    assert len(given) > 30
    rows = [row for row in _read_both() if row[0] in given]
    assert [row for row in rows if row[1] != row[2]] == []
    assert all(row[1] != FIELDS[row[0]]["default"] for row in rows)  # each one was really read


@pytest.mark.parametrize("given", ["file", "environment"])
def test_an_older_config_name_of_a_key_still_sets_it_in_both(clean: dict[str, Path], tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch, given: str) -> None:
    # llm.input_token_limit was called llm.input_token_budget before "budget" came to mean only the spending caps.
    config = tmp_path / "config.yaml"
    config.write_text("llm:\n  input_token_budget: 12000\n" if given == "file" else "{}\n", encoding="utf-8")
    if given == "environment":
        monkeypatch.setenv("EYWA_LLM__INPUT_TOKEN_BUDGET", "12000")
    light = light_config.light_settings(config)
    light_config.check_every_key(light)  # the old name is no unknown key
    assert light.value("llm.input_token_limit") == 12000
    assert load_settings(config).llm.input_token_limit == 12000


@pytest.mark.parametrize("name", ["UTC", "Europe/Berlin", "Asia/Tokyo", "Etc/UTC"])
def test_the_zone_gives_the_days_the_settings_zone_gives(clean: dict[str, Path], monkeypatch: pytest.MonkeyPatch,
                                                         name: str) -> None:
    """"UTC", the default, is datetime's own (no zoneinfo to import); every zone gives each instant the day the
    settings model's zone gives it."""
    import datetime as dt

    monkeypatch.setenv("EYWA_TIMEZONE", name)
    light, full = light_config.light_settings(None).zone, load_settings(None).zone
    assert (light is dt.UTC) == (name == "UTC")
    for hours in range(0, 24 * 400, 7):
        instant = dt.datetime(2026, 1, 1, tzinfo=dt.UTC) + dt.timedelta(hours=hours)
        assert instant.astimezone(light).date() == instant.astimezone(full).date()
