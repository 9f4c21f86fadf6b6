"""XLA402 in shell scripts and Dockerfiles: ``TF_XLA_FLAGS=--tf_xla_enable_xla_devices``.

That flag only creates XLA_CPU/XLA_GPU devices; it compiles nothing. The same
finding as in Python sources, found line by line (no parsing).
"""

from __future__ import annotations

import re

from xlalint.checks import RULES
from xlalint.results import Finding
from xlalint.static.scan import FIXES

SETS_FLAG = re.compile(r"TF_XLA_FLAGS\b.*?(--tf_xla_enable_xla_devices)(?!=(?:false|0)\b)", re.IGNORECASE)


def scan_env_file(path: str, text: str) -> list[Finding]:
    rule = RULES["XLA402"]
    findings = []
    for number, line in enumerate(text.splitlines(), 1):
        match = SETS_FLAG.search(line)
        if match and not line.lstrip().startswith("#"):
            findings.append(Finding(
                "XLA402", rule.name, rule.severity,
                "TF_XLA_FLAGS sets --tf_xla_enable_xla_devices: that only creates XLA_CPU/XLA_GPU devices, "
                "it does not compile anything with XLA",
                "For auto-clustering set TF_XLA_FLAGS=--tf_xla_auto_jit=2; better, compile the functions "
                "you want with tf.function(jit_compile=True).",
                path, number, match.start(1) + 1, "<file>", fix=FIXES["XLA402"]))
    return findings
