"""What the compat programs share that is not part of the programs themselves: data and the report.

Each program stands in for a public TPUEstimator/Estimator program. The originals download their
data (or read it from GCS) and print their results; here this module makes small deterministic
copies of the data the originals expect, in the formats they expect (TFRecords, raw IDX files,
numpy arrays, CSV), and collects what a harness compares into one JSON line. It runs unchanged on
TF 2.15 + tensorflow-estimator (the reference) and on TF >= 2.16 with `estimators` (the port), so it
uses only numpy and TensorFlow APIs present in both, and never imports an estimator library.
"""

from __future__ import annotations

import glob
import gzip
import json
import logging
import os
import re
import struct

import numpy as np
import tensorflow as tf

FASHION_MNIST_DIR = os.environ.get("FASHION_MNIST_DIR", "/usr/share/datasets/fashion-mnist")
RESULT_PREFIX = "COMPAT_RESULT "
_IDX_NAMES = {
    "train": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
    "test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"),
}


# -- data ------------------------------------------------------------------------------------------------
def _read_idx(path: str) -> np.ndarray:
    with gzip.open(path, "rb") as f:
        raw = f.read()
    ndim = raw[3]
    dims = struct.unpack(f">{ndim}i", raw[4:4 + 4 * ndim])
    return np.frombuffer(raw, np.uint8, offset=4 + 4 * ndim).reshape(dims)


def fashion_mnist(split: str, start: int, count: int) -> tuple[np.ndarray, np.ndarray]:
    """Images uint8 [count, 28, 28] and labels uint8 [count] of Fashion-MNIST `split`, from `start`."""
    images_name, labels_name = _IDX_NAMES[split]
    images = _read_idx(os.path.join(FASHION_MNIST_DIR, images_name))[start:start + count]
    labels = _read_idx(os.path.join(FASHION_MNIST_DIR, labels_name))[start:start + count]
    if len(images) != count:
        raise ValueError(f"Fashion-MNIST {split} has no {count} examples from {start}.")
    return np.ascontiguousarray(images), np.ascontiguousarray(labels)


def write_tfrecords(path: str, images: np.ndarray, labels: np.ndarray) -> None:
    """tf.train.Examples with `image_raw` (bytes) and `label` (int64), as MNIST's convert_to_records wrote."""
    with tf.io.TFRecordWriter(path) as writer:
        for image, label in zip(images, labels, strict=True):
            example = tf.train.Example(features=tf.train.Features(feature={
                "image_raw": tf.train.Feature(bytes_list=tf.train.BytesList(value=[image.tobytes()])),
                "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[int(label)])),
            }))
            writer.write(example.SerializeToString())


def write_idx(directory: str, prefix: str, images: np.ndarray, labels: np.ndarray) -> None:
    """Uncompressed IDX files `{prefix}-images-idx3-ubyte` / `{prefix}-labels-idx1-ubyte` (MNIST's layout)."""
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, f"{prefix}-images-idx3-ubyte"), "wb") as f:
        f.write(struct.pack(">iiii", 2051, len(images), 28, 28) + images.tobytes())
    with open(os.path.join(directory, f"{prefix}-labels-idx1-ubyte"), "wb") as f:
        f.write(struct.pack(">ii", 2049, len(labels)) + labels.tobytes())


CENSUS_COLUMNS = ["age", "workclass", "fnlwgt", "education", "education_num", "marital_status", "occupation",
                  "relationship", "race", "gender", "capital_gain", "capital_loss", "hours_per_week",
                  "native_country", "income_bracket"]
_CENSUS_VOCAB = {
    "workclass": [" Private", " Self-emp-not-inc", " Local-gov", " State-gov", " Federal-gov", " ?"],
    "education": [" HS-grad", " Some-college", " Bachelors", " Masters", " Doctorate", " 11th", " 9th"],
    "marital_status": [" Married-civ-spouse", " Never-married", " Divorced", " Widowed", " Separated"],
    "occupation": [" Prof-specialty", " Craft-repair", " Exec-managerial", " Adm-clerical", " Sales",
                   " Other-service", " Machine-op-inspct", " Tech-support"],
    "relationship": [" Husband", " Not-in-family", " Own-child", " Unmarried", " Wife"],
    "race": [" White", " Black", " Asian-Pac-Islander", " Other"],
    "gender": [" Male", " Female"],
    "native_country": [" United-States", " Mexico", " Philippines", " Germany", " India", " Canada"],
}
_EDUCATION_YEARS = {" HS-grad": 9, " Some-college": 10, " Bachelors": 13, " Masters": 14, " Doctorate": 16,
                    " 11th": 7, " 9th": 5}


