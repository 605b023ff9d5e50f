"""Calling input_fn as tf.estimator did: `mode`, `params`, `config`, `input_context` by name.

tf.estimator passes each of those only when input_fn declares an argument of that name, so
`input_fn(mode, params)` gets the mode as `mode` (never the params dict in its first position).
TPUEstimator required `params`, where it puts the batch size. An input_fn may also return tensors
(`features` or `(features, labels)`, typically a one-shot iterator's get_next()): tf.estimator 2.15
evaluated them again for every step until they raised OutOfRangeError, and so does the dataset made here.
2.15 called input_fn once per train/evaluate/predict; so does this module, for the tensors a graph would
give again unchanged (constants) and for a dataset iterator's get_next() (its dataset, read from the start);
only other tensors (random ops, variables, queues) need input_fn called again in a graph of its own.
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import tensorflow as tf
from tensorflow.python.eager import context, execute
from tensorflow.python.framework import op_def_registry

from estimators.compat.fn_args import declared_args
from estimators.inputs.feeding import called_by_engine
from estimators.mode_keys import ModeKeys
from estimators.path_choice import GraphPathNeeded

INPUT_FN_ARGS = ("mode", "params", "config", "input_context")


def input_fn_args(input_fn: Callable) -> tuple[str, ...]:
    """The names input_fn takes among INPUT_FN_ARGS; ValueError for any other required argument."""
    if not callable(input_fn):
        raise ValueError(f"input_fn must be callable, got {type(input_fn).__name__}.")
    try:
        inspect.signature(input_fn)
    except (TypeError, ValueError):
        return ()  # no signature to read (a builtin): called without arguments
    return declared_args(input_fn, INPUT_FN_ARGS, "input_fn", " Bind others with functools.partial or a lambda.")


def bound_input_fn(input_fn: Callable, *, mode: str, params: dict, config: Any, input_context: Any = None,
                   require_params: bool = False) -> Callable[[], Any]:
    """input_fn as a call without arguments, passing by name those of mode/params/config/input_context it declares."""
    args = input_fn_args(input_fn)
    if require_params and "params" not in args:
        raise ValueError(
            f"input_fn {getattr(input_fn, '__name__', input_fn)!r} does not take a `params` argument, which "
            "TPUEstimator needs to pass the batch size as params['batch_size']."
        )
    values = {"mode": mode, "params": params, "config": config, "input_context": input_context}

    def call() -> Any:
        with called_by_engine():  # numpy_input_fn and pandas_input_fn give their Dataset
            return input_fn(**{name: values[name] for name in args})

    return call


def call_input_fn(input_fn: Callable, *, mode: str, params: dict, config: Any, input_context: Any = None,
                  require_params: bool = False) -> tf.data.Dataset:
    """input_fn's dataset, called with the arguments it declares; returned tensors become a dataset of their values."""
    call = bound_input_fn(input_fn, mode=mode, params=params, config=config, input_context=input_context,
                          require_params=require_params)
    try:
        return dataset_of_call(call, config, predict=mode == ModeKeys.PREDICT)
    except RuntimeError as error:
        if tf.executing_eagerly() and "eager" in str(error):
            # make_initializable_iterator, placeholders, queues: a TF1 input pipeline, which the graph path runs.
            first_line = str(error).strip().splitlines()[0]
            raise GraphPathNeeded(f"input_fn builds what only a graph runs ({first_line})") from error
        raise


def dataset_of_call(call: Callable[[], Any], config: Any = None, predict: bool = False) -> tf.data.Dataset:
    """The dataset of what `call` (input_fn with its arguments bound) returns, called once under watch."""
    watch = _EagerOps()
    with watch, called_by_engine():
        result = call()
    return as_dataset(result, call, config, watch, predict=predict)


