"""main.py end to end on tiny settings: every mode, its defaults, and its flag errors."""

import functools
import os
import re
import subprocess
import sys

import numpy as np
import pytest
from absl import flags

import main
from input_fns import fashion_mnist

FLAGS = flags.FLAGS
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TINY = ["--train_batch_size=8", "--eval_batch_size=50", "--predict_batch_size=50", "--iterations_per_loop=2",
        "--train_steps=2", "--save_checkpoints_steps=2", "--dataset=synthetic"]


def run_main(*argv: str) -> None:
    FLAGS.unparse_flags()
    FLAGS(["main.py", *argv])
    main.main(["main.py"])


@pytest.fixture
def trained_cnn(tmp_path):
    model_dir = str(tmp_path / "cnn")
    run_main("--model=cnn", "--mode=train", f"--model_dir={model_dir}", *TINY)
    return model_dir


def test_train_mode_writes_a_checkpoint_at_train_steps(trained_cnn, capsys):
    run_main("--model=cnn", "--mode=train", f"--model_dir={trained_cnn}", *TINY)
    assert "train: {'global_step': 2}" in capsys.readouterr().out
    assert os.path.exists(os.path.join(trained_cnn, "model.ckpt-2.index"))


def test_evaluate_mode_reports_accuracy_over_the_whole_test_set(trained_cnn, capsys):
    run_main("--model=cnn", "--mode=evaluate", f"--model_dir={trained_cnn}", *TINY)
    out = capsys.readouterr().out
    assert "evaluate: {'accuracy':" in out and "'global_step': 2" in out


def test_predict_mode_prints_class_names_for_image_files(trained_cnn, tmp_path, capsys):
    import tensorflow as tf

    path = str(tmp_path / "shirt.png")
    tf.io.write_file(path, tf.io.encode_png(np.full((40, 30, 3), 200, np.uint8)))
    run_main("--model=cnn", "--mode=predict", f"--model_dir={trained_cnn}", f"--predict_files={path}", *TINY)
    out = capsys.readouterr().out
    assert f"{path}: class_" in out and "predict: {'predicted': 1}" in out


def test_predict_mode_rejects_a_file_that_is_not_an_image(trained_cnn, tmp_path):
    bad = tmp_path / "notes.txt"
    bad.write_text("hello")
    with pytest.raises(SystemExit, match=r"notes.txt' is not a PNG, JPEG"):
        run_main("--model=cnn", "--mode=predict", f"--model_dir={trained_cnn}", f"--predict_files={bad}", *TINY)


def test_export_serves_raw_uint8_images_like_predict_in_a_clean_process(trained_cnn, tmp_path, capsys):
    export_base = str(tmp_path / "export")
    run_main("--model=cnn", "--mode=export", f"--model_dir={trained_cnn}", f"--export_dir={export_base}", *TINY)
    (export_dir,) = os.listdir(export_base)
    images = np.random.RandomState(0).randint(0, 256, (5, 28, 28), dtype=np.uint8)
    np.save(tmp_path / "images.npy", images)
    script = (
        "import sys, numpy as np, tensorflow as tf\n"
        f"serve = tf.saved_model.load({os.path.join(export_base, export_dir)!r}).signatures['serving_default']\n"
        f"images = np.load({str(tmp_path / 'images.npy')!r})\n"
        "a = serve(images=tf.constant(images))['probabilities'].numpy()\n"
        "b = serve(images=tf.constant(images[..., None]))['probabilities'].numpy()\n"
        f"np.save({str(tmp_path / 'served.npy')!r}, np.stack([a, b]))\n"
        "assert not any(m.split('.')[0] in ('estimators', 'model_fns', 'input_fns') for m in sys.modules)\n"
    )
    env = dict(os.environ, PYTHONPATH="", TF_CPP_MIN_LOG_LEVEL="2")
    subprocess.run([sys.executable, "-c", script], check=True, cwd=str(tmp_path), env=env, timeout=300)
    served = np.load(tmp_path / "served.npy")
    model = main.model_fns.get_model("cnn")
    from launch.build import build_estimator
    from launch.settings import Settings

    estimator = build_estimator(Settings(model_dir=trained_cnn, predict_batch_size=5), model)
    import tensorflow as tf

    predicted = np.stack([p["probabilities"] for p in estimator.predict(
        lambda params: tf.data.Dataset.from_tensor_slices(images[..., None]).batch(params["batch_size"]))])
    np.testing.assert_allclose(served[0], predicted, atol=1e-5)
    np.testing.assert_allclose(served[1], predicted, atol=1e-5)


