"""Premade Estimators (iris): DNNClassifier on four numeric feature columns: ported to estimators (imports only).

Modelled on tensorflow/docs site/en/tutorials/estimator/premade.ipynb (the "Premade Estimators" tutorial,
commit 2022-era, TF 2 form): iris CSV read with pandas (`names=CSV_COLUMN_NAMES, header=0`), the label
popped from the frame, an input_fn of `Dataset.from_tensor_slices((dict(features), labels))` shuffled and
repeated for training, batch 256, `tf.feature_column.numeric_column` per key, `tf.estimator.DNNClassifier(
hidden_units=[30, 10], n_classes=3)`, train(steps=...), evaluate, then predict on the tutorial's three
examples (`predict_x`) with a features-only input_fn, reading `class_ids` and `probabilities`. This is a
re-creation written for this test, not a copy. Scaled down: 2000 steps instead of 5000; the iris CSVs
(a download in the tutorial) are written by compat_support from a seeded generator with the same columns
and header line. Deliberate differences: `model_dir` is given (the tutorial lets the Estimator pick a
temporary one) and the report below is added (with predictions on the test rows).
"""

import argparse
import os

import compat_support
import pandas as pd
import estimators
import tensorflow as tf

CSV_COLUMN_NAMES = ["SepalLength", "SepalWidth", "PetalLength", "PetalWidth", "Species"]
SPECIES = ["Setosa", "Versicolor", "Virginica"]


def input_fn(features, labels, training=True, batch_size=256):
    """An input function for training or evaluating."""
    dataset = tf.data.Dataset.from_tensor_slices((dict(features), labels))
    if training:
        dataset = dataset.shuffle(1000).repeat()
    return dataset.batch(batch_size)


def predict_input_fn(features, batch_size=256):
    """An input function for prediction: features only."""
    return tf.data.Dataset.from_tensor_slices(dict(features)).batch(batch_size)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_dir", required=True)
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)  # accepted for the harness; the tutorial sets no seed
    args, _ = parser.parse_known_args()

    data_dir = os.path.join(args.model_dir, "data")
    os.makedirs(data_dir, exist_ok=True)
    train_path, test_path = os.path.join(data_dir, "iris_training.csv"), os.path.join(data_dir, "iris_test.csv")
    compat_support.write_iris_csv(train_path, 120, seed=1)
    compat_support.write_iris_csv(test_path, 30, seed=2)

    train = pd.read_csv(train_path, names=CSV_COLUMN_NAMES, header=0)
    test = pd.read_csv(test_path, names=CSV_COLUMN_NAMES, header=0)
    train_y = train.pop("Species")
    test_y = test.pop("Species")

    my_feature_columns = []
    for key in train.keys():
        my_feature_columns.append(tf.feature_column.numeric_column(key=key))

    classifier = estimators.DNNClassifier(
        feature_columns=my_feature_columns,
        hidden_units=[30, 10],
        n_classes=3,
        model_dir=args.model_dir)
    classifier.train(input_fn=lambda: input_fn(train, train_y, training=True), steps=args.steps)
    eval_result = classifier.evaluate(input_fn=lambda: input_fn(test, test_y, training=False))
    print("\nTest set accuracy: {accuracy:0.3f}\n".format(**eval_result))

    expected = ["Setosa", "Versicolor", "Virginica"]
    predict_x = {
        "SepalLength": [5.1, 5.9, 6.9],
        "SepalWidth": [3.3, 3.0, 3.1],
        "PetalLength": [1.7, 4.2, 5.4],
        "PetalWidth": [0.5, 1.5, 2.1],
    }
    predictions = list(classifier.predict(input_fn=lambda: predict_input_fn(predict_x)))
    for pred_dict, expec in zip(predictions, expected, strict=True):
        class_id = pred_dict["class_ids"][0]
        probability = pred_dict["probabilities"][class_id]
        print(f'Prediction is "{SPECIES[class_id]}" ({100 * probability:.1f}%), expected "{expec}"')

    # The report scores predictions on the 30 test rows: three examples are too few to compare runs by.
    test_predictions = list(classifier.predict(input_fn=lambda: predict_input_fn(test)))
    compat_support.emit({
        "program": "premade_iris",
        "eval": eval_result,
        "loss_curve": compat_support.loss_curve(args.model_dir),
        "summary_tags": sorted(compat_support.scalar_events(args.model_dir)),
        "predictions": compat_support.prediction_summary(test_predictions, [[int(y)] for y in test_y]),
        "variables": compat_support.variables(classifier),
    })


if __name__ == "__main__":
    main()
