"""EstimatorSpec's checks when it is built, as tf.estimator 2.15 made them (exception classes included).

What 2.15 refused there is refused here, in model_fn at the line that made the spec; what it accepted
(an unknown mode, a loss of shape [1]) is accepted. Keras metrics and Keras variables (a Keras optimizer's
update) are accepted too: the TF2 path's model_fns return them.

In a TF1 graph (not eagerly nor in a tf.function), loss, train_op, predictions and metric tensors must
belong to the default graph, the one model_fn is building (2.15's "must be from the default graph"), and a
tf.keras (tf_keras) metric object is turned into its (result, update_op) pair, its variables put in the
LOCAL_VARIABLES and METRIC_VARIABLES collections, as 2.15 did, so the graph path runs it like a
tf.compat.v1.metrics pair. A Keras 3 metric (tf.keras.metrics under Keras 3) is turned into the same pair:
its update_state's writes on its variables, made again to run together, and its result().
"""

from __future__ import annotations

from typing import Any

import keras
import tensorflow as tf

from estimators.mode_keys import ModeKeys


class MetricNotTensorsError(AttributeError, TypeError):
    """An eval_metric_ops pair of Python values (2.15 failed with an AttributeError there; a TypeError too)."""


def check_estimator_spec(mode: str, predictions: Any, loss: Any, train_op: Any, eval_metric_ops: Any,
                         export_outputs: Any, scaffold: Any, hooks: dict) -> tuple[Any, Any]:
    """Raises 2.15's ValueError / TypeError for a spec that cannot run. Returns (eval_metric_ops, export_outputs)
    as the spec keeps them: Keras metric objects in a TF1 graph as (result, update_op) pairs, and in PREDICT
    mode the export outputs with the default serving signature filled in (a PredictOutput of the predictions
    when there are none), as 2.15's spec held them."""
    if loss is None and mode in (ModeKeys.TRAIN, ModeKeys.EVAL):
        raise ValueError(f"Missing loss: EstimatorSpec(mode={mode!r}) needs loss= (the mean over the batch).")
    if loss is not None:
        if not _is_tensor(loss):
            raise TypeError(f"loss must be Tensor, given: {loss!r}.")
        if loss.shape.rank is not None and loss.shape.num_elements() not in (None, 1):
            raise ValueError(f"Loss must be scalar, given: {loss!r}; reduce it, e.g. tf.reduce_mean(...).")
        _check_default_graph(loss, "loss", None)
    if train_op is None and mode == ModeKeys.TRAIN:
        raise ValueError("Missing train_op: EstimatorSpec(mode=TRAIN) needs train_op=optimizer.minimize(...).")
    if train_op is not None and not all(_is_op_or_tensor(op) for op in tf.nest.flatten(train_op)):
        raise TypeError(f"train_op must be Operation or Tensor, given: {train_op!r}.")
    for op in tf.nest.flatten(train_op) if train_op is not None else ():
        _check_default_graph(op, "train_op", None)
    if predictions is None and mode == ModeKeys.PREDICT:
        raise ValueError("Missing predictions: EstimatorSpec(mode=PREDICT) needs predictions= (a tensor or a dict).")
    if predictions is not None:
        values = predictions.items() if isinstance(predictions, dict) else [(None, predictions)]
        for key, value in values:
            if not _is_tensor(value):
                where = "predictions" if key is None else f"predictions[{key}]"
                raise TypeError(f"{where} must be Tensor (predictions: a Tensor or a dict of Tensors), given: "
                                f"{value!r}.")
            _check_default_graph(value, "prediction values", key)
    eval_metric_ops = _check_metrics(eval_metric_ops)
    if export_outputs is not None:
        from estimators.export.outputs import ExportOutput

        if not isinstance(export_outputs, dict):
            raise TypeError(f"export_outputs must be dict, given: {export_outputs!r}.")
        if not all(isinstance(v, ExportOutput) for v in export_outputs.values()):
            raise TypeError(f"Values in export_outputs must be ExportOutput objects (estimators.export.PredictOutput, "
                            f"ClassificationOutput, RegressionOutput), given: {export_outputs!r}.")
    if mode == ModeKeys.PREDICT:
        from estimators.export.signatures import export_outputs_for_predict

        export_outputs = export_outputs_for_predict(export_outputs, predictions)
    if scaffold is not None and not isinstance(scaffold, tf.compat.v1.train.Scaffold):
        raise TypeError(f"scaffold must be tf.train.Scaffold (tf.compat.v1.train.Scaffold). Given: {scaffold!r}.")
    for name, given in hooks.items():
        for hook in [given] if _is_hook(given) else list(given or ()):
            if not _is_hook(hook):
                raise TypeError(f"All hooks must be SessionRunHook instances (or estimators.Hook), given: {hook!r} "
                                f"in {name}.")
    return eval_metric_ops, export_outputs