def write_census_csv(path: str, rows: int, seed: int) -> None:
    """Census-like CSV rows (the UCI Adult columns, no header); income follows a fixed noisy rule."""
    rng = np.random.RandomState(seed)
    with open(path, "w") as f:
        for _ in range(rows):
            row = {name: vocab[rng.randint(len(vocab))] for name, vocab in _CENSUS_VOCAB.items()}
            row["age"] = int(rng.randint(17, 80))
            row["fnlwgt"] = int(rng.randint(20000, 400000))
            row["education_num"] = _EDUCATION_YEARS[row["education"]]
            row["capital_gain"] = int(rng.choice([0] * 12 + [217, 517, 1502]))
            row["capital_loss"] = int(rng.choice([0] * 19 + [190]))
            row["hours_per_week"] = int(rng.randint(10, 70))
            score = (0.06 * (row["age"] - 40) + 0.35 * (row["education_num"] - 10)
                     + 0.04 * (row["hours_per_week"] - 40) + 1.2 * (row["marital_status"] == " Married-civ-spouse")
                     + 0.004 * row["capital_gain"] - 0.8 * (row["gender"] == " Female")
                     + rng.normal(0.0, 1.0) - 2.9)
            row["income_bracket"] = " >50K" if score > 0 else " <=50K"
            # As in the UCI Adult files, string values keep the space that follows each comma.
            f.write(",".join(str(row[c]) for c in CENSUS_COLUMNS) + "\n")


IRIS_COLUMNS = ["SepalLength", "SepalWidth", "PetalLength", "PetalWidth", "Species"]
_IRIS_MEANS = [(5.0, 3.4, 1.5, 0.25), (5.9, 2.8, 4.3, 1.3), (6.6, 3.0, 5.5, 2.0)]  # per species, as in Fisher's data
_IRIS_SPREAD = (0.40, 0.33, 0.45, 0.22)


def write_iris_csv(path: str, rows: int, seed: int) -> None:
    """Iris-like CSV with the tutorial's header line (row count, 4, then the species names): each species a
    Gaussian cluster around Fisher's means, so two of the three overlap somewhat."""
    rng = np.random.RandomState(seed)
    with open(path, "w") as f:
        f.write(f"{rows},4,setosa,versicolor,virginica\n")
        for _ in range(rows):
            species = int(rng.randint(3))
            values = [m + s * rng.normal() for m, s in zip(_IRIS_MEANS[species], _IRIS_SPREAD, strict=True)]
            f.write(",".join(f"{max(v, 0.1):.1f}" for v in values) + f",{species}\n")


TITANIC_COLUMNS = ["survived", "sex", "age", "n_siblings_spouses", "parch", "fare", "class", "deck", "embark_town",
                   "alone"]


def write_titanic_csv(path: str, rows: int, seed: int) -> None:
    """Titanic-like CSV with a header (the tutorial's columns); survival follows a noisy rule on sex, class, age."""
    rng = np.random.RandomState(seed)
    with open(path, "w") as f:
        f.write(",".join(TITANIC_COLUMNS) + "\n")
        for _ in range(rows):
            sex = ["male", "female"][int(rng.rand() < 0.35)]
            klass = ["Third", "First", "Second"][int(rng.choice(3, p=[0.55, 0.25, 0.2]))]
            age = float(np.clip(rng.normal(29.0, 13.0), 0.75, 80.0))
            siblings, parch = int(rng.choice(4, p=[0.68, 0.23, 0.05, 0.04])), int(rng.choice(3, p=[0.76, 0.13, 0.11]))
            fare = float({"First": 84.0, "Second": 21.0, "Third": 13.0}[klass] * rng.lognormal(0.0, 0.5))
            deck = "unknown" if klass == "Third" or rng.rand() < 0.5 else "ABCDEFG"[int(rng.randint(7))]
            town = ["Southampton", "Cherbourg", "Queenstown", "unknown"][int(rng.choice(4, p=[0.72, 0.19, 0.08, 0.01]))]
            alone = "y" if siblings + parch == 0 else "n"
            score = (2.4 * (sex == "female") + {"First": 1.0, "Second": 0.3, "Third": -0.8}[klass]
                     - 0.02 * (age - 30.0) - 1.0 + rng.normal(0.0, 0.8))
            row = [int(score > 0), sex, round(age, 1), siblings, parch, round(fare, 4), klass, deck, town, alone]
            f.write(",".join(str(v) for v in row) + "\n")


