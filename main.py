"""Train, evaluate, predict, export or TPU-preflight a registered model: `python main.py --model=cnn [--use_tpu]`.

Flags -> Settings -> registries (model_fns, input_fns) -> TPUEstimator -> the chosen mode.
"""

from __future__ import annotations

import sys

from launch import console

console.quiet_tensorflow_startup(sys.argv)  # before anything imports TensorFlow

from absl import app, flags  # noqa: E402

import input_fns  # noqa: E402
import model_fns  # noqa: E402
from launch.build import start_run  # noqa: E402
from launch.flags_file import flag_lines  # noqa: E402
from launch.modes import MODES  # noqa: E402
from launch.settings import Settings  # noqa: E402

FLAGS = flags.FLAGS

flags.DEFINE_bool("use_tpu", False, "Run on a TPU (Colab / Cloud TPU VM).")
flags.DEFINE_string("tpu", None, "TPU name, grpc://host:port, or 'local' (the default with --use_tpu).")
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
flags.DEFINE_integer("iterations_per_loop", 100, "Steps per compiled loop (and per log line).", lower_bound=1)
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
        raise app.UsageError(f"Unexpected arguments: {' '.join(argv[1:])}")
    console.configure_output(FLAGS.verbosity)
    try:
        model = model_fns.get_model(FLAGS.model)
        settings = settings_from_flags().resolved(model.default_dataset)
        run = start_run(settings, model, flag_lines(FLAGS, "model"))
        result = MODES[settings.mode](run)
    except console.user_errors() as err:
        if FLAGS.verbosity >= console.DEBUG:
            raise
        sys.exit(console.error_line(err))
    print(f"{settings.mode}: {result}")
    if result.get("ok") is False:  # --mode=preflight found something a TPU would reject
        sys.exit(1)


if __name__ == "__main__":
    app.run(main)
