"""Linear model with Estimators (titanic): LinearClassifier on vocabulary and numeric columns, then a crossed
column: ported to estimators (imports only).

Modelled on tensorflow/docs site/en/tutorials/estimator/linear.ipynb (the "Build a linear model with
Estimators" tutorial, TF 2 form): titanic train/eval CSVs read with pandas, `survived` popped as the label,
`categorical_column_with_vocabulary_list` over each categorical column's `unique()` values and
`numeric_column(dtype=tf.float32)` for age and fare, `make_input_fn` returning a function that builds
`Dataset.from_tensor_slices((dict(df), label_df))`, shuffled (1000), batched (32) and repeated for 10 epochs
(one epoch, unshuffled, for evaluation), `tf.estimator.LinearClassifier(feature_columns)` trained without
`steps` (until the input ends) and evaluated; then `crossed_column(['age', 'sex'], hash_bucket_size=100)` added
as a derived feature column to a second LinearClassifier, trained, evaluated, and `predict(eval_input_fn)` read
for `probabilities[1]`. This is a re-creation written for this test, not a copy. The CSVs (downloads in the
tutorial) are written by compat_support from a seeded generator with the same columns and about the same sizes.
Deliberate differences: the estimators get `model_dir`s (the tutorial lets them pick temporary ones); age is
read as a string for the cross (`crossed_column` hashes strings or integers) and converted to float32 for
the numeric column (`age_years`); the report is added.
"""

import argparse
import os

import compat_support
import pandas as pd
import estimators
import tensorflow as tf


def make_input_fn(data_df, label_df, num_epochs=10, shuffle=True, batch_size=32):
    def input_function():
        ds = tf.data.Dataset.from_tensor_slices((dict(data_df), label_df))
        if shuffle:
            ds = ds.shuffle(1000)
        ds = ds.batch(batch_size).repeat(num_epochs)
        return ds
    return input_function


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_dir", required=True)
    parser.add_argument("--seed", type=int, default=0)  # accepted for the harness; the tutorial sets no seed
    args, _ = parser.parse_known_args()

    data_dir = os.path.join(args.model_dir, "data")
    os.makedirs(data_dir, exist_ok=True)
    compat_support.write_titanic_csv(os.path.join(data_dir, "train.csv"), 627, seed=1)
    compat_support.write_titanic_csv(os.path.join(data_dir, "eval.csv"), 264, seed=2)
    dftrain = pd.read_csv(os.path.join(data_dir, "train.csv"), dtype={"age": str})
    dfeval = pd.read_csv(os.path.join(data_dir, "eval.csv"), dtype={"age": str})
    dftrain["age_years"] = dftrain["age"].astype("float32")
    dfeval["age_years"] = dfeval["age"].astype("float32")
    y_train = dftrain.pop("survived")
    y_eval = dfeval.pop("survived")

    CATEGORICAL_COLUMNS = ["sex", "n_siblings_spouses", "parch", "class", "deck", "embark_town", "alone"]
    NUMERIC_COLUMNS = ["age_years", "fare"]

    feature_columns = []
    for feature_name in CATEGORICAL_COLUMNS:
        vocabulary = dftrain[feature_name].unique()
        feature_columns.append(tf.feature_column.categorical_column_with_vocabulary_list(feature_name, vocabulary))
    for feature_name in NUMERIC_COLUMNS:
        feature_columns.append(tf.feature_column.numeric_column(feature_name, dtype=tf.float32))

    train_input_fn = make_input_fn(dftrain, y_train)
    eval_input_fn = make_input_fn(dfeval, y_eval, num_epochs=1, shuffle=False)

    linear_est = estimators.LinearClassifier(feature_columns=feature_columns,
                                               model_dir=os.path.join(args.model_dir, "base"))
    linear_est.train(train_input_fn)
    result = linear_est.evaluate(eval_input_fn)
    print(result)

    age_x_gender = tf.feature_column.crossed_column(["age", "sex"], hash_bucket_size=100)
    derived_feature_columns = [age_x_gender]
    derived_dir = os.path.join(args.model_dir, "derived")
    linear_est = estimators.LinearClassifier(feature_columns=feature_columns + derived_feature_columns,
                                               model_dir=derived_dir)
    linear_est.train(train_input_fn)
    result = linear_est.evaluate(eval_input_fn)
    print(result)

    pred_dicts = list(linear_est.predict(eval_input_fn))
    probs = pd.Series([pred["probabilities"][1] for pred in pred_dicts])
    print(probs.describe())

    compat_support.emit({
        "program": "linear_titanic",
        "eval": result,
        "loss_curve": compat_support.loss_curve(derived_dir),
        "summary_tags": sorted(compat_support.scalar_events(derived_dir)),
        "predictions": compat_support.prediction_summary(pred_dicts[:20], [[int(v)] for v in y_eval[:20]]),
        "variables": compat_support.variables(linear_est),
    })


if __name__ == "__main__":
    main()
