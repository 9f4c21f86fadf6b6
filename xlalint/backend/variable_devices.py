"""The devices of the variables a function reads, where there are several: a distribution strategy's copies.

Under a ``MirroredStrategy`` each variable has a copy per replica device. A function traced over them
captures one resource handle per copy it reaches (``strategy.run`` inside it reaches every replica's);
a Keras model made under the strategy's scope holds ``MirroredVariable``s, whose ``values`` are the
copies, and Keras' ``fit`` runs its step through ``strategy.run``. One XLA cluster runs on one device and
cannot reach the others (XLA305).
"""

from __future__ import annotations

import tensorflow as tf

from xlalint.core.wire import EntryRecord


def captured_devices(concrete) -> list[str]:
    """The devices of the variables ``concrete`` captures."""
    return sorted({t.device for t in concrete.captured_inputs if t.dtype == tf.resource and t.device})


def model_devices(model) -> list[str]:
    """The devices of the copies of a Keras model's variables."""
    devices: set[str] = set()
    for variable in getattr(model, "variables", ()):
        value = getattr(variable, "value", None)  # a Keras 3 variable's TensorFlow variable
        copies = value.values if isinstance(value, tf.distribute.DistributedValues) else (value,)
        devices.update(device for copy in copies if (device := getattr(copy, "device", None)))
    return sorted(devices)


def record_devices(record: EntryRecord, devices: list[str]) -> None:
    """Keep ``devices`` in ``record`` (``resource_devices``) where they are several."""
    if len(devices) > 1:
        record["resource_devices"] = devices
