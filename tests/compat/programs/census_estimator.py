"""Census income DNN: feature columns, a custom Estimator and train_and_evaluate: ported to estimators (imports only).

Modelled on GoogleCloudPlatform/cloudml-samples, census/customestimator/trainer/model.py at commit
f92eb6043cde550ba1791a54b86509e50753a4c9 and trainer/task.py at commit
0bca21858dd281220cfeeab3ba8a3af884d2faf0, in the form `tf_upgrade_v2` gives a TF1 program (TF2 API
with `tf.compat.v1.` spellings) and with the tf.data input_fn of the sample's later revision
(004e6d5ba70ad4ec4ef53c4d173f1bbf1fd2af84). This is a re-creation written for this test, not a copy:
the structure and every TF1/Estimator API the original uses are reproduced, scaled down (hidden
layers from a 32-unit first layer instead of 100; 4,000 synthetic census rows with the UCI Adult
columns instead of the 32,561 real ones, which would have to be downloaded).

APIs exercised: `tf.feature_column` categorical_column_with_vocabulary_list / _with_hash_bucket /
numeric_column / indicator_column / embedding_column and `tf.compat.v1.feature_column.input_layer`;
a model_fn factory whose model_fn takes `(mode, features, labels)` in that order and no params;
`tf.compat.v1.layers.dense` with `tf.compat.v1.variance_scaling_initializer`; a string-label lookup
table (`tf.lookup.StaticHashTable`) built inside model_fn; `tf.compat.v1.train.get_or_create_global_step`;
`tf.compat.v1.summary.scalar('loss', ...)` (replacing the Estimator's own loss summary);
`tf.compat.v1.train.FtrlOptimizer` with L1/L2; string predictions via `tf.gather`;
`tf.estimator.export.PredictOutput`; `eval_metric_ops` with `tf.compat.v1.metrics.accuracy` and
`tf.compat.v1.metrics.auc`; an input_fn returning `(features_dict, labels)` tensors from
`tf.compat.v1.data.make_one_shot_iterator` over `tf.data.TextLineDataset` and `tf.io.decode_csv`;
`tf.estimator.TrainSpec/EvalSpec(steps, exporters, name)/FinalExporter` and
`tf.estimator.train_and_evaluate` on a default-config `tf.estimator.Estimator(model_fn, model_dir)`;
a JSON-style serving input fn of `tf.compat.v1.placeholder`s in a `tf.estimator.export.ServingInputReceiver`.

Deliberate differences from the original: `tf.contrib.lookup.index_table_from_tensor` (gone in TF 2)
is a StaticHashTable; `tf.contrib.layers.variance_scaling_initializer` is the tf.compat.v1 one; flags
`--model_dir` and `--steps` are aliases of `--job-dir` and `--train-steps`; `--eval-steps` defaults to one
pass over the evaluation rows (the sample's README passes it; its default None never ends).
"""

import argparse
import os

import compat_support
import estimators
import tensorflow as tf

Modes = estimators.ModeKeys

CSV_COLUMNS = compat_support.CENSUS_COLUMNS
CSV_COLUMN_DEFAULTS = [[0], [""], [0], [""], [0], [""], [""], [""], [""], [""], [0], [0], [0], [""], [""]]
LABEL_COLUMN = "income_bracket"
LABELS = [" <=50K", " >50K"]

INPUT_COLUMNS = [
    tf.feature_column.categorical_column_with_vocabulary_list("gender", [" Female", " Male"]),
    tf.feature_column.categorical_column_with_vocabulary_list(
        "race", [" Amer-Indian-Eskimo", " Asian-Pac-Islander", " Black", " Other", " White"]),
    tf.feature_column.categorical_column_with_vocabulary_list(
        "education", [" Bachelors", " HS-grad", " 11th", " Masters", " 9th", " Some-college", " Assoc-acdm",
                      " Assoc-voc", " 7th-8th", " Doctorate", " Prof-school", " 5th-6th", " 10th", " 1st-4th",
                      " Preschool", " 12th"]),
    tf.feature_column.categorical_column_with_vocabulary_list(
        "marital_status", [" Married-civ-spouse", " Divorced", " Married-spouse-absent", " Never-married",
                           " Separated", " Married-AF-spouse", " Widowed"]),
    tf.feature_column.categorical_column_with_vocabulary_list(
        "relationship", [" Husband", " Not-in-family", " Wife", " Own-child", " Unmarried", " Other-relative"]),
    tf.feature_column.categorical_column_with_vocabulary_list(
        "workclass", [" Self-emp-not-inc", " Private", " State-gov", " Federal-gov", " Local-gov", " ?",
                      " Self-emp-inc", " Without-pay", " Never-worked"]),
    tf.feature_column.categorical_column_with_hash_bucket("occupation", hash_bucket_size=100, dtype=tf.string),
    tf.feature_column.categorical_column_with_hash_bucket("native_country", hash_bucket_size=100, dtype=tf.string),
    tf.feature_column.numeric_column("age"),
    tf.feature_column.numeric_column("education_num"),
    tf.feature_column.numeric_column("capital_gain"),
    tf.feature_column.numeric_column("capital_loss"),
    tf.feature_column.numeric_column("hours_per_week"),
]

