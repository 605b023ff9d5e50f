"""Checkpointer: one model_dir's TF1 name-based checkpoints, saved verified and restored all-or-nothing.

Files are what tf.estimator wrote: `model.ckpt-<step>.index` / `.data-*` with the variables' TF1 names as
keys (or, with `object_keys`, a Keras estimator's object-based keys: object_keys.py), and the text
`checkpoint` state file. Either format is read by TF1 name (an object-based checkpoint through its object
graph's full names). A save is written, checked complete, and only then named in
the state file; a missing or unreadable state file or a damaged newest checkpoint falls back to the
newest complete one with a warning, never to step 0. A save whose variables hold NaN or Inf is refused
(finite.py). A restore checks every name, shape and dtype (and reads every value) before it assigns
anything, and warns when the values are not finite.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

import tensorflow as tf

from estimators import log as logging
from estimators.checkpoint import files, finite, object_keys, state_file, storage, writer

GLOBAL_STEP = "global_step"
_OBJECT_SUFFIX = "/.ATTRIBUTES/VARIABLE_VALUE"  # how object-based checkpoints key a variable's value
_LISTED = 10  # names shown per kind in a mismatch error

Assignment = tf.Variable | Sequence[tf.Variable]  # one checkpoint value may initialise several variables
T = TypeVar("T")
NEWEST_TRIES = 5  # checkpoints read_newest() tries when each is rotated away before it is read


class CheckpointMismatchError(ValueError):
    """A checkpoint lacks variables the model needs, or holds them with another shape or dtype."""


class CheckpointCorruptError(ValueError):
    """A checkpoint's values cannot be read (truncated or damaged files)."""


class CheckpointGoneError(FileNotFoundError):
    """A chosen checkpoint was deleted before it was read (rotated away by a trainer): not damage."""


class _Rotated(Exception):
    """A candidate checkpoint was deleted while latest() checked it: choose again."""


class CheckpointSaveError(RuntimeError):
    """Writing a checkpoint failed; the state file still names the previous one."""


class NoUsableCheckpointError(RuntimeError):
    """model_dir holds checkpoints, but none of them is complete: training must not start over silently."""


