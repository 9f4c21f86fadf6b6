"""Every run setting written once: its name, kind, default, help, ``[tool.xlalint]`` key and flag.

The command line's flags (cli.py) and the checks of ``[tool.xlalint]`` (config.py) are made from
``SETTINGS``; ``merge`` takes each setting from a flag or API argument, else from the config file, else
its default, and ``options`` turns the result into the ``Options`` of a run.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import fnmatch
import math
import os
import shlex
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from xlalint.tracing.cache import DEFAULT_MAX_MB
from xlalint.rule_codes import resolve_codes, rule_codes
from xlalint.ci.shards import Shard, parse_shard
from xlalint.core.specs import SpecError, parse_spec
from xlalint.core.support import DEVICES, LOCAL_DEVICES

MODES = ("auto", "jit", "autocluster")  # auto: the mode each entry's program runs it in
VERIFY_DEVICES = ("auto", *LOCAL_DEVICES)  # auto: the GPU when there is one, else the CPU


class SettingError(ValueError):
    """A value a setting does not take; ``str()`` says what it takes, ``part`` which part was wrong."""

    def __init__(self, message: str, part: str = ""):
        super().__init__(message)
        self.part = part


@dataclass(frozen=True)
class Kind:
    """The values a setting takes: ``check`` a Python or TOML value, ``parse`` a flag's text."""

    wanted: str  # what it takes, in words: "a positive number of seconds"
    accepts: Callable[[Any], bool]
    convert: Callable[[Any], Any] = lambda value: value
    parse: Callable[[str], Any] | None = None  # flag text -> value (None: the value as written)

    def check(self, value: Any) -> Any:
        if not self.accepts(value):
            raise SettingError(f"must be {self.wanted}, not {value!r}")
        return self.convert(value)

    def from_text(self, text: str) -> Any:
        """An argparse type: the value a flag's text stands for."""
        try:
            return self.check(self.parse(text) if self.parse else text)
        except (ValueError, TypeError):
            raise argparse.ArgumentTypeError(f"{text!r} is not {self.wanted}") from None


def _number(kind: type, test: Callable[[Any], bool], wanted: str) -> Kind:
    types = (int, float) if kind is float else (int,)
    return Kind(wanted, lambda v: isinstance(v, types) and not isinstance(v, bool) and test(v), kind, kind)


def _strings(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value)


def _choice(choices: tuple[str, ...]) -> Kind:
    return Kind(f"one of {', '.join(choices)}", lambda v: v in choices)


def _table_of(inner: Kind, wanted: str) -> Kind:
    """A TOML table whose every value ``inner`` checks; an error names the key it is under."""
    def convert(table: dict) -> dict:
        checked = {}
        for key, value in table.items():
            try:
                checked[key] = inner.check(value)
            except SettingError as error:
                raise SettingError(str(error), f".{key}") from None
        return checked
    return Kind(wanted, lambda v: isinstance(v, dict), convert)


def _specs(specs: list[str]) -> list[str]:
    for spec in specs:
        try:
            parse_spec(spec)
        except SpecError as error:
            raise SettingError(f"must be a list of argument specs: {error}") from None
    return list(specs)


def run_command_words(command: str) -> list[str]:
    """A ``run`` command (``"SCRIPT ARGS..."`` or ``"-m MODULE ARGS..."``) split as a POSIX shell splits it."""
    try:
        words = shlex.split(command)
    except ValueError as error:
        raise SettingError(f"must be a list of commands, not {command!r}: {error}") from None
    if not words or words[0] == "-m" and len(words) < 2 or words[0].startswith("-") and words[0] != "-m":
        raise SettingError(f'must be a list of "SCRIPT ARGS..." or "-m MODULE ARGS...", not {command!r}')
    return words


def _run_commands(commands: list[str]) -> list[str]:
    for command in commands:
        run_command_words(command)
    return list(commands)


