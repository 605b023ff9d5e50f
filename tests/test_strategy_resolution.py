"""Which strategy a run gets: TPU resolution (local, name, grpc), its errors and call order; local GPUs.

No TPU or GPU is reachable here, so TensorFlow's entry points are replaced through the Platform seam
(estimators/distribute/platform.py) by a recorder; the grpc probe uses real sockets on 127.0.0.1.
"""

import itertools
import socket
import urllib.error

import pytest
import tensorflow as tf

from estimators import RunConfig, TPUEstimator
from estimators.distribute import platform as platform_lib
from estimators.distribute.platform import Platform
from estimators.distribute.strategy import NoTPUError, local_strategy, resolve_strategy, tpu_cluster_resolver
from tests import engine_models as m

_ids = itertools.count()


class FakeResolver:
    """Stands in for a TPUClusterResolver; each has its own master, so no TPU is 'initialised' twice by accident."""

    def __init__(self, tpu: str, master: str | None = None):
        self.tpu = tpu
        self._master = master or f"grpc://fake-{next(_ids)}:8470"

    def master(self) -> str:
        return self._master


class Recorder:
    """Records every TensorFlow entry point strategy resolution calls, in order; each can be made to fail."""

    def __init__(self, tpus: int = 0, gpus: int = 0, fail: dict | None = None, resolver=FakeResolver,
                 tpu_strategy=None, default_strategy=("default",)):
        self.calls: list[tuple] = []
        self.tpus, self.gpus, self.fail = tpus, gpus, dict(fail or {})
        self.resolver_class = resolver
        self.tpu_strategy_value = tpu_strategy
        self.default_strategy_value = default_strategy

    def _call(self, name: str, *args, result=None):
        self.calls.append((name, *args))
        if name in self.fail:
            raise self.fail[name]
        return result

    def names(self) -> list[str]:
        return [call[0] for call in self.calls]

    def platform(self) -> Platform:
        def devices(kind, device_type):
            count = {"TPU": self.tpus, "GPU": self.gpus}.get(device_type, 0)
            found = [tf.config.LogicalDevice(name=f"/device:{device_type}:{i}", device_type=device_type)
                     for i in range(count)]
            return self._call(kind, device_type, result=found)

        return Platform(
            physical_devices=lambda t: devices("physical_devices", t),
            logical_devices=lambda t: devices("logical_devices", t),
            tpu_resolver=lambda tpu: self._call("tpu_resolver", tpu, result=None) or self.resolver_class(tpu),
            connect=lambda r: self._call("connect", r),
            initialize=lambda r: self._call("initialize", r, result="topology"),
            tpu_strategy=lambda r: self._call("tpu_strategy", r, result=self.tpu_strategy_value or ("tpu", r)),
            mirrored_strategy=lambda names: self._call("mirrored_strategy", list(names), result=("mirrored", names)),
            one_device_strategy=lambda name: self._call("one_device_strategy", name, result=("one", name)),
            default_strategy=lambda: self._call("default_strategy", result=self.default_strategy_value),
        )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# -- TPU: tpu=None / 'local' ---------------------------------------------------------------------------


def test_local_tpu_without_tpu_devices_fails_before_any_connection():
    fake = Recorder(tpus=0)
    with pytest.raises(NoTPUError, match=r"tpu='local', but this machine has no TPU devices.*drop --use_tpu"):
        resolve_strategy(True, None, platform=fake.platform())
    assert fake.names() == ["physical_devices"]


@pytest.mark.parametrize("tpu", [None, "", "local"])
def test_none_and_empty_tpu_mean_the_local_tpu(tpu):
    fake = Recorder(tpus=8)
    resolver = tpu_cluster_resolver(tpu, fake.platform())
    assert resolver.tpu == "local"
    assert fake.names() == ["physical_devices", "tpu_resolver"]


def test_local_tpu_connects_then_initialises_then_builds_the_strategy():
    fake = Recorder(tpus=8)
    strategy = resolve_strategy(True, None, platform=fake.platform())
    assert fake.names() == ["physical_devices", "tpu_resolver", "connect", "initialize", "tpu_strategy"]
    resolver = fake.calls[2][1]
    assert fake.calls[3][1] is resolver and fake.calls[4][1] is resolver
    assert strategy == ("tpu", resolver)


# -- TPU: by name, by grpc address, or a given resolver -----------------------------------------------


def test_tpu_name_is_resolved_by_name_without_probing_devices_or_sockets():
    fake = Recorder(tpus=0)
    resolve_strategy(True, None, master="my-tpu", platform=fake.platform())
    assert fake.calls[0] == ("tpu_resolver", "my-tpu")
    assert fake.names() == ["tpu_resolver", "connect", "initialize", "tpu_strategy"]


