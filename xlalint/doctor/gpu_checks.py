"""Checks of the XLA GPU toolchain: ptxas, nvlink, libdevice, and ptxas against the driver and GPU."""

from __future__ import annotations

import os
import re

from xlalint.doctor.model import OK, PROBLEM, SKIPPED, Check
from xlalint.doctor.toolchain import (cuda_roots, data_dir, dotted, find_libdevice, find_tool, other_toolkits,
                                      ptxas_for_capability)


def _with_data_dir(xla_flags: str, directory: str) -> str:
    kept = re.sub(r"--xla_gpu_cuda_data_dir=\S+", "", xla_flags or "").split()
    return "export XLA_FLAGS=\"" + " ".join(kept + [f"--xla_gpu_cuda_data_dir={directory}"]) + "\""


def _install(tensorflow: str) -> str:
    return (f"pip install 'tensorflow[and-cuda]=={tensorflow}' (brings NVIDIA's nvcc package: ptxas, nvlink "
            "and libdevice where XLA looks for them)")


def toolchain_checks(env: dict, probe: dict, driver: tuple | None, executable: str, system: str = "/") -> list[Check]:
    """ptxas, nvlink and libdevice as XLA would find them, each with the fix when missing.

    ``driver``: the driver's CUDA version; ``system``: the root of /usr/local/cuda and /opt/cuda.
    """
    build = probe["build"]
    if not build.get("is_cuda_build"):
        return [Check("gpu toolchain", SKIPPED, "this TensorFlow is built without CUDA: XLA has no GPU backend",
                      _install(probe["tensorflow"]) + " in place of this CPU-only package")]
    xla_flags = env.get("XLA_FLAGS", "")
    preferred = data_dir(xla_flags)
    roots = cuda_roots(preferred, probe["tensorflow_dir"], build.get("cuda_version"), executable, system)
    elsewhere = other_toolkits(env, roots, system)
    fix = _with_data_dir(xla_flags, elsewhere[0]) + f" (CUDA found at {elsewhere[0]})" if elsewhere \
        else _install(probe["tensorflow"])
    checks = []
    ptxas = find_tool("ptxas", preferred, roots, env.get("PATH", ""))
    for search in (ptxas, find_tool("nvlink", preferred, roots, env.get("PATH", ""))):
        passed = "; ".join(f"{path}: {why}" for path, why in search.tried)
        if search.found:
            checks.append(Check(f"gpu toolchain: {search.tool}", OK,
                                f"{search.found} (CUDA {dotted(search.version)})" + (f"; passed over {passed}" if passed else "")))
        elif search.tool == "nvlink":
            checks.append(Check("gpu toolchain: nvlink", OK, "not found: optional, XLA then links each "
                                "module in one piece (no parallel compilation)" + (f"; passed over {passed}" if passed else "")))
        else:
            checks.append(Check("gpu toolchain: ptxas", PROBLEM,
                                "XLA will fail with \"Couldn't find a suitable version of ptxas\" or \"No PTX "
                                f"compilation provider is available\"; searched {preferred}/bin, PATH and "
                                f"{len(roots)} CUDA roots" + (f"; passed over {passed}" if passed else ""), fix))
    directory, libdevice = find_libdevice(roots)
    if libdevice:
        checks.append(Check("gpu toolchain: libdevice", OK, libdevice))
    else:
        where = f"{directory} has no libdevice.10.bc" if directory else "no CUDA root has nvvm/libdevice"
        checks.append(Check("gpu toolchain: libdevice", PROBLEM,
                            f"{where}: XLA warns \"Can't find libdevice directory ${{CUDA_DIR}}/nvvm/libdevice\" and "
                            "kernels using math functions fail with \"libdevice not found at ./libdevice.10.bc\"",
                            _libdevice_fix(env, roots) or fix))
    checks += _version_checks(ptxas, driver, probe.get("gpus", []))
    return checks


def _libdevice_fix(env: dict, roots: list[str]) -> str | None:
    """A link that puts a stray libdevice.10.bc (conda keeps it in lib/) where XLA looks."""
    prefix = env.get("CONDA_PREFIX")
    stray = os.path.join(prefix, "lib", "libdevice.10.bc") if prefix else None
    if prefix and stray and os.path.isfile(stray):
        target = os.path.join(prefix, "nvvm", "libdevice")
        advice = f"mkdir -p {target} && ln -s {stray} {target}/"
        if os.path.normpath(prefix) not in roots:
            advice += f" and {_with_data_dir(env.get('XLA_FLAGS', ''), prefix)}"
        return advice
    return None


def _version_checks(ptxas, driver: tuple | None, gpus: list[dict]) -> list[Check]:
    if not ptxas.found:
        return []
    checks = []
    if driver is None:
        checks.append(Check("gpu toolchain: ptxas vs driver", SKIPPED, "no NVIDIA driver found (libcuda.so.1)"))
    elif ptxas.version[:2] > driver:
        checks.append(Check("gpu toolchain: ptxas vs driver", PROBLEM,
                            f"ptxas is CUDA {dotted(ptxas.version[:2])}, the driver supports CUDA up to "
                            f"{dotted(driver)}: XLA turns parallel compilation off and kernels it builds may not load",
                            f"install a driver for CUDA {dotted(ptxas.version[:2])} or newer, or a ptxas of CUDA "
                            f"{dotted(driver)} (pip install 'nvidia-cuda-nvcc-cu12=={dotted(driver)}.*')"))
    else:
        checks.append(Check("gpu toolchain: ptxas vs driver", OK,
                            f"ptxas CUDA {dotted(ptxas.version[:2])} <= driver's CUDA {dotted(driver)}"))
    for gpu in gpus:
        capability = gpu.get("compute_capability")
        fits = ptxas_for_capability(ptxas.version, capability) if capability else None
        if fits is False:
            checks.append(Check(f"gpu toolchain: ptxas for {gpu['name']}", PROBLEM,
                                f"ptxas {dotted(ptxas.version)} cannot compile for compute capability "
                                f"{dotted(capability)}: XLA falls back to the driver (\"ptxas too old\")",
                                "install a newer CUDA nvcc (pip install -U nvidia-cuda-nvcc-cu12)"))
    return checks
