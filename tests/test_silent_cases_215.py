"""Behaviours where a port could silently give other results than tf.estimator 2.15, pinned to 2.15's own numbers.

Each test runs one program of tests/silent_cases.py on `estimators` (in a fresh process of this interpreter,
the repository on PYTHONPATH: some cases change process-wide state) and compares its result with what the
real tf.estimator 2.15 gave for the same program (tests/reference/silent_cases_215.json, written by
tests/reference/make_silent_cases_215.py under /work/venv215: tensorflow-cpu 2.15.1, tensorflow-estimator 2.15.0).
The programs are tiny linear regressions with constant initial values, fixed data in a fixed order and plain
SGD, so 2.15's numbers are exact: floats must match to 1e-5 (relative), counts, steps, tags and exception
classes exactly. Where 2.15 raised, the reference holds {"error": <builtin class>} and only the class is compared.
"""

from __future__ import annotations

import functools
import json
import os
import sys

import numpy as np
import pytest

from tests import silent_cases

REFERENCE_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference", "silent_cases_215.json")
with open(REFERENCE_FILE) as _f:
    REFERENCE = json.load(_f)["cases"]

RTOL, ATOL = 1e-5, 1e-6
CASE_TIMEOUT_S = 300


@functools.cache
def _ours_cached(name: str) -> str:
    return json.dumps(silent_cases.run_case(sys.executable, "ours", name, timeout_s=CASE_TIMEOUT_S))


def ours(name: str) -> dict:
    """The case's result on `estimators` (run once per test session)."""
    return json.loads(_ours_cached(name))


def assert_matches(actual, expected, path: str = "result") -> None:
    """Same structure; ints, strings, None and bools exactly; floats to RTOL/ATOL; errors by class only."""
    if isinstance(expected, dict) and "error" in expected and set(expected) <= {"error", "message"}:
        assert isinstance(actual, dict) and "error" in actual, (
            f"{path}: 2.15 raised {expected['error']} ({expected.get('message')}); ours gave {actual!r}")
        assert actual["error"] == expected["error"], (
            f"{path}: 2.15 raised {expected['error']}, ours raised {actual['error']}: {actual.get('message')}")
        return
    if isinstance(actual, dict) and "error" in actual and set(actual) <= {"error", "message"}:
        raise AssertionError(f"{path}: ours raised {actual['error']}: {actual.get('message')}; "
                             f"2.15 gave {expected!r}")
    if isinstance(expected, dict):
        assert isinstance(actual, dict), f"{path}: expected a dict, ours gave {actual!r}"
        assert sorted(actual) == sorted(expected), (
            f"{path}: keys differ: 2.15 {sorted(expected)}, ours {sorted(actual)}")
        for key in expected:
            assert_matches(actual[key], expected[key], f"{path}[{key!r}]")
        return
    if isinstance(expected, list):
        assert isinstance(actual, list), f"{path}: expected a list, ours gave {actual!r}"
        assert len(actual) == len(expected), (
            f"{path}: 2.15 gave {len(expected)} items, ours {len(actual)}:\n 2.15 {expected}\n ours {actual}")
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            assert_matches(a, e, f"{path}[{i}]")
        return
    if isinstance(expected, bool) or expected is None or isinstance(expected, str):
        assert actual == expected, f"{path}: 2.15 gave {expected!r}, ours {actual!r}"
        return
    if isinstance(expected, int) and isinstance(actual, int):
        assert actual == expected, f"{path}: 2.15 gave {expected}, ours {actual}"
        return
    assert isinstance(actual, (int, float)) and not isinstance(actual, bool), (
        f"{path}: 2.15 gave {expected!r}, ours {actual!r}")
    np.testing.assert_allclose(actual, expected, rtol=RTOL, atol=ATOL, err_msg=path)


def check(name: str, *keys: str) -> None:
    """The case's result (or its entries `keys`) matches 2.15's."""
    expected, actual = REFERENCE[name], ours(name)
    if keys:
        expected = {key: expected[key] for key in keys}
        actual = {key: actual.get(key, "<missing>") for key in keys}
    assert_matches(actual, expected, name)


# -- 1 ---------------------------------------------------------------------------------------------------------
def test_init_from_checkpoint_in_model_fn_initialises_a_new_model_once_then_training_continues():
    """tf.compat.v1.train.init_from_checkpoint({'w': 'w', 'b': 'b'}) in a plain Estimator's model_fn: the first
    train() starts from the file's w = [[1], [-0.5]], b = [0.3] (not the initializers' values); evaluate() and
    predict() use the trained model_dir weights; a second train() continues from the model_dir's checkpoint, its
    weights are not reset to the file's. 2.15: w [[1.24235], [-0.58966]] after 3 steps, [[1.42587], [-0.66158]]
    after 6, eval loss 0.24705. With the map {'/': '/'} 2.15's first train() raised ValueError: the root map also
    maps the estimator's global_step, which the file lacks."""
    check("init_from_checkpoint_estimator")