def _check_metrics(eval_metric_ops: Any) -> Any:
    if eval_metric_ops is None:
        return None
    if not isinstance(eval_metric_ops, dict):
        raise TypeError(f"eval_metric_ops must be a dict, given: {eval_metric_ops!r}.")
    checked = {}
    for key, metric in eval_metric_ops.items():
        if _is_metric_object(metric):
            if not _in_tf1_graph():
                checked[key] = metric
            elif isinstance(metric, keras.metrics.Metric):
                checked[key] = _keras3_graph_metric_pair(key, metric)
            else:
                checked[key] = _graph_metric_pair(key, metric)
            continue
        if not isinstance(metric, (tuple, list)) or len(metric) != 2:
            raise TypeError(f"Values of eval_metric_ops must be (metric_value, update_op) tuples or Keras metrics, "
                            f"given: {metric!r} for key: {key}.")
        for part in tf.nest.flatten(metric):
            if not _is_op_or_tensor(part):
                raise MetricNotTensorsError(f"eval_metric_ops[{key!r}] must hold tensors or ops (as "
                                            f"tf.compat.v1.metrics return them), given: {metric!r}.")
            _check_default_graph(part, "eval_metric_ops", key)
        checked[key] = metric
    return checked


def _graph_metric_pair(key: Any, metric: Any) -> tuple:
    """A tf_keras metric updated in this TF1 graph as its (result, update_op) pair; its variables are put in
    LOCAL_VARIABLES (initialised with the other local variables) and METRIC_VARIABLES, as 2.15 did."""
    if not metric.updates:
        raise ValueError(f'Please call update_state(...) on the "{metric.name}" metric (eval_metric_ops[{key!r}]) '
                         f"in model_fn before returning it.")
    for part in [*metric.updates, metric.result()]:
        _check_default_graph(part, "eval_metric_ops", key)
    for collection in (tf.compat.v1.GraphKeys.LOCAL_VARIABLES, tf.compat.v1.GraphKeys.METRIC_VARIABLES):
        present = set(tf.compat.v1.get_collection(collection))
        for variable in metric.variables:
            if variable not in present:
                tf.compat.v1.add_to_collection(collection, variable)
    return metric.result(), metric.updates[0]


# The ops Keras 3's update_state writes a metric variable with in a TF1 graph (it assigns the new value), the
# ops on a variable's handle that only read it, and the ops a checkpoint restore feeds a write from (a Saver
# made in model_fn writes the metric variables too, when it restores).
_WRITE_OPS = {"AssignVariableOp": tf.raw_ops.AssignVariableOp, "AssignAddVariableOp": tf.raw_ops.AssignAddVariableOp,
              "AssignSubVariableOp": tf.raw_ops.AssignSubVariableOp}
_READ_ONLY_OPS = frozenset({"ReadVariableOp", "VarIsInitializedOp", "VariableShape", "ResourceGather",
                            "ResourceGatherNd", "DestroyResourceOp"})
_RESTORE_OPS = frozenset({"RestoreV2", "Restore", "RestoreSlice"})


def _keras3_graph_metric_pair(key: Any, metric: Any) -> tuple:
    """A Keras 3 metric updated in this TF1 graph as its (result, update_op) pair, as 2.15 took a Keras metric.

    Keras 3's update_state returns nothing in a graph and keeps no `updates`: it left one write per metric
    variable on the variable's handle (the initializer's and a Saver's restore writes aside). Those writes
    are not ordered among themselves, so a batch whose input ends half-way would still bump the count. The
    update_op made here writes the same new values, each only after all of them are computed (as tf.keras's
    update chained them), so a failing batch changes none of the variables. The variables move from
    GLOBAL_VARIABLES (where a Keras 3 variable lands in a TF1 graph) to LOCAL_VARIABLES and METRIC_VARIABLES,
    where 2.15's tf.keras metric variables were: no Saver looks for them in a checkpoint and each evaluation
    starts them from zero."""
    graph = tf.compat.v1.get_default_graph()
    elsewhere = ValueError(f'eval_metric_ops[{key!r}]: the variables of the "{metric.name}" metric must be from the '
                           f"default graph: create the metric in the model_fn call that returns the spec (not eagerly, "
                           f"nor in another graph or an earlier model_fn call).")
    variables, writes = [], []
    for variable in metric.variables:
        tf_variable = getattr(variable, "value", None)
        if not isinstance(tf_variable, tf.Variable) or getattr(tf_variable.handle, "graph", None) is None:
            raise elsewhere
        variables.append(tf_variable)
        initializers = _initializer_ops(tf_variable.initializer)
        mine = [op for op in tf_variable.handle.consumers() if op.type not in _READ_ONLY_OPS
                and op not in initializers and not _restored(op)]
        if any(op.type not in _WRITE_OPS for op in mine):
            kinds = sorted({op.type for op in mine} - set(_WRITE_OPS))
            raise ValueError(f'eval_metric_ops[{key!r}]: the Keras 3 "{metric.name}" metric writes {variable.path} '
                             f"with {', '.join(kinds)} in this TF1 graph, which the graph path cannot turn into an "
                             f"update_op; use its tf_keras.metrics counterpart or a tf.compat.v1.metrics pair.")
        if len(mine) > 1:
            raise ValueError(f'eval_metric_ops[{key!r}]: update_state(...) was called more than once on the Keras 3 '
                             f'"{metric.name}" metric in model_fn ({variable.path} is written {len(mine)} times; '
                             f"reset_state() writes it too); in a TF1 graph Keras 3 does not order those writes "
                             f"(each would read the variable before the others wrote it). Call update_state once "
                             f"(concatenate the values), or use tf_keras.metrics or tf.compat.v1.metrics.")
        writes.extend(mine)
    if not writes:  # 2.15 asked for the update before it looked at the graph
        raise ValueError(f'Please call update_state(...) on the "{metric.name}" metric (eval_metric_ops[{key!r}]) '
                         f"in model_fn before returning it.")
    if any(variable.handle.graph is not graph for variable in variables):
        raise elsewhere
    new_values = [op.inputs[1] for op in writes]
    with tf.control_dependencies(new_values):
        update_op = tf.group(*[_WRITE_OPS[op.type](resource=op.inputs[0], value=op.inputs[1]) for op in writes])
    value = _result_over_replicas(metric)
    _check_default_graph(value, "eval_metric_ops", key)
    # under a strategy GLOBAL_VARIABLES holds a distributed variable's components, one per replica
    strategy = tf.distribute.get_strategy()
    made = {id(part) for variable in variables for part in (variable, *strategy.experimental_local_results(variable))}
    global_variables = tf.compat.v1.get_collection_ref(tf.compat.v1.GraphKeys.GLOBAL_VARIABLES)
    global_variables[:] = [variable for variable in global_variables if id(variable) not in made]
    for collection in (tf.compat.v1.GraphKeys.LOCAL_VARIABLES, tf.compat.v1.GraphKeys.METRIC_VARIABLES):
        present = {id(variable) for variable in tf.compat.v1.get_collection(collection)}
        for variable in variables:
            if id(variable) not in present:
                tf.compat.v1.add_to_collection(collection, variable)
    return value, update_op


