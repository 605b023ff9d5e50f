"""Import shim: tensorflow_estimator 2.15's module names, pointing at this project's objects.

Loaded (as a pytest plugin, `-p shim`, or by `import shim`) in the TF 2.21 venv before the upstream
tests import. Afterwards:

* `tensorflow_estimator.python.estimator.<module>` imports for every module 2.15 had (the list and
  each module's names come from api_map_215.json, written by make_api_map.py on the real 2.15).
  A module holds the names of 2.15's module whose objects 2.15 also exported publicly
  (`run_config.RunConfig` is `tf.estimator.RunConfig`, `tpu_estimator.TPUEstimator` is
  `tf.compat.v1.estimator.tpu.TPUEstimator`), each pointed at ours by tests/compat/port.py's rules:
  `tf.estimator.tpu.X` -> `estimators.X` (but `tf.estimator.tpu.RunConfig` -> `estimators.tpu.RunConfig`),
  `tf.estimator.export.X` -> `estimators.export.X`,
  `tf.estimator.X` -> `estimators.X` (so `experimental.X` -> `estimators.experimental.X`).
* `tf.estimator`, `tf.compat.v1.estimator`, `tf.compat.v2.estimator` (and `tensorflow.estimator`,
  `tensorflow_estimator.estimator`) are 2.15's public trees with the same mapping.

  Names 2.15 exported under another API root are listed in OTHER_ROOTS
  (`keras_lib.model_to_estimator` was `tf.keras.estimator.model_to_estimator`).
* Second, for a name 2.15's module held that is not public (`run_config.TaskType`,
  `training._TrainingExecutor`, `tpu.util.parse_iterations_per_loop`): if our counterpart module
  (COUNTERPARTS) defines the same name, that object; FALLBACK_USED records each one.

A name we lack by both routes (`estimator._load_global_step_from_checkpoint_dir`,
`export_lib.build_all_signature_defs`) is simply missing: the test that uses it fails. Nothing here
implements anything. The one exception is test-only helpers shipped inside 2.15's package
(hooks/fake_summary_writer.py, canned/dnn_testing_utils.py, canned/linear_testing_utils.py,
head/head_utils.py): they load from the copied upstream files, unchanged.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
UPSTREAM = os.path.join(HERE, "upstream")
PREFIX = "tensorflow_estimator"
EST = "tensorflow_estimator.python.estimator"

with open(os.path.join(HERE, "api_map_215.json")) as _f:
    API = json.load(_f)

# Test-only helpers that 2.15 ships inside its package: loaded from the byte-identical copy.
TEST_HELPERS = {
    f"{EST}.{name}": os.path.join(UPSTREAM, "tensorflow_estimator", "python", "estimator", *name.split(".")) + ".py"
    for name in ("hooks.fake_summary_writer", "canned.dnn_testing_utils", "canned.linear_testing_utils",
                 "head.head_utils")
}

# 2.15 module (under tensorflow_estimator.python.estimator.) -> our modules holding its counterparts.
COUNTERPARTS = {
    "estimator": ["estimators.estimator", "estimators.training.eval_summaries"],
    "estimator_lib": ["estimators"],
    "run_config": ["estimators.run_config"],
    "model_fn": ["estimators.specs.spec", "estimators.mode_keys"],
    "mode_keys": ["estimators.mode_keys"],
    "training": ["estimators.train_eval.training"],
    "exporter": ["estimators.train_eval.exporters"],
    "gc": ["estimators.export.gc"],
    "util": ["estimators.inputs.parse"],
    "early_stopping": ["estimators.experimental.early_stopping"],
    "export.export_lib": ["estimators.export.receivers", "estimators.export.outputs"],
    "export.export": ["estimators.export.receivers"],
    "export.export_output": ["estimators.export.outputs"],
    "export.function": ["estimators.graph.wrapped_graph"],
    "extenders": ["estimators.extenders"],
    "keras_lib": ["estimators.keras.model"],
    "hooks.basic_session_run_hooks": ["estimators.training.hooks", "estimators.training.logging_hook"],
    "hooks.hooks": ["estimators.training.hooks", "estimators.experimental.checkpoint_step_hook"],
    "tpu.tpu_estimator": ["estimators.tpu.estimator", "estimators.tpu", "estimators.tpu.stop_hook",
                          "estimators.tpu.signals", "estimators.export.output_tensors"],
    "tpu.iteration_count_estimator": ["estimators.tpu.iteration_count"],
    "tpu.error_handling": ["estimators.tpu.error_rendezvous"],
    "tpu.tpu_config": ["estimators.run_config"],
    "tpu.util": ["estimators.run_config"],
    "tpu.tpu_context": ["estimators.compat.tpu_context"],
    "canned.baseline": ["estimators.canned.baseline"],
    "canned.dnn": ["estimators.canned.dnn"],
    "canned.linear": ["estimators.canned.linear"],
    "canned.dnn_linear_combined": ["estimators.canned.dnn_linear_combined"],
    "canned.optimizers": ["estimators.canned.optimizers"],
    "canned.parsing_utils": ["estimators.canned.parsing"],
    "canned.metric_keys": ["estimators.canned.metric_keys"],
    "canned.prediction_keys": ["estimators.canned.prediction_keys"],
    "head.base_head": ["estimators.canned.heads.base"],
    "head.binary_class_head": ["estimators.canned.heads.binary"],
    "head.multi_class_head": ["estimators.canned.heads.multi_class"],
    "head.regression_head": ["estimators.canned.heads.regression"],
    "head.multi_label_head": ["estimators.canned.heads.multi_label"],
    "head.multi_head": ["estimators.canned.heads.multi_head"],
}
# Names 2.15 exported under another API root than tf.estimator, with the public name a port uses.
OTHER_ROOTS = {
    "keras_lib": {"model_to_estimator": "v2.estimator.model_to_estimator"},  # tf.keras.estimator.*
}
FALLBACK_USED: dict[str, str] = {}  # "module.name" -> our object's "module.name"

_MISSING = object()
# public path ("v1.estimator.tpu.TPUEstimator") -> "estimators.X" target, or None when we lack it
RESOLVED: dict[str, str | None] = {}


def port_target(public_path: str) -> str:
    """tests/compat/port.py's rules, on a public name of 2.15."""
    rest = public_path.split(".", 2)[2]  # after "v1.estimator." / "v2.estimator."
    if rest == "tpu.RunConfig":  # TPU's own reading of the settings (TPURunConfig)
        return "estimators.tpu.RunConfig"
    if rest.startswith("tpu."):
        rest = rest[len("tpu."):]
    return "estimators." + rest