# -- 2 ---------------------------------------------------------------------------------------------------------
def test_init_from_checkpoint_in_tpu_estimator_spec_scaffold_fn_initialises_a_new_model_once():
    """The BERT pattern: TPUEstimatorSpec(scaffold_fn=...) whose scaffold_fn calls init_from_checkpoint and returns
    tf.compat.v1.train.Scaffold(), on TPUEstimator(use_tpu=False): 2.15 called scaffold_fn in every mode and gave
    the very numbers of the plain-Estimator case (init once, a second train() continues, eval/predict from the
    model_dir)."""
    check("init_from_checkpoint_scaffold_fn")


# -- 3 ---------------------------------------------------------------------------------------------------------
def test_local_variables_made_in_model_fn_start_from_their_initial_value_in_every_evaluate_and_predict():
    """A LOCAL_VARIABLES counter made in model_fn with get_variable(collections=[LOCAL_VARIABLES]), +1 per
    session.run in every mode: 2.15 initialised local variables anew for each evaluate() and predict() (a
    Scaffold's local_init_op), so two evaluate()s over 4 batches both report counter 4, evaluate(steps=2)
    reports 2, and predict() over 3 batches gives 1, 1, 1, 1, 2, 2, 2, 2, 3, 3 (training's 5 increments
    are not carried into either)."""
    check("local_variable_counter")


# -- 4 ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("replicas", [1, 2])
def test_exponential_moving_average_under_mirrored_strategy_updates_in_train_and_evaluate(replicas):
    """ExponentialMovingAverage(0.5).apply([w, b]) in TRAIN (after the SGD step) and in EVAL (after the batch's
    loss), under RunConfig(train_distribute=MirroredStrategy, eval_distribute=the same) on 1 or 2 logical CPUs;
    the write happens in the strategy's merge_call. 2.15: the shadow variables are checkpointed
    ('w/ExponentialMovingAverage', ...) with the EMA of w over the 4 steps; evaluate() restores them and moves
    them once per step (4 steps on 1 replica, 2 on 2: each replica takes its own batch of 4 from input_fn), so
    mean_ema_w0 is 0.569058 (1 replica) / 0.535986 (2 replicas). On 2 replicas 2.15 trained on global batches
    of 8 (w[0] 0.574351 vs 0.588449 on 1). 2.15 needed session_config=ConfigProto(device_count={'CPU': 2}) to
    see the second logical CPU: without it its first 2-replica step hung."""
    check(f"ema_mirrored_{replicas}_replica" + ("s" if replicas > 1 else ""))


def test_exponential_moving_average_trained_on_the_graph_path_with_two_replicas_matches_2_15():
    """The two-replica program above with RunConfig(execution="graph"): training too runs in a session with
    model_fn once per replica, each taking its own batch of 4; weights, EMA and evaluation equal 2.15's."""
    assert_matches(ours("ema_mirrored_2_replicas_graph_path"), REFERENCE["ema_mirrored_2_replicas"],
                   "ema_mirrored_2_replicas_graph_path")


# -- 5 ---------------------------------------------------------------------------------------------------------
def test_host_call_summaries_are_written_every_step_and_the_estimators_own_loss_becomes_loss_1():
    """TPUEstimator(use_tpu=False) with a host_call writing tf2.summary scalars 'loss' and 'learning_rate' under
    create_file_writer(model_dir).as_default() and returning tf.compat.v1.summary.all_v2_summary_ops() (the
    resnet_main.py pattern), 6 steps, iterations_per_loop=1: 2.15 wrote the host_call's loss and learning_rate
    at every step 0..5 (the step the host_call was given), wrote no learning_rate of its own, and wrote its own
    loss summary as 'loss_1' (at step 1) because 'loss' was taken. Throughput tags (global_step/sec,
    examples/sec) are not compared: 2.15 wrote none in 6 steps (log_step_count_steps=100)."""
    expected = REFERENCE["host_call_learning_rate"]
    actual = ours("host_call_learning_rate")
    scalars = {tag: points for tag, points in actual["scalars"].items() if tag not in silent_cases.THROUGHPUT_TAGS}
    assert sorted(scalars) == sorted(expected["scalars"]), "scalar tags differ"
    assert_matches(scalars, expected["scalars"], "scalars")
    assert_matches(actual["w"], expected["w"], "w")


