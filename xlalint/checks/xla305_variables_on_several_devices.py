"""XLA305 variables-on-several-devices: a jit_compile function reads variables placed on several devices.

A run rule (``xlalint run`` only): under a distribution strategy over several devices
(``MirroredStrategy``), each variable has a copy per device. A ``jit_compile=True`` function that
calls ``strategy.run`` (or a compiled Keras step under ``strategy.scope()``) reaches every copy, but
XLA compiles it as one cluster for one device, and TensorFlow refuses to reach a variable on
another device ("Trying to access resource ... located in device ... from device ..."). The run
records the devices of the variables each captured function reads (``resource_devices``).
"""

from __future__ import annotations

from xlalint.checks.base import CapturedContext, Rule, captured_site


def check_captured(ctx: CapturedContext):
    for record in ctx.captured:
        devices = record.get("resource_devices")
        if record.get("jit_compile") is not True or not devices:
            continue
        name, (path, line) = record["name"], captured_site(record)
        short = ", ".join(d.split("device:")[-1] for d in devices)
        yield RULE.finding(
            f"`{name}` (jit_compile=True) reads variables on {len(devices)} devices ({short}): XLA compiles it "
            "for one device, and TensorFlow refuses to reach a variable on another one",
            "Compile the per-replica computation instead: drop jit_compile=True here and put it on a function "
            "that the step strategy.run calls calls (compute the gradients there, apply them outside it); for a "
            "Keras model, compile it with jit_compile=False under the strategy.",
            path, line, 1, name)


RULE = Rule("XLA305", "variables-on-several-devices", "error",
            "A jit_compile function reads a distribution strategy's variables on several devices: XLA compiles "
            "it for one device and TensorFlow refuses it (xlalint run).",
            stage="captured", check_captured=check_captured)
