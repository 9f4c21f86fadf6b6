"""XLA402 xla-devices-flag: ``TF_XLA_FLAGS=--tf_xla_enable_xla_devices`` turns nothing on.

That flag only creates XLA_CPU/XLA_GPU devices; it compiles nothing. A source rule: in Python
sources the libcst pass (``xlalint.static.scan``) finds it; in shell scripts and Dockerfiles
``scan_env_file`` below does, line by line.
"""

from __future__ import annotations

import re

from xlalint.checks.base import Fix, Rule
from xlalint.results import Finding

RULE = Rule("XLA402", "xla-devices-flag", "warning",
            "TF_XLA_FLAGS=--tf_xla_enable_xla_devices only creates XLA devices: it does not turn on "
            "auto-clustering (--tf_xla_auto_jit=2 does).", stage="source",
            fix=Fix("auto-jit-flag", "unsafe", "use --tf_xla_auto_jit=2, which turns auto-clustering on"))
SETS_FLAG = re.compile(r"TF_XLA_FLAGS\b.*?(--tf_xla_enable_xla_devices)(?!=(?:false|0)\b)", re.IGNORECASE)


def env_file_findings(path: str, shown_path: str) -> list[Finding]:
    """XLA402 in the shell script or Dockerfile at ``path`` (an unreadable one has nothing to say)."""
    try:
        with open(path, encoding="utf-8") as handle:
            return scan_env_file(shown_path, handle.read())
    except (OSError, UnicodeDecodeError):
        return []


def scan_env_file(path: str, text: str) -> list[Finding]:
    """XLA402 in a shell script or Dockerfile."""
    findings = []
    for number, line in enumerate(text.splitlines(), 1):
        match = SETS_FLAG.search(line)
        if match and not line.lstrip().startswith("#"):
            findings.append(RULE.finding(
                "TF_XLA_FLAGS sets --tf_xla_enable_xla_devices: that only creates XLA_CPU/XLA_GPU devices, "
                "it does not compile anything with XLA",
                "For auto-clustering set TF_XLA_FLAGS=--tf_xla_auto_jit=2; better, compile the functions "
                "you want with tf.function(jit_compile=True).",
                path, number, match.start(1) + 1, "<file>", fixable=True))
    return findings
