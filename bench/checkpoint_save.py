"""Checkpoint save/restore time and size for the seed CNN's variables, with and without fsync.

    python bench/checkpoint_save.py [--dir /tmp/ckpt_bench] [--repeats 7]

Saves the seed CNN's weights (~1.6M float32) and, as a training checkpoint holds them, the weights plus
Adam's two slots, through estimators.checkpoint.Checkpointer (write, fsync, verify, publish). "no fsync"
replaces files.fsync with a no-op, to show what durability costs. Medians over the repeats.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time

import numpy as np
import tensorflow as tf

from estimators.checkpoint import checkpointer as checkpointer_module
from estimators.checkpoint import files
from model_fns.cnn import build_cnn


def seed_cnn_variables(with_adam: bool) -> dict[str, tf.Variable]:
    model = build_cnn()
    named = {var.path: var for var in model.weights}
    if with_adam:
        for name, var in list(named.items()):
            if var.trainable:
                for slot in ("Adam", "Adam_1"):
                    named[f"{name}/{slot}"] = tf.Variable(np.zeros(var.shape, np.float32))
    return named


def run(folder: str, variables: dict, repeats: int, fsync: bool) -> dict[str, float]:
    real_fsync = files.fsync
    if not fsync:
        checkpointer_module.files.fsync = lambda paths, directory: None
    try:
        shutil.rmtree(folder, ignore_errors=True)
        checkpointer = checkpointer_module.Checkpointer(folder, max_to_keep=2)
        saves, restores = [], []
        for step in range(1, repeats + 1):
            started = time.perf_counter()
            path = checkpointer.save(variables, step)
            saves.append(time.perf_counter() - started)
            started = time.perf_counter()
            checkpointer.restore(path, variables)
            restores.append(time.perf_counter() - started)
        size = sum(os.path.getsize(p) for p in [path + ".index", *files.data_files(path)])
    finally:
        checkpointer_module.files.fsync = real_fsync
    return {"save_s": statistics.median(saves[1:]), "restore_s": statistics.median(restores[1:]), "bytes": size}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "checkpoint_bench"))
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    for with_adam in (False, True):
        variables = seed_cnn_variables(with_adam)
        floats = sum(int(np.prod(v.shape)) for v in variables.values())
        for fsync in (True, False):
            r = run(args.dir, variables, args.repeats, fsync)
            print(f"{'weights+Adam' if with_adam else 'weights':12s} {len(variables):3d} variables, {floats:>9,d} "
                  f"floats, {r['bytes'] / 1e6:6.2f} MB | fsync={'on ' if fsync else 'off'} save "
                  f"{r['save_s'] * 1e3:7.1f} ms, restore {r['restore_s'] * 1e3:6.1f} ms")
    shutil.rmtree(args.dir, ignore_errors=True)


if __name__ == "__main__":
    main()
