"""The port, as a program: tf.estimator / TPUEstimator names -> `estimators`, and nothing else.

`python tests/compat/port.py` rewrites every programs/NAME.py and programs/NAME.diff from
programs/NAME_tf215.py; tests/compat/test_programs.py checks the committed files are exactly this
output, so each port provably changes only estimator names. Code only: the module docstring keeps
describing the original, with its first line saying the file is the port.
"""

from __future__ import annotations

import difflib
import pathlib
import re

PROGRAMS_DIR = pathlib.Path(__file__).resolve().parent / "programs"

# Applied in order to everything after the module docstring.
RULES: list[tuple[str, str]] = [
    (r"^from tensorflow\.compat\.v1 import estimator as tf_estimator$", "import estimators"),
    # The Estimator's implementation module, for its private helpers (dcgan_tpu's
    # `estimator._load_global_step_from_checkpoint_dir`): the engine's own estimator module.
    (r"^from tensorflow(?:_estimator)?\.python\.estimator import estimator$", "from estimators import estimator"),
    (r"\btf_estimator\.tpu\.RunConfig\b", "estimators.tpu.RunConfig"),
    (r"\btf_estimator\.tpu\.", "estimators."),
    (r"\btf_estimator\.export\.", "estimators.export."),
    (r"\btf_estimator\.", "estimators."),
    (r"\btf\.(?:compat\.v1\.)?estimator\.tpu\.RunConfig\b", "estimators.tpu.RunConfig"),
    (r"\btf\.(?:compat\.v1\.)?estimator\.tpu\.", "estimators."),
    (r"\btf\.(?:compat\.v1\.)?estimator\.export\.", "estimators.export."),
    (r"\btf\.(?:compat\.v1\.)?estimator\.", "estimators."),
    (r"\btf\.(?:compat\.v1\.)?tpu\.CrossShardOptimizer\b", "estimators.CrossShardOptimizer"),
]
_TF215_TITLE = re.compile(r"re-creation, TF 2\.15(?: form)?\.")


def _split_docstring(source: str) -> tuple[str, str]:
    if not source.startswith('"""'):
        raise ValueError("a compat program must start with its module docstring")
    end = source.index('"""', 3) + 3
    return source[:end], source[end:]


def port(source: str, name: str) -> str:
    """The ported program: the TF 2.15 source with the estimator names replaced."""
    docstring, code = _split_docstring(source)
    docstring, count = _TF215_TITLE.subn("ported to estimators (imports only).", docstring, count=1)
    if count != 1:
        raise ValueError(f"{name}: the docstring's first line must end 're-creation, TF 2.15 form.'")
    for pattern, replacement in RULES:
        code = re.sub(pattern, replacement, code, flags=re.MULTILINE)
    if not re.search(r"^import estimators$", code, flags=re.MULTILINE):
        # No estimator import to replace (the program reaches estimators through `tf.`): add one
        # just before the first TensorFlow import.
        code = re.sub(r"^(import tensorflow)", r"import estimators\n\1", code, count=1, flags=re.MULTILINE)
    return docstring + code


def unified_diff(original: str, ported: str, name: str) -> str:
    return "".join(difflib.unified_diff(
        original.splitlines(keepends=True), ported.splitlines(keepends=True),
        fromfile=f"{name}_tf215.py", tofile=f"{name}.py"))


def program_names() -> list[str]:
    return sorted(p.name[: -len("_tf215.py")] for p in PROGRAMS_DIR.glob("*_tf215.py"))


def main() -> None:
    for name in program_names():
        original = (PROGRAMS_DIR / f"{name}_tf215.py").read_text()
        ported = port(original, name)
        (PROGRAMS_DIR / f"{name}.py").write_text(ported)
        (PROGRAMS_DIR / f"{name}.diff").write_text(unified_diff(original, ported, name))
        changed = sum(1 for line in unified_diff(original, ported, name).splitlines()
                      if line.startswith("-") and not line.startswith("---"))
        print(f"{name}: {changed} lines changed")


if __name__ == "__main__":
    main()
