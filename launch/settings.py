"""Settings: the run main.py's flags describe, with defaults resolved and values checked.

Imports no TensorFlow (the engine's modules are imported inside the methods that need them), so
main.py can check a command line before TensorFlow starts.
"""

from __future__ import annotations

import dataclasses
import os

PLOT_MODES = ("predict", "evaluate", "train_and_evaluate")
DEFAULT_TPU_LOOP = 100
DEFAULT_LOCAL_LOOP = "30s"


class UsageError(ValueError):
    """The settings contradict each other or name a bad value, whatever the machine: main.py exits 2."""


@dataclasses.dataclass(frozen=True)
class Settings:
    """Everything one run needs; built from flags by main.py, usable from notebooks too."""

    model: str = "cnn"
    dataset: str | None = None
    data_dir: str | None = None
    model_dir: str | None = None
    mode: str = "train"
    use_tpu: bool = False
    tpu: str | None = None
    num_gpus: int | None = None
    train_steps: int = 600
    eval_steps: int | None = None
    train_batch_size: int = 1024
    eval_batch_size: int = 1000
    predict_batch_size: int = 128
    iterations_per_loop: int | str | None = None  # None: 100 on a TPU, "30s" elsewhere
    precision: str = "float32"
    learning_rate: float | None = None
    lr_schedule: str | None = None
    warmup_steps: int | None = None
    save_checkpoints_steps: int = 500
    keep_checkpoint_max: int = 5
    export_dir: str | None = None
    predict_files: tuple[str, ...] = ()
    resnet_depth: int | None = None
    seed: int | None = None
    predict_limit: int = 20
    plot: str | None = None

    def resolved(self, default_dataset: str) -> Settings:
        """A copy with the per-model defaults filled in (dataset, model_dir, tpu, export_dir), checked."""
        from estimators import log as logging

        self.check()
        dataset = self.dataset or default_dataset
        if dataset == "synthetic" and self.data_dir is not None:
            raise UsageError("--data_dir has no effect with --dataset=synthetic (its images are generated); "
                             "leave it out.")
        model_dir = self.model_dir
        if not model_dir:
            model_dir = os.path.join("runs", f"{self.model}_{dataset}")
            if self.mode != "preflight":  # which reads and writes nothing there
                logging.info("No --model_dir given; checkpoints go to %s", os.path.abspath(model_dir))
        export_dir = self.export_dir or os.path.join(model_dir, "export")
        tpu = (self.tpu or "local") if self.use_tpu else self.tpu
        return dataclasses.replace(self, dataset=dataset, model_dir=model_dir, export_dir=export_dir, tpu=tpu,
                                   iterations_per_loop=self.loop_size())

    def loop_size(self) -> int | str:
        """--iterations_per_loop as TPUConfig takes it: a step count, or a duration; the default by hardware.

        A TPU runs 100 fast steps a loop (TPUEstimator's usual); on the CPU or GPUs a step can take
        seconds, so loops are sized to about 30 s and something is printed at least that often.
        """
        from estimators.training import iterations

        value = self.iterations_per_loop
        if value is None or (isinstance(value, str) and not value.strip()):
            return DEFAULT_TPU_LOOP if self.use_tpu else DEFAULT_LOCAL_LOOP
        try:
            steps, _ = iterations.parse(value)
        except ValueError as error:
            raise UsageError(f"--iterations_per_loop: {error}") from None
        return steps if steps is not None else value.strip()

    def check(self) -> None:
        """Raises UsageError (or ValueError) for values that are wrong whatever the machine; imports no TensorFlow."""
        self.loop_size()  # --iterations_per_loop's form (estimators.training.iterations is pure Python)
        if self.use_tpu and self.num_gpus is not None:
            raise ValueError(f"--num_gpus={self.num_gpus} picks GPUs, but --use_tpu runs on the TPU; drop one of them.")
        if self.data_dir is not None and not self.data_dir.strip():
            raise UsageError("--data_dir is empty; name the folder holding the dataset files, or leave the flag "
                             "out to search the usual places.")
        if self.plot is not None:
            if self.mode not in PLOT_MODES:
                raise UsageError(f"--plot works with --mode={', '.join(PLOT_MODES)} (a confusion matrix after "
                                 f"evaluation, a grid of predicted images), not --mode={self.mode}.")
            if not self.plot.lower().endswith(".png"):
                raise UsageError(f"--plot={self.plot!r}: name a .png file.")

    def model_params(self, defaults: dict) -> dict:
        """model_fn params: the model's defaults, overridden by the flags that were set."""
        params = dict(defaults)
        params["train_steps"] = self.train_steps
        for name in ("learning_rate", "lr_schedule", "warmup_steps"):
            if getattr(self, name) is not None:
                params[name] = getattr(self, name)
        if self.resnet_depth is not None:
            params["resnet_depth"] = self.resnet_depth
        return params