def _lookup(target: str):
    parts = target.split(".")
    obj = importlib.import_module(parts[0])
    for i, part in enumerate(parts[1:], start=1):
        if hasattr(obj, part):
            obj = getattr(obj, part)
            continue
        if isinstance(obj, types.ModuleType) and hasattr(obj, "__path__"):
            try:
                obj = importlib.import_module(".".join(parts[: i + 1]))
                continue
            except ImportError:
                pass
        return _MISSING
    return obj


def resolve(public_path: str):
    target = port_target(public_path)
    obj = _lookup(target)
    RESOLVED[public_path] = None if obj is _MISSING else target
    return obj


def _resolve_first(paths: list[str]):
    # v2 names first (2.15's canonical), then v1 ones; the first that we have wins.
    for path in sorted(paths, key=lambda p: (not p.startswith("v2."), p)):
        obj = resolve(path)
        if obj is not _MISSING:
            return obj
    return _MISSING


def _public_module(prefix: str, name: str) -> types.ModuleType:
    mod = types.ModuleType(name, f"2.15's {prefix} pointed at estimators (bench/estimator_oracle/shim.py).")
    for leaf in API["public"].get(prefix, []):
        if leaf.endswith("/"):
            sub = leaf[:-1]
            setattr(mod, sub, _public_module(f"{prefix}.{sub}", f"{name}.{sub}"))
            continue
        obj = resolve(f"{prefix}.{leaf}")
        if obj is not _MISSING:
            setattr(mod, leaf, obj)
    return mod


