"""Child process: import TensorFlow once, then import and trace each user file.

Reads a JSON request on stdin and writes one JSON message per line to the file
descriptor that was stdout when it started; the user's own prints go to stderr.
Messages: ``ready`` (versions) or ``fatal`` (no TensorFlow), then ``start`` and
``file`` for each file.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import time
import traceback

from xlalint.backend.frames import is_user_file
from xlalint.specs import parse_spec


MIN_TENSORFLOW = (2, 16)  # the first release with Keras 3


def _version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split(".")[:2] if part.isdigit())


def _send(channel, message: dict) -> None:
    # Messages are plain trees, many MB for a large graph: skip the cycle check and the spaces.
    channel.write(json.dumps(message, check_circular=False, separators=(",", ":")) + "\n")
    channel.flush()


def _where(error: BaseException, path: str) -> str:
    """``" (line N)"`` for the innermost frame of the user's file in a traceback."""
    lines = [f.lineno for f in traceback.extract_tb(error.__traceback__) if f.filename == path]
    return f" (line {lines[-1]})" if lines else ""


def _import_user_module(path: str):
    directory, filename = os.path.split(path)
    stem = os.path.splitext(filename)[0]
    name = stem if stem.isidentifier() and stem not in sys.modules else f"_xlalint_user_{abs(hash(path))}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, directory)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _trace_entries(module, source: str, request: dict, recorder) -> list[dict]:
    from xlalint.backend.discover import discover
    from xlalint.backend.graph_export import export_graph
    from xlalint.backend.keras_jit import layers_without_jit

    targets = {t["name"]: ([parse_spec(s) for s in t["specs"]] if t.get("specs") else None)
               for t in request.get("targets", [])}
    entries = []
    for candidate in discover(module, source, targets, request["discover"]):
        entry = {"name": candidate.name, "line": candidate.line, "kind": candidate.kind,
                 "jit_compile": candidate.jit_compile, "error": candidate.reason, "graph": None}
        if candidate.traceable:
            try:
                started = time.perf_counter()
                concrete, num_args = candidate.trace()
                traced = time.perf_counter()
                entry["graph"] = export_graph(concrete, num_args, recorder.layer_of)
                entry["timing"] = {"trace_s": traced - started, "export_s": time.perf_counter() - traced}
            except Exception as error:  # tracing runs user code; report, never crash
                entry["error"] = f"tracing failed: {type(error).__name__}: {_first_line(error)}"
            if entry["graph"] is not None and request.get("verify"):
                from xlalint.backend.verify import verify_entry

                entry["verify"] = verify_entry(candidate, device=request["verify"]["device"])
        if candidate.model is not None:  # known without a trace: also for a model that cannot be traced
            try:
                entry["keras_layers"] = layers_without_jit(candidate.model, recorder.site_of)
            except Exception:  # a user model whose layers cannot be listed: no XLA301 for it
                pass
        entry["signature"] = candidate.signature
        entries.append(entry)
    return entries


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else ""


def _trace_saved_model(path: str) -> list[dict]:
    """One entry per serving signature; a SavedModel has no source, so no frames."""
    import tensorflow as tf

    from xlalint.backend.discover import spec_json
    from xlalint.backend.graph_export import export_graph

    loaded = tf.saved_model.load(path)
    entries = []
    for key, concrete in sorted(loaded.signatures.items()):
        specs = tf.nest.flatten(concrete.structured_input_signature)
        entries.append({"name": key, "line": 1, "kind": "saved-model-signature", "jit_compile": None,
                        "error": None, "signature": [spec_json(s) for s in specs],
                        "graph": export_graph(concrete, len(specs), lambda graph, op_name: None)})
    return entries


def _user_modules() -> list[str]:
    """Files of the user's own modules loaded so far: what a cached result depends on."""
    files = {getattr(m, "__file__", None) for m in list(sys.modules.values())}
    return sorted(os.path.realpath(f) for f in files if f and f.endswith(".py") and is_user_file(f))


def check_file(request: dict, recorder) -> dict:
    """Trace one file; ``deps`` lists every user file loaded by then (a safe superset)."""
    started = time.perf_counter()
    result = _check_file(request, recorder)
    result["deps"] = _user_modules()
    result["seconds"] = time.perf_counter() - started
    return result


def _check_file(request: dict, recorder) -> dict:
    path = request["path"]
    result = {"type": "file", "path": path, "entries": [], "error": None}
    if request.get("saved_model"):
        try:
            result["entries"] = _trace_saved_model(path)
        except Exception as error:
            result["error"] = f"loading the SavedModel failed: {type(error).__name__}: {_first_line(error)}"
        return result
    try:
        with open(path, encoding="utf-8") as handle:
            source = handle.read()
        module = _import_user_module(path)
    except SystemExit as error:
        result["error"] = f"the module called sys.exit({error.code!r}) while being imported{_where(error, path)}"
        return result
    except Exception as error:
        result["error"] = (f"importing the module raised {type(error).__name__}: "
                           f"{_first_line(error)}{_where(error, path)}")
        return result
    try:
        result["entries"] = _trace_entries(module, source, request, recorder)
    except SystemExit as error:
        result["error"] = f"the module called sys.exit({error.code!r}) while being traced{_where(error, path)}"
    except Exception as error:
        result["error"] = f"discovery failed: {type(error).__name__}: {_first_line(error)}{_where(error, path)}"
    return result


def main() -> None:
    channel = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # whatever the user's code prints must not mix with our messages
    request = json.load(sys.stdin)

    from xlalint.backend.keras_sites import LayerRecorder

    recorder = LayerRecorder()
    started = time.perf_counter()
    try:
        import keras
        import tensorflow as tf
    except ImportError as error:
        _send(channel, {"type": "fatal", "message": f"TensorFlow cannot be imported: {error}"})
        return
    if _version_tuple(tf.__version__) < MIN_TENSORFLOW:
        _send(channel, {"type": "fatal", "message": f"TensorFlow {tf.__version__} is not supported: xlalint "
                        f"needs {'.'.join(map(str, MIN_TENSORFLOW))} or newer (Keras 3)"})
        return
    recorder.install()
    _send(channel, {"type": "ready", "tensorflow": tf.__version__, "keras": keras.__version__,
                    "import_s": time.perf_counter() - started})
    for file_request in request["files"]:
        _send(channel, {"type": "start", "path": file_request["path"]})
        _send(channel, check_file(file_request, recorder))


if __name__ == "__main__":
    main()
