"""Train, evaluate, predict, export or TPU-preflight a registered model: `python main.py --model=cnn [--use_tpu]`.

Flags -> Settings -> registries (model_fns, input_fns) -> TPUEstimator -> the chosen mode.
Exit status: 0 done; 2 the command line is wrong whatever the machine (a flag's value, flags that
contradict each other): one line, nothing run; 1 the run failed here (data, model_dir, TPU, the model).
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys

from launch import console

console.quiet_tensorflow_startup(sys.argv)  # before anything imports TensorFlow
console.require_tensorflow()  # one line and exit 1, not a ModuleNotFoundError traceback

from absl import app, flags  # noqa: E402

import input_fns  # noqa: E402
import model_fns  # noqa: E402
from estimators import TrainingInterrupted  # noqa: E402
from launch.build import start_run  # noqa: E402
from launch.flags_file import flag_lines  # noqa: E402
from launch.modes import MODES  # noqa: E402
from launch.settings import Settings, UsageError  # noqa: E402

FLAGS = flags.FLAGS

flags.DEFINE_bool("use_tpu", False, "Run on a TPU (Colab / Cloud TPU VM).")
flags.DEFINE_string("tpu", None, "TPU name, grpc://host:port, or 'local' (the default with --use_tpu).")
flags.DEFINE_integer("num_gpus", None, "GPUs to run on without --use_tpu: the first N (0: the CPU; default: every "
                     "visible GPU).", lower_bound=0)
flags.DEFINE_enum("model", "cnn", model_fns.model_names(), "Which registered model to run.")
flags.DEFINE_enum("dataset", None, input_fns.dataset_names(), "Dataset (default: the model's own).")
flags.DEFINE_string("data_dir", None, "Folder holding the dataset files (else the usual places).")
flags.DEFINE_string("model_dir", None, "Checkpoints and summaries: local, gs://bucket/path or a Drive folder.")
flags.DEFINE_enum("mode", "train", list(MODES), "What to do.")
flags.DEFINE_integer("train_steps", 600, "Train until this global step.", lower_bound=1)
flags.DEFINE_integer("eval_steps", None, "Evaluation batches (default: the whole test set).", lower_bound=1)
flags.DEFINE_integer("train_batch_size", 1024, "Global training batch (128 x 8 cores).", lower_bound=1)
flags.DEFINE_integer("eval_batch_size", 1000, "Global evaluation batch.", lower_bound=1)
flags.DEFINE_integer("predict_batch_size", 128, "Global prediction batch (16 x 8 cores).", lower_bound=1)
flags.DEFINE_enum("precision", "float32", ["float32", "bfloat16"],
                  "Compute precision of model_fn: bfloat16 is Keras' mixed_bfloat16 (float32 variables and loss).")
flags.DEFINE_string("iterations_per_loop", None,
                    "Steps per compiled loop (and per log line), or a duration such as '30s' (loops sized to take "
                    "about that long). Default: 100 on a TPU, '30s' on the CPU/GPUs, where steps are slow.")
flags.DEFINE_float("learning_rate", None, "Learning rate (default: the model's).", lower_bound=0.0)
flags.DEFINE_enum("lr_schedule", None, ["constant", "step", "cosine"],
                  "Learning-rate schedule over --train_steps (default: the model's: cnn constant, resnet step).")
flags.DEFINE_integer("warmup_steps", None, "Steps of linear learning-rate warmup from 0 (default: the model's, 0).",
                     lower_bound=0)
flags.DEFINE_integer("save_checkpoints_steps", 500, "Steps between checkpoints.", lower_bound=1)
flags.DEFINE_integer("keep_checkpoint_max", 5, "Newest checkpoints kept (0: all).", lower_bound=0)
flags.DEFINE_string("export_dir", None, "Where --mode=export writes SavedModels (default: model_dir/export).")
flags.DEFINE_list("predict_files", [], "Image files to classify with --mode=predict (default: the test set).")
flags.DEFINE_integer("resnet_depth", None, "ResNet depth 6n+2 (20, 32, 44, 56, 110).", lower_bound=8)
flags.DEFINE_integer("seed", None, "Random seed for initialisation, shuffling and augmentation.")
flags.DEFINE_integer("predict_limit", 20, "Rows --mode=predict prints (it always prints a summary).", lower_bound=0)
flags.DEFINE_string("plot", None, "PNG to draw: a confusion matrix with --mode=evaluate or train_and_evaluate, "
                    "a grid of predicted images with --mode=predict (needs the `plots` extra).")

_SETTINGS = [name for name in Settings.__dataclass_fields__]


def settings_from_flags() -> Settings:
    values = {name: FLAGS[name].value for name in _SETTINGS}
    values["predict_files"] = tuple(values["predict_files"])
    return Settings(**values)


def main(argv: list[str]) -> None:
    if len(argv) > 1:
        sys.stderr.write(f"error: unexpected arguments {' '.join(argv[1:])}: every setting is a --flag=value "
                         "(python main.py --helpshort lists them).\n")
        sys.exit(console.USAGE)
    console.configure_output(FLAGS.verbosity)
    try:
        model = model_fns.get_model(FLAGS.model)
        settings = settings_from_flags().resolved(model.default_dataset)
        run = start_run(settings, model, flag_lines(FLAGS, "model"))
        result = MODES[settings.mode](run)
    except TrainingInterrupted as stopped:  # SIGTERM / first Ctrl-C: saved; say how to resume, exit as a shell would
        print(stopped, file=sys.stderr)
        sys.exit(128 + getattr(signal, stopped.signal_name, signal.SIGINT))
    except UsageError as err:
        if FLAGS.verbosity >= console.DEBUG:
            raise
        sys.stderr.write(console.error_line(err) + "\n")
        sys.exit(console.USAGE)
    except console.user_errors() as err:
        if FLAGS.verbosity >= console.DEBUG:
            raise
        sys.exit(console.error_line(err))
    print(f"{settings.mode}: {result}")
    if result.get("ok") is False:  # --mode=preflight found something a TPU would reject
        sys.exit(1)


def run_cli(argv: list[str] | None = None) -> None:
    """`python main.py ...`: absl's app.run with flag errors as one line and exit status 2."""
    app.run(main, argv=argv, flags_parser=console.parse_flags_or_exit)


def _exit_now(status: object) -> None:
    """Ends the process with `status` once its output is flushed: the interpreter's teardown of TensorFlow took
    3-20 s more here, and nothing is left to write (checkpoints, summaries and exports are complete when a
    call returns). A string status is printed and exits 1, as Python does."""
    if status is not None and not isinstance(status, int):
        print(status, file=sys.stderr)
        status = 1
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(status or 0)


if __name__ == "__main__":
    try:
        run_cli()
    except SystemExit as done:  # absl's app.run ends every run with sys.exit
        _exit_now(done.code)
    _exit_now(0)