class _Loader(importlib.abc.Loader):
    def create_module(self, spec):
        return None

    def exec_module(self, module):
        name = module.__name__
        info = API["modules"].get(name)
        if info is not None:
            short = name[len(EST) + 1:]
            public = dict(info["names"])
            for attr, path in OTHER_ROOTS.get(short, {}).items():
                public[attr] = [path]
            for attr, paths in public.items():
                obj = _resolve_first(paths)
                if obj is not _MISSING:
                    setattr(module, attr, obj)
            for attr in info.get("all_names", []):
                if hasattr(module, attr):
                    continue
                for ours in COUNTERPARTS.get(short, []):
                    try:
                        obj = getattr(importlib.import_module(ours), attr, _MISSING)
                    except ModuleNotFoundError as err:  # a counterpart module we do not have (yet)
                        if err.name != ours:
                            raise
                        continue
                    if obj is not _MISSING and not isinstance(obj, types.ModuleType):
                        setattr(module, attr, obj)
                        FALLBACK_USED[f"{short}.{attr}"] = f"{ours}.{attr}"
                        break
        if name == PREFIX:
            module.estimator = V1_TREE  # 2.15's top-level package is the v1 API


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        if fullname != PREFIX and not fullname.startswith(PREFIX + "."):
            return None
        if fullname in TEST_HELPERS:
            return importlib.util.spec_from_file_location(fullname, TEST_HELPERS[fullname])
        info = API["modules"].get(fullname)
        known_package = fullname in (PREFIX, f"{PREFIX}.python", EST) or any(
            m.startswith(fullname + ".") for m in API["modules"])
        if info is None and not known_package:
            return None  # 2.15 had no such module either
        is_package = known_package or (info is not None and info["package"])
        spec = importlib.machinery.ModuleSpec(fullname, _Loader(), is_package=is_package)
        if is_package:
            spec.submodule_search_locations = []
        return spec


V1_TREE = _public_module("v1.estimator", "tensorflow.compat.v1.estimator")
V2_TREE = _public_module("v2.estimator", "tensorflow.estimator")


def install() -> None:
    if any(isinstance(f, _Finder) for f in sys.meta_path):
        return
    import tensorflow as tf

    sys.meta_path.insert(0, _Finder())
    for mod, tree in ((tf, V2_TREE), (tf.compat.v2, V2_TREE), (tf.compat.v1, V1_TREE)):
        mod.estimator = tree
    sys.modules["tensorflow.estimator"] = V2_TREE
    sys.modules["tensorflow.compat.v1.estimator"] = V1_TREE
    sys.modules["tensorflow.compat.v2.estimator"] = V2_TREE


def coverage() -> tuple[list[str], list[str]]:
    """(public 2.15 names we have, names we lack), after every module has been resolved."""
    for name in API["modules"]:
        for paths in API["modules"][name]["names"].values():
            for p in paths:
                if p not in RESOLVED:
                    resolve(p)
    have = sorted(p for p, t in RESOLVED.items() if t)
    lack = sorted(p for p, t in RESOLVED.items() if not t)
    return have, lack


install()


if __name__ == "__main__":
    have, lack = coverage()
    for name in API["modules"]:
        importlib.import_module(name)
    print(f"2.15 public names we have: {len(have)}; we lack: {len(lack)}")
    for p in have:
        print("  have", p, "->", RESOLVED[p])
    print(f"non-public 2.15 names found by name in our counterpart modules: {len(FALLBACK_USED)}")
    for k, v in sorted(FALLBACK_USED.items()):
        print("  same name", k, "->", v)