def as_dataset(result: Any, call: Callable[[], Any], config: Any, watch: _EagerOps,
               predict: bool = False) -> tf.data.Dataset:
    """input_fn's `result` as a dataset: itself, or (tensors) the values `call` gives evaluated again and again.

    `watch` holds the eager ops that made `result`: constants and a dataset
    iterator's get_next() need no second call of input_fn. `predict`: warn, as 2.15 did, when the values never
    end (predict() would yield forever).
    """
    if isinstance(result, tf.data.Dataset):
        return result
    if isinstance(result, list) and len(result) == 2:
        result = tuple(result)  # [features, labels], read as 2.15 read it
    if isinstance(result, (tuple, list)) and len(result) != 2:
        raise ValueError(f"input_fn should return (features, labels) as a len 2 tuple, got a len {len(result)} "
                         f"{type(result).__name__}: put the features in a dict, or return a tf.data.Dataset.")
    if _no_labels(result):  # (features, None): features alone, as 2.15 read it
        result, original = result[0], call
        call = lambda: original()[0]  # noqa: E731
    if _is_array_structure(result) or (watch.stateless and _is_eager_structure(result)):
        # 2.15 made them constants of its graph, read whole at every step, without end.
        if predict:
            warn_predict_never_ends()
        return tf.data.Dataset.from_tensors(_as_arrays(result)).repeat()
    if not _is_tensor_structure(result):
        raise ValueError(
            f"input_fn must return a tf.data.Dataset, or `features` / `(features, labels)` made of tensors, "
            f"got {type(result).__name__}."
        )
    source = watch.iterated_dataset(result)
    if source is not None:
        return source  # get_next() of an iterator over it: evaluated again and again, it reads it from the start
    return tensors_as_dataset(call, seed=getattr(config, "tf_random_seed", None), predict=predict)


def warn_predict_never_ends() -> None:
    """2.15's warning, on its logger, for predict() input that no dataset or queue ends: it yields forever."""
    tf.compat.v1.logging.warning(
        "Input graph does not read a tf.data.Dataset nor contain a QueueRunner, so predict() yields predictions "
        "forever: return a Dataset (it ends with its data), or stop iterating when you have what you need.")


def has_dataset_or_queue_runner(tensors: Any, graph: tf.Graph) -> bool:
    """Whether input tensors come from a dataset iterator's get_next() or the graph has queue runners, as 2.15
    judged it (top-level tensors only)."""
    leaves = [leaf for leaf in tf.nest.flatten(tensors) if isinstance(leaf, tf.Tensor)]
    if any(leaf.op.type == "IteratorGetNext" for leaf in leaves):
        return True
    return bool(graph.get_collection(tf.compat.v1.GraphKeys.QUEUE_RUNNERS))


