"""hand: the no-framework floor, a GradientTape step in a tf.function and the same Keras optimizer.

K = 1 is the textbook loop: one tf.function call per step (the iterator goes into the function,
as Keras and the engine do, so the batch is fetched in-graph). K > 1 runs K steps inside one
call with tf.range, the hand-written equivalent of iterations_per_loop.
"""

from __future__ import annotations

import tensorflow as tf

from bench import models
from bench.clock import StepClock
from bench.plan import Job, Workload


def run(job: Job, workload: Workload, clock: StepClock) -> dict:
    data = models.source(workload.dataset, workload.image_shape)
    network = models.net(workload.model, workload.image_shape, models.params(workload.model), job.batch_size)
    model = network.build()
    variables = model.trainable_variables
    optimizer = network.make_optimizer()
    optimizer.build(variables)  # slots made eagerly, so the step function is traced once
    iterator = iter(models.train_dataset(data, job.batch_size, job.seed))

    def train_step(element: tuple[tf.Tensor, tf.Tensor]) -> tf.Tensor:
        images, labels = element
        with tf.GradientTape() as tape:
            loss = network.loss(model, labels, network.forward(model, images, True))
        optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables, strict=True))
        return loss

    k = job.iterations_per_loop

    @tf.function
    def one_step(it) -> tf.Tensor:
        return train_step(next(it))

    @tf.function
    def k_steps(it) -> tf.Tensor:
        loss = tf.constant(0.0)
        for _ in tf.range(k):
            loss = train_step(next(it))
        return loss

    execute = one_step if k == 1 else k_steps
    total, done = job.warmup_steps + job.timed_steps, 0
    while done < total:
        float(execute(iterator))  # read the loss on the host, as the engine and Keras do
        done += k
        clock.mark(done)
    extra: dict = {}
    if job.accuracy:
        extra["test_accuracy"] = models.test_accuracy(network, model, data)
    return extra
