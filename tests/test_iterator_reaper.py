"""Input iterators the engine is done with are freed on a background thread, never in the caller's.

A multi-device iterator's destructor can wait minutes on a tf.data autotune thread (TF 2.21); the
engine's thread must go on meanwhile (BUILD_NOTES, "slow deletion of multi-device iterators").
"""

import gc
import threading
import weakref

import numpy as np
import tensorflow as tf

from estimators import RunConfig, TPUConfig, TPUEstimator
from estimators.tf2 import collection
from estimators.tf2 import executor as engine  # the executor makes every input iterator
from estimators.tf2.collection import Held, free_in_background, safe_point
from tests import engine_models as m


class _Freed:
    """Records the thread that frees each watched object; wait(n) blocks until n were freed."""

    def __init__(self) -> None:
        self.threads: list[str] = []
        self._count = threading.Semaphore(0)

    def watch(self, obj: object) -> None:
        weakref.finalize(obj, self._record)

    def _record(self) -> None:
        self.threads.append(threading.current_thread().name)
        self._count.release()

    def wait(self, n: int) -> list[str]:
        for _ in range(n):  # another test's iterator may still be freeing: only ours are awaited
            assert self._count.acquire(timeout=600), f"freed {len(self.threads)} of {n} in 600 s"
        return self.threads


class _SlowToFree:
    """Its destructor waits (up to 30 s) for the test to say go, recording whether it was told."""

    def __init__(self, go: threading.Event, told: list) -> None:
        self._go, self._told = go, told

    def __del__(self) -> None:
        self._told.append(self._go.wait(timeout=30))


def test_free_in_background_returns_while_the_value_is_still_being_freed():
    go, told, freed = threading.Event(), [], _Freed()
    held = Held(_SlowToFree(go, told))
    freed.watch(held.value)
    free_in_background(held)
    assert held.value is None
    assert told == []  # still waiting in its destructor, on the other thread
    go.set()
    assert freed.wait(1) == ["estimators-iterator-reaper"]
    assert told == [True]


def _watching_iterators(monkeypatch) -> _Freed:
    """Every iterator the engine makes is watched."""
    freed = _Freed()

    def watched_iter(iterable):
        iterator = iter(iterable)
        freed.watch(iterator)
        return iterator

    monkeypatch.setattr(engine, "iter", watched_iter, raising=False)
    return freed


def _estimator(model_dir, strategy):
    config = RunConfig(model_dir=str(model_dir), train_distribute=strategy,
                       tpu_config=TPUConfig(iterations_per_loop=2))
    return TPUEstimator(m.linear_model_fn, config=config, use_tpu=False, train_batch_size=16, eval_batch_size=16)


def test_an_evaluation_frees_its_iterator_in_the_background(tmp_path, eight_replicas, monkeypatch):
    freed = _watching_iterators(monkeypatch)
    x, y = m.dataset(40)
    _estimator(tmp_path, eight_replicas).evaluate(m.eval_input_fn(x, y))
    assert freed.wait(1) == ["estimators-iterator-reaper"]


def test_a_train_stream_that_ended_is_freed_in_the_background(tmp_path, eight_replicas, monkeypatch):
    freed = _watching_iterators(monkeypatch)
    x, y = m.dataset(48)
    estimator = _estimator(tmp_path, eight_replicas)
    estimator.train(lambda params: tf.data.Dataset.from_tensor_slices((x, y)).batch(16, drop_remainder=True))
    assert freed.wait(1) == ["estimators-iterator-reaper"]
    assert estimator.get_variable_value("global_step") == 3


def test_a_dead_estimators_train_stream_is_freed_in_the_background(tmp_path, eight_replicas, monkeypatch):
    freed = _watching_iterators(monkeypatch)
    x, y = m.dataset(48)
    estimator = _estimator(tmp_path / "first", eight_replicas)
    estimator.train(m.train_input_fn(x, y), max_steps=2)  # an endless stream: still live
    del estimator
    gc.collect()
    assert freed.threads == []  # kept until the next engine call, outside the cycle collector
    result = _estimator(tmp_path / "second", eight_replicas).evaluate(m.eval_input_fn(x, y), steps=1)
    assert freed.wait(2) == ["estimators-iterator-reaper"] * 2
    assert np.isfinite(result["loss"])


class _Clock:
    """A clock the test moves, and a fake full collection that takes `cost` seconds of it (wall and CPU)."""

    def __init__(self, cost: float) -> None:
        self.now, self.cost, self.collections = 1000.0, cost, 0

    def time(self) -> float:
        return self.now

    def collect(self) -> int:
        self.collections += 1
        self.now += self.cost
        return 0


class _Engine:
    """Stands in for an estimator: counted by collection.track until freed."""

    def __init__(self) -> None:
        collection.track(self)


def _fake_collector(monkeypatch, cost: float) -> _Clock:
    clock = _Clock(cost)
    monkeypatch.setattr(collection, "_clock", clock.time)
    monkeypatch.setattr(collection, "_cpu_clock", clock.time)
    monkeypatch.setattr(collection, "_full_collection", clock.collect)
    monkeypatch.setattr(collection, "_last_collection", {"end": float("-inf"), "cost": 0.0, "engines": 0})
    monkeypatch.setattr(collection, "_engines", weakref.WeakSet())  # earlier tests' estimators are not counted
    return clock