class _EagerOps:
    """The ops input_fn runs eagerly, noted by a thread-local op callback (removed on exit): whether all are
    stateless, and the dataset behind a single iterator's get_next()."""

    _ITERATOR_OPS = {"AnonymousIteratorV3", "AnonymousIteratorV2", "MakeIterator", "DeleteIterator"}

    def __init__(self):
        self._active = False
        self._any_stateful = False  # any stateful op run: the values are not constants
        self._other_state = False  # a stateful op besides dataset and iterator ops, run or put in a graph
        self._datasets: dict[int, Any] = {}  # id of an iterator's resource handle -> the dataset variant it reads
        self._get_next: list[tuple[Any, tuple, tuple]] = []  # (iterator handle, outputs, attrs) per IteratorGetNext

    @property
    def stateless(self) -> bool:
        """No stateful op ran: the values are what any graph evaluation of input_fn's tensors would give."""
        return not self._any_stateful

    def __enter__(self) -> _EagerOps:
        self._active = tf.executing_eagerly()
        if self._active:
            _watching(self._note, add=True)
        else:
            self._any_stateful = self._other_state = True  # nothing watched: assume the worst
        return self

    def __exit__(self, *exc_info: Any) -> None:
        if self._active:
            _watching(self._note, add=False)

    def _note(self, op_type, inputs, attrs, outputs, op_name=None, graph=None):
        op_def = op_def_registry.get(op_type)
        stateful = op_def is None or op_def.is_stateful
        if graph is not None:  # put in a graph (a dataset's function, a tf.function), not run
            # a random op there draws from seeds a graph would derive otherwise than eager execution did
            self._other_state = self._other_state or stateful
            return None
        self._any_stateful = self._any_stateful or stateful
        if op_type == "MakeIterator" and len(inputs) == 2:
            self._datasets[id(inputs[1])] = inputs[0]
        elif op_type == "IteratorGetNext" and inputs:
            self._get_next.append((inputs[0], tuple(outputs or ()), tuple(attrs or ())))
        elif stateful and op_type not in self._ITERATOR_OPS and not _makes_dataset(op_def):
            self._other_state = True  # a variable, a random op, a seed generator (shuffle), a queue, a py_func
        return None

    def iterated_dataset(self, result: Any) -> tf.data.Dataset | None:
        """The dataset `result` is the first element of, when result is exactly the outputs of input_fn's single
        IteratorGetNext and nothing else stateful ran (nor random: a graph would seed it from
        RunConfig.tf_random_seed); else None. Read again from its start, as 2.15's graph read a fresh iterator
        (a dataset made before input_fn was called is read from its start too: 2.15 could not take one)."""
        if self._other_state or len(self._get_next) != 1:
            return None
        handle, outputs, attrs = self._get_next[0]
        variant = self._datasets.get(id(handle))
        leaves = tf.nest.flatten(result)
        if variant is None or len(leaves) != len(outputs):
            return None
        if any(leaf is not output for leaf, output in zip(leaves, outputs, strict=True)):
            return None
        shapes = dict(zip(attrs[::2], attrs[1::2], strict=True)).get("output_shapes")
        if shapes is None or len(shapes) != len(leaves) or any(leaf.dtype == tf.variant for leaf in leaves):
            return None
        specs = [tf.TensorSpec(tf.TensorShape(shape), leaf.dtype) for shape, leaf in zip(shapes, leaves, strict=True)]
        return tf.data.experimental.from_variant(variant, tf.nest.pack_sequence_as(result, specs))


_watch_lock = threading.Lock()
_watches = 0  # _EagerOps blocks open, in all threads
_execute_before: Any = None  # execute.execute as it was when the first of them opened


def _watching(callback: Callable, add: bool) -> None:
    """Adds or removes a thread-local op callback, with TensorFlow's switch of `execute.execute` (which routes
    function calls past callbacks) made once for all threads: put back as it was when the last watch ends, never
    to the fast path while a watch (or another thread's callback, set before ours) still needs it."""
    global _watches, _execute_before
    ctx = context.context()
    with _watch_lock:
        if add:
            if _watches == 0:
                _execute_before = execute.execute
            _watches += 1
            ctx.add_op_callback(callback)
            execute.execute = execute.execute_with_callbacks
        else:
            ctx.remove_op_callback(callback)
            _watches -= 1
            if _watches == 0:
                execute.execute = _execute_before


def _makes_dataset(op_def: Any) -> bool:
    """A dataset op: its one output is the dataset's variant."""
    return len(op_def.output_arg) == 1 and op_def.output_arg[0].type == tf.variant.as_datatype_enum


def _no_labels(value: Any) -> bool:
    return isinstance(value, tuple) and len(value) == 2 and value[1] is None


def _is_array_structure(value: Any) -> bool:
    """numpy arrays / Python lists and numbers (features, or (features, labels) with labels possibly None)."""
    leaves = tf.nest.flatten(_as_arrays(value)) if isinstance(value, (tuple, dict, np.ndarray)) else []
    return bool(leaves) and all(isinstance(leaf, np.ndarray) for leaf in leaves)


