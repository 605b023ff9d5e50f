"""pytest plugin loaded in both halves: what each upstream file's `tf.test.main()` block did first.

Under pytest a test file's `if __name__ == '__main__':` block does not run, so this plugin does,
before the file is imported, what that block did besides calling tf.test.main():
* absl flags are marked parsed (tf.test.main() parses argv); the TPU tests read flags they define,
  such as FLAGS.test_num_shards, which would otherwise raise UnparsedFlagAccessError;
* MAIN_PREAMBLE: the calls some files make before tf.test.main(), copied here by file name.
"""

import os

from absl import flags

MAIN_PREAMBLE = {
    # file name -> the call its __main__ block makes before tf.test.main()
    "object_checkpointing_test.py": "enable_eager_execution",
    "tpu_estimator_input_v2_test.py": "disable_v2_behavior",
    "tpu_estimator_test.py": "disable_v2_behavior",
    "tpu_estimator_export_test.py": "disable_v2_behavior",
    "tpu_estimator_gradients_test.py": "disable_v2_behavior",
    "tpu_estimator_integration_test.py": "disable_v2_behavior",
}


def pytest_configure(config):
    if not flags.FLAGS.is_parsed():
        flags.FLAGS.mark_as_parsed()
    if os.environ.get("ORACLE_NO_PREAMBLE"):
        return
    calls = {MAIN_PREAMBLE[os.path.basename(str(a))] for a in config.args
             if os.path.basename(str(a)) in MAIN_PREAMBLE}
    if calls:
        import tensorflow as tf

        for call in sorted(calls):
            getattr(tf.compat.v1, call)()
