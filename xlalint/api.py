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

from xlalint.settings import table as settings
from xlalint.autocluster.judge import judge_entry
from xlalint.engine.entries import NO_GRAPH, CheckedFile, entry_findings
from xlalint.engine.keras_decision import entry_facts
from xlalint.core.opgraph import OpGraph
from xlalint.core.results import Entry, Report
from xlalint.engine.selection import Produced, select as select_findings, verdict
from xlalint.source.sourcemap import Location
from xlalint.core.support import load_support

DEVICE, MODE = settings.BY_NAME["device"].default, settings.BY_NAME["mode"].default


def check(fn_or_model: Any, *specs: Any, device: str = DEVICE, mode: str = MODE, select: list[str] | None = None,
          ignore: list[str] | tuple[str, ...] = (), verify: str | None = None) -> Report:
    """Trace ``fn_or_model`` and run every rule on it.

    ``specs`` give the arguments: spec strings (``"float32[8,16]"``), ``tf.TensorSpec``s or
    example tensors/arrays. Without them a ``tf.function`` needs an ``input_signature`` and a
    Keras model uses its inputs. The settings mean what their flags do (``xlalint --help``):
    ``mode`` "auto" (default) judges it as the program that defines it runs it, "jit" as if it had
    jit_compile=True, "autocluster" under auto-clustering, with the predicted clusters in
    ``report.entries[0].autocluster`` (docs/autocluster.md); ``verify`` ("auto", "cpu" or "gpu")
    also compiles and runs it with and without XLA: ``report.entries[0].verify`` (docs/verify.md).
    """
    given = {"device": device, "mode": mode, "select": select, "ignore": list(ignore) or None, "verify": verify}
    options = settings.options(settings.merge(settings.checked(given), {}))
    from xlalint.backend.inprocess import trace_object

    raw, path, tensorflow = trace_object(fn_or_model, specs, options.verify)
    support, graph = load_support(tensorflow), OpGraph(raw["graph"] or NO_GRAPH)  # trace_object always has one
    facts = entry_facts(raw, path, options)
    options = facts.for_rules(options)
    findings = entry_findings(raw, CheckedFile.at(path), support, options, facts, graph)
    findings, judged, clusters = judge_entry(facts.mode, graph, findings, support, options.device,
                                             Location(path, raw["line"]))
    report = Report(device=options.device, tensorflow=tensorflow)
    produced = [Produced(f, (0,)) for f in findings]
    report.findings = select_findings(report, produced, options, None)  # no comments: the object is checked, not a file
    outcome = verdict(report.findings)
    report.entries.append(Entry(report.findings[0].path if report.findings else path, raw["name"], raw["line"],
                                "runs" if judged == "runs" and outcome == "compatible" else outcome,
                                verify=raw.get("verify"), autocluster=clusters, **facts.fields()))
    return report


def assert_xla_compatible(fn_or_model: Any, *specs: Any, device: str = DEVICE, **kwargs: Any) -> Report:
    """Fail (AssertionError) when anything blocks XLA; the message lists every finding with its line."""
    report = check(fn_or_model, *specs, device=device, **kwargs)
    if not report.ok:
        lines = [f"{f.path}:{f.line}:{f.col}: {f.code} {f.message}" for f in report.findings]
        raise AssertionError(f"{report.entries[0].name} would not compile under XLA on {device}:\n"
                             + "\n".join(lines))
    return report