def _initializer_ops(initializer: Any) -> set:
    """A variable's initializer op and, for a distributed variable's (groups of groups of its components'
    initializers), every op it groups."""
    ops, stack = set(), [initializer]
    while stack:
        op = stack.pop()
        ops.add(op)
        if op.type == "NoOp":
            stack.extend(op.control_inputs)
    return ops


def _result_over_replicas(metric: Any) -> Any:
    """metric.result(); in a replica of a tf.distribute strategy (the graph path's MirroredStrategy), read in
    the cross-replica context, where its on-read variables sum over the replicas (tf.keras's result did the
    same), not from this replica's copies alone."""
    if not tf.distribute.has_strategy() or tf.distribute.in_cross_replica_context():
        return metric.result()
    return tf.distribute.get_replica_context().merge_call(lambda _: metric.result())


def _restored(write: Any) -> bool:
    """Whether a write on a variable's handle assigns a value a checkpoint restore reads (a Saver's restore op)."""
    source = write.inputs[1].op if len(write.inputs) > 1 else None
    while source is not None and source.type == "Identity":
        source = source.inputs[0].op
    return source is not None and source.type in _RESTORE_OPS


def _in_tf1_graph() -> bool:
    """Building a TF1 graph (the graph path, or a program's own tf.Graph), not eagerly nor in a tf.function."""
    return not tf.executing_eagerly() and not tf.inside_function()


def _check_default_graph(value: Any, what: str, key: Any) -> None:
    """2.15's ValueError for a tensor or op of another graph than the one model_fn is building."""
    if not _in_tf1_graph() or isinstance(value, tf.Variable) or not isinstance(value, (tf.Tensor, tf.Operation)):
        return  # in a tf.function, tensors of the graphs around it are captured as they are used
    if value.graph is not tf.compat.v1.get_default_graph():
        name = value.name if key is None else f"{key}: {value.name}"
        raise ValueError(f'{what} with "{name}" must be from the default graph: make it in the model_fn call '
                         f"that returns the spec, inside the graph model_fn is building, not in another graph or an "
                         f"earlier model_fn call.")


def _is_tensor(value: Any) -> bool:
    """A dense tensor or a variable, as 2.15 required (a SparseTensor or RaggedTensor is refused)."""
    return isinstance(value, (tf.__internal__.types.Tensor, keras.Variable))


def _is_op_or_tensor(value: Any) -> bool:
    return isinstance(value, (tf.Operation, tf.Variable)) or _is_tensor(value)


def _is_metric_object(value: Any) -> bool:
    from_tf_keras = any((cls.__module__ or "").startswith("tf_keras.") for cls in type(value).__mro__)
    return isinstance(value, keras.metrics.Metric) or from_tf_keras and (
        hasattr(value, "result") and hasattr(value, "update_state"))


def _is_hook(value: Any) -> bool:
    from estimators.training.hooks import Hook

    return isinstance(value, (tf.compat.v1.train.SessionRunHook, Hook))
