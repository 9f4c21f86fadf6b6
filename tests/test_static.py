"""``--static``: XLA blockers by API name from a libcst pass, never importing TensorFlow."""

from __future__ import annotations

import glob
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from helpers import REPO, run_json
from marks import expected
from xlalint.analyses.data_dependent import DATA_DEPENDENT
from xlalint.core import tables
from xlalint.source.api_table import load_table
from xlalint.checks import RULES, Pending, Rule
from xlalint.engine.analysis import static_report
from xlalint.settings.table import Options
from xlalint.source.index import Index
from xlalint.source.positions import Positions, leftmost_name
from xlalint.engine.source_pass import scan_source
from xlalint.core.support import load_support

RULE_DIRS = sorted(p for p in (REPO / "rules").iterdir() if (p / "good.py").is_file())  # XLA9xx: no examples
KERAS_ONLY = {"XLA301", "XLA302", "XLA303"}  # examples with Keras models only: --static looks at compiled functions
AGREEMENT_FILES = sorted(glob.glob(str(REPO / "rules" / "*" / "*.py")) +
                         glob.glob(str(REPO / "fixtures" / "*.py")))
CORPUS = sorted(glob.glob(str(REPO / "fixtures" / "corpus" / "*.py")))


def run_static(paths: list[str], device: str = "gpu"):
    return static_report(paths, Options(device=device))


def _found(path: Path, code: str, device: str = "cpu") -> set[tuple[str, int]]:
    report = run_static([str(path)], device)
    assert not report.errors, report.errors
    return {(f.code, f.line) for f in report.findings if f.code == code}


def _marked(path: Path, code: str) -> set[tuple[str, int]]:
    return {(c, line) for c, line in expected(path) if c == code}


def _write(tmp_path: Path, source: str, name: str = "case.py") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    return path


@pytest.mark.parametrize("path", [REPO / "rules" / "XLA001" / "bad.py", REPO / "fixtures" / "multi_blocker.py"],
                         ids=lambda p: p.relative_to(REPO).as_posix())
def test_unsupported_ops_reported_at_the_marked_lines(path):
    assert _found(path, "XLA001") == _marked(path, "XLA001")


def test_dynamic_shapes_reported_at_the_marked_lines_helpers_included():
    path = REPO / "rules" / "XLA103" / "bad.py"
    assert _found(path, "XLA103") == _marked(path, "XLA103")
    helper = next(f for f in run_static([str(path)]).findings if f.line == 7)
    assert helper.entry == "valid_rows_total" and helper.severity == "warning" and "(static:" in helper.message


@pytest.mark.parametrize("path", [d / "good.py" for d in RULE_DIRS if d.name not in KERAS_ONLY] + [
    REPO / "fixtures" / "clean_and_untraceable.py", REPO / "fixtures" / "training_step.py"],
    ids=lambda p: p.relative_to(REPO).as_posix())
def test_clean_files_have_no_findings(path):
    report = run_static([str(path)], "gpu")
    assert report.findings == [] and report.errors == []
    assert report.entries and all(e.verdict == "compatible" for e in report.entries)


@pytest.mark.tf
def test_one_entry_per_compiled_function_with_its_verdict():
    report = run_static([str(REPO / "fixtures" / name) for name in ("multi_blocker.py", "clean_and_untraceable.py")])
    assert [(e.name, e.line, e.verdict) for e in report.entries] == [
        ("preprocess_and_score", 8, "incompatible"), ("normalize", 7, "compatible"),
        ("no_signature", 12, "compatible")]
    assert report.tensorflow == load_table()["tensorflow"] and report.device == "gpu"
    first = report.findings[0]
    assert (first.line, first.col, first.op_type) == (9, 5, "PrintV2")
    assert first.message == ("`tf.print` (PrintV2, StringFormat) has no XLA kernel on gpu "
                             "(static: by API name, not traced)")


