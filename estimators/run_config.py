"""RunConfig, TPUConfig and InputPipelineConfig: every setting tf.estimator 2.15 accepted, checked when made.

Settings with a TF2 meaning take effect with their 2.15 meaning; settings without one (TF1
sessions, infeed threads, graph device functions) are logged once as ignored, never dropped
silently (compat/ignored_settings.py). BUILD_NOTES.md has the table of every setting.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import math
import os
import re
import threading
from typing import Any, ClassVar, NamedTuple

import numpy as np
import tensorflow as tf
from tensorflow.core.protobuf import rewriter_config_pb2

from estimators import precision as precision_policy
from estimators.compat.ignored_settings import log_ignored
from estimators.distribute import tf_config
from estimators.distribute.input_pipeline import InputPipelineConfig, pipeline_name  # noqa: F401 - RunConfig's names
from estimators.distribute.tf_config import EVALUATOR, ClusterInfo, cluster_info, read_tf_config

# While RunConfig.replace makes its copy: the cluster the copy keeps (TF_CONFIG may have changed since).
_REPLACING = threading.local()


class TaskType:
    """TF_CONFIG's task types (tf.estimator.RunConfig's TaskType)."""

    MASTER = tf_config.MASTER
    PS = tf_config.PS
    WORKER = tf_config.WORKER
    CHIEF = tf_config.CHIEF
    EVALUATOR = tf_config.EVALUATOR


class IterationsPerLoop(NamedTuple):
    """TPUConfig.iterations_per_loop, parsed: `value` steps (unit "count") or seconds (unit "seconds")."""

    value: int
    unit: str

    @property
    def is_time(self) -> bool:
        return self.unit == "seconds"


IterationsPerLoopCounter = IterationsPerLoop  # 2.15's name (tpu/util.py)

_LOOP_PATTERN = re.compile(r"^([1-9][0-9]*)([smh]?)$")
_SECONDS = {"s": 1, "m": 60, "h": 3600}


def parse_iterations_per_loop(value: Any) -> IterationsPerLoop:
    """A positive step count (`100`, `"100"`) or a time (`"30s"`, `"10m"`, `"1h"`), as 2.15's TPUConfig took it."""
    match = None
    if isinstance(value, (int, np.integer, str)) and not isinstance(value, bool):
        match = _LOOP_PATTERN.match(str(value).strip())
    if match is None:
        raise ValueError(
            f"iterations_per_loop must be positive: iterations_per_loop must be a positive integer (steps per loop) "
            f"or a time '<N>s', '<N>m' or "
            f"'<N>h' (e.g. '30s', '10m', '1h'); got {value!r}."
        )
    number, suffix = int(match.group(1)), match.group(2)
    return IterationsPerLoop(number * _SECONDS[suffix], "seconds") if suffix else IterationsPerLoop(number, "count")


def _is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _check_int(name: str, value: Any, minimum: int, allow_none: bool = True) -> None:
    if value is None and allow_none:
        return
    if not _is_int(value) or value < minimum:
        what = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"
        bound = "> 0" if minimum == 1 else f">= {minimum}"
        raise ValueError(f"{name} should be {bound}: {name} must be {what}{' or None' if allow_none else ''}, "
                         f"got {value!r}.")


def _check_number(name: str, value: Any, minimum: float, strict: bool, allow_none: bool = True) -> None:
    if value is None and allow_none:
        return
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
    if not ok or (value <= minimum if strict else value < minimum):
        bound = f"{'>' if strict else '>='} {minimum}"
        raise ValueError(f"{name} should be {bound}: {name} must be a number {bound}, got {value!r}.")


def _tpu_job_name_from_tf_config() -> str | None:
    service = read_tf_config().get("service")
    return service.get("tpu_worker_job_name") if isinstance(service, dict) else None


