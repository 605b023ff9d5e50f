"""Writes silent_cases_215.json: what the real tf.estimator 2.15 gave for each program in tests/silent_cases.py.

Run from the repository root (any interpreter; each case runs in its own process of the 2.15 one, ~1 min):

    python tests/reference/make_silent_cases_215.py            # SILENT_215_PYTHON=/other/python to override

The 2.15 interpreter is /work/venv215/bin/python: tensorflow-cpu 2.15.1 + tensorflow-estimator 2.15.0.
Every case runs twice and must give the same result both times (the specifications are deterministic:
fixed data order, constant initial values, no update that can run in the OutOfRangeError session.run).
tests/test_silent_cases_215.py runs the same cases on `estimators` and compares.
"""

import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))

from tests import silent_cases  # noqa: E402

OUTPUT = os.path.join(HERE, "silent_cases_215.json")
PYTHON = os.environ.get("SILENT_215_PYTHON", "/work/venv215/bin/python")


def without_messages(result):
    """The result with the errors' messages left out (only their classes are specified)."""
    if isinstance(result, dict):
        return {k: without_messages(v) for k, v in result.items() if not (k == "message" and "error" in result)}
    if isinstance(result, list):
        return [without_messages(v) for v in result]
    return result


def main() -> None:
    probe = "import importlib.metadata as m; print(m.version('tensorflow-cpu'), m.version('tensorflow-estimator'))"
    versions = subprocess.run(
        [PYTHON, "-c", probe],
        capture_output=True, text=True, check=True, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"),
    ).stdout.split()
    assert versions[0].startswith("2.15") and versions[1].startswith("2.15"), versions
    cases = {}
    for name, function in silent_cases.CASES.items():
        if function.ours_only:
            continue
        first = silent_cases.run_case(PYTHON, "tf215", name)
        again = silent_cases.run_case(PYTHON, "tf215", name)
        if without_messages(first) != without_messages(again):
            raise SystemExit(f"{name}: two 2.15 runs differ:\n{first}\n{again}")
        cases[name] = first
        print(f"{name}: done", file=sys.stderr)
    with open(OUTPUT, "w") as f:
        json.dump({"tensorflow": versions[0], "tensorflow_estimator": versions[1], "cases": cases}, f, indent=1,
                  sort_keys=True)
        f.write("\n")
    print(f"wrote {OUTPUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