class Checkpointer:
    """Saves, finds and restores the checkpoints of one model_dir (local, gs:// or a mounted Drive)."""

    def __init__(self, model_dir: str, max_to_keep: int | None = 5, is_chief: bool = True):
        if not model_dir:
            raise ValueError("Checkpointer needs a model_dir.")
        self.model_dir = model_dir.rstrip("/") if len(model_dir) > 1 else model_dir
        self.max_to_keep = max_to_keep or None  # 0 and None: keep every checkpoint
        self.is_chief = is_chief
        self._cleaned = False
        self._checked_finite: set[str] = set()  # checkpoints this object published after the finiteness check
        self.object_keys: object_keys.ObjectKeys | None = None  # set: saves are object-based (a Keras estimator's)

    # -- finding -------------------------------------------------------------------------------------
    def checkpoints(self) -> list[str]:
        """The complete checkpoints up to latest() (state file's or found by listing), oldest first."""
        candidates = _preference(state_file.read(self.model_dir), files.find_checkpoints(self.model_dir))
        return sorted((p for p in candidates if files.problem(p) is None), key=_step_key)

    def latest(self) -> str | None:
        """The newest complete checkpoint: the state file's, else the one before it, else by listing.

        None only when model_dir demonstrably holds no checkpoint (its listing succeeded and shows none).
        Raises NoUsableCheckpointError when there are checkpoints but none is complete (starting over would
        overwrite the run), storage.ModelDirUnreadableError when the storage keeps failing to read model_dir.
        """
        for attempt in range(1, NEWEST_TRIES + 1):  # again when a trainer rotates a candidate away meanwhile
            try:
                return self._latest()
            except _Rotated as rotated:
                if attempt == NEWEST_TRIES:
                    raise _gone_error(str(rotated)) from None
        raise AssertionError("unreachable")

    def _latest(self) -> str | None:
        state = state_file.read(self.model_dir)
        listed = files.find_checkpoints(self.model_dir)
        damaged = []
        for candidate in _preference(state, listed):
            try:
                reason = files.problem(candidate)
            except tf.errors.NotFoundError:
                reason = "deleted while being checked"
            if reason is not None and _gone(candidate) and (
                    candidate in listed or state_file.read(self.model_dir) != state):
                raise _Rotated(candidate)  # listed or named, then deleted while a trainer saved a newer one
            if reason is not None:
                logging.warning("Checkpoint %s is incomplete or damaged (%s); trying the previous one.",
                                candidate, reason)
                damaged.append(f"{candidate} ({reason})")
                continue
            if state.problem is not None:
                logging.warning("The checkpoint state file %s is %s; using the newest complete checkpoint found "
                                "by listing model_dir: %s", state_file.path(self.model_dir), state.problem, candidate)
            return candidate
        if damaged:
            raise NoUsableCheckpointError(
                f"model_dir {self.model_dir} has checkpoints (named in its `checkpoint` file or found there), but "
                f"none is complete: {'; '.join(damaged)}. Refusing to start over and overwrite this run: restore "
                "the files, or delete them and the `checkpoint` file to start again from step 0.")
        if state.problem not in (None, "missing"):
            logging.warning("The checkpoint state file %s is %s and model_dir holds no checkpoint; starting fresh.",
                            state_file.path(self.model_dir), state.problem)
        return None

    def read_newest(self, read: Callable[[str], T], chosen: str | None = None) -> T:
        """read(the newest complete checkpoint); when that one is deleted before read() is done with it (a
        trainer beside this process rotated it away, keep_checkpoint_max), chooses the newest again and retries.

        As tf.estimator's continuous evaluation, which evaluated whatever was newest. `chosen` is a checkpoint
        already picked with latest(). A failure of read() while its checkpoint still exists is raised as is;
        CheckpointGoneError after NEWEST_TRIES checkpoints in a row went away (the trainer saves faster than
        one read). Raises ValueError when model_dir holds no checkpoint.
        """
        path = chosen or self.latest()
        for attempt in range(1, NEWEST_TRIES + 1):
            if path is None:
                raise ValueError(f"No checkpoint to read in model_dir {self.model_dir}.")
            try:
                return read(path)
            except Exception:
                if not _gone(path):
                    raise
                if attempt == NEWEST_TRIES:
                    raise CheckpointGoneError(
                        f"{NEWEST_TRIES} checkpoints in a row were deleted from {self.model_dir} before they could be "
                        f"read, the last {path}: a trainer rotates them away (keep_checkpoint_max) faster than they "
                        "are read. Raise the trainer's keep_checkpoint_max, or save less often.") from None
                newer = self.latest()
                logging.warning("Checkpoint %s was deleted while being read (rotated away by a trainer: "
                                "keep_checkpoint_max); reading the newest one, %s.", path, newer)
                path = newer
        raise AssertionError("unreachable")

    # -- saving --------------------------------------------------------------------------------------
    def save(self, variables: Mapping[str, tf.Variable], step: int) -> str | None:
        """Writes `variables` (checkpoint name -> variable) as model.ckpt-<step>; returns the prefix.

        Write, fsync (local paths), check complete, then name it in the state file and delete checkpoints
        beyond max_to_keep. A non-chief writes nothing and returns None. Raises CheckpointSaveError (the
        previous checkpoint stays the latest) when the filesystem fails, finite.NonFiniteCheckpointError
        (nothing written) when a floating-point variable holds NaN or Inf.
        """
        if self.is_chief and not variables:
            raise ValueError("save() got no variables to write.")
        written, extra = dict(variables), []
        if self.object_keys is not None and self.is_chief:
            layout = self.object_keys.checkpoint(variables)
            written, extra = layout.values, [object_keys.graph_saveable(layout.graph)]
        return self.publish(step, lambda prefix: writer.write(written, prefix, extra),
                            lambda prefix: _check_written(prefix, written),
                            nonfinite=lambda: finite.nonfinite_variables(variables))

    def publish(self, step: int, write: Callable[[str], None], check: Callable[[str], None] | None = None,
                nonfinite: Callable[[], list[str]] | None = None) -> str | None:
        """save()'s sequence around any writer: `nonfinite()` (names of variables holding NaN or Inf: any, and
        nothing is written), `write(prefix)` (a Saver in a session, say), fsync, `check(prefix)` (default: the
        files are complete), publish in the state file, rotate. Same guarantees as save()."""
        if not self.is_chief:
            return None
        bad = nonfinite() if nonfinite is not None else []
        if bad:
            raise self.nonfinite_error(step, bad)
        prefix = os.path.join(self.model_dir, f"model.ckpt-{int(step)}")
        try:
            tf.io.gfile.makedirs(self.model_dir)
            if not self._cleaned:
                for leftover in files.remove_leftovers(self.model_dir):
                    logging.info("Removed %s, left by an interrupted save.", leftover)
                self._cleaned = True
            published = self._published()
            if prefix in published:  # re-saving a step: unpublish it first, so a crash leaves the one before
                published.remove(prefix)
                if published:
                    state_file.write(self.model_dir, published)
            storage.write(self.model_dir, f"checkpoint {prefix}", lambda: write(prefix))
            if files.is_local(self.model_dir):
                files.fsync([prefix + ".index", *files.data_files(prefix)], self.model_dir)
            (check or _check_complete)(prefix)
            kept = [*published, prefix]
            dropped = kept[: -self.max_to_keep] if self.max_to_keep else []
            kept = kept[len(dropped):]
            state_file.write(self.model_dir, kept)
            files.fsync([state_file.path(self.model_dir)], self.model_dir)
            if nonfinite is not None:
                self._checked_finite.add(prefix)
        except (tf.errors.OpError, OSError, ValueError, storage.ModelDirUnreadableError) as err:
            self._discard(prefix)  # (CheckpointCorruptError is a ValueError)
            try:
                previous = self._published()
            except storage.ModelDirUnreadableError:
                previous = []
            raise CheckpointSaveError(
                f"Could not save the checkpoint for step {step} in {self.model_dir}: {files.first_line(err)}. "
                + (f"The latest checkpoint is still {previous[-1]}." if previous else "No checkpoint was written.")
            ) from None
        for old in dropped:
            try:
                files.remove(old)
            except tf.errors.OpError as err:  # the new checkpoint is published: a failed delete is only litter
                logging.warning("Could not delete old checkpoint %s: %s", old, files.first_line(err))
        return prefix

    def save_error(self, what: str, err: BaseException) -> CheckpointSaveError:
        """The CheckpointSaveError for a failed write beside the checkpoints (graph.pbtxt, say), latest named.

        Removes what the failed write left (0-byte temporary files of a full disk) on a best-effort basis.
        """
        try:
            files.remove_leftovers(self.model_dir)
            previous = self._published()
        except (tf.errors.OpError, storage.ModelDirUnreadableError):
            previous = []
        return CheckpointSaveError(
            f"Could not write {what} in {self.model_dir}: {files.first_line(err)}. "
            + (f"The latest checkpoint is still {previous[-1]}." if previous else "No checkpoint was written."))

    def nonfinite_error(self, step: int, bad: list[str]) -> finite.NonFiniteCheckpointError:
        """The error refusing the checkpoint for `step` because variables `bad` hold NaN or Inf."""
        return finite.NonFiniteCheckpointError(finite.diverged_message(
            f"Training diverged: NaN or Inf in {len(bad)} variable(s) ({finite.named(bad)})", step,
            self.resume_note()))

    def resume_note(self) -> str:
        """The divergence errors' sentence naming the newest checkpoint with finite values (latest_finite())."""
        try:
            latest, nonfinite = self._latest_finite()
        except (tf.errors.OpError, storage.ModelDirUnreadableError) as err:
            return f"The checkpoints in {self.model_dir} could not be read ({files.first_line(err)})."
        return finite.resume_note(latest, all_nonfinite=latest is None and bool(nonfinite))

    def latest_finite(self) -> str | None:
        """The newest published checkpoint whose values are all finite, made the latest.

        Newer ones holding NaN or Inf (saved by an earlier version of this code, or another program) are
        dropped from the state file by the chief, with a warning; their files stay. Checkpoints this object
        published after the finiteness check are not read again; others are read in full (on divergence only).
        """
        return self._latest_finite()[0]

    def _latest_finite(self) -> tuple[str | None, list[str]]:
        published = self._published()
        nonfinite = []
        for index in range(len(published) - 1, -1, -1):
            candidate = published[index]
            if candidate not in self._checked_finite:
                try:
                    bad = finite.nonfinite_in_checkpoint(candidate)
                except (tf.errors.OpError, ValueError):
                    continue  # damaged or gone: latest() skips it with its own warning
                if bad:
                    nonfinite.append(candidate)
                    continue
            if nonfinite and self.is_chief:
                state_file.write(self.model_dir, published[:index + 1])
                logging.warning("Checkpoint(s) %s hold NaN or Inf (saved after training diverged); %s is the "
                                "latest checkpoint again. Their files are kept: delete them when done with them.",
                                ", ".join(nonfinite), candidate)
            return candidate, nonfinite
        return None, nonfinite

    def _published(self) -> list[str]:
        """The checkpoints a save keeps track of: the state file's list (or, without one, the complete ones)."""
        state = state_file.read(self.model_dir)
        if state.problem is None:
            return list(state.listed)
        return self.checkpoints()

    def _discard(self, prefix: str) -> None:
        """Best-effort removal of a failed save's files (never the published ones: the state file is unchanged)."""
        try:
            if prefix not in self._published():
                files.remove(prefix)
            files.remove_leftovers(self.model_dir)
        except (tf.errors.OpError, storage.ModelDirUnreadableError):
            pass

    # -- reading -------------------------------------------------------------------------------------
    def contents(self, path: str) -> dict[str, tuple[tuple[int, ...], tf.DType]]:
        """{name: (shape, dtype)} of every variable stored in the checkpoint at `path`."""
        return contents(path)

    def restorable(self, path: str) -> dict[str, tuple[tuple[int, ...], tf.DType]]:
        """contents(), plus each object-based key's variable name (its TF1 name): what restore() takes."""
        return restorable(path)

    def key_of(self, path: str, name: str) -> str | None:
        """The key holding variable `name` in the checkpoint: the name itself, or an object-based checkpoint's key
        for that TF1 name; None when it holds neither."""
        stored = contents(path)
        return name if name in stored else _aliases(path, stored).get(name)

    def global_step(self, path: str) -> int:
        """The global step stored in a checkpoint (tf.estimator's `global_step`, or an object-based one's)."""
        stored = contents(path)
        for key in (GLOBAL_STEP, GLOBAL_STEP + _OBJECT_SUFFIX):
            if key in stored:
                return int(_reader(path).get_tensor(key))
        key = object_keys.full_name_keys(_reader(path)).get(GLOBAL_STEP)
        if key is not None:  # 2.15 model_to_estimator's estimator_global_step
            return int(_reader(path).get_tensor(key))
        raise ValueError(f"Checkpoint {path} has no `{GLOBAL_STEP}` variable; it was not written by an Estimator.")

    def restore(self, path: str, assignments: Mapping[str, Assignment],
                assign: Callable[[tf.Variable, object], None] | None = None) -> None:
        """Assigns checkpoint values to variables: {checkpoint name: variable (or several)}.

        Every name, shape and dtype is checked and every value read first; on any problem nothing is
        assigned and one CheckpointMismatchError (or CheckpointCorruptError) says what is wrong. A name may
        be a variable's TF1 name in an object-based checkpoint (restorable()). `assign(variable, value)`:
        how (default variable.assign; a graph's variables are loaded into a session).
        """
        stored = contents(path)
        keys = _aliases(path, stored)
        stored = {**{name: stored[key] for name, key in keys.items()}, **stored}
        missing, mismatched = [], []
        for name, targets in assignments.items():
            if name not in stored:
                missing.append(name)
                continue
            shape, dtype = stored[name]
            for var in _as_list(targets):
                var_shape, var_dtype = tuple(tf.TensorShape(var.shape).as_list()), tf.as_dtype(var.dtype)
                if var_shape != shape or var_dtype != dtype:
                    mismatched.append(f"{name} (checkpoint {list(shape)} {dtype.name}, model {list(var_shape)} "
                                      f"{var_dtype.name})")
        if missing or mismatched:
            raise CheckpointMismatchError(_mismatch_message(path, stored, missing, mismatched))
        reader = _reader(path)
        try:
            values = {name: reader.get_tensor(keys.get(name, name)) for name in assignments}
        except (tf.errors.OpError, IndexError, ValueError) as err:
            if _gone(path):
                raise _gone_error(path) from None
            raise CheckpointCorruptError(
                f"Checkpoint {path} is damaged: {files.first_line(err)}. Nothing was restored; use an earlier "
                "checkpoint or delete this one.") from None
        bad = finite.nonfinite_values(values, {name: stored[name][1] for name in values})
        if bad:
            finite.warn_restored(path, bad)
        for name, targets in assignments.items():
            for var in _as_list(targets):
                if assign is None:
                    var.assign(values[name])
                else:
                    assign(var, values[name])


