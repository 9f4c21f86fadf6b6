"""Make TensorFlow and Keras unimportable in this process (tests put this folder on PYTHONPATH).

``sys.modules`` is left alone, so "was TensorFlow imported?" checks still mean what they say.
"""

import sys

BLOCKED = ("tensorflow", "keras", "tf_keras")


class _NoTensorFlow:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r} (TensorFlow is blocked: this test runs "
                                      "without it; mark it tf if it needs it)", name=name)
        return None


if not any(type(finder).__name__ == "_NoTensorFlow" for finder in sys.meta_path):
    sys.meta_path.insert(0, _NoTensorFlow())
