"""Regenerate xlalint/data/const_inputs_tf<VERSION>.json from the installed TensorFlow's XLA op registry.

For every op with an XLA kernel, the table lists the input args that XLA
requires to be compile-time constants, plus the "metadata" ops (Shape, Rank,
...) whose outputs depend only on input shapes. The data is read from the
installed TensorFlow's C++ registry through a small extern "C" shim, which is
compiled with g++ into a temporary directory. Release-time tool only: it needs
g++ and the TensorFlow headers; xlalint users never run it.

Usage: python tools/gen_const_inputs.py [--out FILE.json]
"""

import argparse
import ctypes
import json
import os
import subprocess
import sys
import tempfile

import tensorflow as tf
from tensorflow.python.framework import kernels
from tensorflow.python.util import pywrap_xla_ops

OUT_PATH = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), os.pardir, "xlalint", "data",
    f"const_inputs_tf{tf.__version__}.json")
XLA_DEVICES = ("XLA_CPU_JIT", "XLA_GPU_JIT")

SHIM_SOURCE = r"""
#include <string>
#include <unordered_set>

// The two static members of tensorflow/compiler/tf2xla/xla_op_registry.h this reads, declared
// here: the full header makes the compile take a minute, this declaration a second.
namespace tensorflow {
class XlaOpRegistry {
 public:
  static const std::unordered_set<std::string>* CompileTimeConstantInputArgNames(const std::string& op);
  static bool IsMetadataOp(const std::string& op);
};
}  // namespace tensorflow

using tensorflow::XlaOpRegistry;

// Constant-input arg names of `op`, comma separated ("" when none). The
// buffer is reused by the next call.
extern "C" const char* const_input_names(const char* op) {
  static std::string joined;
  joined.clear();
  const std::unordered_set<std::string>* names =
      XlaOpRegistry::CompileTimeConstantInputArgNames(op);
  if (names != nullptr) {
    for (const std::string& name : *names) {
      if (!joined.empty()) joined += ',';
      joined += name;
    }
  }
  return joined.c_str();
}

extern "C" int is_metadata_op(const char* op) {
  return XlaOpRegistry::IsMetadataOp(op) ? 1 : 0;
}
"""


def build_shim(workdir):
    """Compile the shim into `workdir` and return the loaded library."""
    src = os.path.join(workdir, "shim.cc")
    lib = os.path.join(workdir, "libshim.so")
    with open(src, "w") as f:
        f.write(SHIM_SOURCE)
    tf_dir = tf.sysconfig.get_lib()
    cmd = (["g++", "-shared", "-fPIC", "-O1", "-w", src, "-o", lib]
           + tf.sysconfig.get_compile_flags()
           + tf.sysconfig.get_link_flags()
           + ["-l:libtensorflow_cc.so.2", "-Wl,-rpath," + tf_dir])
    subprocess.run(cmd, check=True)
    shim = ctypes.CDLL(lib)
    shim.const_input_names.argtypes = [ctypes.c_char_p]
    shim.const_input_names.restype = ctypes.c_char_p
    shim.is_metadata_op.argtypes = [ctypes.c_char_p]
    shim.is_metadata_op.restype = ctypes.c_int
    return shim


def xla_op_names():
    """Names of all ops with an XLA JIT kernel, after forcing registration."""
    pywrap_xla_ops.get_gpu_kernel_names()  # registers the XLA JIT kernels
    kernel_list = kernels.get_all_registered_kernels()
    return sorted({k.op for k in kernel_list.kernel
                   if k.device_type in XLA_DEVICES})


def build_table():
    """The table of the installed TensorFlow, as written."""
    ops = xla_op_names()
    with tempfile.TemporaryDirectory() as workdir:
        shim = build_shim(workdir)
        const_inputs = {}
        metadata_ops = []
        for op in ops:
            key = op.encode()
            names = shim.const_input_names(key).decode()
            if names:
                const_inputs[op] = sorted(names.split(","))
            if shim.is_metadata_op(key):
                metadata_ops.append(op)

    return {
        "tensorflow": tf.__version__,
        "generated_by": "tools/gen_const_inputs.py",
        "compile_time_constant_inputs": const_inputs,
        "metadata_ops": metadata_ops,
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.normpath(OUT_PATH))
    path = parser.parse_args(argv).out
    table = build_table()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump(table, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {path}: {len(table['compile_time_constant_inputs'])} ops with constant inputs, "
          f"{len(table['metadata_ops'])} metadata ops", file=sys.stderr)


if __name__ == "__main__":
    main()
