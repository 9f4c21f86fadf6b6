"""The step Keras compiles for ``fit``, and whether Keras compiles it with XLA on a target device.

Keras 3 (TensorFlow backend) builds ``fit``'s function in ``make_train_function``: a
``one_step_on_data`` tf.function around ``train_step`` (the forward pass with ``training=True``,
the compiled loss, regularization losses, metrics, loss scaling and the optimizer update, or the
user's own ``train_step``), compiled with ``jit_compile=model.jit_compile``. Both the step and the
decision are asked of Keras itself here; only "is there a GPU" is answered for the target device.

Used by discovery (a compiled model in a file, ``train_steps``) and by a running script (a model about to
``fit``): ``train_step_candidate(name, model, line, inputs, site_of)``. tf-keras's: ``tf_keras_step``.
"""

from __future__ import annotations

import contextlib
import importlib

import keras
import tensorflow as tf

from xlalint.backend.discover import Candidate
from xlalint.backend.keras_jit import layers_without_jit
from xlalint.core.support import DEVICES

AUTO = "auto"


def is_compiled(model) -> bool:
    """A Keras 3 model on which ``compile()`` was called: ``fit`` would build its train step."""
    return isinstance(model, keras.Model) and bool(getattr(model, "compiled", False))


def requested_jit(model, compiled: dict) -> tuple[object, str | None, int | None]:
    """``(jit_compile the user passed, file, line of the compile call)``, from ``compiled`` (model id ->
    that triple, recorded by the ``compile`` hook); a model compiled before the hooks were installed
    answers with what Keras kept, and no line."""
    if id(model) in compiled:
        return compiled[id(model)]
    kept = getattr(model, "_jit_compile", None)
    return AUTO if kept is None else kept, None, None


@contextlib.contextmanager
def _machine_with(device: str):
    """Keras' "is there an accelerator" question (``tf.config.list_physical_devices()``) answered for ``device``."""
    original = tf.config.list_physical_devices
    accelerator = tf.config.PhysicalDevice(f"/physical_device:{device.upper()}:0", device.upper())

    def listed(device_type=None):
        found = [d for d in original(device_type) if d.device_type == "CPU"]
        if device != "cpu" and device_type in (None, device.upper()):
            found.append(accelerator)
        return found

    tf.config.list_physical_devices = listed
    try:
        yield
    finally:
        tf.config.list_physical_devices = original


def _trainer():
    return importlib.import_module("keras.src.trainers.trainer")


def supports_jit(model, device: str, blockers: list[dict]) -> bool:
    """Keras' own ``model_supports_jit``; on a GPU, also its cuDNN rule for LSTM/GRU (decided at construction)."""
    with _machine_with(device):
        supported = _trainer().model_supports_jit(model)
    return supported and not blockers


def _off_reason(model, device: str, blockers: list[dict]) -> str:
    """Why Keras' support check says no: the first layer that decides, else op determinism."""
    if blockers:
        layer = blockers[0]
        return f"its layer `{layer['name']}` ({layer['class']}) does not support XLA"
    from tensorflow.python.framework.config import is_op_determinism_enabled

    if is_op_determinism_enabled():
        return "op determinism is enabled (tf.config.experimental.enable_op_determinism)"
    return "Keras' model_supports_jit says no on this platform"


def _decide(model, requested, device: str, blockers: list[dict]) -> tuple[bool, str | None]:
    """``(XLA on, why not)`` for ``fit`` on ``device``, as ``Model.compile`` resolves ``requested``."""
    if getattr(model, "run_eagerly", False):
        return False, "it runs eagerly (run_eagerly=True)"
    if requested is False:
        return False, "it is compiled with jit_compile=False"
    if requested == AUTO:
        if device == "cpu":
            return False, "jit_compile='auto' keeps XLA off on a machine without a GPU"
        if getattr(model, "_distribute_strategy", None) is not None:
            return False, "jit_compile='auto' keeps XLA off under a distribution strategy"
        with _machine_with(device):
            resolved = model._resolve_auto_jit_compile()  # noqa: SLF001 - Keras' own resolution
        if resolved and not blockers:
            return True, None
        return False, f"jit_compile='auto' keeps XLA off: {_off_reason(model, device, blockers)}"
    if supports_jit(model, device, blockers):
        return True, None
    return False, _off_reason(model, device, blockers)


