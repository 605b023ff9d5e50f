"""tensorflow/estimator 2.15's own unit tests as an oracle: how many of those that pass on 2.15 pass here.

    python bench/estimator_oracle/run.py               # both halves (2.15 half: tens of minutes)
    python bench/estimator_oracle/run.py --ours-only   # ours against the cached passing_215.json

Each upstream test file (upstream/, byte-identical copies of v2.15.0's) runs in its own pytest
subprocess with a timeout, junit XML per file:
  (a) /work/venv215/bin/python, against the real tensorflow-estimator 2.15 (no shim); the tests that
      pass are cached in passing_215.json;
  (b) /work/main/.venv/bin/python through shim.py (`-p shim`), against `estimators`.
Prints per file the tests passing on 2.15 and how many of those pass here, and the total; writes
failures.txt: every 2.15-passing test that fails here, with the first line of its error, grouped.
oracle_plugin.py (both halves) does what each file's `tf.test.main()` block did: absl flags parsed, and
disable_v2_behavior()/enable_eager_execution() where the file's __main__ calls it.
Run with any python3 (the parent imports no TensorFlow); it runs the children under `nice -n 10`.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
TESTS = os.path.join(HERE, "upstream", "tensorflow_estimator", "python", "estimator")
PY215 = "/work/venv215/bin/python"
PYOURS = os.environ.get("ORACLE_PYTHON") or os.path.join(REPO, ".venv", "bin", "python")
CACHE = os.path.join(HERE, "passing_215.json")
FAILURES = os.path.join(HERE, "failures.txt")
REASONS = os.path.join(HERE, "reasons.txt")
# Keras 3's own column (--keras3): failures only plain Keras 3 has, read after reasons.txt
REASONS_KERAS3 = os.path.join(HERE, "reasons_keras3.txt")
# a reported line that is an exception itself ("ValueError: ...")
LAST_EXCEPTION = re.compile(r"[\w.]+(Error|Exception|Exit): ")
# a file of a traceback in our package or in an upstream test (pytest's and "in user code" frames alike)
TRACEBACK_FILE = re.compile(r"(?<![\w-])(?:[\w./-]*/)?(estimators|upstream)/[\w/]+\.py\b")
# a TF1/TensorFlow internal a TF 2.21 engine cannot honour; a difference kept on purpose (the reason says what
# it protects); a behaviour difference still to fix
VERDICTS = ("may stay", "deliberate", "open")

# Paths under upstream/tensorflow_estimator/python/estimator/. Left out (see README.md): the rest of
# canned/ and head/ (rnn, kmeans, timeseries, v1, sequential heads), inputs/pandas_io_test (no pandas),
# tpu/tpu_enqueue_sequence_test (needs tf.contrib: does
# not import on 2.15 either), and whatever takes over 10 minutes on 2.15 (DEFAULT_SKIPPED).
FILES = [
    "estimator_test.py",
    "training_test.py",
    "run_config_test.py",
    "model_fn_test.py",
    "export/export_test.py",
    "export/function_test.py",
    "exporter_test.py",
    "early_stopping_test.py",
    "extenders_test.py",
    "gc_test.py",
    "util_test.py",
    "object_checkpointing_test.py",
    "estimator_export_test.py",
    "keras_test.py",
    "keras_premade_model_test.py",
    "inputs/numpy_io_test.py",
    "hooks/hooks_test.py",
    "hooks/basic_session_run_hooks_test.py",
    "distribute_strategy_estimator_integration_test.py",
    "distribute_strategy_estimator_training_test.py",
    "tpu/tpu_config_test.py",
    "tpu/error_handling_test.py",
    "tpu/tpu_estimator_test.py",
    "tpu/tpu_estimator_export_test.py",
    "tpu/tpu_estimator_evaluation_test.py",
    "tpu/tpu_estimator_signals_test.py",
    "tpu/tpu_estimator_input_v2_test.py",
    "tpu/tpu_estimator_gradients_test.py",
    "tpu/tpu_estimator_model_parallelism_test.py",
    "tpu/tpu_estimator_integration_test.py",
    "tpu/tpu_estimator_embedding_test.py",
    "tpu/autotuning_iterations_per_loop_test.py",
]
# tf.estimator 2.15's canned estimators and heads (issue 27): reported as their own line.
CANNED_FILES = [
    "canned/baseline_test.py",
    "canned/dnn_test_fc_v2.py",
    "canned/linear_test.py",
    "canned/dnn_linear_combined_test.py",
    "canned/baseline_estimator_test.py",
    "canned/dnn_estimator_test.py",
    "canned/linear_estimator_test.py",
    "canned/dnn_linear_combined_estimator_test.py",
    "canned/optimizers_test.py",
    "canned/optimizers_test_v2.py",
    "canned/parsing_utils_test.py",
    "head/binary_class_head_test.py",
    "head/multi_class_head_test.py",
    "head/regression_head_test.py",
    "head/multi_label_head_test.py",
    "head/multi_head_test.py",
]
DEFAULT_SKIPPED: dict[str, str] = {}  # file -> why it is not in the default run


def _short(text: str | None) -> str:
    for line in (text or "").splitlines():
        if line.strip():
            return line.strip()[:300]
    return ""


def parse_junit(path: str, file: str) -> dict[str, dict]:
    """test id -> {"status": passed|failed|error|skipped, "error": first line, "raised_in_test": whether
    the innermost traceback frame that is ours or the test's is the test's (it raised it, calling TensorFlow or Keras
    itself: a model_fn of the test calling tf.layers under Keras 3), not estimators/'}."""
    out: dict[str, dict] = {}
    stem = os.path.splitext(os.path.basename(file))[0]
    for case in ET.parse(path).getroot().iter("testcase"):
        classname = case.get("classname", "")
        cls = classname.rsplit(".", 1)[-1] if classname.rsplit(".", 1)[-1] != stem else ""
        name = case.get("name", "")
        test_id = f"{file}::{cls + '::' if cls else ''}{name}"
        status, error, raised_in_test, last = "passed", "", False, ""
        for child in case:
            if child.tag in ("failure", "error"):
                status = "failed" if child.tag == "failure" else "error"
                text = child.text or ""
                owners = [m.group(1) for m in TRACEBACK_FILE.finditer(text)]
                raised_in_test = bool(owners) and owners[-1] == "upstream"
                reported = [ln[1:].strip() for ln in text.splitlines() if ln.startswith("E ")]  # pytest's "E   " lines
                # the exception itself, where the first line is a wrapper's ("in user code:" of a tf.function)
                raised = [ln for ln in reported if LAST_EXCEPTION.match(ln)]
                last = raised[-1][:300] if raised else ""
                error = _short(child.get("message")) or _short(child.text)
                if error in ("collection failure", "failed on setup with") or not error:
                    # pytest's placeholder: the exception is the last "E   " line of the report
                    error = (reported[-1] if reported else error)[:300]
                break
            if child.tag == "skipped":
                status, error = "skipped", _short(child.get("message"))
        if name == stem or (not classname and status == "error"):  # a collection error
            test_id = f"{file}::<collection>"
        out[test_id] = {"status": status, "error": error, "raised_in_test": raised_in_test, "last": last}
    return out


def run_file(python: str, file: str, shim: bool, outdir: str, timeout: int, keras3: bool) -> dict:
    xml = os.path.join(outdir, file.replace("/", "__") + ".xml")
    log = os.path.join(outdir, file.replace("/", "__") + ".log")
    env = dict(os.environ)
    # HERE for shim/oracle_plugin; REPO first on the path so that a clone's `estimators` wins over the
    # venv's editable install (which points at /work/main)
    env["PYTHONPATH"] = os.pathsep.join([HERE, REPO])
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    env.pop("PYTHONSAFEPATH", None)
    if shim and not keras3:
        env["TF_USE_LEGACY_KERAS"] = "1"  # 2.15's tf.keras was Keras 2; tf_keras is it on TF 2.21
    cmd = ["nice", "-n", "10", python, "-m", "pytest", "-c", os.path.join(HERE, "pytest.ini"),
           "--rootdir", HERE, "-p", "oracle_plugin"] + (["-p", "shim"] if shim else []) + [
           "-q", "-p", "no:cacheprovider", f"--junitxml={xml}", os.path.join(TESTS, file)]
    start = time.monotonic()
    with open(log, "w") as logf:
        # cwd: the output folder, so that files a test writes to its working directory stay out of the repo
        proc = subprocess.Popen(cmd, cwd=outdir, env=env, stdout=logf, stderr=subprocess.STDOUT,
                                start_new_session=True)
        try:
            rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait()
            rc = "timeout"
    seconds = round(time.monotonic() - start, 1)
    results = parse_junit(xml, file) if os.path.exists(xml) else {}
    if not results:
        with open(log) as f:
            tail = [line.strip() for line in f if line.strip()][-3:]
        why = f"no junit XML (rc={rc})" if rc != "timeout" else f"file timed out after {timeout} s"
        results = {f"{file}::<run>": {"status": "error", "error": f"{why}: {' | '.join(tail)[:250]}"}}
    return {"seconds": seconds, "rc": rc, "results": results}


def run_half(label: str, python: str, shim: bool, files: list[str], timeout: int, keras3: bool,
             keep: str | None) -> dict:
    outdir = keep or tempfile.mkdtemp(prefix=f"oracle_{label}_")
    os.makedirs(outdir, exist_ok=True)
    out = {}
    start = time.monotonic()
    for file in files:
        r = run_file(python, file, shim, outdir, timeout, keras3)
        counts = collections.Counter(v["status"] for v in r["results"].values())
        print(f"[{label}] {file}: {dict(counts)} in {r['seconds']} s (rc {r['rc']})", flush=True)
        out[file] = r
    print(f"[{label}] half done in {time.monotonic() - start:.0f} s; logs and XML in {outdir}", flush=True)
    return out


def _reused(outdir: str, file: str) -> dict:
    """One file's ours result from an earlier run's XML (run_file's shape; a missing XML is the file's error)."""
    xml = os.path.join(outdir, file.replace("/", "__") + ".xml")
    results = parse_junit(xml, file) if os.path.exists(xml) else {}
    if not results:
        results = {f"{file}::<run>": {"status": "error", "error": f"no junit XML in {outdir}"}}
    return {"seconds": 0.0, "rc": "reused", "results": results}


def _versions(python: str, shim: bool) -> str:
    code = ("import tensorflow as tf; print('tensorflow', tf.__version__)" if shim else
            "import tensorflow as tf, importlib.metadata as m; "
            "print('tensorflow', tf.__version__, 'tensorflow-estimator', m.version('tensorflow-estimator'))")
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    try:
        return subprocess.run([python, "-c", code], capture_output=True, text=True, env=env,
                              timeout=300).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return "?"


_NORMALIZE = [
    (re.compile(r"0x[0-9a-f]+"), "0x…"),
    (re.compile(r"/tmp/[^\s'\"]+"), "/tmp/…"),
    (re.compile(r"\b\d+(\.\d+)?\b"), "N"),
]


def kind(error: str) -> str:
    """An error's group: its first line, addresses, temporary paths and numbers blanked."""
    text = error or "(no message)"
    for pattern, repl in _NORMALIZE:
        text = pattern.sub(repl, text)
    return text[:200]


def coarse(error: str, raised_in_test: bool = False) -> str:
    """A broad cause, for the summary: what kind of difference from 2.15 the error shows."""
    e = error or ""
    if raised_in_test and not e.startswith("AssertionError"):
        return f"the test's own code raised {e.split(':', 1)[0][:40]} (calling TensorFlow/Keras, not us)"
    if re.match(r"(AttributeError|ImportError): .*(module 'tensorflow_estimator|from 'tensorflow_estimator)", e):
        return "a 2.15 name the test uses is missing here (AttributeError/ImportError on the shim module)"
    if re.match(r"(ImportError|ModuleNotFoundError): .*'tensorflow\.", e) or "No module named 'tensorflow." in e:
        return "TF 2.21 lacks a TensorFlow-internal module/name the test imports"
    if re.match(r"AttributeError: '\w+' object has no attribute '_", e):
        return "the test reads a private attribute of our object"
    if re.match(r"AssertionError: .* does not match ", e):
        return "right exception type, message differs from 2.15's (assertRaisesRegex)"
    if re.match(r"AssertionError: \w+ not raised", e):
        return "2.15 raised an error here, we do not"
    if e.startswith("AssertionError"):
        return "a value/behaviour assertion differs"
    if e.startswith(("TypeError", "ValueError", "AttributeError", "NotImplementedError", "RuntimeError")):
        return f"we raise {e.split(':', 1)[0]} where 2.15 ran"
    return f"other: {e.split(':', 1)[0][:60]}"


def read_reasons(path: str, reasons: dict[str, tuple[str, str]] | None = None) -> dict[str, tuple[str, str]]:
    """reasons.txt: `test id or prefix<TAB>verdict<TAB>reason` lines (verdict one of VERDICTS); # comments.
    A key `error:<text>` matches a failure whose first error line holds <text> and that the test's own code raised
    (parse_junit's raised_in_test), whatever the test. Lines add to `reasons` when given."""
    reasons = {} if reasons is None else reasons
    with open(path) as f:
        for number, line in enumerate(f, 1):
            if not line.strip() or line.startswith("#"):
                continue
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 3 or parts[1] not in VERDICTS:
                raise SystemExit(f"{path}:{number}: want `test<TAB>{'|'.join(VERDICTS)}<TAB>reason`, got {line!r}")
            reasons[parts[0]] = (parts[1], parts[2])
    return reasons


_ERROR_KEY = "error:"


def reason_for(test: str, reasons: dict[str, tuple[str, str]], error: str = "",
               raised_in_test: bool = False) -> tuple[str, str]:
    """The verdict and reason for a failing test: its own line, else the longest prefix that matches it, else an
    `error:` line whose text its error holds (only for an error the test's own code raised)."""
    if test in reasons:
        return reasons[test]
    prefixes = [key for key in reasons if not key.startswith(_ERROR_KEY) and test.startswith(key)]
    if prefixes:
        return reasons[max(prefixes, key=len)]
    if raised_in_test:
        for key, reason in reasons.items():
            if key.startswith(_ERROR_KEY) and key[len(_ERROR_KEY):] in error:
                return reason
    return ("unexplained", "no line in reasons.txt")


def _headline(rows: list[tuple], files: list[str], what: str) -> str:
    """"N of M <what>: P%" over the rows of `files` ('' when there are none)."""
    chosen = [r for r in rows if r[0] in files]
    if not chosen:
        return ""
    ref, ok = sum(r[1] for r in chosen), sum(r[2] for r in chosen)
    return f"{ok} of {ref} {what}: {100 * ok / ref if ref else 0.0:.1f}%"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ours-only", action="store_true", help="reuse passing_215.json for the 2.15 half")
    parser.add_argument("--files", help="comma-separated paths under upstream/.../estimator/ (default: FILES)")
    parser.add_argument("--timeout", type=int, default=600, help="seconds per test file (default 600)")
    parser.add_argument("--keras3", action="store_true", help="ours half without TF_USE_LEGACY_KERAS=1")
    parser.add_argument("--failures", default=FAILURES,
                        help="where to write the grouped failures (default failures.txt)")
    parser.add_argument("--keep", help="folder for the XML and logs (default: a new temporary folder)")
    parser.add_argument("--reuse", help="a --keep folder of an earlier run: verdicts again from its ours XML, "
                                        "nothing run (after editing reasons.txt)")
    args = parser.parse_args()
    files = args.files.split(",") if args.files else [f for f in FILES + CANNED_FILES if f not in DEFAULT_SKIPPED]

    if args.ours_only:
        with open(CACHE) as f:
            cache = json.load(f)
        missing = [f for f in files if f not in cache["files"]]
        if missing:
            sys.exit(f"not in {os.path.basename(CACHE)} (run without --ours-only): {', '.join(missing)}")
    else:
        print(f"2.15 half: {_versions(PY215, False)}", flush=True)
        ref = run_half("2.15", PY215, False, files, args.timeout, False,
                       args.keep and os.path.join(args.keep, "215"))
        cache = {"note": "written by run.py: per upstream test file, the tests that pass on TF 2.15.1 + "
                         "tensorflow-estimator 2.15.0 (/work/venv215)",
                 "versions": _versions(PY215, False), "files": {}}
        if os.path.exists(CACHE):
            with open(CACHE) as f:
                cache["files"] = json.load(f).get("files", {})
        for file, r in ref.items():
            res = r["results"]
            cache["files"][file] = {
                "seconds": r["seconds"],
                "counts": dict(collections.Counter(v["status"] for v in res.values())),
                "passed": sorted(t for t, v in res.items() if v["status"] == "passed"),
            }
        with open(CACHE, "w") as f:
            json.dump(cache, f, indent=1, sort_keys=True)
            f.write("\n")
    print(f"ours half: {_versions(PYOURS, True)}{'' if args.keras3 else ' (TF_USE_LEGACY_KERAS=1)'}", flush=True)
    ours_start = time.monotonic()
    if args.reuse:
        ours = {file: _reused(os.path.join(args.reuse, "ours"), file) for file in files}
    else:
        ours = run_half("ours", PYOURS, True, files, args.timeout, args.keras3,
                        args.keep and os.path.join(args.keep, "ours"))
    ours_seconds = time.monotonic() - ours_start

    total_ref = total_ok = 0
    rows = []
    failures: dict[str, list[tuple[str, str, bool]]] = collections.defaultdict(list)
    for file in files:
        passed_215 = cache["files"][file]["passed"]
        res = ours[file]["results"]
        # A file whose import failed here has one <collection>/<run> entry: its error is every test's.
        whole_file = next((v for t, v in res.items() if t.endswith(("::<collection>", "::<run>"))), None)
        ok = 0
        for test in passed_215:
            got = res.get(test)
            if got and got["status"] == "passed":
                ok += 1
                continue
            raised_in_test = False  # unless its traceback shows it
            if got:
                error = got["error"] if got["status"] != "skipped" else f"skipped here: {got['error']}"
                raised_in_test = got.get("raised_in_test", False)  # False for a skip (no traceback)
                if raised_in_test and got.get("last") and got["last"] not in error:
                    error = f"{error} ... {got['last']}"
            elif whole_file:
                error = whole_file["error"]
            else:
                error = "not collected here"
            failures[kind(error)].append((test, error, raised_in_test))
        total_ref += len(passed_215)
        total_ok += ok
        rows.append((file, len(passed_215), ok, cache["files"][file]["seconds"], ours[file]["seconds"]))

    width = max(len(r[0]) for r in rows)
    print(f"\n{'file':<{width}}  pass@2.15  pass here   2.15 s   ours s")
    for file, n_ref, n_ok, s_ref, s_ours in rows:
        pct = f"{100 * n_ok / n_ref:5.1f}%" if n_ref else "    -"
        print(f"{file:<{width}}  {n_ref:9d}  {n_ok:9d} {pct}  {s_ref:7.0f}  {s_ours:7.0f}")
    headline = _headline(rows, [f for f in files if f not in CANNED_FILES], "tests that pass on 2.15 pass here")
    canned = _headline(rows, [f for f in files if f in CANNED_FILES], "canned/head tests that pass on 2.15 pass here")
    headline = "\n# ".join(h for h in (headline, canned) if h)
    print("\n" + headline.replace("\n# ", "\n"))
    print(f"ours half: {ours_seconds:.0f} s; 2.15 half (cached): "
          f"{sum(cache['files'][f]['seconds'] for f in files):.0f} s")

    groups = sorted(failures.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    broad = collections.Counter()
    reasons = read_reasons(REASONS)
    if args.keras3:
        read_reasons(REASONS_KERAS3, reasons)
    verdicts = collections.Counter()
    for tests in failures.values():
        for test, error, raised_in_test in tests:
            broad[coarse(error, raised_in_test)] += 1
            verdicts[reason_for(test, reasons, error, raised_in_test)[0]] += 1
    tally = ", ".join(f"{verdicts[v]} {v}" for v in (*VERDICTS, "unexplained"))
    with open(args.failures, "w") as f:
        f.write(f"# {headline}\n# verdicts (reasons.txt): {tally}\n# broad causes:\n")
        for cause, n in broad.most_common():
            f.write(f"#   {n:5d}  {cause}\n")
        f.write(f"# {len(groups)} error kinds below; each: count, kind, then the tests "
                "(id  first line of its error), each with its verdict and reason\n\n")
        for k, tests in groups:
            f.write(f"## {len(tests)}  {k}\n")
            for test, error, raised_in_test in sorted(tests):
                verdict, why = reason_for(test, reasons, error, raised_in_test)
                f.write(f"{test}  {error}\n    -> {verdict}: {why}\n")
            f.write("\n")
    print("\nbroad causes:")
    for cause, n in broad.most_common():
        print(f"  {n:5d}  {cause}")
    print(f"\nverdicts (reasons.txt): {tally}")
    print(f"\ntop failure kinds ({len(groups)} kinds; all in {os.path.relpath(args.failures, REPO)}):")
    for k, tests in groups[:15]:
        print(f"  {len(tests):5d}  {k[:150]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