@dataclasses.dataclass(frozen=True)
class TPUConfig:
    """TPUEstimator's TPU settings, with 2.15's names, order and defaults.

    `iterations_per_loop` steps run inside one compiled call (an int, or a time such as "30s":
    see `iterations_per_loop_counter`). `per_host_input_for_training` says how input_fn is called
    (InputPipelineConfig; True and False are normalised to PER_HOST_V1 and PER_SHARD_V1 as 2.15 did).
    `num_shards`, when set, must equal the replica count on a TPU.
    """

    iterations_per_loop: int | str = 2
    num_shards: int | None = None
    num_cores_per_replica: int | None = None
    per_host_input_for_training: bool | int = True
    tpu_job_name: str | None = None
    initial_infeed_sleep_secs: int | None = None
    input_partition_dims: Any = None
    eval_training_input_configuration: int = InputPipelineConfig.PER_HOST_V1
    experimental_host_call_every_n_steps: int = 1
    experimental_allow_per_host_v2_parallel_get_next: bool = False
    experimental_feed_hook: Any = None

    def __post_init__(self) -> None:
        counter = parse_iterations_per_loop(self.iterations_per_loop)
        if counter.unit == "count":
            object.__setattr__(self, "iterations_per_loop", counter.value)
        if self.num_shards is not None and (not _is_int(self.num_shards) or self.num_shards < 1):
            raise ValueError(f"TPUConfig num_shards must be positive: num_shards must be a positive integer or None, "
                             f"got {self.num_shards!r}.")
        self._check_model_parallelism()
        object.__setattr__(self, "per_host_input_for_training", _pipeline_mode(self.per_host_input_for_training))
        if self.eval_training_input_configuration not in (InputPipelineConfig.PER_HOST_V1, InputPipelineConfig.SLICED):
            raise ValueError(
                "eval_training_input_configuration must be InputPipelineConfig.PER_HOST_V1 or SLICED, got "
                f"{self.eval_training_input_configuration!r}."
            )
        _check_int("initial_infeed_sleep_secs", self.initial_infeed_sleep_secs or None, 1)
        every = self.experimental_host_call_every_n_steps
        if not _is_int(every) or every < 1:
            raise ValueError(f"experimental_host_call_every_n_steps must be an integer >= 1, got {every!r}.")
        if self.tpu_job_name is None:
            object.__setattr__(self, "tpu_job_name", _tpu_job_name_from_tf_config())
        self._log_ignored()

    def _check_model_parallelism(self) -> None:
        """2.15's checks of num_cores_per_replica and input_partition_dims, in its order. TPUEstimator refuses to
        run a replica over several cores (estimators/tpu/estimator.py), but the settings themselves are valid."""
        dims, cores = self.input_partition_dims, self.num_cores_per_replica
        if dims is not None:
            if len(dims) not in (1, 2):
                raise ValueError("input_partition_dims must be a list/tuple with one or two elements (features, "
                                 f"labels), got {len(dims)}.")
            if self.per_host_input_for_training is not InputPipelineConfig.PER_HOST_V2:
                raise ValueError("input_partition_dims is only supported in PER_HOST_V2 mode.")
            if cores is None:
                raise ValueError("input_partition_dims requires setting num_cores_per_replica.")
        if cores is not None and cores not in (1, 2, 4, 8, 16, 32, 64, 128):
            raise ValueError(f"num_cores_per_replica must be 1, 2, 4, 8, 16, 32, 64, 128; got {cores!r}.")

    def _log_ignored(self) -> None:
        if self.tpu_job_name:
            log_ignored("TPUConfig(tpu_job_name=...)", "TPUStrategy finds the TPU job through its "
                        "TPUClusterResolver; pass a TPUClusterResolver as RunConfig(cluster=...) to choose one.")
        if self.initial_infeed_sleep_secs:
            log_ignored("TPUConfig(initial_infeed_sleep_secs=...)", "there is no infeed thread; input is read "
                        "by tf.distribute inside the compiled loop.")
        if self.experimental_allow_per_host_v2_parallel_get_next:
            log_ignored("TPUConfig(experimental_allow_per_host_v2_parallel_get_next=True)", "batches always go "
                        "to a host's replicas in turn (deterministically), as with False.")
        if self.experimental_feed_hook is not None:
            log_ignored("TPUConfig(experimental_feed_hook=...)", "there is no infeed/outfeed session hook in TF2.")

    @property
    def iterations_per_loop_counter(self) -> IterationsPerLoop:
        """iterations_per_loop as (value, unit): ("count": steps per loop) or ("seconds": run loops for that long)."""
        return parse_iterations_per_loop(self.iterations_per_loop)


