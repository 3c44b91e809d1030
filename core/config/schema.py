"""The settings model's field table, generated for the light start-up path: `python -m eywa.core.config.schema`.

core/config/settings.py is the one definition; core/config/fields.py is generated from it (a plain dict, no
pydantic) so the hooks and `eywa get` read the same keys with the same defaults, types and bounds.
tests/test_light_config.py fails when the committed table is not what this module generates.
"""

from __future__ import annotations

import pprint
import types
import typing
from pathlib import Path
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, SecretStr
from pydantic.fields import FieldInfo

from eywa.core.config.settings import Settings

TABLE_PATH = Path(__file__).with_name("fields.py")
HEADER = '''"""Generated from core/config/settings.py by `python -m eywa.core.config.schema`; do not edit.

Every settings key (dotted) with its kind, default and bounds, for the pydantic-free reader (core/config/light.py).
"""

'''


def _items(annotation: Any) -> str | None:
    """The kind of a list's items or a mapping's values, when the light reader can check it (int, str, regex)."""
    args = typing.get_args(annotation)
    if not args:
        return None
    item = args[-1]
    if typing.get_origin(item) is typing.Annotated:
        base, *metadata = typing.get_args(item)
        if any(getattr(getattr(m, "func", None), "__name__", "") == "_check_regex" for m in metadata):
            return "regex"
        item = base
    return {int: "int", str: "str"}.get(item)


def _kind(annotation: Any) -> tuple[str, bool, tuple[str, ...]]:
    """The light reader's kind for an annotation, whether None is allowed, and a Literal's choices."""
    args = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
    optional = typing.get_origin(annotation) in (typing.Union, types.UnionType) and len(args) == 1
    if optional:
        annotation = args[0]
    origin = typing.get_origin(annotation)
    if origin is Literal:
        return "choice", optional, tuple(typing.get_args(annotation))
    if origin is list:
        return "list", optional, ()
    if origin is dict:
        return "dict", optional, ()
    names = {int: "int", float: "float", bool: "bool", str: "str", Path: "path", SecretStr: "secret"}
    return names[annotation], optional, ()


def _plain(value: Any) -> Any:
    """A default as YAML would give it: models as mappings, paths as text, secrets unwrapped."""
    if isinstance(value, BaseModel):
        return {name: _plain(getattr(value, name)) for name in type(value).model_fields}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, SecretStr):
        return value.get_secret_value()
    if isinstance(value, Path):
        return str(value)
    return value


def _entry(field: FieldInfo) -> dict[str, Any]:
    kind, optional, choices = _kind(field.annotation)
    entry: dict[str, Any] = {"kind": kind, "default": _plain(field.get_default(call_default_factory=True))}
    if optional:
        entry["optional"] = True
    if choices:
        entry["choices"] = choices
    if kind in ("list", "dict") and _items(field.annotation):
        entry["items"] = _items(field.annotation)
    for bound in field.metadata:  # pydantic's Field(ge=..., pattern=...) constraints, one object each
        for name in ("ge", "gt", "le", "lt", "min_length", "pattern"):
            if getattr(bound, name, None) is not None:
                entry[name] = getattr(bound, name)
    return entry


def field_table(model: type[BaseModel] = Settings, prefix: str = "") -> dict[str, dict[str, Any]]:
    """Every leaf key of `model` (sections flattened to `section.key`), in the model's order."""
    table: dict[str, dict[str, Any]] = {}
    for name, field in model.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            table.update(field_table(annotation, f"{prefix}{name}."))
        else:
            table[prefix + name] = _entry(field)
            for alias in _old_names(field, name):  # an older config file's name for the key, read alike
                table[prefix + alias] = table[prefix + name] | {"alias_of": prefix + name}
    return table


def _old_names(field: FieldInfo, name: str) -> list[str]:
    choices = field.validation_alias.choices if isinstance(field.validation_alias, AliasChoices) else []
    return [str(choice) for choice in choices if choice != name]


def render() -> str:
    return HEADER + "FIELDS: dict[str, dict] = " + pprint.pformat(field_table(), width=112, sort_dicts=False) + "\n"


if __name__ == "__main__":
    TABLE_PATH.write_text(render(), encoding="utf-8")
    print(f"wrote {TABLE_PATH}")
