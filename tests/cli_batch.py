"""Runs many `python main.py ...` command lines in one Python, as separate runs would (exit status, stdout, stderr).

Importing TensorFlow once instead of once per command line is what keeps a table of CLI cases cheap.
Each run gets fresh flags, and file descriptors 1 and 2 point at files of its own, so everything it
prints (Python, absl logging, TensorFlow's C++ logs) is captured. An uncaught exception is printed as
Python's top level would, with exit status 1.

    python tests/cli_batch.py runs.json results.json
runs.json: a list of argv lists (without "main.py"); results.json gets [{"code", "stdout", "stderr"}, ...].
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run_one(run_cli, argv: list[str]) -> dict:
    from absl import flags

    flags.FLAGS.unparse_flags()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        sys.stdout.flush()
        sys.stderr.flush()
        saved = os.dup(1), os.dup(2)
        os.dup2(out.fileno(), 1)
        os.dup2(err.fileno(), 2)
        try:
            try:
                run_cli(["main.py", *argv])
                code = 0
            except SystemExit as exit_:
                if exit_.code is None or isinstance(exit_.code, int):
                    code = exit_.code or 0
                else:  # sys.exit("message"): Python prints it and exits 1
                    print(exit_.code, file=sys.stderr)
                    code = 1
            except BaseException:  # noqa: BLE001 - what Python's top level does with it
                traceback.print_exc()
                code = 1
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
        out.seek(0)
        err.seek(0)
        return {"code": code, "stdout": out.read().decode(errors="replace"),
                "stderr": err.read().decode(errors="replace")}


def main() -> None:
    runs_path, results_path = sys.argv[1:3]
    with open(runs_path) as f:
        runs = json.load(f)
    sys.argv = ["main.py"]
    sys.path.insert(0, ROOT)
    os.chdir(ROOT)
    import main as cli

    log = os.environ.get("CLI_BATCH_LOG")  # where to say which run is going on (a hang is findable)
    results = []
    for argv in runs:
        if log:
            with open(log, "a") as f:
                f.write(f"{time.strftime('%H:%M:%S')} {' '.join(argv)}\n")
        results.append(_run_one(cli.run_cli, argv))
    with open(results_path, "w") as f:
        json.dump(results, f)


if __name__ == "__main__":
    main()