def test_unreachable_grpc_address_fails_fast_naming_host_and_port():
    fake = Recorder()
    port = _free_port()  # nothing listens there once the probe socket is closed
    with pytest.raises(NoTPUError, match=rf"did not answer on 127.0.0.1:{port}.*Check --tpu"):
        resolve_strategy(True, None, master=f"grpc://127.0.0.1:{port}", platform=fake.platform())
    assert fake.calls == []


def test_reachable_grpc_address_is_resolved_connected_and_initialised():
    fake = Recorder(resolver=lambda tpu: tf.distribute.cluster_resolver.TPUClusterResolver(tpu=tpu))
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        address = f"grpc://127.0.0.1:{server.getsockname()[1]}"
        resolve_strategy(True, None, master=address, platform=fake.platform())
    assert fake.names() == ["tpu_resolver", "connect", "initialize", "tpu_strategy"]
    assert fake.calls[1][1].master() == address  # the real TPUClusterResolver, built from the address


@pytest.mark.parametrize("address", ["grpc://", "grpc://host:notaport"])
def test_malformed_grpc_address_says_how_to_write_one(address):
    with pytest.raises(NoTPUError, match=r"is not a TPU address; write it as grpc://HOST:PORT"):
        tpu_cluster_resolver(address, Recorder().platform())


def test_a_given_cluster_resolver_is_used_as_is():
    fake = Recorder(tpus=0)
    resolver = FakeResolver("from-config")
    resolve_strategy(True, None, cluster=resolver, master="ignored", platform=fake.platform())
    assert fake.calls == [("connect", resolver), ("initialize", resolver), ("tpu_strategy", resolver)]


def test_a_configured_strategy_wins_and_touches_no_device():
    fake = Recorder(tpus=8, gpus=2)
    configured = tf.distribute.get_strategy()
    assert resolve_strategy(True, configured, platform=fake.platform()) is configured
    assert resolve_strategy(False, configured, platform=fake.platform()) is configured
    assert fake.calls == []


# -- TPU: errors ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("error", [
    urllib.error.URLError("Name or service not known"),  # a TPU name off Google Cloud (no metadata server)
    ValueError("Please provide a TPU Name to connect to."),
    ImportError("googleapiclient is not installed"),
    RuntimeError("TPU 'my-tpu' not found in project"),
], ids=lambda e: type(e).__name__)
def test_resolver_errors_are_one_clear_error_saying_what_to_pass(error):
    fake = Recorder(fail={"tpu_resolver": error})
    with pytest.raises(NoTPUError, match=r"TPU 'my-tpu' could not be resolved.*--tpu=local.*--tpu=grpc://HOST:8470"):
        resolve_strategy(True, None, master="my-tpu", platform=fake.platform())
    assert fake.names() == ["tpu_resolver"]


def test_connect_error_is_one_clear_error_and_nothing_is_initialised():
    fake = Recorder(tpus=8, fail={"connect": tf.errors.UnavailableError(None, None, "Socket closed")})
    with pytest.raises(NoTPUError, match=r"connecting to the TPU cluster .* failed \(UnavailableError: Socket clos"):
        resolve_strategy(True, None, platform=fake.platform())
    assert "initialize" not in fake.names() and "tpu_strategy" not in fake.names()


@pytest.mark.parametrize("error", [
    tf.errors.NotFoundError(None, None, "No TPU devices found"),
    tf.errors.InternalError(None, None, "TPU in use by process 1234"),
    RuntimeError("initialize_tpu_system called inside a tf.function"),
], ids=lambda e: type(e).__name__)
def test_initialise_error_is_one_clear_error_naming_a_busy_tpu(error):
    fake = Recorder(tpus=8, fail={"initialize": error})
    with pytest.raises(NoTPUError, match=r"could not be initialised .*A TPU serves one process at a time"):
        resolve_strategy(True, None, platform=fake.platform())
    assert fake.names()[-2:] == ["connect", "initialize"]


def test_a_tpu_system_is_initialised_once_per_process():
    fake = Recorder()
    resolver = FakeResolver("my-tpu")
    again = FakeResolver("my-tpu", master=resolver.master())  # a second estimator's resolver, same TPU
    resolve_strategy(True, None, cluster=resolver, platform=fake.platform())
    resolve_strategy(True, None, cluster=again, platform=fake.platform())
    assert fake.names() == ["connect", "initialize", "tpu_strategy", "tpu_strategy"]