def token_sequences(count: int, seed: int, seq_length: int = 16, vocab_size: int = 64) -> dict[str, np.ndarray]:
    """BERT-style sentence-pair classification examples, already tokenised (ids, not text).

    Each example is `[CLS] a... [SEP] b... [SEP]` padded with 0 to `seq_length` (CLS = 1, SEP = 2,
    word ids 5 .. vocab_size - 1), with the input mask and segment ids BERT's feature conversion makes.
    The label is 1 when more of the words come from the lower half of the word ids than from the
    upper half (ties broken towards 0), so the task can be learnt from the words alone.
    Returns int64 arrays input_ids / input_mask / segment_ids [count, seq_length] and label_ids [count].
    """
    rng = np.random.RandomState(seed)
    words = np.arange(5, vocab_size)
    lower = words[: len(words) // 2]
    input_ids = np.zeros((count, seq_length), np.int64)
    input_mask = np.zeros((count, seq_length), np.int64)
    segment_ids = np.zeros((count, seq_length), np.int64)
    labels = np.zeros((count,), np.int64)
    for i in range(count):
        length_a = rng.randint(3, (seq_length - 3) // 2 + 1)
        length_b = rng.randint(2, seq_length - 3 - length_a + 1)
        bias = rng.uniform(0.2, 0.8)  # how often the words come from the lower half
        chosen = np.where(rng.uniform(size=length_a + length_b) < bias,
                          rng.choice(lower, length_a + length_b),
                          rng.choice(words[len(lower):], length_a + length_b))
        a, b = chosen[:length_a], chosen[length_a:]
        tokens = [1, *a, 2, *b, 2]
        input_ids[i, :len(tokens)] = tokens
        input_mask[i, :len(tokens)] = 1
        segment_ids[i, length_a + 2:len(tokens)] = 1
        labels[i] = int(np.isin(chosen, lower).sum() * 2 > len(chosen))
    return {"input_ids": input_ids, "input_mask": input_mask, "segment_ids": segment_ids, "label_ids": labels}


# -- report --------------------------------------------------------------------------------------------------
def scalar_events(directory: str) -> dict[str, dict[int, float]]:
    """tag -> {step: value} for every scalar in the event files directly inside `directory`."""
    found: dict[str, dict[int, float]] = {}
    for path in sorted(glob.glob(os.path.join(directory, "events.out.tfevents.*"))):
        for event in tf.compat.v1.train.summary_iterator(path):
            for value in event.summary.value:
                kind = value.WhichOneof("value")
                if kind == "simple_value":
                    number = value.simple_value
                elif kind == "tensor" and value.tensor.dtype in (tf.float32.as_datatype_enum,
                                                                 tf.float64.as_datatype_enum):
                    array = tf.make_ndarray(value.tensor)
                    if array.size != 1:
                        continue
                    number = float(array.reshape(()))
                else:
                    continue
                found.setdefault(value.tag, {})[int(event.step)] = float(number)
    return found


def loss_curve(model_dir: str, tag: str = "loss") -> dict[str, float]:
    """Training loss summaries by global step, from model_dir's event files (steps as 2.15 wrote them).

    `tag` is the name 2.15 gave the Estimator's loss summary: `loss`, or `loss_1` when model_fn had
    already taken the name scope `loss` (BERT's `tf.variable_scope("loss")`)."""
    return {str(step): value for step, value in sorted(scalar_events(model_dir).get(tag, {}).items())}


def variables(estimator) -> dict[str, list[int]]:
    """Checkpoint variable name -> shape, through the Estimator's public API."""
    return {name: list(np.shape(estimator.get_variable_value(name))) for name in sorted(estimator.get_variable_names())}


def moving_statistics(estimator) -> dict[str, float]:
    """Mean of every BatchNorm moving mean/variance in the checkpoint: did the update ops run?"""
    return {name: float(np.mean(estimator.get_variable_value(name)))
            for name in sorted(estimator.get_variable_names()) if "moving_" in name}


def _spec(tensor_spec) -> list:
    shape = tensor_spec.shape
    dims = None if shape.rank is None else [d if d is None else int(d) for d in shape.as_list()]
    return [tensor_spec.dtype.name, dims]


def export_summary(export_dir, serving_inputs: dict | None = None) -> dict:
    """The SavedModel's signatures (inputs and outputs with dtype and shape), and, when `serving_inputs`
    are given, what `serving_default` returns for them."""
    if isinstance(export_dir, bytes):
        export_dir = export_dir.decode()
    loaded = tf.saved_model.load(export_dir)
    signatures = {}
    for key in sorted(loaded.signatures.keys()):
        function = loaded.signatures[key]
        _, inputs = function.structured_input_signature
        outputs = function.structured_outputs
        signatures[key] = {
            "inputs": {name: _spec(spec) for name, spec in sorted(inputs.items())},
            "outputs": {name: _spec(tensor) for name, tensor in sorted(outputs.items())},
        }
    result = {"signatures": signatures}
    if serving_inputs is not None:
        served = loaded.signatures["serving_default"](**{k: tf.constant(v) for k, v in serving_inputs.items()})
        result["serving_default_outputs"] = {k: jsonable(v.numpy()) for k, v in sorted(served.items())}
    return result


def prediction_summary(predictions: list, labels=None, keep_values: bool = True) -> dict:
    """Keys, dtypes and per-example shapes of the first prediction; values of all (they are few), unless
    keep_values is False (generated images: the structure alone goes into the report)."""
    first = predictions[0]
    if isinstance(first, dict):
        structure = {k: [np.asarray(v).dtype.name, list(np.shape(v))] for k, v in sorted(first.items())}
        values = {k: [jsonable(p[k]) for p in predictions] for k in sorted(first)}
    else:
        structure = {"": [np.asarray(first).dtype.name, list(np.shape(first))]}
        values = {"": [jsonable(p) for p in predictions]}
    if not keep_values:
        values = None
    return {"count": len(predictions), "structure": structure, "values": values,
            "labels": None if labels is None else [jsonable(x) for x in labels]}


def jsonable(value):
    """numpy scalars/arrays and bytes as plain JSON values."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    array = np.asarray(value)
    if array.dtype.kind in "SO" and array.ndim:
        return jsonable(array.tolist())
    if array.ndim == 0:
        item = array.item()
        if isinstance(item, bytes):
            return item.decode("utf-8", "replace")
        return item if isinstance(item, (str, bool, int, float)) or item is None else repr(item)
    return array.tolist()


class LogRecordCounter(logging.Handler):
    """Counts the Python log records whose message matches `pattern` while it is entered.

    Attached to the root logger, so it sees what tf.compat.v1.logging (the `tensorflow` logger) and
    absl log, whatever handlers print them; a program reports the count (e.g. how many times its
    LoggingTensorHook logged) instead of a harness parsing its stderr.
    """

    def __init__(self, pattern: str):
        super().__init__(level=logging.NOTSET)
        self._pattern = re.compile(pattern)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a malformed record is not ours to report
            return
        if self._pattern.search(message):
            self.count += 1

    def __enter__(self) -> LogRecordCounter:
        logging.getLogger().addHandler(self)
        return self

    def __exit__(self, *exc_info) -> None:
        logging.getLogger().removeHandler(self)


def emit(result: dict) -> None:
    """Prints the one JSON line a harness reads (tagged so log lines around it do not matter)."""
    result = dict(result, tensorflow=tf.__version__)
    print(RESULT_PREFIX + json.dumps(jsonable(result), sort_keys=True), flush=True)
