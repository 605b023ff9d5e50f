"""input_fn: examples/sec of the project's training input pipeline alone, no model.

Batches are pulled inside a tf.function, K at a time, so the number is what tf.data can
produce, not what a Python loop can fetch. If it is not well above the contenders'
examples/sec, the pipeline (not the engine) bounds training.
"""

from __future__ import annotations

import tensorflow as tf

from bench import models
from bench.clock import StepClock
from bench.plan import Job, Workload


def run(job: Job, workload: Workload, clock: StepClock) -> dict:
    data = models.source(workload.dataset, workload.image_shape)
    iterator = iter(models.train_dataset(data, job.batch_size, job.seed))
    k = job.iterations_per_loop

    @tf.function
    def pull(it) -> tf.Tensor:
        checksum = tf.constant(0, tf.int64)
        for _ in tf.range(k):
            _, labels = next(it)
            checksum += tf.reduce_sum(tf.cast(labels, tf.int64))
        return checksum

    total, done = job.warmup_steps + job.timed_steps, 0
    while done < total:
        int(pull(iterator))
        done += k
        clock.mark(done)
    return {}
