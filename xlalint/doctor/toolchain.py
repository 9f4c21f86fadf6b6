"""Where XLA looks for ``ptxas``, ``nvlink`` and ``libdevice``, replayed over the file system.

The order follows the XLA sources TensorFlow 2.21 is built from (cited in docs/doctor.md):
``CandidateCudaRoots`` (xla/tsl/platform/default/cuda_root_path.cc, with the preferred
directory, ``--xla_gpu_cuda_data_dir``, first and "." last), ``FindCudaExecutable``
(xla/stream_executor/cuda/subprocess_compilation.cc: the preferred directory's bin/, then
PATH, then each candidate root's bin/, keeping the first whose ``--version`` is new enough)
and ``GetLibdeviceDir`` (xla/service/gpu/llvm_gpu_backend: the first root with
nvvm/libdevice, then libdevice.10.bc in it). No TensorFlow import: plain files and processes.
"""

from __future__ import annotations

import glob
import os
import re
import subprocess
from dataclasses import dataclass, field

DEFAULT_DATA_DIR = "./cuda_sdk_lib"  # --xla_gpu_cuda_data_dir's default in TF 2.21
RUNFILES_DIRS = ("cuda_nvcc", "cuda_nvdisasm", "nvidia_nvshmem", "cuda_nvvm", "cuda_cudart")
# (minimum version, versions XLA refuses) per tool, from subprocess_compilation.cc.
TOOLS = {"ptxas": ((11, 8, 0), {(12, 3, 103)}), "nvlink": ((11, 8, 0), set())}
_VERSION = re.compile(r"\bV(\d+)\.(\d+)\.(\d+)\b")
# First CUDA release whose ptxas knows each compute capability (NVIDIA's release notes).
PTXAS_FOR_CAPABILITY = {(7, 0): (9, 0), (7, 5): (10, 0), (8, 0): (11, 0), (8, 6): (11, 1), (8, 7): (11, 4),
                        (8, 9): (11, 8), (9, 0): (11, 8), (10, 0): (12, 8), (10, 1): (12, 8),
                        (12, 0): (12, 8), (10, 3): (12, 9), (12, 1): (12, 9)}


@dataclass
class ToolSearch:
    tool: str
    found: str | None = None
    version: tuple | None = None
    tried: list = field(default_factory=list)  # (path, why it was passed over)


def data_dir(xla_flags: str) -> str:
    """``--xla_gpu_cuda_data_dir`` from XLA_FLAGS (the last one wins), else XLA's default."""
    values = re.findall(r"--xla_gpu_cuda_data_dir=(\S+)", xla_flags or "")
    return values[-1].strip("'\"") if values else DEFAULT_DATA_DIR


def cuda_roots(preferred: str, tensorflow_dir: str, cuda_version: str | None, executable: str,
               system: str = "/") -> list[str]:
    """The CUDA roots XLA tries, in its order (``CandidateCudaRoots(preferred)``).

    ``tensorflow_dir`` stands for the directory of the TensorFlow library that holds the code
    (the package directory; its python/ subdirectory leads to the same NVIDIA paths).
    ``system``: where /usr/local/cuda and /opt/cuda are looked for (tests use a fake tree).
    """
    roots = [preferred] if preferred else []
    roots += [os.path.join(executable + ".runfiles", name) for name in RUNFILES_DIRS]
    # TF_CUDA_TOOLKIT_PATH is /usr/local/cuda in the wheels
    roots += [os.path.join(system, "usr/local/cuda"), os.path.join(system, "opt/cuda")]
    nvidia = "nvidia/cu13" if (cuda_version or "").startswith("13") else "nvidia/cuda_nvcc"
    roots += [os.path.join(tensorflow_dir, "..", nvidia), os.path.join(tensorflow_dir, "..", "..", nvidia),
              os.path.join(tensorflow_dir, "cuda"),
              os.path.join(tensorflow_dir, "..", "..", "..", ".."),
              os.path.join(tensorflow_dir, "..", "..", "..", "..", "..")]
    return [os.path.normpath(r) for r in roots] + ["."]


def tool_version(path: str) -> tuple | None:
    """``(major, minor, patch)`` from ``TOOL --version``, read the way XLA reads it."""
    try:
        done = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    match = _VERSION.search(done.stdout) if done.returncode == 0 else None
    return tuple(int(g) for g in match.groups()) if match else None


def find_tool(tool: str, preferred: str, roots: list[str], path_env: str) -> ToolSearch:
    """``FindCudaExecutable``: preferred/bin, then PATH, then every root's bin/ (PATH is preferred)."""
    minimum, excluded = TOOLS[tool]
    candidates = [os.path.join(preferred, "bin", tool)]
    candidates += [os.path.join(entry, tool) for entry in path_env.split(os.pathsep)] if path_env else []
    candidates += [os.path.join(root, "bin", tool) for root in roots]
    search = ToolSearch(tool)
    for candidate in dict.fromkeys(candidates):
        if not os.path.isfile(candidate):
            continue
        version = tool_version(candidate)
        if version is None:
            search.tried.append((candidate, "`--version` failed or printed no version"))
        elif version < minimum:
            search.tried.append((candidate, f"version {dotted(version)} is older than {dotted(minimum)}"))
        elif version in excluded:
            search.tried.append((candidate, f"version {dotted(version)} is excluded by XLA (known bug)"))
        else:
            search.found, search.version = candidate, version
            break
    return search


def find_libdevice(roots: list[str]) -> tuple[str | None, str | None]:
    """(the libdevice directory XLA picks, the libdevice.10.bc path if that file is there)."""
    for root in roots:
        directory = os.path.join(root, "nvvm", "libdevice")
        if os.path.isdir(directory):
            path = os.path.join(directory, "libdevice.10.bc")
            return directory, path if os.path.isfile(path) else None
    return None, None


def other_toolkits(env: dict, searched: list[str], system: str = "/") -> list[str]:
    """CUDA trees on this machine that XLA does not search (for a --xla_gpu_cuda_data_dir fix)."""
    places = [env.get("CUDA_HOME"), env.get("CUDA_PATH"), env.get("CONDA_PREFIX")]
    places += sorted(glob.glob(os.path.join(system, "usr/local/cuda-*")), reverse=True)
    seen = {os.path.normpath(s) for s in searched}
    return [p for p in dict.fromkeys(os.path.normpath(p) for p in places if p)
            if p not in seen and os.path.isfile(os.path.join(p, "bin", "ptxas"))]


def ptxas_for_capability(version: tuple, capability: tuple) -> bool | None:
    """Whether this ptxas can compile for the GPU (None: capability not in our table)."""
    needed = PTXAS_FOR_CAPABILITY.get(tuple(capability))
    return None if needed is None else version[:2] >= needed


def dotted(version) -> str:
    return ".".join(str(v) for v in version)


def driver_cuda_version() -> tuple | None:
    """The newest CUDA version the installed NVIDIA driver supports, from libcuda (no GPU use)."""
    import ctypes

    try:
        libcuda = ctypes.CDLL("libcuda.so.1")
        version = ctypes.c_int()
        if libcuda.cuDriverGetVersion(ctypes.byref(version)) != 0:
            return None
    except (OSError, AttributeError):
        return None
    return version.value // 1000, version.value % 1000 // 10


def driver_version(proc_file: str = "/proc/driver/nvidia/version") -> str | None:
    try:
        with open(proc_file, encoding="utf-8") as handle:
            match = re.search(r"Kernel Module\s+(?:for \S+\s+)?(\d[\d.]+)", handle.read())
    except OSError:
        return None
    return match.group(1) if match else None
