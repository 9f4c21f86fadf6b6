"""XLA401 experimental-compile: ``experimental_compile=`` is the old name of ``jit_compile=``.

A source rule: found by the libcst pass (``xlalint.static.scan``), in full and ``--static`` mode.
"""

from xlalint.checks.base import Fix, Rule

RULE = Rule("XLA401", "experimental-compile", "warning",
            "`experimental_compile=` is the deprecated name of `jit_compile=`.", stage="source",
            fix=Fix("jit-compile-keyword", "safe", "rename experimental_compile= to jit_compile="))
