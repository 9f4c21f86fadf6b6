"""``TF_XLA_FLAGS`` and ``XLA_FLAGS`` checked against the flags the installed TensorFlow knows.

TensorFlow parses each variable once, at the first op (``TF_XLA_FLAGS``) or the first XLA
compilation (``XLA_FLAGS``), and aborts the process on an unknown flag or a value it cannot
parse. The known flags come from TensorFlow itself: with the variable set to ``--help`` it
prints every flag with its type, default and help before aborting. For ``XLA_FLAGS`` that
list is cut short by the log line's size limit, so the flag names compiled into TensorFlow's
shared libraries are added (see docs/doctor.md). The table is built once per TensorFlow
version, in child processes, and cached.
"""

from __future__ import annotations

import difflib
import json
import mmap
import os
import re
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path

from xlalint.doctor.model import OK, PROBLEM, Check
from xlalint.process.python_child import module_command
from xlalint.core.support import cache_dir

VARIABLES = ("TF_XLA_FLAGS", "XLA_FLAGS")
# Where TensorFlow reads each variable: an unknown flag aborts the process there.
WHEN_PARSED = {"TF_XLA_FLAGS": "at the first TensorFlow op", "XLA_FLAGS": "at the first XLA compilation"}
_HELP_LINE = re.compile(r"^\s*--([a-z0-9_]+)=(.*?)\s*\t(bool|int32|int64|float|double|string)\t?(.*)$")
_LIBRARY_NAME = re.compile(rb"xla_[a-z0-9_]{3,}")
_LIBRARIES = ("libtensorflow_framework.so.2", "libtensorflow_cc.so.2")
_BOOL_VALUES = {"true", "false", "1", "0"}

# Our explanation of the flags people set most; others get TensorFlow's own help text.
EXPLAIN = {
    "tf_xla_auto_jit": "auto-clustering: 2 compiles every cluster of supported ops, 1 only clusters "
                       "likely to gain, -1 off, 0 leaves it to tf.config.optimizer.set_jit (on the CPU "
                       "it also needs --tf_xla_cpu_global_jit)",
    "tf_xla_cpu_global_jit": "lets --tf_xla_auto_jit cluster ops placed on the CPU (without it auto-clustering "
                             "only touches GPU ops)",
    "tf_xla_enable_xla_devices": "only creates the deprecated XLA_CPU/XLA_GPU devices; it compiles nothing and "
                                 "does not turn auto-clustering on",
    "tf_xla_clustering_debug": "writes the graphs before and after clustering (with TF_DUMP_GRAPH_PREFIX=DIR) "
                               "to see what XLA compiles; slows graph building",
    "tf_xla_persistent_cache_directory": "keeps compiled XLA executables in this directory, so a new process "
                                         "loads them instead of compiling again",
    "tf_xla_min_cluster_size": "smallest cluster auto-clustering compiles (default 4 ops)",
    "xla_dump_to": "writes XLA's HLO modules (and other dumps asked for) to this directory; for debugging, "
                   "it slows compilation",
    "xla_gpu_cuda_data_dir": "the CUDA directory XLA searches first for bin/ptxas, bin/nvlink and "
                             "nvvm/libdevice (see the GPU toolchain check)",
    "xla_gpu_unsafe_fallback_to_driver_on_ptxas_not_found": "lets the CUDA driver compile PTX when no "
                                                            "ptxas is found (slower kernels, less checking)",
}


@dataclass(frozen=True)
class Flag:
    variable: str
    name: str
    value: str | None  # None: given without "="
    raw: str


def split_flags(variable: str, text: str) -> list[Flag]:
    """The flags in one variable, split on whitespace with shell-style quotes as TensorFlow does."""
    try:
        words = shlex.split(text)
    except ValueError:  # unbalanced quote: TensorFlow splits such a value on spaces too
        words = text.split()
    flags = []
    for word in words:
        name, sep, value = word.lstrip("-").partition("=")
        flags.append(Flag(variable, name, value if sep else None, word))
    return flags


def parse_help(text: str) -> dict:
    """``{name: {"type", "default", "help"}}`` from the usage TensorFlow prints for ``--help``."""
    table = {}
    for line in text.splitlines():
        match = _HELP_LINE.match(line)
        if match:
            name, default, kind, help_text = match.groups()
            table[name] = {"type": kind, "default": default.strip('"'), "help": help_text.strip()}
    return table


def library_names(paths) -> set[str]:
    """Every ``xla_...`` identifier in the given binaries (names packed together are split too)."""
    names: set[str] = set()
    for path in paths:
        with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            for token in set(_LIBRARY_NAME.findall(data)):
                text = token.decode()
                names.add(text)
                names.update(part for part in re.split(r"(?=xla_)", text) if len(part) > 7)
    return names


def known_flags(tensorflow: str, tensorflow_dir: str | None, env: dict | None = None) -> dict:
    """``{"TF_XLA_FLAGS": {name: info}, "XLA_FLAGS": {name: info}}`` for the installed TensorFlow."""
    path = cache_dir() / f"doctor_flags_tf{tensorflow}.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        pass
    table = {variable: parse_help(_help_text(variable, env or dict(os.environ))) for variable in VARIABLES}
    if tensorflow_dir:
        binaries = [Path(tensorflow_dir) / name for name in _LIBRARIES if (Path(tensorflow_dir) / name).exists()]
        for name in library_names(binaries) - set(table["XLA_FLAGS"]):
            table["XLA_FLAGS"][name] = {"type": None, "default": None, "help": ""}
    if table["TF_XLA_FLAGS"]:  # never cache an empty answer (TensorFlow failed to start)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(table, sort_keys=True), encoding="utf-8")
    return table