def test_export_prints_where_it_wrote_without_lines_a_cli_user_cannot_act_on(trained_cnn, tmp_path):
    """2.15's signature report stays a library INFO log; main.py asks for no TPU graph, so no note on that."""
    result = subprocess.run(
        [sys.executable, "main.py", "--model=cnn", "--mode=export", f"--model_dir={trained_cnn}",
         f"--export_dir={tmp_path / 'export'}", *TINY],
        cwd=ROOT, capture_output=True, text=True, timeout=300, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"),
    )
    assert result.returncode == 0, result.stderr[-2000:]
    (export_dir,) = os.listdir(tmp_path / "export")
    assert f"export: {{'export_dir': '{tmp_path / 'export' / export_dir}'}}" in result.stdout
    output = result.stdout + result.stderr
    assert "Signatures INCLUDED" not in output and "export_to_tpu" not in output, output


def test_main_py_hides_the_library_only_info_lines_and_nothing_else_of_the_engine():
    import logging

    from launch import console

    def shown(level: int, *path: str) -> bool:
        record = logging.LogRecord("absl", level, os.path.join(ROOT, *path), 1, "message", (), None)
        return console._LibraryChatterFilter(()).filter(record)

    assert not shown(logging.INFO, "estimators", "export", "signatures.py")
    assert shown(logging.WARNING, "estimators", "export", "signatures.py")  # "Export includes no signatures!"
    assert shown(logging.INFO, "estimators", "export", "saved_model.py")


def test_train_and_evaluate_mode_with_resnet(tmp_path, capsys):
    run_main("--model=resnet", "--resnet_depth=8", "--mode=train_and_evaluate", f"--model_dir={tmp_path}",
             "--eval_steps=1", *TINY)
    out = capsys.readouterr().out
    assert "train_and_evaluate: {'accuracy':" in out and "'global_step': 2" in out


def test_train_and_evaluate_again_after_training_finished_evaluates_the_final_checkpoint(trained_cnn, capsys):
    """A Colab cell re-run once --train_steps is reached: nothing left to train, the final checkpoint evaluated."""
    capsys.readouterr()
    run_main("--model=cnn", "--mode=train_and_evaluate", f"--model_dir={trained_cnn}", "--eval_steps=1", *TINY)
    out = capsys.readouterr().out
    assert "train_and_evaluate: {'accuracy':" in out and "'global_step': 2" in out
    assert not os.path.exists(os.path.join(trained_cnn, "model.ckpt-4.index"))


def test_no_model_dir_uses_runs_folder_and_says_so(tmp_path, monkeypatch, caplog):
    monkeypatch.chdir(tmp_path)
    run_main("--model=cnn", "--mode=train", *TINY)
    assert os.path.exists(tmp_path / "runs" / "cnn_synthetic" / "model.ckpt-2.index")


def test_unknown_model_is_a_flag_error_listing_the_choices():
    FLAGS.unparse_flags()
    with pytest.raises(flags.IllegalFlagValueError, match=r"cnn\|resnet"):
        FLAGS(["main.py", "--model=vgg"])


def test_nonpositive_batch_size_is_a_flag_error():
    FLAGS.unparse_flags()
    with pytest.raises(flags.IllegalFlagValueError, match=r"--train_batch_size=0: 0 is not a positive integer"):
        FLAGS(["main.py", "--train_batch_size=0"])


def test_missing_dataset_files_are_one_clear_error(tmp_path, monkeypatch):
    monkeypatch.setattr(fashion_mnist, "DOWNLOAD", False)
    monkeypatch.setattr(fashion_mnist, "default_search_dirs", lambda: [])
    with pytest.raises(SystemExit, match=r"apt-get install dataset-fashion-mnist"):
        run_main("--model=cnn", f"--model_dir={tmp_path}", f"--data_dir={tmp_path}", "--dataset=fashion_mnist",
                 *[f for f in TINY if not f.startswith("--dataset")])