UNUSED_COLUMNS = set(CSV_COLUMNS) - {col.name for col in INPUT_COLUMNS} - {LABEL_COLUMN}


def generate_model_fn(embedding_size=8, hidden_units=None, learning_rate=0.1):
    """A model_fn for a feed-forward classifier with these hyperparameters."""
    hidden_units = hidden_units or [100, 70, 40, 20]

    def _model_fn(mode, features, labels):
        (gender, race, education, marital_status, relationship, workclass, occupation, native_country,
         age, education_num, capital_gain, capital_loss, hours_per_week) = INPUT_COLUMNS
        transformed_columns = [
            tf.feature_column.indicator_column(workclass),
            tf.feature_column.indicator_column(education),
            tf.feature_column.indicator_column(marital_status),
            tf.feature_column.indicator_column(gender),
            tf.feature_column.indicator_column(relationship),
            tf.feature_column.indicator_column(race),
            tf.feature_column.embedding_column(native_country, dimension=embedding_size),
            tf.feature_column.embedding_column(occupation, dimension=embedding_size),
            age, education_num, capital_gain, capital_loss, hours_per_week,
        ]
        inputs = tf.compat.v1.feature_column.input_layer(features, transformed_columns)
        label_values = tf.constant(LABELS)

        curr_layer = inputs
        for layer_size in hidden_units:
            curr_layer = tf.compat.v1.layers.dense(
                curr_layer, layer_size, activation=tf.nn.relu,
                kernel_initializer=tf.compat.v1.variance_scaling_initializer(scale=2.0))
        logits = tf.compat.v1.layers.dense(
            curr_layer, len(LABELS), activation=None,
            kernel_initializer=tf.compat.v1.variance_scaling_initializer(scale=2.0))

        if mode in (Modes.PREDICT, Modes.EVAL):
            probabilities = tf.nn.softmax(logits)
            predicted_indices = tf.argmax(probabilities, 1)

        if mode in (Modes.TRAIN, Modes.EVAL):
            table = tf.lookup.StaticHashTable(
                tf.lookup.KeyValueTensorInitializer(label_values, tf.range(len(LABELS), dtype=tf.int64)), -1)
            label_indices = table.lookup(labels)
            label_indices_vector = tf.squeeze(label_indices, axis=[1])
            global_step = tf.compat.v1.train.get_or_create_global_step()
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
                logits=logits, labels=label_indices_vector))
            tf.compat.v1.summary.scalar("loss", loss)

        if mode == Modes.PREDICT:
            predictions = {
                "classes": tf.gather(label_values, predicted_indices),
                "scores": tf.reduce_max(probabilities, axis=1),
            }
            export_outputs = {"prediction": estimators.export.PredictOutput(predictions)}
            return estimators.EstimatorSpec(mode, predictions=predictions, export_outputs=export_outputs)

        if mode == Modes.TRAIN:
            train_op = tf.compat.v1.train.FtrlOptimizer(
                learning_rate=learning_rate, l1_regularization_strength=3.0, l2_regularization_strength=10.0,
            ).minimize(loss, global_step=global_step)
            return estimators.EstimatorSpec(mode, loss=loss, train_op=train_op)

        if mode == Modes.EVAL:
            labels_one_hot = tf.one_hot(
                label_indices_vector, depth=label_values.shape[0], on_value=True, off_value=False, dtype=tf.bool)
            eval_metric_ops = {
                "accuracy": tf.compat.v1.metrics.accuracy(label_indices, predicted_indices),
                "auroc": tf.compat.v1.metrics.auc(labels_one_hot, probabilities),
            }
            return estimators.EstimatorSpec(mode, loss=loss, eval_metric_ops=eval_metric_ops)

    return _model_fn


def csv_serving_input_fn():
    csv_row = tf.compat.v1.placeholder(shape=[None], dtype=tf.string)
    features = parse_csv(csv_row)
    features.pop(LABEL_COLUMN)
    return estimators.export.ServingInputReceiver(features, {"csv_row": csv_row})


def json_serving_input_fn():
    inputs = {}
    for feat in INPUT_COLUMNS:
        inputs[feat.name] = tf.compat.v1.placeholder(shape=[None], dtype=feat.dtype)
    return estimators.export.ServingInputReceiver(inputs, inputs)


SERVING_FUNCTIONS = {"JSON": json_serving_input_fn, "CSV": csv_serving_input_fn}