SECONDS = _number(float, lambda v: 0 < v < math.inf, "a positive number of seconds")
COUNT = _number(int, lambda v: v > 0, "a positive whole number")
MEGABYTES = _number(int, lambda v: v >= 0, "a number of MB (0: no limit)")
PERCENT = _number(float, lambda v: 0 <= v <= 100, "a percentage from 0 to 100")
TEXT = Kind("a path", lambda v: isinstance(v, str) and v != "")
SWITCH = Kind("true or false", lambda v: isinstance(v, bool))
STRINGS = Kind("a list of strings", _strings, list)
# --select XLA0,XLA1: no code at all is as if the flag were not given
CODES = Kind("a list of strings", _strings, list,
             lambda text: [p.strip() for p in text.split(",") if p.strip()] or None)
CODES_PER_GLOB = _table_of(Kind("a list of strings", _strings, lambda codes: [c.upper() for c in codes]),
                           "a table of glob = [codes]")
RUN_COMMANDS = Kind('a list of "SCRIPT ARGS..." or "-m MODULE ARGS..."', _strings, _run_commands)
SHARD = Kind("K/N: shard K of N, 1 <= K <= N (e.g. 2/4)", lambda v: isinstance(v, Shard), parse=parse_shard)
SPECS_PER_TARGET = _table_of(Kind("a list of strings", _strings, _specs), 'a table of "file.py::name" = [specs]')


@dataclass(frozen=True)
class Setting:
    name: str  # the attribute (Options, argparse dest, API argument)
    kind: Kind
    default: Any
    help: str
    key: str | None = None  # in [tool.xlalint]; None: a flag only
    flags: tuple[str, ...] = ()  # (): the config file only
    metavar: str | None = None
    choices: tuple[str, ...] | None = None
    const: str | None = None  # the value of the flag given alone
    run_only: bool = False  # a flag of `xlalint run` only

    def help_text(self, with_key: bool = True) -> str:
        notes = [f"default: {self.default}"] if self.default not in (None, False) else []
        notes += [f"[tool.xlalint] {self.key}"] if self.key and with_key else []
        return f"{self.help} ({'; '.join(notes)})" if notes else self.help