def test_never_imports_tensorflow_or_keras():
    code = ("import sys; from xlalint.engine.analysis import static_report; from xlalint.settings.table import Options; "
            "report = static_report(['rules', 'fixtures'], Options()); assert report.findings; "
            "print(sorted(m for m in ('tensorflow', 'keras', 'tf_keras') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_import_aliases_and_ways_of_compiling(tmp_path):
    path = _write(tmp_path, '''
        import keras
        import tensorflow as tensorflow_alias
        import tensorflow.compat.v1 as tf1
        from tensorflow import strings
        from tensorflow import numpy_function as host
        from tensorflow.keras import layers
        import tensorflow as tf


        @tensorflow_alias.function
        def decorated(x):
            return strings.length(x)  # expect: XLA001


        def step(x):
            return tf1.py_func(lambda a: a, [x], tf.float32)  # expect: XLA001


        def step_jit(x):
            return host(lambda a: a, [x], tf.float32)  # expect: XLA001


        fast = tf.function(step)
        faster = tf.function(jit_compile=True)(step_jit)


        class Block(layers.Layer):
            def call(self, x):
                return tf.math.segment_sum(x, [0, 0, 1])  # expect: XLA001

            def summary_line(self, x):
                return tf.strings.as_string(x)  # not compiled


        class Trainer(keras.Model):
            def train_step(self, data):
                return tf.unique(data)  # expect: XLA103


        class Derived(Block):
            def call(self, x):
                return tf.linalg.lu(x)  # expect: XLA001
    ''')
    scan = scan_source(str(path), path.read_text(), load_table())
    assert {(f.code, f.line) for f in scan.findings} == expected(path)
    kinds = {fn.name: (fn.kind, fn.jit_compile) for fn in scan.functions}
    assert kinds == {"decorated": ("tf.function", False), "step": ("tf.function", False),
                     "step_jit": ("tf.function", True), "Block.call": ("keras", False),
                     "Trainer.train_step": ("keras", False), "Derived.call": ("keras", False)}


def test_what_is_not_flagged(tmp_path):
    path = _write(tmp_path, '''
        import tensorflow as tf


        def plain(x):
            return tf.strings.length(x)  # not compiled


        @tf.function(jit_compile=True)
        def compiled(x, names):
            y = tf.where(x > 0, x, -x)  # three arguments: SelectV2, a fixed shape
            n = tf.strings.length(tf.constant("padding"))  # constant arguments: folded before XLA
            z = tf.py_function(lambda a: tf.strings.length(a), [names], tf.int32)  # expect: XLA001

            def on_host(a):
                return tf.strings.as_string(a)  # host code, passed to numpy_function below

            w = tf.numpy_function(on_host, [x], tf.string)  # expect: XLA001
            resized = tf.image.resize(tf.reshape(x, [1, 2, 2, 1]), [4, 4])  # bilinear has a kernel
            area = tf.image.resize(tf.reshape(x, [1, 2, 2, 1]), [1, 1], method="area")  # expect: XLA001
            return y, n, z, w, resized, area
    ''')
    findings = scan_source(str(path), path.read_text(), load_table()).findings
    assert {(f.code, f.line) for f in findings} == expected(path)


def test_experimental_compile_and_xla_devices_flag(tmp_path):
    path = _write(tmp_path, '''
        import os
        from os import environ

        import tensorflow as tf

        os.environ["TF_XLA_FLAGS"] = "--tf_xla_enable_xla_devices"  # expect: XLA402
        environ.setdefault("TF_XLA_FLAGS", "--tf_xla_enable_xla_devices=true")  # expect: XLA402
        os.putenv("TF_XLA_FLAGS", "--tf_xla_enable_xla_devices")  # expect: XLA402
        os.environ["TF_XLA_FLAGS"] = "--tf_xla_auto_jit=2"
        os.environ["TF_XLA_FLAGS"] = "--tf_xla_enable_xla_devices=false"
        os.environ["OTHER_FLAGS"] = "--tf_xla_enable_xla_devices"


        @tf.function(experimental_compile=True)  # expect: XLA401
        def old(x):
            return x * 2.0


        def main():
            os.environ["TF_XLA_FLAGS"] += " --tf_xla_enable_xla_devices"  # expect: XLA402
    ''')
    scan = scan_source(str(path), path.read_text(), load_table())
    assert {(f.code, f.line) for f in scan.findings} == expected(path)
    rules = {code: (RULES[code].name, RULES[code].severity) for code in ("XLA401", "XLA402")}
    assert rules == {"XLA401": ("experimental-compile", "warning"), "XLA402": ("xla-devices-flag", "warning")}
    assert all((f.name, f.severity) == rules[f.code] for f in scan.findings)
    assert [fn.jit_compile for fn in scan.functions] == [True]
    assert {f.entry for f in scan.findings} == {"<module>", "old", "main"}


def test_a_source_rule_is_run_by_the_pass_through_the_registry(monkeypatch):
    """Adding a source rule is adding its module: the pass calls every registered RULE.check_source."""
    rule = Rule("XLA499", "every-call", "info", "Every call.", stage="source",
                check_source=lambda index, ctx: [Pending(rule, "a call", "", site.node, site.owner) for site in index.calls])
    monkeypatch.setitem(RULES, "XLA499", rule)
    scan = scan_source("x.py", "import tensorflow as tf\n\ndef f():\n    print(tf.ones(2))\n", load_table())
    assert [(f.code, f.line, f.col, f.entry) for f in scan.findings] == [("XLA499", 4, 5, "f"), ("XLA499", 4, 11, "f")]
    assert {c for c, r in RULES.items() if r.stage == "source"} <= {c for c, r in RULES.items() if r.check_source}


def test_python_numbers_reported_only_where_each_value_is_a_new_trace(tmp_path):
    path = _write(tmp_path, '''
        import tensorflow as tf


        def plain(x, i):
            return x + tf.cast(i, tf.float32)


        wrapped = tf.function(plain, input_signature=[tf.TensorSpec([2]), tf.TensorSpec([], tf.int32)])


        @tf.function
        def block(x, i):
            return x * tf.cast(i + 1, tf.float32)


        @tf.function(jit_compile=True)
        def model(x):
            for i in range(4):  # unrolled once, when `model` is traced
                x = block(x, i)
            return x


        @tf.function(input_signature=[tf.TensorSpec([2]), tf.TensorSpec([], tf.int32)])
        def signed(x, i):
            return x * tf.cast(i, tf.float32)


        def main():
            @tf.function
            def evaluate(x, k):
                return x * k

            x = tf.ones([2])
            for i in range(3):
                x = wrapped(x, i) + plain(x, i) + signed(x, i) + model(x)
                x = evaluate(x, k=i)  # expect: XLA107
            for lr in [0.1, 0.01]:
                x = block(x, lr)  # expect: XLA107
            return x, [evaluate(x, k) for k in range(3)]  # expect: XLA107
    ''')
    scan = scan_source(str(path), path.read_text(), load_table())
    assert {(f.code, f.line) for f in scan.findings} == expected(path)
    assert {f.entry for f in scan.findings} == {"evaluate", "block"}


def test_python_number_rule_in_static_mode_matches_the_examples():
    bad = REPO / "rules" / "XLA107" / "bad.py"
    assert {(f.code, f.line) for f in run_static([str(bad)]).findings} == expected(bad)
    assert not run_static([str(REPO / "rules" / "XLA107" / "good.py")]).findings


def test_unreadable_and_unparsable_files_are_file_errors(tmp_path):
    report = run_static([str(REPO / "fixtures" / "broken"), str(tmp_path / "missing.py")])
    errors = {Path(e.path).name: e.message for e in report.errors}
    assert errors["syntax_error.py"].startswith("syntax error at line")
    assert errors["latin1.py"].startswith("cannot decode the file as UTF-8")
    assert "no such file" in errors["missing.py"]
    assert not any(f.path.endswith("no_tensorflow.py") for f in report.findings)


def test_positions_are_those_of_libcst():
    """The marker-based positions equal PositionProvider's, for every call, def and keyword argument."""
    for name in AGREEMENT_FILES + CORPUS + [str(REPO / "examples" / "train.py")]:
        source = Path(name).read_text(encoding="utf-8")
        module = cst.parse_module(source)
        index = Index(module)
        nodes = [n for n in _all_nodes(module) if isinstance(n, (cst.Call, cst.FunctionDef, cst.Arg))
                 and leftmost_name(n) is not None]
        ours = Positions(module, source, index.parents)(nodes)
        theirs = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
        for node in nodes:
            start = theirs[node.name if isinstance(node, cst.FunctionDef) else node].start
            assert ours[id(node)] == (start.line, start.column + 1), (name, start)


def _all_nodes(module):
    found = []

    class Collect(cst.CSTVisitor):
        def on_visit(self, node):
            found.append(node)
            return True

    module.visit(Collect())
    return found


def test_shipped_table_agrees_with_the_support_table():
    table = load_table()
    path = tables.path(tables.API, table["tensorflow"])
    assert path.stat().st_size < 1_000_000
    support = load_support(table["tensorflow"])
    for api, record in table["apis"].items():
        assert set(record["unsupported"]) <= set(record["ops"]), api
        assert all(not support.has_op("cpu", op) or not support.has_op("gpu", op) for op in record["unsupported"])
        assert record["dynamic_shape"] == any(op in DATA_DEPENDENT and op not in record["unsupported"]
                                              for op in record["ops"]), api
    for api, op in [("tf.strings.length", "StringLength"), ("tf.numpy_function", "PyFunc"),
                    ("tf.print", "PrintV2"),
                    ("tf.histogram_fixed_width", "HistogramFixedWidth"), ("tf.linalg.lu", "Lu"),
                    ("tf.image.crop_and_resize", "CropAndResize"), ("tf.unique_with_counts", "UniqueWithCounts"),
                    ("tf.compat.v1.py_func", "PyFunc"), ("tf.raw_ops.StringLength", "StringLength")]:
        assert op in table["apis"][api]["unsupported"], api
    for api in ("tf.unique", "tf.boolean_mask", "tf.where", "tf.image.non_max_suppression"):
        assert table["apis"][api]["dynamic_shape"] and not table["apis"][api]["unsupported"], api
    assert table["apis"]["tf.where"]["max_args"] == 1
    assert "tf.reshape" not in table["apis"] and "tf.repeat" not in table["apis"]


def _generator_module():
    sys.path.insert(0, str(REPO / "tools"))
    try:
        import gen_api_table
    finally:
        sys.path.remove(str(REPO / "tools"))
    return gen_api_table


@pytest.mark.tf
def test_generator_records_what_tracing_shows():
    gen = _generator_module()
    tf = gen.tf
    assert gen.trace_ops(tf.strings.length, ("string[4]",)) == {"StringLength"}
    assert gen.op_wrapper_codes()[gen.tf_decorator.unwrap(tf.raw_ops.AsString)[1].__code__] == "AsString"
    ops, forms = gen.trace_by_profiles(tf.repeat)  # a vector of repeats makes a Where, a scalar does not
    assert forms > 1 and "Where" not in ops
    table = load_table()
    if table["tensorflow"] == tf.__version__:
        assert table["apis"]["tf.strings.length"]["ops"] == sorted(gen.trace_by_profiles(tf.strings.length)[0])


@pytest.mark.tf
def test_static_xla001_findings_are_a_subset_of_the_full_mode(rules_report):
    """No false positives: every static XLA001 is also an XLA001 of the full (traced) mode at that line."""
    fixtures = [str(Path(p).relative_to(REPO)) for p in glob.glob(str(REPO / "fixtures" / "*.py"))]
    fixtures_report, _ = run_json(*fixtures, "--device", "cpu")
    full = {(f["path"], f["line"]) for r in (rules_report, fixtures_report) for f in r["findings"]
            if f["code"] == "XLA001"}
    static = {(str(Path(f.path).resolve().relative_to(REPO)), f.line)
              for f in run_static(AGREEMENT_FILES, "cpu").findings if f.code == "XLA001"}
    assert static, "nothing to compare"
    assert static <= full, sorted(static - full)


def test_static_cli_uses_the_same_codes_filters_and_exit_codes():
    from helpers import json_without_tf, run_without_tf

    report, code = json_without_tf("--static", "fixtures/multi_blocker.py", "fixtures/suppressed/suppressed.py")
    assert code == 1
    lines = {(f["code"], f["path"], f["line"]) for f in report["findings"]}
    assert ("XLA001", "fixtures/multi_blocker.py", 10) in lines
    assert ("XLA001", "fixtures/suppressed/suppressed.py", 9) not in lines  # the ignore comment holds
    report, code = json_without_tf("--static", "fixtures/multi_blocker.py", "--ignore", "XLA001")
    assert report["findings"] == [] and code == 0
    done = run_without_tf("--static", "fixtures/multi_blocker.py::preprocess_and_score")
    assert done.returncode == 2 and "need tracing" in done.stderr


BLOCKED = """import tensorflow as tf
{before}

@tf.function
def {name}(v):
    return tf.numpy_function(lambda a: a, [v], tf.float32)
"""


def _chain(terms: int) -> str:
    return "x = " + "+".join(["1"] * terms) + "\n"


def test_files_libcst_cannot_follow_are_file_errors_and_the_others_are_still_checked(tmp_path):
    """Python cannot compile a 4,000-term sum; 200 KB of 1,000-term sums it can, but libcst would take
    minutes and then exceed the recursion limit: each is a per-file error, found before libcst runs."""
    (tmp_path / "too_deep.py").write_text(BLOCKED.format(before=_chain(4000), name="a"))
    (tmp_path / "deep_200kb.py").write_text(BLOCKED.format(before=_chain(1000) * 100, name="b"))
    (tmp_path / "nul.py").write_bytes(b"import tensorflow as tf\nx = 1\x00\n")
    (tmp_path / "bom.py").write_bytes(b"\xef\xbb\xbf" + BLOCKED.format(before="", name="c").encode())
    (tmp_path / "ok.py").write_text(BLOCKED.format(before="", name="d"))
    report = run_static([str(tmp_path)], "cpu")
    assert sorted((Path(e.path).name, e.message) for e in report.errors) == [
        ("deep_200kb.py", "an expression at line 2 is nested more than 250 levels deep, deeper than the static "
                          "pass follows; run without --static to trace it"),
        ("nul.py", "NUL byte at line 2: Python cannot compile a file that contains one"),
        ("too_deep.py", "nested too deeply for Python's compiler (RecursionError): Python cannot import it either")]
    assert sorted((Path(f.path).name, f.line, f.col, f.code) for f in report.findings) == [
        ("bom.py", 6, 12, "XLA001"), ("ok.py", 6, 12, "XLA001")]


def test_a_chain_at_the_depth_limit_is_scanned_and_one_term_more_is_not(tmp_path):
    """The limit leaves libcst room for its callers' frames (pytest's included)."""
    from xlalint.source.limits import MAX_DEPTH

    at_limit = _write(tmp_path, BLOCKED.format(before=_chain(MAX_DEPTH - 2), name="f"), "at_limit.py")
    report = run_static([str(at_limit)], "cpu")
    assert report.errors == []
    assert [(f.code, f.line, f.col) for f in report.findings] == [("XLA001", 7, 12)]
    over = _write(tmp_path, BLOCKED.format(before=_chain(MAX_DEPTH - 1), name="f"), "over.py")
    assert [e.message.split(",")[0] for e in run_static([str(over)], "cpu").errors] == [
        f"an expression at line 2 is nested more than {MAX_DEPTH} levels deep"]


STRING_SIGNATURES = """import tensorflow as tf


@tf.function(input_signature=[tf.TensorSpec([None], tf.string), tf.TensorSpec([4], dtype=tf.float32)])
def parse(text, x):
    return tf.strings.to_hash_bucket_fast(text, 8), x * 2.0


@tf.function(input_signature=[tf.TensorSpec(shape=[2], dtype=tf.int32)])
def numbers(ids):
    return ids + 1
"""


def test_string_spec_in_an_input_signature_is_xla002(tmp_path):
    (tmp_path / "signatures.py").write_text(STRING_SIGNATURES)
    report = run_static([str(tmp_path / "signatures.py")], "cpu")
    found = sorted((f.code, f.line, f.col, f.entry) for f in report.findings if f.code == "XLA002")
    assert found == [("XLA002", 4, 31, "parse")]
    assert {e.name: e.verdict for e in report.entries} == {"parse": "incompatible", "numbers": "compatible"}


@pytest.mark.tf
def test_the_compiler_refuses_a_string_argument_and_takes_the_int_one():
    import tensorflow as tf

    def parse(text, x):  # the string argument alone, unused: still no XLA type for it
        return x * 2.0

    texts, numbers = tf.constant(["a", "b"]), tf.constant([1.0, 2.0, 3.0, 4.0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="unsupported operations"):
        tf.function(parse, jit_compile=True)(texts, numbers)
    assert tf.function(lambda ids: ids + 1, jit_compile=True)(tf.constant([1, 2])).numpy().tolist() == [2, 3]


@pytest.mark.tf
def test_shipped_table_is_what_the_installed_tensorflow_generates():
    """One public function in 40, regenerated now, against the table shipped for this version."""
    gen = _generator_module()
    shipped = json.loads(tables.path(tables.API, gen.tf.__version__).read_text())["apis"]
    generator, groups = gen.Generator(), list(gen.public_callables().values())
    for obj, names in groups[::40]:
        record = generator.record(obj, names)
        assert all(shipped.get(name) == record for name in names), names
    assert len(groups) == json.loads(tables.path(tables.API, gen.tf.__version__).read_text())["counts"]["functions"]
