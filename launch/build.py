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


def start_run(settings: Settings, model: ModelInfo, flag_lines: list[str]) -> Run:
    """Everything before the mode runs: checks, what the run is (logged), flags.txt, seed, the estimator."""
    if settings.plot:
        plots.require_matplotlib()
    dataset = build_dataset(settings.dataset, model)
    # Before the seed is set: the parameter count builds the network once on the side.
    run_info.describe(settings, model, dataset)
    flags_file.write_flags_file(settings.model_dir, flag_lines, settings.mode)
    if settings.seed is not None:
        keras.utils.set_random_seed(settings.seed)
    return Run(settings, build_estimator(settings, model), dataset)


def build_dataset(name: str, model: ModelInfo) -> DatasetSource:
    """The registered dataset; synthetic data takes the model's image shape."""
    if name == "synthetic":
        return make_source(image_shape=model.image_shape)
    return get_dataset(name)


def build_estimator(settings: Settings, model: ModelInfo) -> TPUEstimator:
    """The TPUEstimator for these settings (TPU when use_tpu, else local GPUs or the CPU)."""
    config = RunConfig(
        model_dir=settings.model_dir,
        master=settings.tpu if settings.use_tpu else None,
        tf_random_seed=settings.seed,
        save_checkpoints_steps=settings.save_checkpoints_steps,
        keep_checkpoint_max=settings.keep_checkpoint_max,
        log_step_count_steps=settings.iterations_per_loop,
        save_summary_steps=settings.iterations_per_loop,
        tpu_config=TPUConfig(iterations_per_loop=settings.iterations_per_loop),
    )
    return TPUEstimator(
        model_fn=model.model_fn,
        config=config,
        params=settings.model_params(model.default_params),
        use_tpu=settings.use_tpu,
        train_batch_size=settings.train_batch_size,
        eval_batch_size=settings.eval_batch_size,
        predict_batch_size=settings.predict_batch_size,
    )
