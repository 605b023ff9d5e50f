"""ResNet v1 for CIFAR-10 as in He et al. 2016 ("Deep Residual Learning"), section 4.2.

depth = 6n + 2: a 3x3 conv of 16 filters, three stages of n basic blocks (16, 32, 64 filters;
the 2nd and 3rd stages start with stride 2), global average pooling and a 10-way dense layer.
Shortcuts are identities; where a stage halves the size and doubles the filters they use the
paper's CIFAR option A: subsample by 2 and pad the new channels with zeros (no parameters).
Training: SGD with momentum 0.9, weight decay 1e-4 as `wd * sum(||w||^2) / 2` over conv and
dense kernels added to the loss (the gradient gains `wd * w`, the paper's decay; BN and biases
are not decayed), learning rate 0.1 divided by 10 at 50% and 75% of training ("step": the
paper's 32k/48k of 64k iterations), cosine-decayed to 0 ("cosine") or constant, after
"warmup_steps" of linear warmup (none by default): model_fns/lr_schedules.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import keras
import tensorflow as tf

from estimators import ModeKeys, TPUEstimatorSpec
from model_fns import common
from model_fns.registry import register

__all__ = [
    "DEFAULT_PARAMS", "IMAGE_SHAPE", "ZeroPadShortcut", "blocks_per_stage", "build_resnet",
    "learning_rate_schedule", "model_fn", "normalize", "weight_decay_loss",
]

IMAGE_SHAPE = (32, 32, 3)
NUM_CLASSES = 10
STAGE_FILTERS = (16, 32, 64)
VALID_DEPTH_EXAMPLES = (20, 32, 44, 56, 110)
REFERENCE_BATCH_SIZE = 128  # the paper's batch; lr scales by global_batch / 128 when asked
# Per-channel mean and standard deviation of the CIFAR-10 training images, on the 0..255 scale.
CIFAR10_MEAN = (0.4914 * 255, 0.4822 * 255, 0.4465 * 255)
CIFAR10_STD = (0.2470 * 255, 0.2435 * 255, 0.2616 * 255)

DEFAULT_PARAMS = {
    "learning_rate": 0.1,
    "momentum": 0.9,
    "weight_decay": 1e-4,
    "resnet_depth": 20,
    "lr_schedule": "step",
    "warmup_steps": 0,
    "train_steps": 64000,
    "scale_learning_rate": False,
}


def blocks_per_stage(depth: int) -> int:
    """n for depth 6n + 2; ValueError naming the depth and valid examples otherwise."""
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 8 or (depth - 2) % 6:
        examples = ", ".join(str(d) for d in VALID_DEPTH_EXAMPLES)
        raise ValueError(f"resnet_depth must be 6n+2 with n >= 1 (e.g. {examples}), got {depth!r}.")
    return (depth - 2) // 6


class ZeroPadShortcut(keras.layers.Layer):
    """Option A shortcut: subsample by `stride` and zero-pad the channels up to `filters`."""

    def __init__(self, filters: int, stride: int, **kwargs: Any):
        super().__init__(**kwargs)
        self.filters = filters
        self.stride = stride

    def call(self, inputs):
        outputs = inputs[:, :: self.stride, :: self.stride, :]
        extra = self.filters - inputs.shape[-1]
        return keras.ops.pad(outputs, [[0, 0], [0, 0], [0, 0], [extra // 2, extra - extra // 2]])

    def get_config(self) -> dict:
        return {**super().get_config(), "filters": self.filters, "stride": self.stride}


def _conv(filters: int, stride: int, name: str) -> keras.layers.Conv2D:
    # No bias: BatchNorm follows every conv. He-normal init, as the paper ([13]).
    return keras.layers.Conv2D(filters, 3, strides=stride, padding="same", use_bias=False,
                               kernel_initializer="he_normal", name=name)


def _basic_block(x, filters: int, stride: int, name: str):
    """conv-BN-ReLU-conv-BN, plus the shortcut, then ReLU (the paper's two-layer block)."""
    shortcut = x
    if stride != 1 or x.shape[-1] != filters:
        shortcut = ZeroPadShortcut(filters, stride, name=f"{name}_shortcut")(x)
    y = _conv(filters, stride, f"{name}_conv1")(x)
    y = keras.layers.BatchNormalization(name=f"{name}_bn1")(y)
    y = keras.layers.ReLU(name=f"{name}_relu1")(y)
    y = _conv(filters, 1, f"{name}_conv2")(y)
    y = keras.layers.BatchNormalization(name=f"{name}_bn2")(y)
    y = keras.layers.Add(name=f"{name}_add")([y, shortcut])
    return keras.layers.ReLU(name=f"{name}_relu2")(y)


def build_resnet(depth: int = 20, input_shape: Sequence[int] = IMAGE_SHAPE,
                 num_classes: int = NUM_CLASSES) -> keras.Model:
    """ResNet-`depth` (6n+2) on normalised float images; outputs logits [b, num_classes]."""
    n = blocks_per_stage(depth)
    inputs = keras.Input(shape=tuple(input_shape))
    x = _conv(STAGE_FILTERS[0], 1, "stem_conv")(inputs)
    x = keras.layers.BatchNormalization(name="stem_bn")(x)
    x = keras.layers.ReLU(name="stem_relu")(x)
    for stage, filters in enumerate(STAGE_FILTERS, start=1):
        for block in range(1, n + 1):
            stride = 2 if stage > 1 and block == 1 else 1
            x = _basic_block(x, filters, stride, f"stage{stage}_block{block}")
    x = keras.layers.GlobalAveragePooling2D(name="pool")(x)
    outputs = keras.layers.Dense(num_classes, kernel_initializer="he_normal", name="logits")(x)
    return keras.Model(inputs, outputs, name=f"resnet{depth}")


def normalize(images: tf.Tensor) -> tf.Tensor:
    """Raw uint8 RGB images [b,H,W,3] -> float32, per channel (x - CIFAR-10 mean) / std."""
    if images.shape.rank != 4 or images.shape[-1] != len(CIFAR10_MEAN):
        raise ValueError(f"resnet expects RGB images [batch, height, width, 3], got shape {images.shape}.")
    return (tf.cast(images, tf.float32) - tf.constant(CIFAR10_MEAN)) / tf.constant(CIFAR10_STD)


def learning_rate_schedule(params: dict, global_batch_size: int | None = None):
    """The learning rate for params (common.learning_rate); the base scales by global_batch_size / 128
    when params["scale_learning_rate"] is true (the linear scaling rule for large TPU batches)."""
    return common.learning_rate(params, global_batch_size, REFERENCE_BATCH_SIZE)


def weight_decay_loss(model: keras.Model, weight_decay: float) -> tf.Tensor:
    """weight_decay * sum(||kernel||^2) / 2 over the conv and dense kernels."""
    kernels = [layer.kernel for layer in model.layers if isinstance(layer, (keras.layers.Conv2D, keras.layers.Dense))]
    return weight_decay * tf.add_n([tf.nn.l2_loss(tf.convert_to_tensor(k)) for k in kernels])


def _global_batch_size(params: dict) -> int:
    context = tf.distribute.get_replica_context()
    replicas = context.num_replicas_in_sync if context is not None else 1
    return int(params["batch_size"]) * replicas if "batch_size" in params else 0


def _network(params: dict) -> keras.Model:
    return build_resnet(common.merged_params(DEFAULT_PARAMS, params)["resnet_depth"])


@register("resnet", "cifar10", DEFAULT_PARAMS, image_shape=IMAGE_SHAPE, network=_network)
def model_fn(features: Any, labels: Any, mode: str, params: dict) -> TPUEstimatorSpec:
    """TPUEstimator model_fn for ResNet-(params["resnet_depth"]) on raw uint8 CIFAR images."""
    params = common.merged_params(DEFAULT_PARAMS, params)
    images = normalize(common.image_tensor(features))
    model = build_resnet(params["resnet_depth"], images.shape[1:])
    logits = model(images, training=mode == ModeKeys.TRAIN)

    def make_optimizer() -> keras.optimizers.Optimizer:
        schedule = learning_rate_schedule(params, _global_batch_size(params))
        return keras.optimizers.SGD(schedule, momentum=params["momentum"])

    return common.classifier_spec(
        mode, logits, labels, make_optimizer, model.trainable_variables,
        regularization=weight_decay_loss(model, params["weight_decay"]),
        confusion_matrix=bool(params.get(common.CONFUSION_MATRIX)),
    )