def test_a_failed_initialisation_is_tried_again_next_time():
    fake = Recorder(fail={"initialize": tf.errors.InternalError(None, None, "busy")})
    resolver = FakeResolver("my-tpu")
    with pytest.raises(NoTPUError):
        resolve_strategy(True, None, cluster=resolver, platform=fake.platform())
    del fake.fail["initialize"]
    resolve_strategy(True, None, cluster=resolver, platform=fake.platform())
    assert fake.names() == ["connect", "initialize", "connect", "initialize", "tpu_strategy"]


# -- TPUEstimator: train on the TPU, evaluate locally with eval_on_tpu=False ----------------------------


def test_eval_on_tpu_false_trains_on_the_tpu_strategy_and_evaluates_on_local_devices(tmp_path):
    fake = Recorder(tpus=8, gpus=0, tpu_strategy=tf.distribute.OneDeviceStrategy("/cpu:0"),
                    default_strategy=tf.distribute.get_strategy())
    x, y = m.dataset(32)
    with platform_lib.using(fake.platform()):
        estimator = TPUEstimator(m.linear_model_fn, config=RunConfig(model_dir=str(tmp_path)), use_tpu=True,
                                 eval_on_tpu=False, train_batch_size=8, eval_batch_size=8)
        estimator.train(m.train_input_fn(x, y), max_steps=2)
        assert fake.names() == ["physical_devices", "tpu_resolver", "connect", "initialize", "tpu_strategy"]
        results = estimator.evaluate(m.eval_input_fn(x, y))
    assert fake.names()[5:] == ["logical_devices", "default_strategy"]
    assert results["global_step"] == 2


def test_use_tpu_false_never_touches_the_tpu_entry_points(tmp_path):
    fake = Recorder(tpus=8, gpus=0, default_strategy=tf.distribute.get_strategy())
    x, y = m.dataset(16)
    with platform_lib.using(fake.platform()):
        TPUEstimator(m.linear_model_fn, config=RunConfig(model_dir=str(tmp_path)), use_tpu=False,
                     train_batch_size=8).train(m.train_input_fn(x, y), max_steps=1)
    assert fake.names() == ["logical_devices", "default_strategy"]


# -- GPUs ----------------------------------------------------------------------------------------------


def test_every_visible_gpu_is_mirrored_by_default():
    fake = Recorder(gpus=4)
    strategy = local_strategy(platform=fake.platform())
    assert strategy == ("mirrored", [f"/device:GPU:{i}" for i in range(4)])


def test_num_gpus_takes_the_first_n_gpus():
    fake = Recorder(gpus=4)
    assert local_strategy(2, fake.platform()) == ("mirrored", ["/device:GPU:0", "/device:GPU:1"])


@pytest.mark.parametrize("gpus, num_gpus", [(1, None), (4, 1)])
def test_one_gpu_runs_on_one_device(gpus, num_gpus):
    assert local_strategy(num_gpus, Recorder(gpus=gpus).platform()) == ("one", "/device:GPU:0")


@pytest.mark.parametrize("gpus, num_gpus", [(0, None), (0, 0), (2, 0)])
def test_no_gpu_or_num_gpus_zero_runs_on_the_cpu(gpus, num_gpus):
    assert local_strategy(num_gpus, Recorder(gpus=gpus).platform()) == ("default",)


def test_more_gpus_than_visible_is_one_clear_error_naming_both_counts():
    fake = Recorder(gpus=2)
    with pytest.raises(ValueError, match=r"num_gpus=4, but 2 GPU\(s\) are visible \(/device:GPU:0, /device:GPU:1\)"
                                         r"\. Pass num_gpus <= 2 \(0 runs on the CPU\)"):
        local_strategy(4, fake.platform())
    assert "mirrored_strategy" not in fake.names()


@pytest.mark.parametrize("num_gpus", [-1, 1.5, True, "2"])
def test_num_gpus_must_be_a_count(num_gpus):
    with pytest.raises(ValueError, match=r"num_gpus must be an integer >= 0"):
        local_strategy(num_gpus, Recorder(gpus=2).platform())


def test_resolve_strategy_hands_num_gpus_to_the_local_choice():
    assert resolve_strategy(False, None, num_gpus=1, platform=Recorder(gpus=3).platform()) == ("one", "/device:GPU:0")


def test_on_this_gpu_less_machine_the_real_platform_runs_on_the_cpu_and_refuses_a_gpu():
    assert local_strategy() is tf.distribute.get_strategy()
    with pytest.raises(ValueError, match=r"num_gpus=1, but 0 GPU\(s\) are visible \(none\)"):
        local_strategy(1)
