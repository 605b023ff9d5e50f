"""params as TPUEstimator and Estimator set them: the caller's own, 'batch_size', 'use_tpu' and 'context'.

tests/compat_cases.run_model_fn_params records what model_fn's params held in every mode; tf.estimator
2.15 ran the same run for tests/reference/compat_215.json. (TPUContext's num_replicas / num_hosts /
current_host on params['context'] are tested where TPUContext is built.)
"""

import pytest
import tensorflow as tf

from tests import compat_cases as cases
from tests.compat_ours import OURS, REFERENCE


def test_estimator_passes_the_callers_params_to_model_fn_unchanged_as_2_15(tmp_path):
    ours = cases.run_model_fn_params(OURS, str(tmp_path), "estimator")
    assert ours == REFERENCE["model_fn_params"]["estimator"]
    assert all("use_tpu" not in entry["params"] for entry in ours["model_fn_params"])


def test_tpu_estimator_adds_the_per_replica_batch_and_use_tpu_false_in_every_mode_as_2_15(tmp_path):
    ours = cases.run_model_fn_params(OURS, str(tmp_path), "tpu")
    assert ours == REFERENCE["model_fn_params"]["tpu"]
    assert [entry["params"]["use_tpu"] for entry in ours["model_fn_params"]] == [False, False, False]
    assert ours["params_after"] == {"learning_rate": 0.5, "user": "kept"}  # the caller's dict is not written to


def test_tpu_estimator_with_use_tpu_tells_model_fn_use_tpu_true_and_the_per_replica_batch(tmp_path, eight_replicas):
    # No TPU here: use_tpu=True runs on the configured strategy (8 replicas) as it would on an 8-core TPU.
    record: list = []
    config = OURS.RunConfig(model_dir=str(tmp_path), train_distribute=eight_replicas,
                            tpu_config=OURS.TPUConfig(iterations_per_loop=1))
    estimator = OURS.TPUEstimator(cases.params_probe_model_fn(OURS, record), config=config, use_tpu=True,
                                  train_batch_size=16, params={"user": "kept"})
    x, y = cases.classification_data(32)
    estimator.train(cases.repeated_input_fn(x, y), max_steps=1)
    # On the TPU 2.15 also gave model_fn params['context'] (a TPUContext; tpu_estimator.py _call_model_fn).
    assert record and all(entry["params"] == {"batch_size": 2, "context": "TPUContext", "use_tpu": True,
                                              "user": "kept"} for entry in record)


def test_input_fn_params_context_is_its_pipelines_input_context_on_eight_replicas(tmp_path, eight_replicas):
    seen = []

    def input_fn(params, input_context):
        context = params["context"]
        seen.append({"batch_size": params["batch_size"], "same_object": context is input_context,
                     "num_replicas_in_sync": context.num_replicas_in_sync,
                     "num_input_pipelines": context.num_input_pipelines,
                     "input_pipeline_id": context.input_pipeline_id,
                     "per_replica_of_16": context.get_per_replica_batch_size(16)})
        x, y = cases.classification_data(32)
        return tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(params["batch_size"], drop_remainder=True)

    estimator = cases.tpu_estimator(OURS, cases.input_fn_args_model_fn(OURS), str(tmp_path),
                                     train_distribute=eight_replicas)
    estimator.train(input_fn, max_steps=1)
    # Off the TPU (use_tpu=False) 2.15 gave input_fn the global batch (tpu_context.py batch_size_for_input_fn),
    # which the engine splits over the replicas as PER_HOST_V1 does.
    assert seen == [{"batch_size": 16, "same_object": True, "num_replicas_in_sync": 8, "num_input_pipelines": 1,
                     "input_pipeline_id": 0, "per_replica_of_16": 2}]


@pytest.mark.parametrize("key", ["batch_size", "context"])
def test_tpu_estimator_refuses_params_holding_a_key_it_sets_as_2_15(tmp_path, key):
    with pytest.raises(ValueError, match=key):
        cases.tpu_estimator(OURS, cases.input_fn_args_model_fn(OURS), str(tmp_path), params={key: 1})