def contents(path: str) -> dict[str, tuple[tuple[int, ...], tf.DType]]:
    """{name: (shape, dtype)} of every variable stored in the checkpoint at `path`."""
    reader = _reader(path)
    dtypes = reader.get_variable_to_dtype_map()
    return {name: (tuple(shape), dtypes[name])
            for name, shape in reader.get_variable_to_shape_map().items() if name != files.OBJECT_GRAPH_KEY}


def restorable(path: str) -> dict[str, tuple[tuple[int, ...], tf.DType]]:
    """contents(path), plus an object-based checkpoint's variables under their TF1 names (their full names)."""
    stored = contents(path)
    return {**stored, **{name: stored[key] for name, key in _aliases(path, stored).items()}}


def _aliases(path: str, stored: Mapping) -> dict[str, str]:
    """{TF1 name: checkpoint key} for the keys of an object-based checkpoint that are not names themselves."""
    return {name: key for name, key in object_keys.full_name_keys(_reader(path)).items()
            if key in stored and name not in stored}


def _preference(state: state_file.State, listed: list[str]) -> list[str]:
    """Checkpoints to try, best first: the state file's latest, then older ones (state file's or listed)."""
    if state.latest is None:
        return sorted(listed, key=_step_key, reverse=True)
    newest = files.step_of(state.latest)
    older = [p for p in dict.fromkeys([*state.listed, *listed]) if p != state.latest
             and (newest is None or files.step_of(p) is None or files.step_of(p) < newest)]
    return [state.latest, *sorted(older, key=_step_key, reverse=True)]


