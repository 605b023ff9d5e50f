"""What to run: the workloads, and the round-robin list of child runs built from the flags.

Kept free of TensorFlow so the parent process stays small and never competes with a child
for the two cores while it is being measured.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Sequence

CONTENDERS = ("ours", "hand", "keras_fit")
INPUT_CHECK = "input_fn"  # the input pipeline alone; reported apart from the contenders
PRECISIONS = ("float32", "mixed_bfloat16")
FASHION_MNIST_DIR = "/usr/share/datasets/fashion-mnist"


@dataclasses.dataclass(frozen=True)
class Workload:
    """One model on one dataset at one batch size, with its default measurement window.

    warmup_steps and timed_steps are rounded up to whole executions of K steps per run, so
    every contender is timed over the same steps: those after its warm-up executions.
    """

    name: str
    model: str  # "cnn" | "resnet" | "mlp" (bench.models knows how to build each)
    dataset: str  # "fashion_mnist" | "synthetic"
    image_shape: tuple[int, int, int]
    warmup_steps: int
    timed_steps: int
    iterations: tuple[int, ...] = (1, 10, 100)  # default K sweep (see README: budget)
    batch_size: int = 128
    hand_sweeps_k: bool = False  # hand loop with K steps in tf.range for every K (cheap workloads)
    description: str = ""

    def available(self) -> bool:
        """False when the workload needs data files this machine does not have."""
        if self.dataset != "fashion_mnist":
            return True
        return any(os.path.exists(os.path.join(FASHION_MNIST_DIR, f"train-images-idx3-ubyte{ext}"))
                   for ext in ("", ".gz"))


# Default K sweeps are cut to fit a ~25 min full run on 2 cores: K=100 on a compute-bound model
# costs 200 steps per run (one warm-up execution + one timed), about 60 s at ~0.3 s/step.
# The project's default (iterations_per_loop=100) is measured on cnn_fmnist; pass --iterations
# to sweep any workload fully.
WORKLOADS: dict[str, Workload] = {
    w.name: w
    for w in (
        Workload("cnn_fmnist", "cnn", "fashion_mnist", (28, 28, 1), warmup_steps=10, timed_steps=30,
                 iterations=(1, 10, 100), description="seed cnn, real Fashion-MNIST (60k train images)"),
        Workload("cnn_synthetic", "cnn", "synthetic", (28, 28, 1), warmup_steps=10, timed_steps=30,
                 iterations=(1,), description="seed cnn, synthetic 28x28x1 (1024 images)"),
        Workload("resnet20", "resnet", "synthetic", (32, 32, 3), warmup_steps=10, timed_steps=30,
                 iterations=(1, 10), description="ResNet-20, synthetic CIFAR-shaped 32x32x3 (1024 images)"),
        Workload("mlp", "mlp", "synthetic", (28, 28, 1), warmup_steps=200, timed_steps=2000,
                 iterations=(1, 10, 100), hand_sweeps_k=True,
                 description="784-64-10 MLP, synthetic 28x28x1: host overhead dominates"),
    )
}


@dataclasses.dataclass(frozen=True)
class Settings:
    """The flags that shape the plan (see throughput.py for their help)."""

    workloads: tuple[str, ...]
    contenders: tuple[str, ...]
    iterations: tuple[int, ...] | None  # None: each workload's default sweep
    hand_iterations: tuple[int, ...] | None  # None: 1, or every K on workloads with hand_sweeps_k
    repeats: int
    steps: int | None
    warmup: int | None
    precisions: tuple[str, ...]
    accuracy: bool
    input_check: bool
    seed: int
    timeout_s: float
    input_steps: int = 1000  # batches timed by the input_fn-alone check


@dataclasses.dataclass(frozen=True)
class Job:
    """One child process: one contender training one workload at one K and precision."""

    workload: str
    contender: str
    iterations_per_loop: int
    precision: str
    warmup_steps: int
    timed_steps: int
    batch_size: int
    seed: int
    accuracy: bool
    repeat: int

    @property
    def key(self) -> tuple:
        """Identifies the configuration across repetitions."""
        return (self.workload, self.precision, self.iterations_per_loop, self.contender)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def round_up(steps: int, multiple: int) -> int:
    """The smallest whole number of `multiple`-step executions covering `steps` (at least one)."""
    return max(1, math.ceil(steps / multiple)) * multiple


def window(workload: Workload, k: int, settings: Settings) -> tuple[int, int]:
    """(warm-up steps, timed steps) for K steps per execution; both multiples of K."""
    warmup = settings.warmup if settings.warmup is not None else workload.warmup_steps
    timed = settings.steps if settings.steps is not None else workload.timed_steps
    return round_up(warmup, k), round_up(timed, k)


def contender_ks(workload: Workload, contender: str, settings: Settings) -> tuple[int, ...]:
    """The K values a contender runs at: the sweep, except the hand loop (1 unless asked)."""
    sweep = settings.iterations or workload.iterations
    if contender != "hand":
        return sweep
    if settings.hand_iterations is not None:
        return settings.hand_iterations
    return sweep if workload.hand_sweeps_k else (1,)


def configurations(settings: Settings) -> list[list[Job]]:
    """Groups of jobs run back to back, one group per (workload, precision, K), for repeat 0.

    Jobs compared with each other sit in the same group, so they run minutes apart at most.
    """
    groups: list[list[Job]] = []
    for name in settings.workloads:
        workload = WORKLOADS[name]
        for precision in settings.precisions:
            ks = sorted({k for c in settings.contenders for k in contender_ks(workload, c, settings)})
            for k in ks:
                group = []
                for contender in settings.contenders:
                    if k not in contender_ks(workload, contender, settings):
                        continue
                    warmup, timed = window(workload, k, settings)
                    group.append(Job(name, contender, k, precision, warmup, timed, workload.batch_size,
                                     settings.seed, settings.accuracy, repeat=0))
                if group:
                    groups.append(group)
            if settings.input_check and precision == settings.precisions[0]:
                chunk = 100
                groups.append([Job(name, INPUT_CHECK, chunk, precision, chunk, round_up(settings.input_steps, chunk),
                                   workload.batch_size, settings.seed, False, repeat=0)])
    return groups


def round_robin(settings: Settings) -> list[Job]:
    """Every job of every repetition in run order.

    Repetition r runs all groups in order, rotating the contenders inside each group by r, so
    no contender always runs first (cold caches) or last (after the others warmed the CPU).
    """
    jobs: list[Job] = []
    groups = configurations(settings)
    for repeat in range(settings.repeats):
        for group in groups:
            shift = repeat % len(group)
            for job in group[shift:] + group[:shift]:
                jobs.append(dataclasses.replace(job, repeat=repeat))
    return jobs


def parse_list(text: str, allowed: Sequence[str] | None = None) -> tuple[str, ...]:
    """"a,b" -> ("a", "b"); ValueError naming the choices when one is not allowed."""
    items = tuple(item.strip() for item in text.split(",") if item.strip())
    if not items:
        raise ValueError(f"empty list {text!r}")
    if allowed is not None:
        unknown = [item for item in items if item not in allowed]
        if unknown:
            raise ValueError(f"unknown {unknown}; choose from {list(allowed)}")
    return items


def parse_ints(text: str) -> tuple[int, ...]:
    """"1,10,100" -> (1, 10, 100); every value must be >= 1."""
    values = tuple(int(item) for item in parse_list(text))
    if any(v < 1 for v in values):
        raise ValueError(f"values must be >= 1, got {text!r}")
    return values