def _pipeline_mode(value: Any) -> int:
    if value is True:
        return InputPipelineConfig.PER_HOST_V1
    if value is False:
        return InputPipelineConfig.PER_SHARD_V1
    if value == InputPipelineConfig.BROADCAST:
        raise ValueError(
            "per_host_input_for_training=InputPipelineConfig.BROADCAST (one input_fn on host 0, its whole batch "
            "copied to every replica) is not supported. Use PER_HOST_V1 (True, the default) or PER_HOST_V2."
        )
    modes = (InputPipelineConfig.PER_SHARD_V1, InputPipelineConfig.PER_HOST_V1, InputPipelineConfig.PER_HOST_V2)
    if value not in modes:
        raise ValueError(
            "per_host_input_for_training must be True (PER_HOST_V1), False (PER_SHARD_V1) or an "
            f"InputPipelineConfig value PER_SHARD_V1, PER_HOST_V1 or PER_HOST_V2; got {value!r}."
        )
    return int(value)


class _Default:
    """RunConfig's marker for 'not given' (2.15 tells an unset checkpoint interval from an explicit None)."""

    def __repr__(self) -> str:
        return "<default>"


USE_DEFAULT: Any = _Default()

_REPLACEABLE = (
    "model_dir", "tf_random_seed", "save_summary_steps", "save_checkpoints_steps", "save_checkpoints_secs",
    "session_config", "keep_checkpoint_max", "keep_checkpoint_every_n_hours", "log_step_count_steps",
    "train_distribute", "device_fn", "protocol", "eval_distribute", "experimental_distribute",
    "experimental_max_worker_delay_secs", "session_creation_timeout_secs", "checkpoint_save_graph_def",
    "tpu_config", "jit_compile", "num_gpus", "precision", "save_input_position", "execution",
)


def get_default_session_config() -> tf.compat.v1.ConfigProto:
    """2.15's default session ConfigProto: soft placement, and one round of Grappler's meta-optimizer."""
    rewrite = rewriter_config_pb2.RewriterConfig(meta_optimizer_iterations=rewriter_config_pb2.RewriterConfig.ONE)
    return tf.compat.v1.ConfigProto(allow_soft_placement=True,
                                    graph_options=tf.compat.v1.GraphOptions(rewrite_options=rewrite))


def with_session_config(config: RunConfig) -> RunConfig:
    """`config` when it has a session_config, else a copy carrying get_default_session_config(): 2.15's Estimator
    made its config so (maybe_overwrite_model_dir_and_session_config) and read `_session_config` from it. The
    default is not the program's setting, so it is not logged as ignored."""
    if config.session_config is not None:
        return config
    default = get_default_session_config()
    new = copy.copy(config)
    object.__setattr__(new, "_session_config", default)
    object.__setattr__(new, "_default_session_config", default)
    return new


_DEVICE_FILTERS = {
    TaskType.MASTER: ["/job:ps", "/job:master"],
    TaskType.CHIEF: ["/job:ps", "/job:chief"],
    TaskType.PS: ["/job:ps", "/job:worker", "/job:chief", "/job:master"],
}


def distributed_session_config(task_type: str | None, task_id: int | None) -> tf.compat.v1.ConfigProto | None:
    """The session config 2.15's RunConfig gave a task of a between-graph cluster: the default one, with device
    filters so that the chief/master and each worker talk only to the parameter servers (and the ps to them all);
    None for an evaluator or another task type."""
    filters = (["/job:ps", f"/job:worker/task:{task_id}"] if task_type == TaskType.WORKER
               else _DEVICE_FILTERS.get(task_type))
    if filters is None:
        return None
    config = get_default_session_config()
    config.device_filters.extend(filters)
    return config


class _Stored:
    """A RunConfig setting kept in the instance's `_<name>` and read through a property, 2.15's layout.

    2.15's RunConfig kept model_dir and session_config in `_model_dir` and `_session_config` behind read-only
    properties, so programs set `config._session_config` to change it and subclasses override the property
    (`model_dir` computed). A dataclass field whose default is this descriptor is stored there too.
    """

    def __init__(self, default: Any = None):
        self._default = default
        self._name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        if instance is None:
            return self._default  # the dataclass's default for the field
        return vars(instance).get(f"_{self._name}", self._default)

    def __set__(self, instance: Any, value: Any) -> None:
        object.__setattr__(instance, f"_{self._name}", value)


