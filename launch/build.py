"""Settings -> RunConfig -> TPUEstimator: the one place a run's estimator is assembled."""

from __future__ import annotations

import keras

from estimators import RunConfig, TPUConfig, TPUEstimator
from input_fns import DatasetSource, get_dataset
from input_fns.synthetic import make_source
from launch import flags_file, plots, run_info
from launch.modes import Run
from launch.settings import Settings
from model_fns import ModelInfo
from model_fns.common import CONFUSION_MATRIX


def start_run(settings: Settings, model: ModelInfo, flag_lines: list[str]) -> Run:
    """Everything before the mode runs: checks, what the run is (logged), seed, the estimator.

    Nothing is written here: flags.txt goes to model_dir with the run's first checkpoint.
    """
    if settings.plot:
        plots.require_matplotlib()
    dataset = build_dataset(settings.dataset, model)
    # Before the seed is set: the parameter count builds the network once on the side.
    run_info.describe(settings, model, dataset)
    if settings.seed is not None:
        keras.utils.set_random_seed(settings.seed)
    listener = flags_file.FlagsFileListener(settings.model_dir, flag_lines, settings.mode)
    return Run(settings, build_estimator(settings, model), dataset, (listener,))


def build_dataset(name: str, model: ModelInfo) -> DatasetSource:
    """The registered dataset; synthetic data takes the model's image shape."""
    if name == "synthetic":
        return make_source(image_shape=model.image_shape)
    return get_dataset(name)


# TensorBoard points of loss and learning rate when loops are sized by time (CPU/GPUs): every 10 steps a
# 600-step run draws 60 points (every 100 it drew 6, a 43-step run 1); each is one scalar write in the step.
SUMMARY_STEPS_BY_TIME = 10


def _steps_or(loop: int | str, default: int) -> int:
    """A loop's step count, or `default` for a duration-sized loop (its summaries and logs go by steps)."""
    return loop if isinstance(loop, int) else default


def model_params(settings: Settings, model: ModelInfo) -> dict:
    """model_fn's params: the model's defaults and the flags, and with --plot after an evaluation the ask for
    its confusion matrix (the evaluation counts it: no second pass over the test set to draw it)."""
    params = settings.model_params(model.default_params)
    if settings.plot and settings.mode in ("evaluate", "train_and_evaluate"):
        params[CONFUSION_MATRIX] = True
    return params


def build_estimator(settings: Settings, model: ModelInfo) -> TPUEstimator:
    """The TPUEstimator for these settings (TPU when use_tpu, else local GPUs or the CPU)."""
    loop = settings.loop_size()
    config = RunConfig(
        model_dir=settings.model_dir,
        master=settings.tpu if settings.use_tpu else None,
        num_gpus=settings.num_gpus,
        precision=settings.precision,
        tf_random_seed=settings.seed,
        save_checkpoints_steps=settings.save_checkpoints_steps,
        keep_checkpoint_max=settings.keep_checkpoint_max,
        log_step_count_steps=_steps_or(loop, 100),
        save_summary_steps=_steps_or(loop, SUMMARY_STEPS_BY_TIME),
        tpu_config=TPUConfig(iterations_per_loop=loop),
    )
    return TPUEstimator(
        model_fn=model.model_fn,
        config=config,
        params=model_params(settings, model),
        use_tpu=settings.use_tpu,
        train_batch_size=settings.train_batch_size,
        eval_batch_size=settings.eval_batch_size,
        predict_batch_size=settings.predict_batch_size,
        # --mode=export writes the CPU serving graph, which serves on TPUs too: asking for 2.15's extra
        # 'serve,tpu' graph would only log a warning about a constructor argument no flag can change.
        export_to_tpu=False,
    )
