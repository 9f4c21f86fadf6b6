"""``xlalint doctor``: is XLA on in this environment, and if not, what to change.

Everything TensorFlow-facing runs in child processes (``xlalint.backend.doctor.probe`` and
``xlalint.backend.doctor.smoke``), so flags that abort TensorFlow abort a child, and the
doctor reports them.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

from xlalint.version import VERSION
from xlalint.doctor.flags import VARIABLES, check_flags, known_flags, split_flags
from xlalint.doctor.gpu_checks import toolchain_checks
from xlalint.doctor.model import OK, PROBLEM, SKIPPED, Check, DeviceResult, Diagnosis
from xlalint.doctor.toolchain import driver_cuda_version, driver_version
from xlalint.core.support import LOCAL_DEVICES, load_support
from xlalint.core.tables import describe
from xlalint.process.python_child import module_command

CHOICES = (*LOCAL_DEVICES, "all")
AUTOCLUSTER_FLAGS = "--tf_xla_auto_jit=2 --tf_xla_cpu_global_jit"
_FATAL = re.compile(r"^F\d{4} [^\]]*\] (.*)$")
TIMEOUT = 300


def run_child(module: str, args: list[str], env: dict) -> tuple[dict | None, str | None]:
    """(the child's JSON answer, None) or (None, why it gave none: TensorFlow's fatal line if any)."""
    try:
        done = subprocess.run(module_command(module, *args), capture_output=True, text=True,
                              env={**env, "TF_CPP_MIN_LOG_LEVEL": env.get("TF_CPP_MIN_LOG_LEVEL", "2")},
                              timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return None, f"no answer within {TIMEOUT} s"
    if done.returncode == 0:
        try:
            return json.loads(done.stdout.strip().splitlines()[-1]), None
        except (ValueError, IndexError):
            pass
    return None, _fatal_line(done.stderr) or f"exit status {done.returncode}"


def _fatal_line(stderr: str) -> str | None:
    lines = stderr.splitlines()
    for line in lines:
        match = _FATAL.match(line)
        if match:
            return match.group(1)
    return next((line for line in reversed(lines) if line.strip()), None)


def diagnose(device: str = "all", require: str | None = None, env: dict | None = None) -> Diagnosis:
    env = dict(os.environ if env is None else env)
    wanted: tuple[str, ...] = LOCAL_DEVICES if device == "all" else (device,)
    if require:
        wanted = tuple(d for d in LOCAL_DEVICES if d in wanted or require in (d, "all"))
    clean = {k: v for k, v in env.items() if k not in VARIABLES}  # the probe must answer whatever the flags
    probe, error = run_child("xlalint.backend.doctor.probe", [], clean)
    if probe is None:
        check = Check("tensorflow", PROBLEM, f"TensorFlow does not start: {error}",
                      "pip install tensorflow (or tensorflow[and-cuda] for GPUs)")
        return Diagnosis(VERSION, None, [check], [DeviceResult(d, "broken", detail=error or "") for d in wanted],
                         _required(device, require, set()))
    checks = build_checks(probe) + [tables_check(probe["tensorflow"])]
    table = known_flags(probe["tensorflow"], probe["tensorflow_dir"], clean)
    checks += check_flags(env, table, probe["tensorflow"])
    if "gpu" in wanted:
        checks += toolchain_checks(env, probe, driver_cuda_version(), sys.executable)
    results = [smoke_device(d, bool(probe["gpus"]), env) for d in wanted]
    required = _required(device, require, {r.device for r in results if r.xla != "absent"})
    checks += [c for r in results for c in _smoke_checks(r, r.device in required, probe["build"])]
    checks.append(cache_check(env, results))
    return Diagnosis(VERSION, probe["tensorflow"], checks, results, required)


def _required(device: str, require: str | None, present: set) -> tuple[str, ...]:
    """--require, else an explicitly named --device, else every device that is present."""
    if require:
        return LOCAL_DEVICES if require == "all" else (require,)
    if device != "all":
        return (device,)
    return tuple(d for d in LOCAL_DEVICES if d in present)


def build_checks(probe: dict) -> list[Check]:
    build, gpus = probe["build"], probe["gpus"]
    cuda = (f"CUDA {build.get('cuda_version')}, cuDNN {build.get('cudnn_version')}" if build.get("is_cuda_build")
            else "CPU-only build (no CUDA)")
    kernels = probe["jit_kernels"]
    checks = [
        Check("tensorflow build", OK, f"TensorFlow {probe['tensorflow']}, {cuda}"),
        Check("xla jit registrations", OK if kernels["XLA_CPU_JIT"] else PROBLEM,
              ", ".join(f"{name}: {count} kernels" for name, count in kernels.items())
              + (f"; XLA devices: {', '.join(probe['xla_devices'])}" if probe["xla_devices"] else ""),
              None if kernels["XLA_CPU_JIT"] else "reinstall TensorFlow: this build has no XLA JIT kernels"),
        Check("jit settings", OK, f"tf.config.optimizer.get_jit() = {probe['get_jit']!r}; Keras model.compile() "
              f"picks jit_compile={probe['keras_jit_compile']!r} here (\"auto\" means XLA only with a GPU)"),
    ]
    if gpus:
        driver = driver_version()
        described = "; ".join(f"{g['name']} {g.get('device_name') or ''} compute capability "
                              f"{'.'.join(map(str, g['compute_capability'] or ['?']))}" for g in gpus)
        checks.append(Check("gpus", OK, described + (f"; driver {driver}" if driver else "")))
    else:
        why = "" if build.get("is_cuda_build") else " (and this TensorFlow is built without CUDA)"
        checks.append(Check("gpus", SKIPPED, f"no GPU visible{why}"))
    return checks


def tables_check(tensorflow: str) -> Check:
    """Which tables xlalint uses for this TensorFlow: shipped, generated here, or another version's."""
    support = load_support(tensorflow)
    detail = describe(support.tables_used(tensorflow))
    if support.source == "fallback":
        return Check("xlalint tables", PROBLEM, detail + " (this TensorFlow's XLA registry could not be read)",
                     f"run `{sys.executable} -m xlalint.backend.support_tables OUT.json` to see why")
    return Check("xlalint tables", OK, detail)


