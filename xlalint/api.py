"""Python API for users' own test suites.

    import xlalint
    report = xlalint.check(train_step, "float32[8,28,28,1]", "int32[8]", device="gpu")
    assert report.ok, report.findings
    xlalint.assert_xla_compatible(model)   # pytest-friendly

Runs in the caller's process on an object already imported (TensorFlow is
imported here only when ``check`` is called).
"""

from __future__ import annotations

from xlalint.autocluster.judge import judge_entry
from xlalint.autocluster.program import AUTO_CLUSTERING, entry_mode
from xlalint.checks import resolve_codes
from xlalint.entry_findings import findings_for_traced_entry
from xlalint.opgraph import OpGraph
from xlalint.selection import Produced, select as select_findings, verdict
from xlalint.results import Entry, Report
from xlalint.settings import DEFAULT_DEVICE, DEVICES, MODES, VERIFY_DEVICES, Options
from xlalint.sourcemap import Location
from xlalint.support import load_support


def check(fn_or_model, *specs, device: str = DEFAULT_DEVICE, mode: str = "jit", select=None, ignore=(),
          verify: str | None = None) -> Report:
    """Trace ``fn_or_model`` and run every rule on it.

    ``specs`` give the arguments: spec strings (``"float32[8,16]"``), ``tf.TensorSpec``s or
    example tensors/arrays. Without them a ``tf.function`` needs an ``input_signature`` and a
    Keras model uses its inputs. ``verify`` ("auto", "cpu" or "gpu") also compiles and runs it
    with and without XLA: ``report.entries[0].verify`` (fields in docs/verify.md). ``mode``:
    "jit" (default) judges it as if it had jit_compile=True, "autocluster" under auto-clustering,
    "auto" as the program that defines it runs it (docs/autocluster.md).
    """
    if device not in DEVICES:
        raise ValueError(f"device must be one of {', '.join(DEVICES)}, not {device!r}")
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    from xlalint.backend.inprocess import trace_object

    if verify is not None and verify not in VERIFY_DEVICES:
        raise ValueError(f"verify must be auto, cpu or gpu, not {verify!r}")
    raw, path, tensorflow = trace_object(fn_or_model, specs, verify)
    options = Options(device=device, select=resolve_codes(select, list(ignore)))
    xla_mode = entry_mode(path, raw.get("jit_compile"), mode, device)
    options.mode = "autocluster" if xla_mode.name == AUTO_CLUSTERING else "jit"  # the rules' fixes follow it
    findings, judged, clusters = judge_entry(xla_mode, OpGraph(raw["graph"]),
                                             findings_for_traced_entry(raw, path, tensorflow, options),
                                             load_support(tensorflow), device, Location(path, raw["line"]))
    report = Report(device=device, tensorflow=tensorflow)
    produced = [Produced(f, (0,)) for f in findings]
    report.findings = select_findings(report, produced, options, None)  # no comments: the object is checked, not a file
    outcome = verdict(report.findings)
    report.entries.append(Entry(report.findings[0].path if report.findings else path, raw["name"], raw["line"],
                                "runs" if judged == "runs" and outcome == "compatible" else outcome,
                                verify=raw.get("verify"), autocluster=clusters, jit_compile=raw.get("jit_compile"),
                                **xla_mode.fields()))
    return report


def assert_xla_compatible(fn_or_model, *specs, device: str = DEFAULT_DEVICE, **kwargs) -> Report:
    """Fail (AssertionError) when anything blocks XLA; the message lists every finding with its line."""
    report = check(fn_or_model, *specs, device=device, **kwargs)
    if not report.ok:
        lines = [f"{f.path}:{f.line}:{f.col}: {f.code} {f.message}" for f in report.findings]
        raise AssertionError(f"{report.entries[0].name} would not compile under XLA on {device}:\n"
                             + "\n".join(lines))
    return report
