"""Writes by relative paths to files and folders that exist in the tree, and chmods them."""
import os

import tensorflow as tf  # noqa: F401 - xlalint checks only files that use TensorFlow

with open("beside.txt", "a") as out:
    out.write("more\n")
with open("data/values.txt", "w") as out:
    out.write("overwritten\n")
os.chmod("beside.txt", 0o600)
os.utime("data/values.txt", (0, 0))
os.makedirs("data/new_folder", exist_ok=True)
os.symlink(os.path.realpath("beside.txt"), "link.txt")
with open("link.txt", "w") as out:
    out.write("through a new link\n")