def smoke_env(env: dict, cache: bool) -> dict:
    """The user's environment with auto-clustering turned on (appended flags win); without the
    persistent cache unless ``cache``, so compilations are counted, not loaded."""
    flags = env.get("TF_XLA_FLAGS", "").split()
    if not cache:
        flags = [f for f in flags if not f.lstrip("-").startswith("tf_xla_persistent_cache")]
    return {**env, "TF_XLA_FLAGS": " ".join(flags + AUTOCLUSTER_FLAGS.split())}


def smoke_device(device: str, gpu_visible: bool, env: dict, cache: bool = False) -> DeviceResult:
    if device == "gpu" and not gpu_visible:
        return DeviceResult("gpu", "absent", detail="no GPU visible to TensorFlow")
    smoke, error = run_child("xlalint.backend.doctor.smoke", [device], smoke_env(env, cache))
    if smoke is None:
        return DeviceResult(device, "broken", detail=error or "")
    if smoke.get("error"):
        return DeviceResult(device, "broken", detail=smoke["error"], smoke=smoke)
    jit = smoke["jit_compile"]
    if not jit["ran"]:
        return DeviceResult(device, "broken", detail=f"jit_compile=True failed: {jit['error']}", smoke=smoke)
    agree = "results agree with TensorFlow" if jit["allclose"] else \
        f"results differ from TensorFlow (max |diff| {jit['max_abs_diff']:.3g})"
    return DeviceResult(device, "ok" if jit["allclose"] else "broken", jit["compile_s"], jit["step_s"],
                        f"{_count(jit['compilations'])}, {agree}", smoke)


def _count(compilations) -> str:
    return ("compilations not counted (profiler busy, or a TensorFlow whose XLA builds leave no profiler event)"
            if compilations is None else f"{compilations} compilation(s)")