def test_cli_runs_as_a_script(tmp_path):
    result = subprocess.run(
        [sys.executable, "main.py", "--model=cnn", "--mode=train", f"--model_dir={tmp_path}", *TINY],
        cwd=ROOT, capture_output=True, text=True, timeout=300, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"),
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "train: {'global_step': 2}" in result.stdout


@pytest.mark.skipif(fashion_mnist.find_files("test") is None, reason="real Fashion-MNIST not installed")
def test_cnn_on_the_real_fashion_mnist(tmp_path, capsys):
    run_main("--model=cnn", "--mode=train_and_evaluate", f"--model_dir={tmp_path}", "--dataset=fashion_mnist",
             "--eval_steps=1", *[f for f in TINY if not f.startswith("--dataset")])
    assert "'global_step': 2" in capsys.readouterr().out


# -- what a run says about itself ---------------------------------------------------------------
def test_training_saves_its_flags_in_model_dir_usable_as_flagfile(trained_cnn):
    FLAGS.unparse_flags()
    FLAGS(["main.py", "--model=cnn", "--mode=train", f"--model_dir={trained_cnn}", *TINY])
    trained = main.settings_from_flags()
    FLAGS.unparse_flags()
    FLAGS(["main.py", f"--flagfile={os.path.join(trained_cnn, 'flags.txt')}"])
    assert main.settings_from_flags() == trained


def test_only_training_runs_write_flags_txt(trained_cnn):
    path = os.path.join(trained_cnn, "flags.txt")
    before = open(path).read()
    run_main("--model=cnn", "--mode=evaluate", f"--model_dir={trained_cnn}", "--eval_steps=1", *TINY)
    assert open(path).read() == before and "--mode=train\n" in before


def test_run_logs_parameters_data_model_dir_and_replicas(tmp_path, caplog):
    run_main("--model=cnn", "--mode=train", f"--model_dir={tmp_path}", "--verbosity=0", *TINY)
    text = caplog.text
    count = main.model_fns.get_model("cnn").network({}).count_params()
    assert f"model: cnn, {count:,} parameters" in text
    assert "train data: synthetic, generated in memory" in text
    assert f"model_dir: {tmp_path} (no checkpoint yet)" in text
    replicas, per_replica = map(int, re.search(r"train: (\d+) replicas? x (\d+) examples per replica = global "
                                               r"batch 8", text).groups())
    assert replicas * per_replica == 8


def test_run_logs_the_data_files_it_reads(tmp_path, caplog):
    fashion_mnist_test_files(tmp_path)
    with pytest.raises(SystemExit, match="train"):  # nothing trained in model_dir: the data was found first
        run_main("--model=cnn", "--mode=evaluate", f"--model_dir={tmp_path / 'm'}", f"--data_dir={tmp_path}",
                 "--verbosity=0", "--dataset=fashion_mnist", *[f for f in TINY if not f.startswith("--dataset")])
    assert f"test data: t10k-images-idx3-ubyte.gz, t10k-labels-idx1-ubyte.gz in {tmp_path}" in caplog.text


def test_counting_parameters_leaves_keras_layer_names_unchanged():
    import keras

    from launch.run_info import count_parameters

    first = keras.layers.Dense(1).name
    assert count_parameters(main.model_fns.get_model("cnn"), {}) is not None
    prefix, _, number = first.rpartition("_")
    expected = f"{prefix}_{int(number) + 1}" if number.isdigit() else f"{first}_1"
    assert keras.layers.Dense(1).name == expected


def test_wrong_data_dir_is_an_error_naming_it_not_a_fallback(tmp_path):
    with pytest.raises(SystemExit, match=rf"not found in --data_dir={re.escape(str(tmp_path))} \(looked in"):
        run_main("--model=cnn", f"--model_dir={tmp_path / 'm'}", f"--data_dir={tmp_path}", "--dataset=fashion_mnist",
                 *[f for f in TINY if not f.startswith("--dataset")])


def _usage_exit(capsys, *argv: str) -> str:
    """Runs main with argv, which must exit 2 (a usage error); returns what it printed to stderr."""
    with pytest.raises(SystemExit) as raised:
        run_main(*argv)
    assert raised.value.code == 2
    return capsys.readouterr().err


def test_empty_data_dir_is_an_error(tmp_path, capsys):
    assert "--data_dir is empty" in _usage_exit(
        capsys, "--model=cnn", f"--model_dir={tmp_path}", "--data_dir=", "--dataset=fashion_mnist",
        *[f for f in TINY if not f.startswith("--dataset")])


def test_data_dir_with_synthetic_data_is_an_error(tmp_path, capsys):
    err = _usage_exit(capsys, "--model=cnn", f"--model_dir={tmp_path}", f"--data_dir={tmp_path}", *TINY)
    assert "--data_dir has no effect with --dataset=synthetic" in err


def test_predict_prints_at_most_predict_limit_rows_then_a_summary(trained_cnn, capsys):
    run_main("--model=cnn", "--mode=predict", f"--model_dir={trained_cnn}", "--predict_limit=3", *TINY)
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines[:3]] == ["test[0]", "test[1]", "test[2]"]
    assert lines[3] == "... 1021 more (--predict_limit=3 rows shown)"
    counts = [int(part.rsplit(" ", 1)[1]) for part in lines[4].removeprefix("predicted classes: ").split(", ")]
    assert len(counts) == 10 and sum(counts) == 1024
    assert lines[5].startswith("predict: {'predicted': 1024, 'accuracy': ")


