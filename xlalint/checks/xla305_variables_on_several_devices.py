"""XLA305 variables-on-several-devices: a jit_compile function reads variables placed on several devices.

Under a distribution strategy over several devices (``MirroredStrategy``), each variable has a copy per
device. A ``jit_compile=True`` function that calls ``strategy.run`` (or a compiled Keras step under
``strategy.scope()``) reaches every copy, but XLA compiles it as one cluster for one device, and TensorFlow
refuses to reach a variable on another device ("Trying to access resource ... located in device ... from
device ..."). The trace records the devices of the variables an entry reads (``resource_devices``): ``xlalint
run`` for each function it captures (the captured hook), the check command for each entry it traces where
the strategy and its variables exist once the module is imported (the entry hook): a ``tf.function`` with a
signature, or Keras' ``fit`` step of a model made under ``strategy.scope()``.
"""

from __future__ import annotations

from xlalint.checks.base import CapturedContext, EntryContext, Rule, captured_site
from xlalint.inputs.files import display_path

_HINT = ("Compile the per-replica computation instead: drop jit_compile=True here and put it on a function "
         "that the step strategy.run calls calls (compute the gradients there, apply them outside it); for a "
         "Keras model, compile it with jit_compile=False under the strategy.")
_KERAS_HINT = ("Compile the model with jit_compile=False (or the default 'auto', which Keras keeps off under a "
               "strategy) while it trains under the strategy; compile a function of one replica's "
               "computation with jit_compile=True instead, if you want XLA there.")


def _devices(devices: list[str]) -> str:
    return f"{len(devices)} devices ({', '.join(d.split('device:')[-1] for d in devices)})"


def _refused(record, path: str, line: int):
    """The finding at the entry's place, or for a Keras step at the ``compile`` call that asked for XLA."""
    name, devices = record["name"], record["resource_devices"]
    decided = record.get("keras")
    if decided and decided.get("compile"):
        path, line = display_path(decided["compile"]["file"]), decided["compile"]["line"]
    return RULE.finding(
        f"`{name}` (jit_compile=True) reads variables on {_devices(devices)}: XLA compiles it for one device, "
        "and TensorFlow refuses to reach a variable on another one", _KERAS_HINT if decided else _HINT,
        path, line, 1, name)


def check_captured(ctx: CapturedContext):
    for record in ctx.captured:
        if record.get("jit_compile") is True and record.get("resource_devices"):
            yield _refused(record, *captured_site(record))


def check_entry(entry: EntryContext):
    """An entry the check command traced (a captured one is the captured hook's); a Keras step under Keras'
    decision on the target device."""
    record = entry.record
    if "traces" not in record and record.get("resource_devices") and entry.jit_compile is True:
        yield _refused(record, display_path(entry.path), record["line"])


RULE = Rule("XLA305", "variables-on-several-devices", "error",
            "A jit_compile function reads a distribution strategy's variables on several devices: XLA compiles "
            "it for one device and TensorFlow refuses it.",
            stage="captured", check_captured=check_captured, check_entry=check_entry)