def _smoke_checks(result: DeviceResult, required: bool, build: dict) -> list[Check]:
    name = f"xla on {result.device}"
    if result.xla == "absent":
        if not required:
            return [Check(name, SKIPPED, result.detail)]
        fix = ("check the NVIDIA driver (nvidia-smi) and that the container is given the GPU (docker run --gpus all)"
               if build.get("is_cuda_build") else "install a CUDA build: pip install 'tensorflow[and-cuda]'")
        return [Check(name, PROBLEM, f"{result.detail}: XLA cannot run on {result.device}", fix)]
    if result.xla == "broken":
        return [Check(name, PROBLEM, result.detail, _broken_fix(result.detail))]
    assert result.compile_s is not None and result.step_s is not None  # an "ok" result has both
    checks = [Check(name, OK, f"jit_compile=True: compiled in {result.compile_s:.2f} s, step "
                    f"{result.step_s * 1e3:.2f} ms (TensorFlow {result.smoke['tf_step_s'] * 1e3:.2f} ms), "
                    + result.detail)]
    auto = result.smoke["autocluster"]
    if auto["ran"] and auto["compilations"] != 0 and auto["allclose"] is not False:
        checks.append(Check(f"auto-clustering on {result.device}", OK,
                            f"with {AUTOCLUSTER_FLAGS}: {_count(auto['compilations'])}, step "
                            f"{auto['step_s'] * 1e3:.2f} ms, results agree with TensorFlow"))
    else:
        checks.append(Check(f"auto-clustering on {result.device}", PROBLEM,
                            f"with {AUTOCLUSTER_FLAGS}: " + (auto["error"] or ("no cluster was compiled" if not
                            auto["compilations"] else "results differ from TensorFlow")),
                            "compile the functions with tf.function(jit_compile=True) instead"))
    return checks


def _broken_fix(detail: str) -> str:
    unknown = re.search(r"Unknown flag in (\w+): (\S+)", detail or "")
    if unknown:
        return f"remove {unknown.group(2)} from {unknown.group(1)} (see the flag checks above)"
    if "Flag parsing failed" in (detail or ""):
        return "fix the flag value named in the flag checks above"
    return "see the GPU toolchain checks above; rerun with TF_CPP_MIN_LOG_LEVEL=0 for TensorFlow's log"


def cache_check(env: dict, results: list[DeviceResult]) -> Check:
    """With --tf_xla_persistent_cache_directory set: does a second process load instead of compiling?

    Two processes with the cache: the first may compile and store, the second must load.
    """
    flags = split_flags("TF_XLA_FLAGS", env.get("TF_XLA_FLAGS", ""))
    directory = next((f.value for f in reversed(flags) if f.name == "tf_xla_persistent_cache_directory"), None)
    name = "persistent compilation cache"
    if not directory:
        return Check(name, SKIPPED, "not configured (TF_XLA_FLAGS=--tf_xla_persistent_cache_directory=DIR keeps "
                     "compiled executables for the next process)")
    working = [r for r in results if r.xla == "ok"]
    if not working:
        return Check(name, SKIPPED, f"{directory}: no device ran XLA to test it")
    device = working[0].device
    smoke_device(device, True, env, cache=True)  # compiles and stores (or finds the cache filled already)
    second = smoke_device(device, True, env, cache=True)
    if second.xla != "ok":
        return Check(name, PROBLEM, f"a second process failed with the cache in {directory}: {second.detail}",
                     f"empty {directory} and run again")
    counts = [second.smoke[k]["compilations"] for k in ("jit_compile", "autocluster")]
    if counts == [0, 0]:
        return Check(name, OK, f"{directory}: a second process loaded both functions from the cache "
                     "(0 compilations)")
    return Check(name, PROBLEM, f"{directory}: a second process still compiled ({counts[0]} + {counts[1]} "
                 "compilation(s)): executables are not served from the cache",
                 "check that the directory is writable, and --tf_xla_persistent_cache_device_types and "
                 "--tf_xla_persistent_cache_read_only in TF_XLA_FLAGS")
