"""Python API for users' own test suites.

    import xlalint
    report = xlalint.check(train_step, "float32[8,28,28,1]", "int32[8]", device="gpu")
    assert report.ok, report.findings
    xlalint.assert_xla_compatible(model)   # pytest-friendly

Runs in the caller's process on an object already imported (TensorFlow is
imported here only when ``check`` is called).
"""

from __future__ import annotations

from typing import Any

from xlalint.core.results import Entry, Finding, Report
from xlalint.core.support import load_support
from xlalint.core.wire import file_result
from xlalint.engine.analysis import file_findings
from xlalint.engine.selection import select as select_findings
from xlalint.settings import table as settings

__all__ = ["Entry", "Finding", "Report", "assert_xla_compatible", "check"]

DEVICE, MODE = settings.BY_NAME["device"].default, settings.BY_NAME["mode"].default


def check(fn_or_model: Any, *specs: Any, device: str = DEVICE, mode: str = MODE, select: list[str] | None = None,
          ignore: list[str] | tuple[str, ...] = (), verify: str | None = None) -> Report:
    """Trace ``fn_or_model`` and run every rule on it, through the check command's own entry pipeline.

    ``specs`` give the arguments: spec strings (``"float32[8,16]"``), ``tf.TensorSpec``s or
    example tensors/arrays. Without them a ``tf.function`` needs an ``input_signature`` and a
    Keras model uses its inputs. The settings mean what their flags do (``xlalint --help``):
    ``mode`` "auto" (default) judges it as the program that defines it runs it, "jit" as if it had
    jit_compile=True, "autocluster" under auto-clustering, with the predicted clusters in
    ``report.entries[0].autocluster`` (docs/autocluster.md); ``verify`` ("auto", "cpu" or "gpu")
    also compiles and runs it with and without XLA: ``report.entries[0].verify`` (docs/verify.md).
    Raises ``ValueError`` for bad settings and for an object that cannot be traced.
    """
    given = {"device": device, "mode": mode, "select": select, "ignore": list(ignore) or None, "verify": verify}
    options = settings.options(settings.merge(settings.checked(given), {}))
    from xlalint.backend.inprocess import trace_object

    raw, path, tensorflow = trace_object(fn_or_model, specs, options.verify)
    support = load_support(tensorflow)
    report = Report(device=options.device, tensorflow=tensorflow, tables=support.tables_used(tensorflow))
    produced = file_findings(report, file_result(path, entries=[raw]), support, options, True)
    report.findings = select_findings(report, produced, options, None)  # no comments: the object is checked, not a file
    return report


def assert_xla_compatible(fn_or_model: Any, *specs: Any, device: str = DEVICE, **kwargs: Any) -> Report:
    """Fail (AssertionError) when anything blocks XLA; the message lists every finding with its line."""
    report = check(fn_or_model, *specs, device=device, **kwargs)
    if not report.ok:
        lines = [f"{f.path}:{f.line}:{f.col}: {f.code} {f.message}" for f in report.findings]
        raise AssertionError(f"{report.entries[0].name} would not compile under XLA on {device}:\n"
                             + "\n".join(lines))
    return report