def test_plot_without_matplotlib_fails_first_naming_the_extra(trained_cnn, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "matplotlib" else real(name, *a))
    with pytest.raises(SystemExit, match=r'--plot needs matplotlib.*pip install -e "\.\[plots\]"'):
        run_main("--model=cnn", "--mode=predict", f"--model_dir={trained_cnn}", "--plot=grid.png", *TINY)


def test_plot_with_a_mode_that_draws_nothing_is_an_error(tmp_path, capsys):
    err = _usage_exit(capsys, "--model=cnn", "--mode=train", f"--model_dir={tmp_path}", "--plot=x.png", *TINY)
    assert "--plot works with --mode=predict, evaluate, train_and_evaluate" in err


# -- what reaches the terminal ------------------------------------------------------------------
@functools.cache
def _bare_tensorflow_startup_lines() -> frozenset[str]:
    """What importing TensorFlow prints by itself on this machine, without timestamps (found once per run)."""
    env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    err = subprocess.run([sys.executable, "-c", "import tensorflow"], capture_output=True, text=True, env=env,
                         timeout=300).stderr
    return frozenset(re.sub(r"^[IWE]\d{4} [\d:.]+ +\d+ ", "", line) for line in err.splitlines() if line.strip())


def _main_stderr(*argv: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    return subprocess.run([sys.executable, "main.py", *argv], cwd=ROOT, capture_output=True, text=True, env=env,
                          timeout=300)


def test_an_error_is_printed_once_without_tensorflow_startup_noise(tmp_path):
    result = _main_stderr("--model=cnn", f"--model_dir={tmp_path}", f"--data_dir={tmp_path}")
    assert result.returncode == 1
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines[0].startswith("error: Fashion-MNIST train files") and "Traceback" not in result.stderr
    assert result.stderr.count("not found in --data_dir") == 1
    startup = _bare_tensorflow_startup_lines()
    cleaned = {re.sub(r"^[IWE]\d{4} [\d:.]+ +\d+ ", "", line) for line in lines}
    assert not startup & cleaned


def test_verbosity_1_shows_tensorflow_startup_and_the_traceback(tmp_path):
    result = _main_stderr("--model=cnn", f"--model_dir={tmp_path}", f"--data_dir={tmp_path}", "--verbosity=1")
    cleaned = {re.sub(r"^[IWE]\d{4} [\d:.]+ +\d+ ", "", line) for line in result.stderr.splitlines()}
    assert result.returncode == 1 and "Traceback" in result.stderr
    assert _bare_tensorflow_startup_lines() <= cleaned


def fashion_mnist_test_files(folder) -> None:
    import gzip
    import struct

    images = np.random.RandomState(0).randint(0, 256, (100, 28, 28), dtype=np.uint8)
    labels = np.arange(100, dtype=np.uint8) % 10
    with gzip.open(folder / "t10k-images-idx3-ubyte.gz", "wb") as f:
        f.write(struct.pack(">iiii", 2051, 100, 28, 28) + images.tobytes())
    with gzip.open(folder / "t10k-labels-idx1-ubyte.gz", "wb") as f:
        f.write(struct.pack(">ii", 2049, 100) + labels.tobytes())