def _engine_call() -> None:
    with safe_point(collect_first=True):
        pass


def test_the_first_engine_call_collects_and_the_next_only_twenty_times_its_cost_later(monkeypatch):
    clock = _fake_collector(monkeypatch, cost=0.5)
    _engine_call()
    assert clock.collections == 1
    clock.now += 9.9  # 9.9 s since the collection ended: 20 x 0.5 s not yet passed
    _engine_call()
    assert clock.collections == 1
    clock.now += 0.1
    _engine_call()
    assert clock.collections == 2


def test_a_slow_collection_counts_as_at_most_one_second(monkeypatch):
    clock = _fake_collector(monkeypatch, cost=100.0)  # a finalizer that waited, say
    _engine_call()
    clock.now += 20.0
    _engine_call()
    assert clock.collections == 2


def test_four_more_estimators_than_the_last_collection_left_make_one_due_at_once(monkeypatch):
    clock = _fake_collector(monkeypatch, cost=0.5)
    engines = [_Engine()]
    _engine_call()
    engines += [_Engine() for _ in range(3)]
    _engine_call()
    assert clock.collections == 1  # three more than the collection left, 0 s later
    engines.append(_Engine())
    _engine_call()
    assert clock.collections == 2


def test_estimators_freed_without_a_collection_lower_the_count_to_grow_from(monkeypatch):
    clock = _fake_collector(monkeypatch, cost=0.5)
    engines = [_Engine() for _ in range(3)]
    _engine_call()
    del engines[:]  # freed by refcounting
    _engine_call()
    engines += [_Engine() for _ in range(4)]
    _engine_call()
    assert clock.collections == 2


def test_no_collection_when_the_program_turned_automatic_collection_off(monkeypatch):
    clock = _fake_collector(monkeypatch, cost=0.5)
    monkeypatch.setattr(collection.gc, "isenabled", lambda: False)
    _engine_call()
    assert clock.collections == 0


def test_a_dead_estimators_train_stream_is_freed_by_the_next_engine_call_without_a_collection_by_hand(
        tmp_path, eight_replicas, monkeypatch):
    freed = _watching_iterators(monkeypatch)
    x, y = m.dataset(48)
    estimator = _estimator(tmp_path / "first", eight_replicas)
    estimator.train(m.train_input_fn(x, y), max_steps=2)
    del estimator  # cyclic garbage: only a collection finds it
    monkeypatch.setattr(collection, "_last_collection", {"end": float("-inf"), "cost": 0.0, "engines": 0})
    _estimator(tmp_path / "second", eight_replicas).evaluate(m.eval_input_fn(x, y), steps=1)
    assert freed.wait(2) == ["estimators-iterator-reaper"] * 2


def test_a_prediction_stopped_half_way_is_kept_for_the_next_engine_call_not_freed_at_once(
        tmp_path, eight_replicas, monkeypatch):
    # Freeing it mid-batch can wait seconds on its input threads, in a thread the interpreter joins at exit:
    # a notebook that reads a few predictions and ends waited for it. Kept, it is freed by the next call or leaked.
    freed = _watching_iterators(monkeypatch)
    x, y = m.dataset(160)
    config = RunConfig(model_dir=str(tmp_path), train_distribute=eight_replicas,
                       tpu_config=TPUConfig(iterations_per_loop=2))
    estimator = TPUEstimator(m.linear_model_fn, config=config, use_tpu=False, train_batch_size=16,
                             eval_batch_size=16, predict_batch_size=16)
    estimator.train(m.train_input_fn(x, y), max_steps=2)  # an endless stream: still live
    predictions = estimator.predict(m.predict_input_fn(x))
    next(predictions)
    predictions.close()
    assert freed.threads == []
    assert len(collection._kept) >= 1
    estimator.evaluate(m.eval_input_fn(x, y), steps=1)
    assert freed.wait(2) == ["estimators-iterator-reaper"] * 2  # the kept prediction's and the evaluation's


def test_predict_runs_one_batch_before_its_first_prediction_as_2_15_did(tmp_path, eight_replicas):
    x, y = m.dataset(320)
    pulled = []

    def input_fn(params):
        def count(features):
            pulled.append(1)
            return features
        dataset = tf.data.Dataset.from_tensor_slices(x).map(lambda f: tf.py_function(count, [f], tf.float32))
        return dataset.map(lambda f: tf.ensure_shape(f, x.shape[1:])).batch(16, drop_remainder=True)

    config = RunConfig(model_dir=str(tmp_path), train_distribute=eight_replicas,
                       tpu_config=TPUConfig(iterations_per_loop=16))
    estimator = TPUEstimator(m.linear_model_fn, config=config, use_tpu=False, train_batch_size=16,
                             predict_batch_size=16)
    estimator.train(m.train_input_fn(x, y), max_steps=1)
    predictions = estimator.predict(input_fn, yield_single_examples=False)
    assert next(predictions)["logits"].shape[0] == 16
    predictions.close()
    assert len(pulled) < 16 * 16  # one batch (and what tf.data prefetched), not a training loop's sixteen