def parse_csv(rows_string_tensor):
    """CSV rows -> dict of rank-2 tensors, unused columns dropped."""
    columns = tf.io.decode_csv(rows_string_tensor, record_defaults=CSV_COLUMN_DEFAULTS)
    features = dict(zip(CSV_COLUMNS, columns, strict=True))
    for col in UNUSED_COLUMNS:
        features.pop(col)
    for key in features:
        features[key] = tf.expand_dims(features[key], -1)
    return features


def input_fn(filenames, num_epochs=None, shuffle=True, skip_header_lines=0, batch_size=200):
    """(features, labels) tensors read from CSV files."""
    dataset = tf.data.TextLineDataset(filenames).skip(skip_header_lines).map(parse_csv)
    if shuffle:
        dataset = dataset.shuffle(buffer_size=batch_size * 10)
    dataset = dataset.repeat(num_epochs)
    dataset = dataset.batch(batch_size)
    features = tf.compat.v1.data.make_one_shot_iterator(dataset).get_next()
    return features, features.pop(LABEL_COLUMN)


def train_and_evaluate(hparams):
    train_input = lambda: input_fn(  # noqa: E731 - as the sample wrote it
        hparams.train_files, num_epochs=hparams.num_epochs, batch_size=hparams.train_batch_size)
    eval_input = lambda: input_fn(  # noqa: E731
        hparams.eval_files, batch_size=hparams.eval_batch_size, shuffle=False)

    train_spec = estimators.TrainSpec(train_input, max_steps=hparams.train_steps)
    exporter = estimators.FinalExporter("census", SERVING_FUNCTIONS[hparams.export_format])
    eval_spec = estimators.EvalSpec(eval_input, steps=hparams.eval_steps, exporters=[exporter], name="census-eval")

    model_fn = generate_model_fn(
        embedding_size=hparams.embedding_size,
        hidden_units=[max(2, int(hparams.first_layer_size * hparams.scale_factor**i))
                      for i in range(hparams.num_layers)],
        learning_rate=hparams.learning_rate)
    estimator = estimators.Estimator(model_fn=model_fn, model_dir=hparams.job_dir)
    eval_result, export_results = estimators.train_and_evaluate(estimator, train_spec, eval_spec)
    return estimator, eval_result, export_results


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--train-files", nargs="+", default=None)
    parser.add_argument("--eval-files", nargs="+", default=None)
    parser.add_argument("--job-dir", "--model_dir", dest="job_dir", required=True)
    parser.add_argument("--num-epochs", type=int)
    parser.add_argument("--train-batch-size", type=int, default=40)
    parser.add_argument("--eval-batch-size", type=int, default=40)
    parser.add_argument("--embedding-size", type=int, default=8)
    parser.add_argument("--learning-rate", type=float, default=0.1)
    parser.add_argument("--first-layer-size", type=int, default=32)
    parser.add_argument("--num-layers", type=int, default=4)
    parser.add_argument("--scale-factor", type=float, default=0.7)
    parser.add_argument("--train-steps", "--steps", dest="train_steps", type=int, default=300)
    parser.add_argument("--eval-steps", type=int, default=50)
    parser.add_argument("--export-format", choices=["JSON", "CSV"], default="JSON")
    parser.add_argument("--seed", type=int, default=0)  # accepted for the harness; the sample sets no seed
    args, _ = parser.parse_known_args()

    data_dir = os.path.join(args.job_dir, "data")
    os.makedirs(data_dir, exist_ok=True)
    if args.train_files is None:
        args.train_files = [os.path.join(data_dir, "adult.data.csv")]
        compat_support.write_census_csv(args.train_files[0], 4000, seed=1)
    if args.eval_files is None:
        args.eval_files = [os.path.join(data_dir, "adult.test.csv")]
        compat_support.write_census_csv(args.eval_files[0], 2000, seed=2)

    estimator, eval_result, export_results = train_and_evaluate(args)

    with open(args.eval_files[0]) as f:
        rows = [next(f) for _ in range(10)]
    fields = [dict(zip(CSV_COLUMNS, row.rstrip("\n").split(","), strict=True)) for row in rows]
    serving = {col.name: [float(r[col.name]) if col.dtype.is_floating else r[col.name] for r in fields]
               for col in INPUT_COLUMNS}
    predictions = list(estimator.predict(input_fn=lambda: input_fn(
        args.eval_files, num_epochs=1, shuffle=False, batch_size=10)))[:10]
    compat_support.emit({
        "program": "census_estimator",
        "eval": eval_result,
        "loss_curve": compat_support.loss_curve(args.job_dir),
        "summary_tags": sorted(compat_support.scalar_events(args.job_dir)),
        "predictions": compat_support.prediction_summary(predictions, [r["income_bracket"] for r in fields]),
        "variables": compat_support.variables(estimator),
        "export": compat_support.export_summary(export_results[0], {k: v[:2] for k, v in serving.items()}),
    })


if __name__ == "__main__":
    main()
