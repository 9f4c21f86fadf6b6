"""XLA107 python-number-argument: a loop passes a new Python number to a tf.function on every pass.

A source rule: found by the libcst pass (``xlalint.static.scan``), in full and ``--static`` mode.
"""

from xlalint.checks.base import Rule

RULE = Rule("XLA107", "python-number-argument", "warning",
            "A loop passes a new Python number to a tf.function on every pass: one trace and one XLA "
            "compilation per value.", stage="source")
