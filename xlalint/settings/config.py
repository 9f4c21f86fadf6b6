"""``[tool.xlalint]`` in pyproject.toml, found upward from the checked paths (as ruff does).

Its keys are those of ``xlalint.settings.table.SETTINGS``, each checked by its setting's kind. A missing or
invalid file, a missing ``[tool.xlalint]`` table, unknown keys and bad values raise ``ConfigError``
naming the file and key. Command-line flags override the file.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

from xlalint.settings.table import BY_KEY, SettingError


class ConfigError(ValueError):
    """A bad ``[tool.xlalint]`` table; the message names the file and key."""


@dataclass
class Config:
    path: Path | None = None
    values: dict[str, Any] = field(default_factory=dict)  # setting name -> value, for the keys the file sets

    @property
    def root(self) -> Path:
        return self.path.parent if self.path else Path.cwd()


def _read(path: Path) -> dict:
    """The parsed TOML file; a missing, unreadable or invalid one is a ``ConfigError``."""
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ConfigError(f"{path}: cannot read it: {error.strerror or error}") from error
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: not valid TOML: {error}") from error


def _has_table(data: dict) -> bool:
    return isinstance(data.get("tool"), dict) and "xlalint" in data["tool"]


def find_config(paths: list[str]) -> Path | None:
    """The nearest pyproject.toml with a ``[tool.xlalint]`` table above the first path (or cwd)."""
    start = Path(paths[0] if paths else ".").resolve()
    for directory in [start, *start.parents] if start.is_dir() else start.parents:
        candidate = directory / "pyproject.toml"
        if candidate.is_file() and _has_table(_read(candidate)):
            return candidate
    return None


def load_config(path: Path | None) -> Config:
    if path is None:
        return Config()
    data = _read(path)
    if not _has_table(data):
        raise ConfigError(f"{path}: no [tool.xlalint] table")
    table = data["tool"]["xlalint"]
    where = f"{path} [tool.xlalint]"
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: must be a table, not {type(table).__name__}")
    config = Config(path=path)
    for key, value in table.items():
        setting = BY_KEY.get(key)
        if setting is None:
            raise ConfigError(f"{where}: unknown key `{key}` (known: {', '.join(BY_KEY)})")
        try:
            config.values[setting.name] = setting.kind.check(value)
        except SettingError as error:
            raise ConfigError(f"{where}: `{key}{error.part}` {error}") from None
    for target in config.values.get("entries", []) + list(config.values.get("specs", {})):
        if "::" not in target:
            raise ConfigError(f"{where}: entry {target!r} must look like \"file.py::name\"")
    if "baseline" in config.values:  # relative to the config file
        config.values["baseline"] = str(config.root / config.values["baseline"])
    return config


def config_targets(config: Config) -> dict[str, dict[str, list[str] | None]]:
    """``{abs path: {name: specs}}`` for the entries and specs the file declares."""
    targets: dict[str, dict[str, list[str] | None]] = {}
    specs = config.values.get("specs", {})
    for target in dict.fromkeys(config.values.get("entries", []) + list(specs)):
        path, _, name = target.partition("::")
        targets.setdefault(os.path.abspath(config.root / path), {})[name] = specs.get(target)
    return targets
