"""main.py's flags, defined and checked without TensorFlow, so a typo or `--help` is answered at once.

Importing this module defines the flags on absl's FLAGS. Model and dataset names come from the
registries' built-in lists (model_fns, input_fns: neither imports TensorFlow until a model or
dataset is asked for), and the modes from MODE_NAMES (launch.modes.MODES, which imports
TensorFlow, holds the same names: a test keeps them equal).
"""

from __future__ import annotations

from absl import flags

import input_fns
import model_fns
from launch.settings import Settings

__all__ = ["FLAGS", "MODE_NAMES", "settings_from_flags"]

FLAGS = flags.FLAGS
MODE_NAMES = ("train", "evaluate", "train_and_evaluate", "predict", "export", "preflight")

flags.DEFINE_bool("use_tpu", False, "Run on a TPU (Colab / Cloud TPU VM).")
flags.DEFINE_string("tpu", None, "TPU name, grpc://host:port, or 'local' (the default with --use_tpu).")
flags.DEFINE_integer("num_gpus", None, "GPUs to run on without --use_tpu: the first N (0: the CPU; default: every "
                     "visible GPU).", lower_bound=0)
flags.DEFINE_enum("model", "cnn", model_fns.model_names(), "Which registered model to run.")
flags.DEFINE_enum("dataset", None, input_fns.dataset_names(), "Dataset (default: the model's own).")
flags.DEFINE_string("data_dir", None, "Folder holding the dataset files (else the usual places).")
flags.DEFINE_string("model_dir", None, "Checkpoints and summaries: local, gs://bucket/path or a Drive folder.")
flags.DEFINE_enum("mode", "train", list(MODE_NAMES), "What to do.")
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
                    "a grid of predicted images with --mode=predict (needs matplotlib: the `plots` extra).")

_SETTINGS = tuple(Settings.__dataclass_fields__)


def settings_from_flags() -> Settings:
    """The Settings the parsed flags describe (unresolved: per-model defaults are filled in later)."""
    values = {name: FLAGS[name].value for name in _SETTINGS}
    values["predict_files"] = tuple(values["predict_files"])
    return Settings(**values)

