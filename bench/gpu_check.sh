#!/usr/bin/env bash
# GPU checks for a machine with an NVIDIA GPU (a few minutes). Prints the figures docs/doctor.md records:
#   1. xlalint doctor --require gpu (toolchain, flags, GPU smoke test)
#   2. xlalint --verify gpu on examples/ and rules/ (does XLA agree with the linter on a GPU?)
#   3. a Keras ResNet50 training step (batch 32) with and without XLA: compile time, step time,
#      peak GPU memory (the guide claims 120 ms -> 85 ms per step on a V100 and 20-30% less memory)
# Usage: bash bench/gpu_check.sh [OUT_DIR]   (needs: pip install -e '.[tf]' with a CUDA TensorFlow)
set -u
cd "$(dirname "$0")/.."
out="${1:-$(mktemp -d)}"
mkdir -p "$out"
echo "== nvidia-smi"; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1 | head -5

echo "== 1. xlalint doctor --require gpu"
python -m xlalint doctor --require gpu | tee "$out/doctor.txt"
echo "doctor exit code: ${PIPESTATUS[0]}"
python -m xlalint doctor --require gpu --format json > "$out/doctor.json"

echo "== 2. --verify gpu on examples/ and rules/"
python -m xlalint examples rules --verify gpu --device gpu --no-cache --format json -q > "$out/verify.json"
python - "$out/verify.json" <<'PY'
import collections, json, sys
report = json.load(open(sys.argv[1]))
seen = collections.Counter()
for entry in report["entries"]:
    v = entry.get("verify") or {}
    seen["compiled" if v.get("compiled") else "not compiled"] += 1
    seen["results agree" if v.get("allclose") else "results differ/unknown"] += 1
print(dict(seen), "disagreements (XLA9xx):", sum(f["code"].startswith("XLA9") for f in report["findings"]))
PY

echo "== 3. ResNet50 training step, batch 32, with and without XLA"
python - "$out/resnet50_train.py" <<'PY'  # the training step of bench/resnet50.py, batch 32
import sys
sys.path.insert(0, "bench")
from resnet50 import CASES
open(sys.argv[1], "w").write(CASES["train"][1].format(batch=32))
PY
python -m xlalint "$out/resnet50_train.py::train_step" --verify gpu --device gpu --no-cache --format json -q \
    > "$out/resnet50.json"
python - "$out/resnet50.json" <<'PY'
import json, sys
[entry] = [e for e in json.load(open(sys.argv[1]))["entries"] if e.get("verify")]
v = entry["verify"]
mib = lambda b: "n/a" if b is None else f"{b / 2**20:.0f} MiB"
ms = lambda s: "n/a" if s is None else f"{s * 1e3:.1f} ms"
print(f"compiled={v['compiled']} compile={v['compile_s']} s  step XLA {ms(v['xla_step_s'])} vs TF {ms(v['tf_step_s'])}"
      f"  speedup {v['speedup']}  peak XLA {mib(v['xla_peak_bytes'])} vs TF {mib(v['tf_peak_bytes'])}"
      f"  agree={v['allclose']} error={v['error']}")
PY
echo "outputs in $out"