def usable_cores() -> int:
    """The CPU cores this process may run on (its affinity mask where the system has one)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


def _choices(name: str, choices: tuple[str, ...], default: str | None, help: str, key: str | None,
             const: str | None = None) -> Setting:
    return Setting(name, _choice(choices), default, help, key, (f"--{name}",), choices=choices, const=const)


SETTINGS = (
    _choices("device", DEVICES, "gpu", "target XLA device", "device"),
    _choices("mode", MODES, "auto", "auto: judge each entry in the XLA mode its program runs it in "
             "(jit_compile=True, auto-clustering from set_jit/TF_XLA_FLAGS in the code, scripts or environment, "
             "else as if jit_compile=True); jit: every entry as if jit_compile=True; autocluster: every entry "
             "without jit_compile=True under TF_XLA_FLAGS=--tf_xla_auto_jit=2 (docs/autocluster.md)", "mode"),
    Setting("timeout", SECONDS, 120.0, "seconds to import and trace one file", "timeout", ("--timeout",),
            "SECONDS"),
    Setting("max_memory", MEGABYTES, 8192, "MB of resident memory a tracing worker may use; a file that needs "
            "more gets an error; 0: no limit", "max-memory", ("--max-memory",), "MB"),
    Setting("select", CODES, None, "rule codes or prefixes to run (comma-separated)", "select", ("--select",),
            "CODES"),
    Setting("ignore", CODES, None, "rule codes or prefixes to skip (comma-separated)", "ignore", ("--ignore",),
            "CODES"),
    Setting("per_file_ignores", CODES_PER_GLOB, {}, "rule codes or prefixes to skip per file glob, "
            "from the config file's directory", "per-file-ignores"),
    Setting("exclude", Kind("a list of strings", _strings, tuple), (), "globs of files not to check, from the "
            "config file's directory (e.g. \"*.ipynb\")", "exclude"),
    Setting("entries", STRINGS, [], '"file.py::name" to trace, relative to the config file', "entries"),
    Setting("specs", SPECS_PER_TARGET, {}, 'argument specs per "file.py::name"', "specs"),
    Setting("skip_untraceable", SWITCH, False, "skip named files without TensorFlow or entry points instead of "
            "reporting them (for pre-commit, which passes every changed file)", None, ("--skip-untraceable",)),
    _choices("verify", VERIFY_DEVICES, None, "also compile and run each entry with and without XLA (on the GPU "
             "when there is one, else the CPU; or the device given) and report agreement, numerics, compile "
             "time, step time, memory; a value that is no device is a PATH", None, const="auto"),
    Setting("jobs", COUNT, usable_cores(), "trace files in N worker processes at once; by default one per CPU core "
            "this process may run on", "jobs", ("--jobs", "-j"), "N"),
    Setting("shard", SHARD, None, "check only shard K of N of the files (split by a hash of each path; "
            "`xlalint merge` joins the shards' JSON reports: docs/ci.md)", None, ("--shard",), "K/N"),
    Setting("cache_dir", TEXT, None, "where results of unchanged files are kept (default: "
            "~/.cache/xlalint/results)", None, ("--cache-dir",), "DIR"),
    Setting("cache_max_mb", MEGABYTES, DEFAULT_MAX_MB, "size of the result cache; least recently used results "
            "go first; 0: no limit", "cache-max-mb", ("--cache-max-mb",), "MB"),
    Setting("baseline", TEXT, None, "report only findings not recorded in FILE (written by --write-baseline); "
            "recorded ones that went away are listed as fixed", "baseline", ("--baseline",), "FILE"),
    Setting("min_coverage", PERCENT, 0.0, "fail when fewer than PERCENT of the traced ops run under XLA "
            "(docs/coverage.md)", "min-coverage", ("--min-coverage",), "PERCENT"),
    Setting("strict", SWITCH, False, "also fail (exit 1) when an entry could not be traced or a file with "
            "TensorFlow has no entry point (otherwise they are listed as notices)", "strict", ("--strict",)),
    Setting("run", RUN_COMMANDS, [], "commands that `xlalint run` with no SCRIPT runs, from the config file's "
            'directory, reported together: "SCRIPT ARGS..." or "-m MODULE ARGS..." (docs/run.md)', "run"),
    Setting("first_step", SWITCH, False, "xlalint run: answer each call of a captured function with its real "
            "outputs, run without XLA, instead of zeros (for scripts whose Python logic needs real "
            "values: early stopping, NaN checks); slower, and the run trains", None, ("--first-step",),
            run_only=True),
    Setting("save_graphs", TEXT, None, "write each traced entry's op graph as JSON (for bug reports and TF-free "
            "tests)", None, ("--save-graphs",), "DIR"),
)
BY_NAME = {setting.name: setting for setting in SETTINGS}
BY_KEY = {setting.key: setting for setting in SETTINGS if setting.key}


def add_flags(group: argparse._ActionsContainer, names: Sequence[str] | None = None,
              keys: Sequence[str] | None = None) -> None:
    """A flag for every setting that has one, ``xlalint run``'s own aside (or for those ``names``), its help
    naming the config key (of those in ``keys``, if given); an absent flag is None, so that ``merge`` looks further."""
    for setting in [s for s in SETTINGS if not s.run_only] if names is None else [BY_NAME[name] for name in names]:
        if not setting.flags:
            continue
        help = setting.help_text(keys is None or setting.name in keys)
        if setting.kind is SWITCH:
            group.add_argument(*setting.flags, dest=setting.name, action="store_true", default=None, help=help)
            continue
        value: dict[str, Any] = {"nargs": "?", "const": setting.const} if setting.const else {}
        if not setting.choices:
            value["type"] = setting.kind.from_text
        group.add_argument(*setting.flags, dest=setting.name, metavar=setting.metavar, help=help,
                           choices=setting.choices, **value)


def merge(given: Mapping[str, Any], config: Mapping[str, Any]) -> dict[str, Any]:
    """Every setting's value: ``given`` (flags, API arguments) where set, else ``config``, else the default."""
    return {s.name: next((v for v in (given.get(s.name), config.get(s.name)) if v is not None),
                         copy.deepcopy(s.default)) for s in SETTINGS}


