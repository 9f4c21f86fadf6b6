"""The one builder of a traced entry's record, for the tracing server and the API's in-process tracer."""

from __future__ import annotations

import time

from xlalint.backend.discover import Candidate
from xlalint.backend.graph_export import export_graph
from xlalint.backend.keras_jit import layers_without_jit
from xlalint.backend.trace_errors import tracing_failure
from xlalint.backend.variable_devices import captured_devices, model_devices, record_devices
from xlalint.core.wire import EntryRecord, VerifyRequest, entry_record


def traced_entry(candidate: Candidate, recorder, trace: bool = True,
                 verify: VerifyRequest | None = None) -> EntryRecord:
    """One candidate's record: traced when ``trace`` (and traceable), with what Keras says without a trace
    (its ``jit_compile`` decisions, the layers that keep XLA off); ``verify`` also compiles and runs it."""
    entry = entry_record(candidate.name, candidate.line, candidate.kind, candidate.jit_compile,
                         candidate.signature, error=candidate.reason)
    if candidate.keras:
        entry["keras"] = candidate.keras
    if trace and candidate.traceable:
        try:
            started = time.perf_counter()
            concrete, num_args = candidate.trace()
            traced = time.perf_counter()
            entry["graph"] = export_graph(concrete, num_args, recorder.layer_of)
            entry["timing"] = {"trace_s": traced - started, "export_s": time.perf_counter() - traced}
            # Keras' fit runs its step through the model's strategy.run: it reaches every copy of its variables
            record_devices(entry, model_devices(candidate.model) if candidate.kind == "keras-fit"
                           else captured_devices(concrete))
        except Exception as error:  # tracing runs user code; report, never crash
            entry["error"] = tracing_failure(candidate.name, candidate.signature, error)
        if entry["graph"] is not None and verify:
            from xlalint.backend.verify.compare import verify_entry

            entry["verify"] = verify_entry(candidate, device=verify["device"])
    if candidate.model is not None:  # known without a trace: also for a model that cannot be traced
        try:
            entry["keras_layers"] = layers_without_jit(candidate.model, recorder.site_of)
        except Exception:  # a user model whose layers cannot be listed: no XLA301 for it
            pass
    return entry