def jit_decisions(model, compiled: dict, site_of) -> dict:
    """``{"requested", "compile": {"file", "line"}, "devices": {device: {"jit", "reason", "layer", "supported"}}}``
    for every target device (``compiled``: see ``requested_jit``).

    ``layer`` is the deciding layer (``{"name", "class", "file", "line"}``) or None; ``supported``: Keras
    would keep ``jit_compile=True`` there."""
    requested, file, line = requested_jit(model, compiled)
    layers = layers_without_jit(model, site_of)
    devices = {}
    for device in DEVICES:
        blockers = [layer for layer in layers if device in layer["devices"]]
        jit, reason = _decide(model, requested, device, blockers)
        deciding = blockers[0] if blockers and not jit else None
        devices[device] = {"jit": jit, "reason": reason, "supported": jit or supports_jit(model, device, blockers),
                           "layer": {k: deciding[k] for k in ("name", "class", "file", "line")} if deciding else None}
    return {"requested": requested if requested in (True, False) else AUTO, "devices": devices,
            "compile": {"file": file, "line": line} if file else None}


def _one_step_on_data(model):
    """The python function of Keras' ``one_step_on_data``, from the train function Keras builds."""
    saved = model._jit_compile, model.train_function  # noqa: SLF001
    try:
        model.make_train_function(force=True)
        cells = model.train_function.__closure__ or ()
    finally:
        model._jit_compile, model.train_function = saved  # noqa: SLF001 - fit builds its own again
    for cell in cells:
        step = getattr(cell.cell_contents, "__wrapped__", None)  # Keras' wrapper of the tf.function
        if getattr(cell.cell_contents, "__name__", "") == "one_step_on_data" and step is not None:
            return getattr(step, "python_function", step)
    raise RuntimeError(f"Keras {keras.__version__} built a train function without the one_step_on_data "
                       "xlalint knows: its train step cannot be traced")


def _build_state(model, data) -> None:
    """What ``fit`` does before its first step: build the model, its compiled loss and metrics and its
    optimizer from specs of a batch, so that the step is traced once, as ``fit`` traces it. Where Keras
    cannot, the trace builds them (TensorFlow then traces the step twice) and says what fails."""
    try:
        model._symbolic_build(data_batch=data)  # noqa: SLF001 - Keras' own build before the first step
    except Exception:  # the user's model: the trace that follows reports the failure
        pass


def _is_sparse(loss) -> bool:
    """A sparse categorical loss takes integer class ids, not one-hot targets."""
    name = loss if isinstance(loss, str) else getattr(loss, "name", None) or getattr(loss, "__name__", "")
    return "sparse" in str(name).lower() or "sparse" in type(loss).__name__.lower()


def target_specs(model, inputs):
    """Targets ``fit`` would get for ``inputs``, as ``targets_of`` makes them from Keras' own output specs."""
    specs = tf.nest.map_structure(lambda s: keras.KerasTensor(s.shape, s.dtype.name), inputs)
    return targets_of(model, model.compute_output_spec(specs, training=False))


def targets_of(model, predicted):
    """Targets ``fit`` would get, one per output of ``predicted`` (anything with a shape and a dtype): the
    output's shape and dtype, or for a sparse loss integer ids of the output's shape without its last axis."""
    loss = getattr(model, "loss", None)
    losses = loss if isinstance(loss, (list, tuple)) and len(loss) == len(tf.nest.flatten(predicted)) else None
    flat = []
    for index, output in enumerate(tf.nest.flatten(predicted)):
        own = losses[index] if losses else loss
        if _is_sparse(own):
            flat.append(tf.TensorSpec(output.shape[:-1], tf.int32, name=f"target_{index}"))
        else:
            flat.append(tf.TensorSpec(output.shape, output.dtype, name=f"target_{index}"))
    return tf.nest.pack_sequence_as(predicted, flat)


def train_step_candidate(name: str, model, line: int, inputs, site_of, compiled: dict | None = None,
                         targets=None) -> Candidate:
    """The entry ``NAME.fit``: Keras' own train step of a compiled ``model`` on ``inputs`` (a structure
    of tf.TensorSpecs) and ``targets`` (derived from the loss and outputs when None), with Keras'
    ``jit_compile`` decision for every device in ``candidate.keras``."""
    entry = f"{name}.fit"
    decisions = jit_decisions(model, compiled or {}, site_of)
    try:
        data = (inputs, target_specs(model, inputs) if targets is None else targets)
        _build_state(model, data)
        step = _one_step_on_data(model)
    except Exception as error:  # the user's model and loss: not knowing the step is a finding
        return Candidate(entry, line, "keras-fit", model=model, keras=decisions,
                         reason=f"Keras' train step of `{name}` could not be built: {type(error).__name__}: {error}")

    @tf.autograph.experimental.do_not_convert  # Keras runs its step without AutoGraph
    def fit(*flat):
        return step(tf.nest.pack_sequence_as(data, flat))

    fit.__name__ = fit.__qualname__ = f"{name.replace('.', '_')}_fit"
    return Candidate(entry, line, "keras-fit", function=tf.function(fit), python_function=fit,
                     specs=tf.nest.flatten(data), model=model, keras=decisions)