# -- 6 ---------------------------------------------------------------------------------------------------------
def test_logging_tensor_hook_logs_every_n_iter_once_per_iteration():
    """tf.compat.v1.train.LoggingTensorHook({'loss': loss}, every_n_iter=N) with INFO logging, 10 steps: as an
    EstimatorSpec training hook (N=3) 2.15 logged 4 lines on stderr, at iterations 0, 3, 6, 9:
    'INFO:tensorflow:loss = 3.4893053' then 'INFO:tensorflow:loss = <v> (<t> sec)'; passed to
    train(hooks=[...]) with a tensor name (N=4), 3 lines at iterations 0, 4, 8. Each line once, with the loss of
    that iteration."""
    expected = REFERENCE["logging_tensor_hook"]
    actual = ours("logging_tensor_hook")
    for where in ("in_spec", "train_hooks"):
        assert_matches(actual[where]["hook_lines"], expected[where]["hook_lines"], f"{where}.hook_lines")
    assert_matches(actual["in_spec"]["w"], expected["in_spec"]["w"], "w")


def test_the_estimators_own_loss_line_is_logged_once_at_step_0():
    """The estimator's own LoggingTensorHook (every log_step_count_steps=100): 2.15 logged
    'INFO:tensorflow:loss = 3.4893053, step = 0' once in 10 steps, whatever the user's hooks."""
    expected = REFERENCE["logging_tensor_hook"]
    actual = ours("logging_tensor_hook")
    for where in ("in_spec", "train_hooks"):
        assert_matches(actual[where]["estimator_loss_lines"], expected[where]["estimator_loss_lines"],
                       f"{where}.estimator_loss_lines")


# -- 7 ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("style", ["dataset", "tensors"])
def test_input_fn_is_called_once_per_train_evaluate_and_predict(style):
    """An input_fn returning a Dataset, or tensors (a one-shot iterator's get_next()): 2.15 called it exactly
    once per train(), evaluate() and predict() call, and trained/evaluated/predicted the same numbers with both."""
    assert_matches(ours("input_fn_calls")[style], REFERENCE["input_fn_calls"][style], style)


def test_input_fn_returning_numpy_arrays_or_lists_feeds_the_whole_arrays_every_step():
    """An input_fn returning ({'x': numpy array}, numpy array), or the same as Python lists: 2.15 took them as
    constant tensors, so each of train(steps=3) used all 8 rows (w [[0.49112], [0.05470]], b 0.17508), and
    evaluate(steps=2) gave loss 1.17384 (it never ends without steps); input_fn was called once per call."""
    check("input_fn_numpy_and_lists")


# -- 8 ---------------------------------------------------------------------------------------------------------
def test_predict_without_single_examples_yields_each_batch_as_model_fn_computed_it():
    """predict(yield_single_examples=False) with predictions {'y': [batch, 1], 'batch_sum': [1], 'rows': [1]}
    over 10 rows in batches of 4: 2.15 yielded 3 dicts, y of shapes [4, 1], [4, 1], [2, 1] and batch_sum/rows of
    shape [1], as computed (no check of first dimensions); with yield_single_examples=True the same predictions
    raise ValueError ('Batch length of predictions should be same')."""
    check("predict_batches")


# -- 9 ---------------------------------------------------------------------------------------------------------
def test_estimator_spec_refuses_invalid_specs_when_built():
    """EstimatorSpec(...) built in model_fn with invalid arguments: 2.15 raised at construction, ValueError for a
    loss of shape [2], a missing loss (TRAIN, EVAL), a missing train_op (TRAIN) or predictions (PREDICT);
    TypeError for a non-tensor loss, train_op, predictions (list, float, dict of lists), eval_metric_ops not a
    dict or a value not a (value, update_op) pair, training_hooks that are not SessionRunHooks, export_outputs
    values that are not ExportOutputs, a scaffold that is not a Scaffold. It accepted a loss of shape [1] and,
    surprisingly, mode='bogus'. For eval_metric_ops={'m': (1.0, 2.0)} 2.15's AttributeError (it read .graph of
    a float) is an accident: TypeError is accepted there too."""
    expected = dict(REFERENCE["estimator_spec_validation"])
    actual = ours("estimator_spec_validation")
    if actual.get("eval_metric_ops_python_pair") == "TypeError":
        expected["eval_metric_ops_python_pair"] = "TypeError"
    differing = {name: f"2.15 {expected[name]}, ours {actual.get(name, '<missing>')}"
                 for name in expected if actual.get(name) != expected[name]}
    assert not differing, f"specs judged differently from 2.15: {differing}"


# -- 10 --------------------------------------------------------------------------------------------------------
def test_disable_eager_execution_at_program_start_then_an_ordinary_estimator_run():
    """tf.compat.v1.disable_eager_execution() before anything else, then train(steps=5), evaluate() with a
    tf.compat.v1.metrics.mean_absolute_error metric, predict(): 2.15 gave w [[0.75912], [-0.12407]],
    b 0.32840, eval loss 0.72327, mae 0.51096."""
    check("disable_eager_execution")
