"""tf.compat.v1 optimizers and graph collections inside model_fn, as tf.estimator 2.15 ran them, on 1 and 8 replicas.

tf.compat.v1.train optimizers, bare and in CrossShardOptimizer: the model (tests/compat_cases.py) is
the one 2.15 trained for tests/reference/compat_215.json: constant initial weights, 6 steps of global
batch 16, GradientDescent/Momentum/Adagrad through minimize(loss, global_step) positionally, Adam/RMSProp
through compute_gradients + apply_gradients(grads, global_step). 2.15 ran them bare on one replica (its
CrossShardOptimizer has no CPU kernel); here every combination must end at 2.15's checkpoint: weights,
slots under 2.15's names, global step.

Graph collections: tests/compat_cases.collections_model_fn adds a get_variable regularizer
(REGULARIZATION_LOSSES), keeps a moving mean through UPDATE_OPS and minimizes over
tf.compat.v1.trainable_variables(scope="net"); each call records what it saw.
(Keras 3 optimizers on 1 vs 8 replicas: tests/test_engine_replicas.py.)
"""

import pytest

from tests import compat_cases as cases
from tests.compat_ours import OURS, REFERENCE, RTOL, assert_same_checkpoint


@pytest.mark.parametrize("cross_shard", [True, False], ids=["cross_shard", "bare"])
@pytest.mark.parametrize("optimizer", list(cases.V1_OPTIMIZERS))
def test_v1_optimizer_on_one_replica_ends_at_2_15s_checkpoint(tmp_path, optimizer, cross_shard):
    ours = cases.run_optimizer(OURS, str(tmp_path), optimizer, cross_shard)
    assert_same_checkpoint(ours, REFERENCE["optimizers"][optimizer])


# Every optimizer in CrossShardOptimizer (the TPU pattern), and bare Adam (slots): 8-replica runs are slow here.
EIGHT_REPLICA_CASES = [(name, True) for name in cases.V1_OPTIMIZERS] + [("adam", False)]


@pytest.mark.parametrize(("optimizer", "cross_shard"), EIGHT_REPLICA_CASES,
                         ids=[f"{name}-{'cross_shard' if shard else 'bare'}" for name, shard in EIGHT_REPLICA_CASES])
def test_v1_optimizer_on_eight_replicas_takes_2_15s_one_replica_steps(tmp_path, eight_replicas, optimizer,
                                                                       cross_shard):
    # The same global batch of 16 split over 8 replicas: the mean gradient, so the one-replica steps.
    eight = cases.run_optimizer(OURS, str(tmp_path), optimizer, cross_shard, train_distribute=eight_replicas)
    assert_same_checkpoint(eight, REFERENCE["optimizers"][optimizer])


# -- graph collections -------------------------------------------------------------------------------------
COLLECTIONS = REFERENCE["collections"]


def test_model_fn_sees_2_15s_collections_in_every_mode(tmp_path):
    ours = cases.run_collections(OURS, str(tmp_path))
    assert ours["seen"] == COLLECTIONS["seen"]


def test_regularization_and_update_ops_train_as_2_15(tmp_path):
    ours = cases.run_collections(OURS, str(tmp_path))
    assert_same_checkpoint(ours["checkpoint"], COLLECTIONS["checkpoint"])
    assert ours["loss"] == pytest.approx(COLLECTIONS["loss"], rel=RTOL)


def test_each_of_eight_replicas_sees_only_its_own_collections_and_trains_as_2_15(tmp_path, eight_replicas):
    ours = cases.run_collections(OURS, str(tmp_path), train_distribute=eight_replicas)
    assert ours["seen"] == COLLECTIONS["seen"]
    assert_same_checkpoint(ours["checkpoint"], COLLECTIONS["checkpoint"])
    assert ours["loss"] == pytest.approx(COLLECTIONS["loss"], rel=RTOL)
