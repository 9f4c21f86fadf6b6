"""Changes to the folder above and writes there, and back."""
import os

import tensorflow as tf  # noqa: F401 - xlalint checks only files that use TensorFlow

os.chdir("..")
with open("above.txt", "w") as out:
    out.write("above\n")
os.chdir(os.path.dirname(os.path.realpath(__file__)))
with open("back.txt", "w") as out:
    out.write("back\n")
