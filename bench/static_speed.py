"""How fast is ``xlalint --static``? ``static_report`` over hundreds of files vs importing TensorFlow.

    python bench/static_speed.py               # 300 files, best of 3
    python bench/static_speed.py --files 1000 --repeat 5
    python bench/static_speed.py --hostile     # 200 KB files of long sums: how long each one takes

Writes variants of the repository's example files (rules/*/*.py, fixtures/*.py, fixtures/corpus/*.py,
examples/*.py) into a temporary directory: copy i gets a header line and its functions renamed
``name_v<i>`` (Keras methods and dunders keep their names), so no two files are alike. Then, in the
same run and each in a fresh interpreter: the static mode over the directory (start-up and imports
included, as the command line pays them), and ``import tensorflow`` alone (what a traced run pays
before it checks a single file). Prints both, their ratio, and static_report's time in this process.

``--hostile``: one file each of about 200 KB of ``1+1+...`` sums (one sum; sums of 4,000 terms,
which Python cannot compile; of 1,000 terms, too deep for libcst; of 240 terms, just within the
depth limit, the slowest accepted), and of ordinary calls for comparison: the time of each and
the error it gets. Before the depth limit, such a file kept libcst busy for minutes.
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
KEEP = {"train_step", "test_step", "predict_step", "call"}
STATIC = ("import sys; from xlalint.engine.analysis import static_report; from xlalint.settings.table import Options; "
          "r = static_report([sys.argv[1]], Options()); "
          "print(len(r.entries), 'entries', len(r.findings), 'findings', len(r.errors), 'errors')")


def sources() -> list[str]:
    patterns = ("rules/*/*.py", "fixtures/*.py", "fixtures/corpus/*.py", "examples/*.py")
    paths = [p for pattern in patterns for p in sorted(glob.glob(str(REPO / pattern)))]
    return [Path(p).read_text(encoding="utf-8") for p in paths]


def variant(text: str, i: int) -> str:
    for name in set(re.findall(r"^\s*def (\w+)", text, re.MULTILINE)) - KEEP:
        if not name.startswith("__"):
            text = re.sub(rf"\b{name}\b", f"{name}_v{i}", text)
    return f"# variant {i}\n{text}"


def best_of(repeat: int, command: list[str]) -> tuple[float, str]:
    times, out = [], ""
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    for _ in range(repeat):
        start = time.perf_counter()
        done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, env=env, check=True)
        times.append(time.perf_counter() - start)
        out = done.stdout.strip()
    return min(times), out


HOSTILE = {  # name -> (a line, how many times); about 200 KB each
    "one 100,000-term sum": ("x = " + "+".join(["1"] * 100_000) + "\n", 1),
    "sums of 4,000 terms": ("x = " + "+".join(["1"] * 4000) + "\n", 25),
    "sums of 1,000 terms": ("x = " + "+".join(["1"] * 1000) + "\n", 100),
    "sums of 240 terms": ("x = " + "+".join(["1"] * 240) + "\n", 415),
    "ordinary calls": ("y = f(a, b, c=1, d=[1, 2, 3])\n", 6500),
}


def hostile() -> None:
    from xlalint.engine.static import check_file

    with tempfile.TemporaryDirectory() as tmp:
        for name, (line, times) in HOSTILE.items():
            path = Path(tmp, "case.py")
            path.write_text("import tensorflow as tf\n" + line * times, encoding="utf-8")
            start = time.perf_counter()
            _, _, errors = check_file(str(path), "gpu", "auto")
            seconds = time.perf_counter() - start
            outcome = errors[0].message.split(":")[0].split(",")[0] if errors else "scanned"
            print(f"{name:22s} {path.stat().st_size / 1000:5.0f} KB {seconds:7.2f} s   {outcome}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--hostile", action="store_true", help="time 200 KB files of long sums instead")
    args = parser.parse_args()
    if args.hostile:
        hostile()
        return
    texts = sources()
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.files):
            Path(tmp, f"case_{i:04d}.py").write_text(variant(texts[i % len(texts)], i), encoding="utf-8")
        lines = sum(t.count("\n") for t in texts) / len(texts)
        print(f"{args.files} files (variants of {len(texts)} examples, {lines:.0f} lines on average), "
              f"{os.cpu_count()} CPUs, best of {args.repeat}")
        static_s, summary = best_of(args.repeat, [sys.executable, "-c", STATIC, tmp])
        tf_s, _ = best_of(args.repeat, [sys.executable, "-c", "import tensorflow"])
        from xlalint.engine.analysis import static_report
        from xlalint.settings.table import Options
        start = time.perf_counter()
        static_report([tmp], Options())
        in_process = time.perf_counter() - start
    print(f"xlalint --static (fresh interpreter): {static_s:6.2f} s   {summary}")
    per_file = in_process / args.files * 1e3
    print(f"  static_report, in this process:     {in_process:6.2f} s   ({per_file:.1f} ms/file)")
    print(f"python -c 'import tensorflow':        {tf_s:6.2f} s")
    print(f"ratio (import tensorflow / static):   {tf_s / static_s:6.2f}x")


if __name__ == "__main__":
    main()
