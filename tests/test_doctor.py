"""``xlalint doctor``: the GPU toolchain search and the flag checks on fake trees and tables
(no TensorFlow), then the real command on this machine's TensorFlow (CPU)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys

import pytest
from helpers import run_without_tf, run_xlalint

from xlalint.doctor.flags import autoclustering, check_flags, library_names, parse_help, split_flags
from xlalint.doctor.gpu_checks import toolchain_checks
from xlalint.doctor.model import OK, PROBLEM, SKIPPED
from xlalint.doctor.toolchain import cuda_roots, data_dir, find_libdevice, find_tool


def fake_tool(path, version: str) -> str:
    """An executable that answers ``--version`` like NVIDIA's tools do."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\necho 'Cuda compilation tools, release {version[:4]}, V{version}'\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


def fake_libdevice(root) -> str:
    target = root / "nvvm" / "libdevice" / "libdevice.10.bc"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(b"BC")
    return str(target)


@pytest.fixture
def site(tmp_path, monkeypatch):
    """A fake site-packages with an empty tensorflow/ package; "." is an empty directory."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "site-packages" / "tensorflow").mkdir(parents=True)
    return tmp_path / "site-packages"


def probe(site, gpus=(), cuda="12.5.1") -> dict:
    return {"tensorflow": "2.21.0", "tensorflow_dir": str(site / "tensorflow"), "gpus": list(gpus),
            "build": {"is_cuda_build": True, "cuda_version": cuda, "cudnn_version": "9"}}


def checks_by_name(env, site, **kwargs) -> dict:
    found = toolchain_checks(env, probe(site, **kwargs.pop("gpus", {})), kwargs.pop("driver", (12, 8)),
                             "/nonexistent/python", str(site.parent / "root"))
    return {c.name: c for c in found}


def roots(site, preferred="./cuda_sdk_lib", cuda="12.5.1"):
    return cuda_roots(preferred, str(site / "tensorflow"), cuda, "/nonexistent/python", str(site.parent / "root"))


def test_search_order_follows_xla(site):
    order = roots(site, "/data")
    assert order[0] == "/data" and order[-1] == "."
    nvidia = order.index(os.path.normpath(site / "nvidia" / "cuda_nvcc"))
    assert order.index(str(site.parent / "root" / "usr" / "local" / "cuda")) < nvidia < order.index(os.path.normpath(site / "tensorflow" / "cuda"))
    assert os.path.normpath(site / "nvidia" / "cu13") in roots(site, cuda="13.0")


def test_ptxas_only_in_the_nvidia_pip_layout_is_found(site):
    nvcc = site / "nvidia" / "cuda_nvcc"
    ptxas = fake_tool(nvcc / "bin" / "ptxas", "12.5.82")
    libdevice = fake_libdevice(nvcc)
    checks = checks_by_name({"PATH": ""}, site)
    assert checks["gpu toolchain: ptxas"].status == OK and ptxas in checks["gpu toolchain: ptxas"].detail
    assert checks["gpu toolchain: libdevice"].detail == os.path.normpath(libdevice)
    assert checks["gpu toolchain: ptxas vs driver"].status == OK


def test_path_wins_over_cuda_roots_and_xla_flags_win_over_path(site, tmp_path):
    in_roots = fake_tool(site / "nvidia" / "cuda_nvcc" / "bin" / "ptxas", "12.5.82")
    on_path = fake_tool(tmp_path / "bin" / "ptxas", "12.4.131")
    chosen = fake_tool(tmp_path / "toolkit" / "bin" / "ptxas", "12.6.20")
    assert find_tool("ptxas", "./cuda_sdk_lib", roots(site), str(tmp_path / "bin")).found == on_path
    preferred = data_dir(f"--xla_dump_to=x --xla_gpu_cuda_data_dir={tmp_path / 'toolkit'}")
    assert find_tool("ptxas", preferred, roots(site, preferred), str(tmp_path / "bin")).found == chosen
    assert find_tool("ptxas", "./cuda_sdk_lib", roots(site), "").found == os.path.normpath(in_roots)


def test_too_old_and_excluded_ptxas_are_passed_over(site, tmp_path):
    fake_tool(tmp_path / "old" / "ptxas", "11.2.152")
    fake_tool(tmp_path / "buggy" / "ptxas", "12.3.103")
    path = os.pathsep.join([str(tmp_path / "old"), str(tmp_path / "buggy")])
    search = find_tool("ptxas", "./cuda_sdk_lib", roots(site), path)
    assert search.found is None
    assert [why.split(" is ")[-1] for _, why in search.tried] == ["older than 11.8.0", "excluded by XLA (known bug)"]
    check = checks_by_name({"PATH": path}, site)["gpu toolchain: ptxas"]
    assert check.status == PROBLEM and "11.2.152" in check.detail
    assert "tensorflow[and-cuda]==2.21.0" in check.fix


def test_missing_ptxas_and_libdevice_are_problems_with_fixes(site):
    checks = checks_by_name({"PATH": ""}, site)
    assert checks["gpu toolchain: ptxas"].status == PROBLEM
    assert "Couldn't find a suitable version of ptxas" in checks["gpu toolchain: ptxas"].detail
    assert checks["gpu toolchain: libdevice"].status == PROBLEM
    assert "nvvm/libdevice" in checks["gpu toolchain: libdevice"].detail and checks["gpu toolchain: libdevice"].fix
    assert checks["gpu toolchain: nvlink"].status == OK  # optional
    assert find_libdevice(roots(site)) == (None, None)


def test_conda_libdevice_gets_a_link_fix(site, tmp_path):
    conda = tmp_path / "conda"
    (conda / "lib").mkdir(parents=True)
    (conda / "lib" / "libdevice.10.bc").write_bytes(b"BC")
    fix = checks_by_name({"PATH": "", "CONDA_PREFIX": str(conda)}, site)["gpu toolchain: libdevice"].fix
    assert f"ln -s {conda}/lib/libdevice.10.bc {conda}/nvvm/libdevice/" in fix
    assert f"--xla_gpu_cuda_data_dir={conda}" in fix


def test_toolkit_outside_the_search_gives_an_xla_flags_line(site, tmp_path):
    fake_tool(tmp_path / "cuda-12.4" / "bin" / "ptxas", "12.4.131")
    env = {"PATH": "", "CUDA_HOME": str(tmp_path / "cuda-12.4"), "XLA_FLAGS": "--xla_dump_to=/d"}
    fix = checks_by_name(env, site)["gpu toolchain: ptxas"].fix
    assert fix.startswith(f'export XLA_FLAGS="--xla_dump_to=/d --xla_gpu_cuda_data_dir={tmp_path / "cuda-12.4"}"')


def test_ptxas_against_driver_and_gpu(site):
    fake_tool(site / "nvidia" / "cuda_nvcc" / "bin" / "ptxas", "12.4.131")
    gpus = [{"name": "/physical_device:GPU:0", "compute_capability": [12, 0]}]
    checks = checks_by_name({"PATH": ""}, site, driver=(12, 2), gpus={"gpus": gpus})
    assert checks["gpu toolchain: ptxas vs driver"].status == PROBLEM
    assert "12.2" in checks["gpu toolchain: ptxas vs driver"].fix
    assert checks["gpu toolchain: ptxas for /physical_device:GPU:0"].status == PROBLEM
    gpus[0]["compute_capability"] = [9, 0]
    checks = checks_by_name({"PATH": ""}, site, driver=(12, 4), gpus={"gpus": gpus})
    assert checks["gpu toolchain: ptxas vs driver"].status == OK
    assert "gpu toolchain: ptxas for /physical_device:GPU:0" not in checks


def test_cpu_only_tensorflow_skips_the_toolchain(site):
    cpu = dict(probe(site), build={"is_cuda_build": False})
    [check] = toolchain_checks({"PATH": ""}, cpu, None, "/nonexistent/python", str(site.parent / "root"))
    assert check.status == SKIPPED and "tensorflow[and-cuda]" in check.fix


HELP = """usage: --help
Flags:
\t--tf_xla_auto_jit="0"            \tstring\tControl compilation.
\t--tf_xla_cpu_global_jit=false    \tbool\tEnables global JIT compilation for CPU.
\t--tf_xla_enable_xla_devices=false\tbool\tGenerate XLA_* devices. Deprecated.
\t--tf_xla_min_cluster_size=4      \tint32\tMinimum number of operators.
"""
TABLE = {"TF_XLA_FLAGS": parse_help(HELP),
         "XLA_FLAGS": {"xla_dump_to": {"type": "string", "default": "", "help": "Dump here."}}}


def flag_checks(tf_flags="", xla_flags="") -> dict:
    return {c.name: c for c in check_flags({"TF_XLA_FLAGS": tf_flags, "XLA_FLAGS": xla_flags}, TABLE, "2.21.0")}


def test_parse_help_reads_type_default_and_text():
    assert TABLE["TF_XLA_FLAGS"]["tf_xla_auto_jit"] == {"type": "string", "default": "0", "help": "Control compilation."}
    assert TABLE["TF_XLA_FLAGS"]["tf_xla_min_cluster_size"]["type"] == "int32"


def test_unknown_misplaced_and_unparsable_flags_are_problems():
    checks = flag_checks("--tf_xla_auto_jt=2 --xla_dump_to=/d --tf_xla_cpu_global_jit=yes "
                         "--tf_xla_auto_jit --tf_xla_min_cluster_size=8", "--xla_dump_to=/dumps")
    unknown = checks["TF_XLA_FLAGS --tf_xla_auto_jt=2"]
    assert unknown.status == PROBLEM and "Unknown flag in TF_XLA_FLAGS: --tf_xla_auto_jt=2" in unknown.detail
    assert "did you mean --tf_xla_auto_jit?" in unknown.fix
    assert checks["TF_XLA_FLAGS --xla_dump_to=/d"].fix.startswith("move --xla_dump_to=/d to XLA_FLAGS")
    assert "cannot read 'yes' as bool" in checks["TF_XLA_FLAGS --tf_xla_cpu_global_jit=yes"].detail
    assert "takes a value" in checks["TF_XLA_FLAGS --tf_xla_auto_jit"].detail
    assert checks["TF_XLA_FLAGS --tf_xla_min_cluster_size=8"].status == OK
    assert checks["XLA_FLAGS --xla_dump_to=/dumps"].status == OK


def test_enable_xla_devices_alone_turns_nothing_on():
    alone = flag_checks("--tf_xla_enable_xla_devices")
    assert alone["TF_XLA_FLAGS --tf_xla_enable_xla_devices"].status == OK  # a valid flag...
    assert "compiles nothing" in alone["TF_XLA_FLAGS --tf_xla_enable_xla_devices"].detail
    assert alone["auto-clustering"].status == PROBLEM  # ...that turns nothing on
    assert "--tf_xla_auto_jit=2" in alone["auto-clustering"].fix
    assert flag_checks("--tf_xla_enable_xla_devices --tf_xla_auto_jit=2")["auto-clustering"].status == OK


def test_autoclustering_per_device():
    assert autoclustering(split_flags("TF_XLA_FLAGS", "--tf_xla_auto_jit=2")) == {"gpu": True, "cpu": False, "level": "2"}
    both = split_flags("TF_XLA_FLAGS", "--tf_xla_auto_jit=1 --tf_xla_cpu_global_jit")
    assert autoclustering(both)["cpu"] is True
    off = split_flags("TF_XLA_FLAGS", "--tf_xla_auto_jit=2 --tf_xla_cpu_global_jit --tf_xla_auto_jit=-1")
    assert autoclustering(off) == {"gpu": False, "cpu": False, "level": "-1"}  # the last one wins


def test_library_names_split_packed_strings(tmp_path):
    binary = tmp_path / "lib.so"
    binary.write_bytes(b"\x00xla_dump_to\x00junk xla_gpu_cuda_data_dirxla_gpu_autotune_level\x01")
    assert {"xla_dump_to", "xla_gpu_cuda_data_dir", "xla_gpu_autotune_level"} <= library_names([binary])


def test_doctor_imports_without_tensorflow():
    code = ("import sys, xlalint.doctor, xlalint.doctor.render; "
            "assert 'tensorflow' not in sys.modules, 'TensorFlow was imported'")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_usage_error_exits_2():
    done = run_without_tf("doctor", "--device", "tpu")
    assert done.returncode == 2 and "invalid choice" in done.stderr


# The real command on this machine's TensorFlow: each run starts TensorFlow in child processes.

def doctor_json(*args, env=None) -> tuple[dict, int]:
    done = run_xlalint("doctor", "--format", "json", *args,
                       env={"TF_XLA_FLAGS": "", "XLA_FLAGS": "", **(env or {})})
    assert done.stdout.strip(), done.stderr
    return json.loads(done.stdout), done.returncode


@pytest.mark.tf
def test_real_cpu_smoke_test_compiles_runs_and_agrees():
    report, code = doctor_json("--device", "cpu")
    assert code == 0 and report["ok"] and report["required"] == ["cpu"]
    [cpu] = report["devices"]
    assert cpu["xla"] == "ok" and cpu["compile_s"] > 0 and cpu["step_s"] > 0
    assert cpu["smoke"]["jit_compile"]["compilations"] == 1 and cpu["smoke"]["jit_compile"]["allclose"]
    assert cpu["smoke"]["autocluster"]["compilations"] >= 1 and cpu["smoke"]["autocluster"]["allclose"]
    checks = {c["name"]: c for c in report["checks"]}
    assert checks["xla on cpu"]["status"] == "ok" and checks["auto-clustering on cpu"]["status"] == "ok"
    assert checks["xlalint tables"] == {"name": "xlalint tables", "status": "ok", "fix": None,
                                        "detail": f"tables: shipped for TensorFlow {report['tensorflow']}"}
    assert set(report) >= {"xlalint", "tensorflow", "checks", "devices"}


@pytest.mark.tf
def test_real_unknown_flag_aborts_tensorflow_and_is_reported():
    report, code = doctor_json("--device", "cpu", env={"TF_XLA_FLAGS": "--tf_xla_bogus=1"})
    checks = {c["name"]: c for c in report["checks"]}
    assert code == 1 and checks["TF_XLA_FLAGS --tf_xla_bogus=1"]["status"] == "problem"
    [cpu] = report["devices"]
    assert cpu["xla"] == "broken" and "Unknown flag in TF_XLA_FLAGS: --tf_xla_bogus=1" in cpu["detail"]


@pytest.mark.tf
def test_real_xla_devices_flag_and_required_gpu():
    # GPUs hidden: the "no GPU" variant on every machine (a machine with one runs bench/gpu_check.sh)
    report, code = doctor_json("--require", "gpu", env={"TF_XLA_FLAGS": "--tf_xla_enable_xla_devices",
                                                        "CUDA_VISIBLE_DEVICES": ""})
    checks = {c["name"]: c for c in report["checks"]}
    assert code == 1
    assert checks["auto-clustering"]["status"] == "problem" and "turns nothing on" in checks["auto-clustering"]["detail"]
    assert checks["xla on gpu"]["status"] == "problem" and "no GPU visible" in checks["xla on gpu"]["detail"]
    assert {d["device"]: d["xla"] for d in report["devices"]} == {"cpu": "ok", "gpu": "absent"}


@pytest.mark.tf
def test_real_persistent_cache_serves_a_second_process(tmp_path):
    flags = f"--tf_xla_persistent_cache_directory={tmp_path / 'cache'}"
    report, code = doctor_json("--device", "cpu", env={"TF_XLA_FLAGS": flags})
    check = {c["name"]: c for c in report["checks"]}["persistent compilation cache"]
    assert code == 0 and check["status"] == "ok", check
    assert any((tmp_path / "cache").iterdir())