def checked(given: Mapping[str, Any]) -> dict[str, Any]:
    """``given`` (API arguments) checked by their settings' kinds; None stays unset."""
    values = {}
    for name, value in given.items():
        try:
            values[name] = None if value is None else BY_NAME[name].kind.check(value)
        except SettingError as error:
            raise ValueError(f"{name}{error.part} {error}") from None
    return values


def _default(name: str) -> Any:
    return field(default_factory=lambda: copy.deepcopy(BY_NAME[name].default))


@dataclass(frozen=True)
class Options:
    """Every setting of a run: the defaults are ``SETTINGS``'; flags and [tool.xlalint] override them. A field
    per setting the run reads, of the same name and default (``tests/test_config.py`` holds them to the table),
    then what no setting gives (targets, root, progress); ``dataclasses.replace`` makes a changed copy."""

    device: str = _default("device")
    timeout: float = _default("timeout")
    max_memory: int = _default("max_memory")  # MB of resident memory per tracing worker; 0: no limit
    select: tuple[str, ...] = field(default_factory=rule_codes)  # rule codes to report
    targets: dict[str, dict[str, list[str] | None]] = field(default_factory=dict)  # path -> name -> specs
    only_named: set[str] = field(default_factory=set)  # files given only as FILE::NAME: no discovery
    save_graphs: str | None = _default("save_graphs")  # directory for each traced entry's op graph (JSON)
    per_file_ignores: dict[str, list[str]] = _default("per_file_ignores")  # glob (from root) -> code prefixes
    root: str = "."  # where per-file-ignores and exclude globs start (the config file's directory)
    exclude: tuple[str, ...] = _default("exclude")  # globs (from root) of files not to check
    skip_untraceable: bool = _default("skip_untraceable")  # named files without entries are skipped quietly
    progress: Any = None  # told each file as tracing starts (xlalint.cli.progress)
    verify: str | None = _default("verify")  # one of VERIFY_DEVICES: also compile and run each entry there
    cache_dir: str | None = _default("cache_dir")  # where per-file results are cached; None: no cache
    cache_max_mb: int = _default("cache_max_mb")  # least recently used results go beyond this; 0: no limit
    jobs: int = _default("jobs")  # tracing workers run in parallel
    shard: Shard | None = _default("shard")  # check only this shard's files
    mode: str = _default("mode")  # per entry, as its program runs it; "jit": as if jit_compile=True; "autocluster": forced
    baseline: str | None = _default("baseline")  # report only findings not recorded in this file
    min_coverage: float = _default("min_coverage")  # percent of ops under XLA below which the run fails
    strict: bool = _default("strict")  # untraceable entries and files without entry points fail the run
    first_step: bool = _default("first_step")  # xlalint run: captured calls run for real, without XLA

    def excluded(self, path: str) -> bool:
        rel = os.path.relpath(os.path.abspath(path), self.root)
        return any(fnmatch.fnmatch(rel, glob) for glob in self.exclude)


def options(values: Mapping[str, Any], **run: Any) -> Options:
    """The ``Options`` of merged ``values`` (``select`` and ``ignore`` become the codes to report);
    ``run`` sets what no setting gives (targets, root, progress...)."""
    fields = {f.name for f in dataclasses.fields(Options)} - {"select"}
    return Options(**{name: value for name, value in values.items() if name in fields},
                   select=resolve_codes(values["select"], values["ignore"] or []), **run)
