"""``[tool.xlalint]`` in pyproject.toml, found upward from the checked paths (as ruff does).

Keys are listed in ``KEYS``. A missing or invalid file, a missing ``[tool.xlalint]`` table, unknown keys
and bad values raise ``ConfigError`` naming the file and key. Command-line flags override the file.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

from xlalint.settings import DEVICES, MODES
from xlalint.specs import SpecError, parse_spec

KEYS = ("device", "mode", "timeout", "max-memory", "cache-max-mb", "select", "ignore", "per-file-ignores",
        "exclude", "entries", "specs", "baseline", "min-coverage", "strict")


class ConfigError(ValueError):
    """A bad ``[tool.xlalint]`` table; the message names the file and key."""


@dataclass
class Config:
    path: Path | None = None
    device: str | None = None
    mode: str | None = None
    timeout: float | None = None
    max_memory: int | None = None  # MB
    cache_max_mb: int | None = None
    select: list[str] | None = None
    ignore: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    exclude: list[str] = field(default_factory=list)  # globs of files not to check, relative to the config file
    entries: list[str] = field(default_factory=list)  # "path::name", relative to the config file
    specs: dict[str, list[str]] = field(default_factory=dict)  # "path::name" -> specs
    baseline: str | None = None  # baseline file, relative to the config file
    min_coverage: float | None = None  # percent of ops under XLA below which the run fails
    strict: bool | None = None  # entries that could not be traced and files without entry points fail the run

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


def _string_list(where: str, key: str, value) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: `{key}` must be a list of strings")
    return value


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
        if key == "device":
            if value not in DEVICES:
                raise ConfigError(f"{where}: `device` must be one of {', '.join(DEVICES)}, not {value!r}")
            config.device = value
        elif key == "mode":
            if value not in MODES:
                raise ConfigError(f"{where}: `mode` must be one of {', '.join(MODES)}, not {value!r}")
            config.mode = value
        elif key == "timeout":
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < math.inf:
                raise ConfigError(f"{where}: `timeout` must be a positive number of seconds")
            config.timeout = float(value)
        elif key in ("max-memory", "cache-max-mb"):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ConfigError(f"{where}: `{key}` must be a number of MB, or 0 for no limit")
            setattr(config, key.replace("-", "_"), value)
        elif key == "baseline":
            if not isinstance(value, str) or not value:
                raise ConfigError(f"{where}: `baseline` must be the path of a baseline file")
            config.baseline = value
        elif key == "min-coverage":
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 100:
                raise ConfigError(f"{where}: `min-coverage` must be a percentage from 0 to 100")
            config.min_coverage = float(value)
        elif key == "strict":
            if not isinstance(value, bool):
                raise ConfigError(f"{where}: `strict` must be true or false")
            config.strict = value
        elif key in ("select", "ignore", "entries", "exclude"):
            setattr(config, key, _string_list(where, key, value))
        elif key == "per-file-ignores":
            if not isinstance(value, dict):
                raise ConfigError(f"{where}: `per-file-ignores` must be a table of glob = [codes]")
            config.per_file_ignores = {g: _string_list(where, f"per-file-ignores.{g}", c) for g, c in value.items()}
        elif key == "specs":
            if not isinstance(value, dict):
                raise ConfigError(f"{where}: `specs` must be a table of \"file.py::name\" = [specs]")
            for target, specs in value.items():
                for spec in _string_list(where, f"specs.{target}", specs):
                    try:
                        parse_spec(spec)
                    except SpecError as error:
                        raise ConfigError(f"{where}: `specs.{target}`: {error}") from error
            config.specs = value
        else:
            raise ConfigError(f"{where}: unknown key `{key}` (known: {', '.join(KEYS)})")
    for target in config.entries + list(config.specs):
        if "::" not in target:
            raise ConfigError(f"{where}: entry {target!r} must look like \"file.py::name\"")
    return config


def config_targets(config: Config) -> dict[str, dict[str, list[str] | None]]:
    """``{abs path: {name: specs}}`` for the entries and specs the file declares."""
    targets: dict[str, dict[str, list[str] | None]] = {}
    for target in dict.fromkeys(config.entries + list(config.specs)):
        path, _, name = target.partition("::")
        targets.setdefault(os.path.abspath(config.root / path), {})[name] = config.specs.get(target)
    return targets
