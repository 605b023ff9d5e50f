"""keras_fit: Keras 3 Model.fit with steps_per_execution = K on the same network and pipeline.

The Net is wrapped in a keras.Model whose call() is the model_fn's forward pass (normalise raw
uint8 images, logits as float32) and whose compute_loss adds the same regularisation, compiled
with the same optimizer and from-logits cross-entropy. jit_compile=False, as the other two
(Keras' "auto" is also False on a CPU-only machine). A callback marks the clock after every
execution, reading the loss on the host as the engine does.
"""

from __future__ import annotations

import keras
import tensorflow as tf

from bench import models
from bench.clock import StepClock
from bench.plan import Job, Workload


class FitModel(keras.Model):
    """The Net as a keras.Model: raw images in, float32 logits out, regularised loss."""

    def __init__(self, network: models.Net, **kwargs):
        super().__init__(**kwargs)
        self.network = network
        self.body = network.build()

    def call(self, images, training=False):
        return self.network.forward(self.body, images, bool(training))

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        loss = super().compute_loss(x=x, y=y, y_pred=y_pred, sample_weight=sample_weight, training=training)
        if self.network.regularization is not None:
            loss = loss + tf.cast(self.network.regularization(self.body), loss.dtype)
        return loss


class ExecutionMarks(keras.callbacks.Callback):
    """Marks the clock at the end of each execution (Keras calls it once per steps_per_execution)."""

    def __init__(self, clock: StepClock):
        super().__init__()
        self.clock = clock

    def on_train_batch_end(self, batch, logs=None):
        if logs and "loss" in logs:
            float(logs["loss"])
        self.clock.mark(batch + 1)


def run(job: Job, workload: Workload, clock: StepClock) -> dict:
    data = models.source(workload.dataset, workload.image_shape)
    network = models.net(workload.model, workload.image_shape, models.params(workload.model), job.batch_size)
    model = FitModel(network)
    model.compile(
        optimizer=network.make_optimizer(),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        steps_per_execution=job.iterations_per_loop,
        jit_compile=False,
    )
    model.fit(
        models.train_dataset(data, job.batch_size, job.seed),
        epochs=1,
        steps_per_epoch=job.warmup_steps + job.timed_steps,
        verbose=0,
        callbacks=[ExecutionMarks(clock)],
    )
    extra: dict = {}
    if job.accuracy:
        extra["test_accuracy"] = models.test_accuracy(network, model.body, data)
    return extra
