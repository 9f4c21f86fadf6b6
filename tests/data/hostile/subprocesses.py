"""Writes through subprocesses and the shell, by absolute and relative paths."""
import os
import subprocess

import tensorflow as tf  # noqa: F401 - xlalint checks only files that use TensorFlow

HERE = os.path.dirname(os.path.realpath(__file__))
for command in (["touch", os.path.join(HERE, "touched.txt")], ["touch", "relative.txt"],
                ["sh", "-c", f"echo x > {os.path.join(HERE, 'shell.txt')}"]):
    try:
        subprocess.run(command, check=False)
    except OSError:
        pass
try:
    os.system(f"touch {os.path.join(HERE, 'system.txt')}")
except OSError:
    pass
os.system("touch relative_system.txt")