def _step_key(prefix: str) -> tuple[bool, int]:
    step = files.step_of(prefix)
    return step is not None, step or 0


def _as_list(targets: Assignment) -> list:
    return list(targets) if isinstance(targets, (list, tuple)) else [targets]


def _reader(path: str):
    try:
        return tf.train.load_checkpoint(path)
    except (tf.errors.OpError, ValueError) as err:
        if _gone(path):
            raise _gone_error(path) from None
        raise CheckpointCorruptError(f"Cannot read checkpoint {path}: {files.first_line(err)}") from None


def _gone(path: str) -> bool:
    """Whether checkpoint `path` no longer exists (its index file is gone); False when that cannot be told."""
    try:
        return not tf.io.gfile.exists(path + ".index")
    except tf.errors.OpError:
        return False


def _gone_error(path: str) -> CheckpointGoneError:
    return CheckpointGoneError(
        f"Checkpoint {path} no longer exists: it was deleted after it was chosen (a trainer keeping "
        "keep_checkpoint_max checkpoints rotates old ones away). It is not damaged; read the newest checkpoint "
        "instead (Checkpointer.read_newest retries that way).")


def _check_complete(prefix: str) -> None:
    """Raises CheckpointCorruptError unless the files at prefix are a complete, readable checkpoint."""
    reason = files.problem(prefix)
    if reason is not None:
        raise CheckpointCorruptError(f"the written checkpoint {prefix} does not read back: {reason}")