def _as_arrays(value: Any) -> Any:
    """Lists inside a (features, labels) pair or a features dict as numpy arrays, typed as tf.constant would
    type them; None labels dropped."""
    if isinstance(value, tuple) and len(value) == 2 and value[1] is None:
        return _as_arrays(value[0])
    if isinstance(value, tuple):
        return tuple(_as_arrays(v) for v in value)
    if isinstance(value, dict):
        return {k: _as_arrays(v) for k, v in value.items()}
    if isinstance(value, list) and value and all(isinstance(v, np.ndarray) for v in value):
        return tuple(_as_arrays(v) for v in value)  # a model's several inputs: 2.15 handed model_fn the list
    if isinstance(value, (list, int, float)):
        return np.asarray(tf.convert_to_tensor(value).numpy())  # TensorFlow's dtypes for Python values
    return value


def _is_tensor_structure(value: Any) -> bool:
    leaves = tf.nest.flatten(value)
    return bool(leaves) and all(tf.is_tensor(leaf) for leaf in leaves)


def _is_eager_structure(value: Any) -> bool:
    """Eager tensors (numpy arrays or Python lists may sit beside them): values computed, not a graph's tensors.
    A bare Python number is not one (it is refused, as before)."""
    leaves = tf.nest.flatten(_as_arrays(value) if isinstance(value, (tuple, dict)) else value)
    eager = [leaf for leaf in leaves if hasattr(leaf, "numpy") and not isinstance(leaf, np.ndarray)]
    return bool(eager) and all(isinstance(leaf, np.ndarray) or hasattr(leaf, "numpy") for leaf in leaves)


def tensors_as_dataset(call: Callable[[], Any], seed: int | None = None, predict: bool = False) -> tf.data.Dataset:
    """The dataset of what `call` returns when its tensors are evaluated again and again, as session.run did.

    tf.estimator 2.15 called input_fn in a graph (with the config's tf_random_seed as its seed) and
    evaluated the tensors once per step until OutOfRangeError. This does the same: each pass over the
    dataset builds `call`'s graph afresh, initialises its variables and tables as the Scaffold did, and
    yields one session.run of its tensors per element, so a one-shot iterator's get_next() advances and
    ends the dataset, and tensors without an iterator repeat forever (`predict`: with 2.15's warning).
    """

    def build() -> tuple[tf.Graph, Any]:
        graph = tf.Graph()
        with graph.as_default():
            if seed is not None:
                tf.compat.v1.set_random_seed(seed)
            return graph, call()

    graph, tensors = build()
    leaves = tf.nest.flatten(tensors)
    if not _is_tensor_structure(tensors) or any(getattr(t, "graph", None) is not graph for t in leaves):
        raise ValueError("input_fn returned tensors in eager mode but not when called in a graph; return a "
                         "tf.data.Dataset instead.")
    signature = tf.nest.map_structure(lambda t: tf.TensorSpec(t.shape, t.dtype), tensors)
    if predict and not has_dataset_or_queue_runner(tensors, graph):
        warn_predict_never_ends()

    unused = [(graph, tensors)]  # the graph built for the signature serves the first pass: one call fewer

    def evaluations():
        graph, tensors = unused.pop() if unused else build()
        with graph.as_default():
            init = [tf.compat.v1.global_variables_initializer(), tf.compat.v1.local_variables_initializer(),
                    tf.compat.v1.tables_initializer()]
        # Closed explicitly, not by `with Session`: a generator tf.data never finished is closed at interpreter
        # shutdown (GeneratorExit), and Session.__exit__ with an exception closes on a new thread, whose start
        # then waits forever (tensorflow/estimator's estimator_test hung at exit every time).
        session = tf.compat.v1.Session(graph=graph)
        try:
            session.run(init)
            while True:
                try:
                    values = session.run(tensors)
                except tf.errors.OutOfRangeError:
                    return
                yield values
        finally:
            session.close()

    return tf.data.Dataset.from_generator(evaluations, output_signature=signature)