def _storing_setter(name: str) -> Any:
    def store(self: Any, value: Any) -> None:
        object.__setattr__(self, f"_{name}", value)

    return store


@dataclasses.dataclass(frozen=True)
class RunConfig:
    """Where a run writes and how often, and which hardware runs it: tf.estimator 2.15's RunConfig and
    TPUEstimator's (tpu_config, evaluation_master, master, cluster), plus this project's fields.

    Checkpoints: every 600 seconds when neither save_checkpoints_steps nor save_checkpoints_secs is
    given; setting one clears the other; both None (or 0) disables checkpoints, as in 2.15.
    Cluster properties (is_chief, task_type, ...) come from TF_CONFIG as in 2.15.
    This project's fields (keyword only): `jit_compile` compiles every replica step with XLA, as a
    TPU would; `num_gpus` picks local GPUs (None: every visible one, 0: the CPU, N: the first N);
    `precision` is None (not set: params["precision"], else float32), "float32" or "bfloat16" (Keras's
    mixed_bfloat16 around every model_fn call: estimators/precision.py);
    `save_input_position` records the train stream's position in checkpoints (a resumed run replays it);
    `execution` picks the path that runs model_fn: None (chosen from the program: estimators/path_choice.py),
    "graph" (tf.Graph and sessions, as tf.estimator) or "tf2" (tf.function under tf.distribute).
    """

    # 2.15's tpu.RunConfig ran in-graph: evaluation follows the training master, no device filters (TPURunConfig)
    _IN_GRAPH: ClassVar[bool] = False

    model_dir: str | None = _Stored()  # in `_model_dir`, as 2.15 kept it
    tf_random_seed: int | None = None
    save_summary_steps: int | None = 100
    save_checkpoints_steps: int | None = USE_DEFAULT
    save_checkpoints_secs: float | None = USE_DEFAULT
    session_config: Any = _Stored()  # in `_session_config`, as 2.15 kept it
    keep_checkpoint_max: int | None = 5
    keep_checkpoint_every_n_hours: float = 10000
    log_step_count_steps: int | None = 100
    train_distribute: tf.distribute.Strategy | None = None
    device_fn: Any = None
    protocol: str | None = None
    eval_distribute: tf.distribute.Strategy | None = None
    experimental_distribute: Any = None
    experimental_max_worker_delay_secs: int | None = None
    session_creation_timeout_secs: float = 7200
    checkpoint_save_graph_def: bool = True
    _: dataclasses.KW_ONLY
    tpu_config: TPUConfig = dataclasses.field(default_factory=TPUConfig)
    evaluation_master: str | None = None
    master: str | None = None
    cluster: Any = None
    jit_compile: bool = False
    num_gpus: int | None = None
    precision: str | None = None
    save_input_position: bool = True
    execution: str | None = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A subclass may override a setting with a read-only property, as 2.15 allowed (its settings were
        read-only properties over `_<name>`): construction then stores the given value in `_<name>`, and the
        subclass's property decides what the config reports."""
        super().__init_subclass__(**kwargs)
        for name in _FIELDS:
            attribute = vars(cls).get(name)
            if isinstance(attribute, property) and attribute.fset is None:
                setattr(cls, name, property(attribute.fget, _storing_setter(name), attribute.fdel, attribute.__doc__))

    def __post_init__(self) -> None:
        info = getattr(_REPLACING, "info", None) or cluster_info()
        object.__setattr__(self, "_cluster_info", info)
        self._resolve_model_dir(info)
        self._resolve_checkpoint_intervals()
        self._resolve_distribution()
        self._resolve_masters(info)
        self._validate()
        self._log_ignored()
        self._resolve_session_config()

    # -- resolution (2.15's rules) -----------------------------------------------------------------
    def _set(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)

    def _resolve_model_dir(self, info: ClusterInfo) -> None:
        model_dir = self.model_dir
        if hasattr(model_dir, "__fspath__"):
            model_dir = os.fspath(model_dir)
        if model_dir is not None and (not isinstance(model_dir, str) or not model_dir):
            raise ValueError(f"model_dir should be non-empty: model_dir must be a non-empty path (a string), got "
                             f"{model_dir!r}.")
        if info.model_dir and model_dir and info.model_dir != model_dir:
            raise ValueError(
                "`model_dir` provided in RunConfig construct, if set, must have the same value as the model_dir in "
                f"TF_CONFIG. RunConfig(model_dir={model_dir!r}) differs from TF_CONFIG's model_dir "
                f"{info.model_dir!r}; set one of them, or the same folder in both."
            )
        self._set("model_dir", model_dir or info.model_dir)

    def _resolve_checkpoint_intervals(self) -> None:
        steps, secs = self.save_checkpoints_steps, self.save_checkpoints_secs
        if steps is USE_DEFAULT and secs is USE_DEFAULT:
            steps, secs = None, 600
        elif secs is USE_DEFAULT:
            secs = None
        elif steps is USE_DEFAULT:
            steps = None
        elif steps is not None and secs is not None:
            raise ValueError(
                "`save_checkpoints_steps` and `save_checkpoints_secs` cannot be both set: set at most one of them "
                f"(got {steps!r} and {secs!r})."
            )
        _check_int("save_checkpoints_steps", steps, 0)
        _check_number("save_checkpoints_secs", secs, 0, strict=False)
        # 2.15 saved only when one of them is non-zero: 0 disables, like None.
        self._set("save_checkpoints_steps", steps or None)
        self._set("save_checkpoints_secs", secs or None)

    def _resolve_distribution(self) -> None:
        distribute = self.experimental_distribute
        if distribute is None:
            return
        if getattr(distribute, "remote_cluster", None):
            raise ValueError("experimental_distribute.remote_cluster (a standalone client) is not supported; "
                             "run the same program on every worker with TF_CONFIG set instead.")
        for name in ("train_distribute", "eval_distribute"):
            value = getattr(distribute, name, None)
            if value is not None:
                if getattr(self, name) is not None and getattr(self, name) is not value:
                    raise ValueError(f"Set either {name} or experimental_distribute.{name}, not both.")
                self._set(name, value)

    def _resolve_masters(self, info: ClusterInfo) -> None:
        master, cluster = self.master, self.cluster
        # A master from TF_CONFIG (its cluster, or session_master) serves between-graph training; evaluation stays
        # local (''), as 2.15's RunConfig left it. A master the program or a resolver names is evaluation's too,
        # and under TPURunConfig any master is, as TPUEstimator's RunConfig made it.
        follow = self._IN_GRAPH or master is not None or cluster is not None
        if cluster is not None:
            try:
                cluster_master = cluster.master()
            except Exception:  # a resolver that cannot name its master yet: resolution reports it later
                cluster_master = None
            if master is not None and master != cluster_master:
                raise ValueError(f"Set either master ({master!r}) or cluster, not both: the cluster names the master.")
            master = cluster_master if cluster_master is not None else master
        elif master is None:
            master = info.master
        self._set("master", master)
        if self.evaluation_master is None:
            evaluation_master = info.evaluation_master
            if not evaluation_master and info.task_type != EVALUATOR and follow:
                evaluation_master = master
            self._set("evaluation_master", evaluation_master)

    def _resolve_session_config(self) -> None:
        """2.15's default session_config for between-graph training: set only without a strategy, when TF_CONFIG
        has a cluster and session_config was not given (device filters per task type: distributed_session_config)."""
        if (self._IN_GRAPH or self.session_config is not None or self.train_distribute is not None
                or self.eval_distribute is not None or self.experimental_distribute is not None
                or not self.cluster_spec.jobs):
            return
        default = distributed_session_config(self.task_type, self.task_id)
        self._set("session_config", default)
        self._set("_default_session_config", default)  # not the program's: not logged as ignored

    # -- validation ---------------------------------------------------------------------------------
    def _validate(self) -> None:
        if self.tf_random_seed is not None and not _is_int(self.tf_random_seed):
            raise ValueError(f"tf_random_seed must be integer (or None), got {self.tf_random_seed!r}.")
        _check_int("save_summary_steps", self.save_summary_steps, 0)
        _check_int("log_step_count_steps", self.log_step_count_steps, 1)
        _check_int("keep_checkpoint_max", self.keep_checkpoint_max, 0)  # None or 0 keeps every checkpoint
        _check_number("keep_checkpoint_every_n_hours", self.keep_checkpoint_every_n_hours, 0, strict=True)
        _check_number("session_creation_timeout_secs", self.session_creation_timeout_secs, 0, strict=True,
                      allow_none=False)
        delay = self.experimental_max_worker_delay_secs
        if delay is not None and not _is_int(delay):
            raise ValueError(f"experimental_max_worker_delay_secs must be an integer if set, got {delay!r}.")
        _check_int("experimental_max_worker_delay_secs", delay, 0)
        if self.session_config is not None and not isinstance(self.session_config, tf.compat.v1.ConfigProto):
            raise ValueError("session_config must be instance of ConfigProto (tf.compat.v1.ConfigProto), got "
                             f"{type(self.session_config).__name__}.")
        if self.device_fn is not None and (not callable(self.device_fn) or _arg_names(self.device_fn) != ["op"]):
            raise ValueError('device_fn must be callable with exactly one argument "op".')
        if self.protocol not in (None, "grpc", "grpc+verbs"):
            raise ValueError(f"protocol must be None, 'grpc' or 'grpc+verbs', got {self.protocol!r}.")
        if not isinstance(self.tpu_config, TPUConfig):
            raise ValueError(f"tpu_config must be a TPUConfig, got {type(self.tpu_config).__name__}.")
        for name in ("train_distribute", "eval_distribute"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, tf.distribute.Strategy):
                raise ValueError(f"{name} must be a tf.distribute.Strategy, got {type(value).__name__}.")
            if value is not None and type(value) is tf.distribute.experimental.ParameterServerStrategy:
                raise ValueError(
                    f"{name}: TF2's ParameterServerStrategy needs a ClusterCoordinator, which an Estimator does not "
                    "run. Please use `tf.compat.v1.distribute.experimental.ParameterServerStrategy` for parameter "
                    "server strategy with estimator, or MultiWorkerMirroredStrategy.")
        for name in ("jit_compile", "save_input_position"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be True or False, got {getattr(self, name)!r}.")
        if self.execution not in (None, "graph", "tf2"):
            raise ValueError(f"execution must be None (chosen from the program), 'graph' or 'tf2', got "
                             f"{self.execution!r}.")
        self._validate_devices()

    def _validate_devices(self) -> None:
        if self.num_gpus is not None:
            if not _is_int(self.num_gpus) or self.num_gpus < 0:
                raise ValueError(f"num_gpus must be None (every visible GPU), 0 (the CPU) or a positive integer, "
                                 f"got {self.num_gpus!r}.")
            if self.train_distribute is not None:
                raise ValueError(f"Set either num_gpus ({self.num_gpus}) or train_distribute, not both: "
                                 "train_distribute already names the devices.")
        precision_policy.checked(self.precision, "RunConfig(precision)")

    def _log_ignored(self) -> None:
        if self.session_config is not None and self.session_config is not getattr(self, "_default_session_config",
                                                                                      None):
            log_ignored("RunConfig(session_config=...)", "TF2 has no sessions. Use tf.config.threading (thread "
                        "pools), tf.config.experimental.set_memory_growth (GPU memory) and "
                        "tf.config.set_soft_device_placement instead.")
        if self.keep_checkpoint_every_n_hours not in (10000, None):
            log_ignored("RunConfig(keep_checkpoint_every_n_hours=...)", "only the newest keep_checkpoint_max "
                        "checkpoints are kept; older ones are not kept by age.")
        if self.device_fn is not None:
            log_ignored("RunConfig(device_fn=...)", "TF2 places ops through tf.distribute; choose devices with "
                        "train_distribute/eval_distribute or num_gpus.")
        if self.protocol is not None:
            log_ignored("RunConfig(protocol=...)", "the engine starts no TF1 servers; tf.distribute uses gRPC.")
        if self.experimental_max_worker_delay_secs is not None:
            log_ignored("RunConfig(experimental_max_worker_delay_secs=...)", "workers start together: "
                        "MultiWorkerMirroredStrategy trains synchronously.")
        if self.session_creation_timeout_secs != 7200:
            log_ignored("RunConfig(session_creation_timeout_secs=...)", "TF2 has no sessions to create.")

    # -- 2.15's properties ------------------------------------------------------------------------------
    @property
    def checkpoint_every_secs(self) -> float | None:
        """Seconds between time-based checkpoints: None when saving by steps, math.inf when checkpoints are disabled."""
        if self.save_checkpoints_steps is not None:
            return None
        return self.save_checkpoints_secs if self.save_checkpoints_secs is not None else math.inf

    @property
    def saves_checkpoints(self) -> bool:
        """False when both intervals are None or 0: 2.15 then wrote no checkpoint at all, not even at the end."""
        return self.save_checkpoints_steps is not None or self.save_checkpoints_secs is not None

    @property
    def cluster_spec(self) -> tf.train.ClusterSpec:
        return self._cluster_info.cluster_spec

    @property
    def task_type(self) -> str:
        return self._cluster_info.task_type

    @property
    def task_id(self) -> int:
        return self._cluster_info.task_id

    @property
    def is_chief(self) -> bool:
        return self._cluster_info.is_chief

    @property
    def num_worker_replicas(self) -> int:
        return self._cluster_info.num_worker_replicas

    @property
    def num_ps_replicas(self) -> int:
        return self._cluster_info.num_ps_replicas

    @property
    def global_id_in_cluster(self) -> int | None:
        return self._cluster_info.global_id_in_cluster

    @property
    def service(self) -> dict | None:
        return self._cluster_info.service

    def replace(self, **kwargs: Any) -> RunConfig:
        """A copy with some settings changed, as 2.15's RunConfig.replace.

        Only 2.15's replaceable settings (plus tpu_config and this project's fields) may change;
        giving one checkpoint interval clears the other.
        """
        unknown = sorted(set(kwargs) - set(_REPLACEABLE))
        if unknown:
            raise ValueError(f"Replacing {', '.join(unknown)} is not supported. Allowed: {', '.join(_REPLACEABLE)}.")
        steps_given, secs_given = "save_checkpoints_steps" in kwargs, "save_checkpoints_secs" in kwargs
        if steps_given and not secs_given and kwargs["save_checkpoints_steps"] is not None:
            kwargs["save_checkpoints_secs"] = None
        if secs_given and not steps_given and kwargs["save_checkpoints_secs"] is not None:
            kwargs["save_checkpoints_steps"] = None
        # A copy, as 2.15's replace made it: a subclass (with its own __init__) and attributes a program set on
        # the config stay; the copy keeps this config's cluster and is checked again.
        new = copy.copy(self)
        for name, value in kwargs.items():
            object.__setattr__(new, name, value)
        _REPLACING.info = self._cluster_info
        try:
            new.__post_init__()
        finally:
            _REPLACING.info = None
        return new


_FIELDS = frozenset(f.name for f in dataclasses.fields(RunConfig))


def _set_attribute(self: RunConfig, name: str, value: Any) -> None:
    """RunConfig's settings are fixed once made (replace() makes a changed copy); other attributes a program
    attaches to a config (2.15's RunConfig took any) are its own."""
    if name in _FIELDS:
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}: a RunConfig's settings are fixed; "
                                              f"use config.replace({name}=...) for a changed copy")
    object.__setattr__(self, name, value)


RunConfig.__setattr__ = _set_attribute  # set after the class: a frozen dataclass may not define its own


def _arg_names(fn: Any) -> list[str]:
    try:
        return [p.name for p in inspect.signature(fn).parameters.values()
                if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    except (TypeError, ValueError):
        return []


class TPURunConfig(RunConfig):  # no dataclass decorator: it would replace RunConfig's 2.15-style __setattr__
    """tf.estimator.tpu.RunConfig: the same settings, read as 2.15's TPU subclass read them for in-graph
    training: evaluation_master defaults to master (TF_CONFIG's too) except on an evaluator task, and a
    TF_CONFIG cluster adds no device filters to the session config."""

    _IN_GRAPH: ClassVar[bool] = True