def _check_written(prefix: str, variables: Mapping[str, tf.Variable]) -> None:
    """Raises CheckpointCorruptError unless the files at prefix are complete and hold exactly `variables`."""
    reason = files.problem(prefix)
    if reason is None:
        stored = contents(prefix)
        if set(stored) != set(variables):
            reason = f"it holds {len(stored)} variables, not the {len(variables)} written"
        for name, var in variables.items():
            var = writer.tf_variable(var)
            shape, dtype = tuple(tf.TensorShape(var.shape).as_list()), tf.as_dtype(var.dtype)
            if reason is None and stored.get(name) != (shape, dtype):
                reason = f"{name} was not written as {list(shape)} {dtype.name}"
                break
    if reason is not None:
        raise CheckpointCorruptError(f"the written checkpoint {prefix} does not read back: {reason}")


def _mismatch_message(path: str, stored: Mapping, missing: list[str], mismatched: list[str]) -> str:
    parts = [f"Checkpoint {path} does not match the model's variables:"]
    if missing:
        shown = ", ".join(missing[:_LISTED]) + (f", ... ({len(missing) - _LISTED} more)" if len(missing) > _LISTED
                                                 else "")
        parts.append(f"{len(missing)} missing: {shown}.")
    if mismatched:
        shown = "; ".join(mismatched[:_LISTED]) + (f"; ... ({len(mismatched) - _LISTED} more)"
                                                     if len(mismatched) > _LISTED else "")
        parts.append(f"{len(mismatched)} with another shape or dtype: {shown}.")
    if any(name.endswith(_OBJECT_SUFFIX) for name in stored):
        parts.append("It is an object-based checkpoint (keys end in /.ATTRIBUTES/VARIABLE_VALUE).")
    parts.append("Was it written by a different model_fn? Nothing was restored. Use a fresh model_dir for a new "
                 "model, or warm_start_from with vars_to_warm_start / var_name_to_prev_var_name to pick variables.")
    return " ".join(parts)


def checkpoint_at(path: str, purpose: str) -> str:
    """The checkpoint `path` names: a directory's newest complete one, or the prefix itself (ValueError if none).

    purpose completes "No checkpoint to ...", e.g. "warm-start from" or "evaluate".
    """
    path = os.fsdecode(path)
    if tf.io.gfile.isdir(path):
        latest = Checkpointer(path, is_chief=False).latest()
        if latest is None:
            raise ValueError(f"No checkpoint to {purpose} in directory {path}.")
        return latest
    if not tf.io.gfile.exists(path + ".index"):
        raise ValueError(f"No checkpoint to {purpose} at {path} (no {path}.index, and not a directory).")
    return path
