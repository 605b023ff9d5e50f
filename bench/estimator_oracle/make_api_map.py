"""Writes api_map_215.json from the real tensorflow-estimator 2.15 (run with /work/venv215/bin/python).

For every module of tensorflow_estimator.python.estimator: every name it holds (all_names) and, for
each class or function, the public names 2.15 gave that same object (tf.estimator.X,
tf.compat.v1.estimator.X); plus the public trees themselves. shim.py reads this file in the TF 2.21 venv,
where tensorflow_estimator cannot import,
and points each public name at ours by port.py's rules.
"""

import importlib
import inspect
import json
import os
import pkgutil
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import tensorflow as tf  # noqa: E402
import tensorflow_estimator  # noqa: E402
from tensorflow_estimator.python import estimator as est_pkg  # noqa: E402


def _public_tree(root, prefix, out, ids):
    """prefix -> sorted leaf names; ids: id(obj) -> [public paths]."""
    leaves = []
    for name in sorted(dir(root)):
        if name.startswith("_"):
            continue
        obj = getattr(root, name)
        path = f"{prefix}.{name}"
        if inspect.ismodule(obj):
            _public_tree(obj, path, out, ids)
            leaves.append(name + "/")
        else:
            leaves.append(name)
            if inspect.isclass(obj) or callable(obj):
                ids.setdefault(id(obj), []).append(path)
    out[prefix] = leaves


def main():
    public, ids = {}, {}
    _public_tree(tf.estimator, "v2.estimator", public, ids)
    _public_tree(tf.compat.v1.estimator, "v1.estimator", public, ids)
    modules = {}
    failed = []
    for info in pkgutil.walk_packages(est_pkg.__path__, "tensorflow_estimator.python.estimator."):
        if info.name.endswith("_test") or ".canned.v1." in info.name:
            continue
        try:
            mod = importlib.import_module(info.name)
        except Exception as err:  # noqa: BLE001
            failed.append(f"{info.name}: {type(err).__name__}")
            continue
        names, all_names = {}, []
        for name, obj in vars(mod).items():
            if name.startswith("__") or inspect.ismodule(obj):
                continue
            all_names.append(name)
            if (inspect.isclass(obj) or callable(obj)) and id(obj) in ids:
                names[name] = sorted(set(ids[id(obj)]))
        modules[info.name] = {"package": info.ispkg, "names": names, "all_names": sorted(all_names)}
    version = getattr(tensorflow_estimator, "__version__", "2.15")
    out = {"tensorflow_estimator": version,
           "public": public, "modules": modules, "import_failed": failed}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "api_map_215.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
    print(f"{len(modules)} modules, {sum(len(m['names']) for m in modules.values())} mapped names, "
          f"{len(failed)} import failures -> {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