def _help_text(variable: str, env: dict) -> str:
    child_env = {k: v for k, v in env.items() if k not in VARIABLES}
    child_env.update({variable: "--help", "TF_CPP_MIN_LOG_LEVEL": "0"})
    try:
        done = subprocess.run(module_command("xlalint.backend.doctor.probe", "first-op"),
                              capture_output=True, text=True, env=child_env, timeout=300)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stderr


def _problem(flag: Flag, table: dict, tensorflow: str) -> tuple[str, str] | None:
    """(detail, fix) when TensorFlow would abort on this flag, else None."""
    known = table[flag.variable]
    info = known.get(flag.name)
    abort = f"TensorFlow aborts {WHEN_PARSED[flag.variable]}"
    if info is None or (info["type"] == "string" and flag.value is None):
        other = next(v for v in VARIABLES if v != flag.variable)
        fix = f"remove {flag.raw} from {flag.variable}"
        if flag.name in table[other]:
            fix = f"move {flag.raw} to {other}: it is an {other} flag"
        elif info is None:
            close = difflib.get_close_matches(flag.name, list(known), n=1, cutoff=0.8)
            fix += f" (did you mean --{close[0]}?)" if close else ""
        why = "takes a value (--NAME=VALUE)" if info else f"is unknown to TensorFlow {tensorflow}"
        return f"{flag.raw} {why}: {abort} with 'Unknown flag in {flag.variable}: {flag.raw}'", fix
    if flag.value is not None and not _parses(info["type"], flag.value):
        return (f"{flag.raw}: TensorFlow cannot read {flag.value!r} as {info['type']}; {abort} "
                "('Flag parsing failed')", f"use --{flag.name}={_example(info['type'])}")
    return None


def _parses(kind: str | None, value: str) -> bool:
    try:
        if kind == "bool":
            return value in _BOOL_VALUES
        if kind in ("int32", "int64"):
            int(value)
        elif kind in ("float", "double"):
            float(value)
    except ValueError:
        return False
    return True


def _example(kind: str) -> str:
    return {"bool": "true|false", "int32": "N", "int64": "N", "float": "X", "double": "X"}.get(kind, "VALUE")


def _explanation(flag: Flag, table: dict) -> str:
    text = EXPLAIN.get(flag.name) or table[flag.variable][flag.name]["help"] or "known to TensorFlow"
    return text if len(text) <= 200 else text[:197] + "..."


def _setting(flags: list[Flag], name: str) -> str | None:
    values = [f.value if f.value is not None else "true" for f in flags if f.name == name]
    return values[-1] if values else None  # the last one wins


def autoclustering(flags: list[Flag]) -> dict:
    """Which devices ``TF_XLA_FLAGS`` turns auto-clustering on for."""
    level = _setting(flags, "tf_xla_auto_jit") or "0"
    on = level not in ("0", "-1")
    cpu = _setting(flags, "tf_xla_cpu_global_jit") in ("true", "1")
    return {"gpu": on, "cpu": on and cpu, "level": level}


def check_flags(env: dict, table: dict, tensorflow: str) -> list[Check]:
    """One check per flag set, plus what the flags do to auto-clustering."""
    checks, tf_flags = [], []
    for variable in VARIABLES:
        text = env.get(variable, "")
        flags = split_flags(variable, text)
        if variable == "TF_XLA_FLAGS":
            tf_flags = flags
        if not flags:
            checks.append(Check(variable, OK, "not set"))
        for flag in flags:
            problem = _problem(flag, table, tensorflow)
            name = f"{variable} {flag.raw}"
            checks.append(Check(name, PROBLEM, *problem) if problem else Check(name, OK, _explanation(flag, table)))
    checks.append(_autoclustering_check(tf_flags))
    return checks


def _autoclustering_check(flags: list[Flag]) -> Check:
    state = autoclustering(flags)
    devices_flag = _setting(flags, "tf_xla_enable_xla_devices") in ("true", "1")
    if state["gpu"]:
        where = "GPU and CPU" if state["cpu"] else "GPU only (add --tf_xla_cpu_global_jit for the CPU)"
        return Check("auto-clustering", OK, f"on (--tf_xla_auto_jit={state['level']}) for {where}")
    if devices_flag:
        return Check("auto-clustering", PROBLEM,
                     "TF_XLA_FLAGS sets --tf_xla_enable_xla_devices, which turns nothing on: it only creates "
                     "XLA_CPU/XLA_GPU devices; no op is compiled with XLA unless jit_compile=True asks",
                     "TF_XLA_FLAGS='--tf_xla_auto_jit=2 --tf_xla_cpu_global_jit' for auto-clustering (drop "
                     "--tf_xla_enable_xla_devices), or tf.function(jit_compile=True) on the functions to compile")
    return Check("auto-clustering", OK, "off: only functions with jit_compile=True use XLA (TF_XLA_FLAGS="
                 "'--tf_xla_auto_jit=2 --tf_xla_cpu_global_jit' turns it on for every device)")
