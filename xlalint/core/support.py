"""XLA support tables: which ops have an XLA kernel per device, for which dtypes.

Tables come from the installed TensorFlow's kernel registry (see
``xlalint.backend.support_tables``): the one shipped for that version, else one
generated once per TensorFlow version into the cache directory, else the closest
shipped one (``xlalint.core.tables``); the compile-time-constant inputs are the
ones shipped for that version, else for the closest shipped one. The
``tpu`` table is approximate: these wheels register no TPU backend, so it is
the CPU table without complex128.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from importlib import metadata
from pathlib import Path

from xlalint.core import tables

DEVICES = ("cpu", "gpu", "tpu")  # the XLA devices a run can target
APPROXIMATE_DEVICES = frozenset({"tpu"})  # no backend in these wheels: its table is derived from the CPU's
# the devices TensorFlow here registers XLA kernels for and runs code on (--verify, doctor)
LOCAL_DEVICES = tuple(d for d in DEVICES if d not in APPROXIMATE_DEVICES)
_TPU_UNSUPPORTED_DTYPES = frozenset({"complex128"})
TF_DISTRIBUTIONS = ("tensorflow", "tensorflow-cpu", "tensorflow-macos", "tensorflow-intel", "tf-nightly")


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "xlalint"


@dataclass(frozen=True)
class SupportTable:
    tensorflow: str
    source: str  # "shipped" | "generated" | "fallback"
    devices: dict  # device -> op -> [ {attr: [dtype, ...]}, ... ] (one dict per kernel)
    const_inputs: dict  # op -> [input arg names that must be compile-time constants]
    metadata_ops: frozenset

    def tables_used(self, tensorflow: str | None) -> dict:
        """What a report says of the tables a run on ``tensorflow`` used (``xlalint.core.tables.used``)."""
        return tables.used(tensorflow, (self.tensorflow, self.source))

    def kernels(self, device: str) -> dict:
        return self.devices[device]

    def has_op(self, device: str, op_type: str) -> bool:
        return op_type in self.devices[device]

    def dtype_mismatch(self, device: str, op_type: str, attrs: dict) -> tuple[str, str] | None:
        """``(attr, dtype)`` when no kernel of ``op_type`` accepts the op's dtypes, else None."""
        first = None
        for constraints in self.devices[device].get(op_type, []):
            bad = _first_bad(constraints, attrs)
            if bad is None:
                return None
            first = first or bad
        return first


def _first_bad(constraints: dict, attrs: dict) -> tuple[str, str] | None:
    for name, allowed in constraints.items():
        value = attrs.get(name)
        for dtype in value if isinstance(value, list) else [value]:
            if dtype is not None and dtype not in allowed:
                return name, dtype
    return None


def _with_tpu(devices: dict) -> dict:
    tpu = {
        op: [{attr: [t for t in types if t not in _TPU_UNSUPPORTED_DTYPES] for attr, types in kernel.items()}
             for kernel in kernels]
        for op, kernels in devices["cpu"].items()
    }
    return {**devices, "tpu": tpu}


def _generate(target: Path) -> bool:
    """Generate the table for the installed TensorFlow in a fresh process."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, suffix=".tmp")
    os.close(fd)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "xlalint.backend.support_tables", tmp],
            capture_output=True, timeout=600, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"),
        )
        if done.returncode == 0:
            os.replace(tmp, target)  # atomic: concurrent runs see a whole file or none
            return True
        return False
    except (OSError, subprocess.TimeoutExpired):
        return False
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def installed_version(dist: str) -> str | None:
    """A package's installed version, read from its metadata (no import); None when it is absent."""
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


@lru_cache(maxsize=None)
def installed_tensorflow() -> str | None:
    """The installed TensorFlow's version, read from package metadata (no import), once per process."""
    return next((version for version in map(installed_version, TF_DISTRIBUTIONS) if version), None)


def build_tag() -> str:
    """What besides versions makes traces and kernel tables differ between machines: the system, the
    processor and the TensorFlow distribution installed, e.g. ``linux-x86_64-tensorflow-cpu``."""
    distribution = next((d for d in TF_DISTRIBUTIONS if installed_version(d)), "no-tensorflow")
    return f"{sys.platform}-{platform.machine().lower() or 'unknown'}-{distribution}"


def generated_table(tensorflow: str | None) -> Path:
    """Where the support table generated for ``tensorflow`` on this machine is kept (named by the build: a
    ``~/.cache`` may travel between machines)."""
    return cache_dir() / f"support_tf{tensorflow}-{build_tag()}.json"


@lru_cache(maxsize=None)
def load_support(tensorflow: str | None) -> SupportTable:
    """The table for ``tensorflow`` (a version string); falls back to the closest shipped one."""
    shipped = tables.path(tables.SUPPORT, tensorflow or "")
    cached = generated_table(tensorflow)
    if shipped.exists():
        path, source = shipped, "shipped"
    elif tensorflow and (cached.exists() or _generate(cached)):
        path, source = cached, "generated"
    else:
        path, source = tables.path(tables.SUPPORT, tables.closest(tables.SUPPORT, tensorflow)), "fallback"
    table = json.loads(path.read_text(encoding="utf-8"))
    consts = json.loads(tables.path(tables.CONST_INPUTS, tables.closest(tables.CONST_INPUTS, tensorflow))
                        .read_text(encoding="utf-8"))
    return SupportTable(
        tensorflow=table["tensorflow"],
        source=source,
        devices=_with_tpu(table["devices"]),
        const_inputs=consts["compile_time_constant_inputs"],
        metadata_ops=frozenset(consts["metadata_ops"]),
    )
