"""BERT-style fine-tuning on TPUEstimator from a pre-trained checkpoint: ported to estimators (imports only).

Modelled on google-research/bert at commit eedf5716ce1268e56f0a50264a88cafad334ac61:
run_classifier.py (model_fn_builder, create_model, file_based_convert_examples_to_features,
file_based_input_fn_builder, main), modeling.py (BertConfig, BertModel, embedding_lookup,
embedding_postprocessor, transformer_model, attention_layer, get_assignment_map_from_checkpoint) and
optimization.py (create_optimizer, AdamWeightDecayOptimizer). This is a re-creation written for this
test, not a copy: the structure and every TF1/TPUEstimator API the original uses are reproduced,
scaled down (2 layers, hidden size 32, 2 heads, vocabulary 64, sequences of 16 instead of BERT-Base's
12 x 768 over 30,522 word pieces and 128 tokens; batch 32; 150 steps), on seeded token sequences
(compat_support.token_sequences) instead of GLUE text, and in the TF 2.15 spelling the repository's
TF 2 forks use (`tensorflow.compat.v1`, `tf_estimator.tpu` for `tf.contrib.tpu`).

APIs exercised: `tf.variable_scope` / `tf.get_variable` with `tf.truncated_normal_initializer` for
every embedding, LayerNorm and classifier variable, `tf.layers.dense` for the attention and
feed-forward projections, `tf.nn.dropout(rate=)` in training only, `tf.train.list_variables` for the
assignment map and `tf.train.init_from_checkpoint(init_checkpoint, assignment_map)` called from a
TPUEstimatorSpec `scaffold_fn` that returns `tf.train.Scaffold()`; a `tf.train.Optimizer` subclass
(AdamWeightDecayOptimizer) whose own `apply_gradients` creates its `adam_m`/`adam_v` slots with
`tf.get_variable` and never increments the global step, fed by `tf.gradients` +
`tf.clip_by_global_norm`, with `global_step.assign(global_step + 1)` grouped into the train op by hand;
`tf.train.polynomial_decay` + linear warm-up on `tf.train.get_or_create_global_step()`;
`eval_metrics=(metric_fn, [per_example_loss, label_ids, logits, is_real_example])` with weighted
`tf.metrics.accuracy` and `tf.metrics.mean`; TFRecords written with `tf.python_io.TFRecordWriter` and
read with `tf.parse_single_example` and `tf.data.experimental.map_and_batch`; the tpu `RunConfig`
with `TPUConfig(iterations_per_loop, num_shards, per_host_input_for_training=PER_HOST_V2)`;
`TPUEstimator(use_tpu=False, train/eval/predict_batch_size)`; train, evaluate, predict.

The "pre-trained" checkpoint the original downloads (BERT-Base) is written by the program itself
first: the same BertModel is built in a `tf.Graph`, its variables are loaded with fixed values (a
numpy generator with its own seed, independent of --seed) and saved with `tf.train.Saver`, as
BERT's pre-training would leave them. The report's `checks.pretrained_correlation` is the correlation
of the fine-tuned encoder's weights with those values: near 1 when init_from_checkpoint loaded them,
near 0 when it did not. As on TF 2.15 with the original, the Estimator's loss summary is `loss_1`
(create_model's `tf.variable_scope("loss")` holds the name `loss`).

Deliberate differences from the original: init_from_checkpoint goes through `scaffold_fn` whatever
--use_tpu says (the original does so only on a TPU and calls it directly in model_fn otherwise), so
this CPU run takes the path TPU users took; BertModel is one function rather than a class; the
tokenizer and GLUE processors are gone (examples arrive as ids); a `--seed` goes to
RunConfig.tf_random_seed.
"""

import collections
import math
import os
import re

from absl import app, flags

import compat_support
import numpy as np
import tensorflow.compat.v1 as tf
import estimators

flags.DEFINE_string("model_dir", None, "Output directory (checkpoints, data, the pre-trained checkpoint).")
flags.DEFINE_string("init_checkpoint", None, "Pre-trained checkpoint (written when missing).")
flags.DEFINE_integer("max_seq_length", 16, "Sequence length after WordPiece tokenisation.")
flags.DEFINE_integer("train_batch_size", 32, "Total batch size for training.")
flags.DEFINE_integer("eval_batch_size", 32, "Total batch size for eval.")
flags.DEFINE_integer("predict_batch_size", 8, "Total batch size for predict.")
flags.DEFINE_float("learning_rate", 2e-3, "The initial learning rate for Adam.")
flags.DEFINE_integer("num_train_steps", 150, "Training steps.")
flags.DEFINE_float("warmup_proportion", 0.1, "Proportion of training for linear learning rate warm-up.")
flags.DEFINE_integer("save_checkpoints_steps", 1000, "How often to save the model checkpoint.")
flags.DEFINE_integer("iterations_per_loop", 50, "How many steps to make in each estimator call.")
flags.DEFINE_bool("use_tpu", False, "Whether to use TPU or GPU/CPU.")
flags.DEFINE_integer("num_tpu_cores", 8, "Only used if `use_tpu` is True.")
flags.DEFINE_integer("seed", 0, "RunConfig.tf_random_seed.")

FLAGS = flags.FLAGS

NUM_LABELS = 2
NUM_TRAIN_EXAMPLES = 2000
NUM_EVAL_EXAMPLES = 512
NUM_PREDICT_EXAMPLES = 10
PRETRAINED_SEED = 1234
PRETRAINED_STDDEV = 0.1


# -- modeling ----------------------------------------------------------------------------------------------------
class BertConfig:
    """Configuration for `bert_model`."""

    def __init__(self, vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                 intermediate_size=64, hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1,
                 max_position_embeddings=32, type_vocab_size=2, initializer_range=0.02):
        self.vocab_size = vocab_size
        self.hidden_size = hidden_size
        self.num_hidden_layers = num_hidden_layers
        self.num_attention_heads = num_attention_heads
        self.intermediate_size = intermediate_size
        self.hidden_dropout_prob = hidden_dropout_prob
        self.attention_probs_dropout_prob = attention_probs_dropout_prob
        self.max_position_embeddings = max_position_embeddings
        self.type_vocab_size = type_vocab_size
        self.initializer_range = initializer_range


def gelu(x):
    """Gaussian Error Linear Unit, tanh approximation."""
    return x * 0.5 * (1.0 + tf.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * tf.pow(x, 3))))


def create_initializer(initializer_range):
    return tf.truncated_normal_initializer(stddev=initializer_range)


def dropout(input_tensor, dropout_prob):
    if dropout_prob is None or dropout_prob == 0.0:
        return input_tensor
    return tf.nn.dropout(input_tensor, rate=dropout_prob)


def layer_norm(input_tensor, name=None):
    """Layer normalisation over the last axis, with `beta`/`gamma` variables under `name`."""
    with tf.variable_scope(name, default_name="LayerNorm"):
        width = input_tensor.shape[-1]
        beta = tf.get_variable("beta", [width], initializer=tf.zeros_initializer())
        gamma = tf.get_variable("gamma", [width], initializer=tf.ones_initializer())
        mean, variance = tf.nn.moments(input_tensor, [-1], keep_dims=True)
        return tf.nn.batch_normalization(input_tensor, mean, variance, beta, gamma, 1e-12)


def layer_norm_and_dropout(input_tensor, dropout_prob, name=None):
    return dropout(layer_norm(input_tensor, name), dropout_prob)


def embedding_lookup(input_ids, vocab_size, embedding_size, initializer_range, word_embedding_name):
    embedding_table = tf.get_variable(
        name=word_embedding_name, shape=[vocab_size, embedding_size],
        initializer=create_initializer(initializer_range))
    return tf.nn.embedding_lookup(embedding_table, input_ids), embedding_table


def embedding_postprocessor(input_tensor, token_type_ids, config, dropout_prob):
    """Adds token-type and position embeddings, then LayerNorm and dropout."""
    seq_length, width = input_tensor.shape.as_list()[1:]
    output = input_tensor
    token_type_table = tf.get_variable(
        name="token_type_embeddings", shape=[config.type_vocab_size, width],
        initializer=create_initializer(config.initializer_range))
    one_hot_ids = tf.one_hot(tf.reshape(token_type_ids, [-1]), depth=config.type_vocab_size)
    token_type_embeddings = tf.reshape(tf.matmul(one_hot_ids, token_type_table), [-1, seq_length, width])
    output += token_type_embeddings

    full_position_embeddings = tf.get_variable(
        name="position_embeddings", shape=[config.max_position_embeddings, width],
        initializer=create_initializer(config.initializer_range))
    position_embeddings = tf.slice(full_position_embeddings, [0, 0], [seq_length, -1])
    output += tf.expand_dims(position_embeddings, 0)
    return layer_norm_and_dropout(output, dropout_prob)


def attention_layer(from_tensor, to_mask, config, attention_dropout, batch_size, seq_length):
    """Multi-headed self-attention over a [batch * seq, width] tensor."""
    num_heads = config.num_attention_heads
    head_size = config.hidden_size // num_heads

    def project(name):
        return tf.layers.dense(from_tensor, num_heads * head_size, name=name,
                               kernel_initializer=create_initializer(config.initializer_range))

    def split_heads(tensor):
        tensor = tf.reshape(tensor, [batch_size, seq_length, num_heads, head_size])
        return tf.transpose(tensor, [0, 2, 1, 3])

    query, key, value = (split_heads(project(name)) for name in ("query", "key", "value"))
    scores = tf.matmul(query, key, transpose_b=True) * (1.0 / math.sqrt(float(head_size)))
    mask = tf.cast(tf.reshape(to_mask, [batch_size, 1, 1, seq_length]), tf.float32)
    scores += (1.0 - mask) * -10000.0
    probs = dropout(tf.nn.softmax(scores), attention_dropout)
    context = tf.transpose(tf.matmul(probs, value), [0, 2, 1, 3])
    return tf.reshape(context, [batch_size * seq_length, num_heads * head_size])


def transformer_model(input_tensor, attention_mask, config, hidden_dropout, attention_dropout):
    batch_size = tf.shape(input_tensor)[0]
    seq_length, width = input_tensor.shape.as_list()[1:]
    prev_output = tf.reshape(input_tensor, [-1, width])
    for layer_idx in range(config.num_hidden_layers):
        with tf.variable_scope(f"layer_{layer_idx}"):
            layer_input = prev_output
            with tf.variable_scope("attention"):
                with tf.variable_scope("self"):
                    attention_output = attention_layer(layer_input, attention_mask, config, attention_dropout,
                                                       batch_size, seq_length)
                with tf.variable_scope("output"):
                    attention_output = tf.layers.dense(
                        attention_output, width, kernel_initializer=create_initializer(config.initializer_range))
                    attention_output = dropout(attention_output, hidden_dropout)
                    attention_output = layer_norm(attention_output + layer_input)
            with tf.variable_scope("intermediate"):
                intermediate_output = tf.layers.dense(
                    attention_output, config.intermediate_size, activation=gelu,
                    kernel_initializer=create_initializer(config.initializer_range))
            with tf.variable_scope("output"):
                layer_output = tf.layers.dense(
                    intermediate_output, width, kernel_initializer=create_initializer(config.initializer_range))
                layer_output = dropout(layer_output, hidden_dropout)
                prev_output = layer_norm(layer_output + attention_output)
    return tf.reshape(prev_output, [batch_size, seq_length, width])


def bert_model(config, is_training, input_ids, input_mask, token_type_ids, scope=None):
    """BertModel's graph: returns the pooled [CLS] output [batch, hidden]."""
    hidden_dropout = config.hidden_dropout_prob if is_training else 0.0
    attention_dropout = config.attention_probs_dropout_prob if is_training else 0.0
    with tf.variable_scope(scope, default_name="bert"):
        with tf.variable_scope("embeddings"):
            embedding_output, _ = embedding_lookup(input_ids, config.vocab_size, config.hidden_size,
                                                   config.initializer_range, "word_embeddings")
            embedding_output = embedding_postprocessor(embedding_output, token_type_ids, config, hidden_dropout)
        with tf.variable_scope("encoder"):
            sequence_output = transformer_model(embedding_output, input_mask, config, hidden_dropout,
                                                attention_dropout)
        with tf.variable_scope("pooler"):
            first_token_tensor = tf.squeeze(sequence_output[:, 0:1, :], axis=1)
            return tf.layers.dense(first_token_tensor, config.hidden_size, activation=tf.tanh,
                                   kernel_initializer=create_initializer(config.initializer_range))


def get_assignment_map_from_checkpoint(tvars, init_checkpoint):
    """The map from checkpoint names to the current graph's variables that have one."""
    name_to_variable = collections.OrderedDict()
    for var in tvars:
        m = re.match("^(.*):\\d+$", var.name)
        name_to_variable[m.group(1) if m else var.name] = var
    assignment_map = collections.OrderedDict()
    initialized_variable_names = {}
    for name, _ in tf.train.list_variables(init_checkpoint):
        if name not in name_to_variable:
            continue
        assignment_map[name] = name
        initialized_variable_names[name] = 1
        initialized_variable_names[name + ":0"] = 1
    return assignment_map, initialized_variable_names


# -- optimization -----------------------------------------------------------------------------------------------
class AdamWeightDecayOptimizer(tf.train.Optimizer):
    """Adam with decoupled L2 weight decay; its own apply_gradients, no slots API, no global step."""

    def __init__(self, learning_rate, weight_decay_rate=0.0, beta_1=0.9, beta_2=0.999, epsilon=1e-6,
                 exclude_from_weight_decay=None, name="AdamWeightDecayOptimizer"):
        super().__init__(False, name)
        self.learning_rate = learning_rate
        self.weight_decay_rate = weight_decay_rate
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon
        self.exclude_from_weight_decay = exclude_from_weight_decay

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        assignments = []
        for grad, param in grads_and_vars:
            if grad is None or param is None:
                continue
            param_name = self._get_variable_name(param.name)
            m = tf.get_variable(name=param_name + "/adam_m", shape=param.shape.as_list(), dtype=tf.float32,
                                trainable=False, initializer=tf.zeros_initializer())
            v = tf.get_variable(name=param_name + "/adam_v", shape=param.shape.as_list(), dtype=tf.float32,
                                trainable=False, initializer=tf.zeros_initializer())
            next_m = tf.multiply(self.beta_1, m) + tf.multiply(1.0 - self.beta_1, grad)
            next_v = tf.multiply(self.beta_2, v) + tf.multiply(1.0 - self.beta_2, tf.square(grad))
            update = next_m / (tf.sqrt(next_v) + self.epsilon)
            if self._do_use_weight_decay(param_name):
                update += self.weight_decay_rate * param
            next_param = param - self.learning_rate * update
            assignments.extend([param.assign(next_param), m.assign(next_m), v.assign(next_v)])
        return tf.group(*assignments, name=name)

    def _do_use_weight_decay(self, param_name):
        if not self.weight_decay_rate:
            return False
        for r in self.exclude_from_weight_decay or ():
            if re.search(r, param_name) is not None:
                return False
        return True

    def _get_variable_name(self, param_name):
        m = re.match("^(.*):\\d+$", param_name)
        return m.group(1) if m is not None else param_name


def create_optimizer(loss, init_lr, num_train_steps, num_warmup_steps, use_tpu):
    global_step = tf.train.get_or_create_global_step()
    learning_rate = tf.constant(value=init_lr, shape=[], dtype=tf.float32)
    learning_rate = tf.train.polynomial_decay(learning_rate, global_step, num_train_steps,
                                              end_learning_rate=0.0, power=1.0, cycle=False)
    if num_warmup_steps:
        global_steps_int = tf.cast(global_step, tf.int32)
        warmup_steps_int = tf.constant(num_warmup_steps, dtype=tf.int32)
        warmup_percent_done = tf.cast(global_steps_int, tf.float32) / tf.cast(warmup_steps_int, tf.float32)
        warmup_learning_rate = init_lr * warmup_percent_done
        is_warmup = tf.cast(global_steps_int < warmup_steps_int, tf.float32)
        learning_rate = (1.0 - is_warmup) * learning_rate + is_warmup * warmup_learning_rate

    optimizer = AdamWeightDecayOptimizer(
        learning_rate=learning_rate, weight_decay_rate=0.01, beta_1=0.9, beta_2=0.999, epsilon=1e-6,
        exclude_from_weight_decay=["LayerNorm", "layer_norm", "bias"])
    if use_tpu:
        optimizer = estimators.CrossShardOptimizer(optimizer)

    tvars = tf.trainable_variables()
    grads = tf.gradients(loss, tvars)
    grads, _ = tf.clip_by_global_norm(grads, clip_norm=1.0)
    train_op = optimizer.apply_gradients(zip(grads, tvars, strict=True), global_step=global_step)
    # AdamWeightDecayOptimizer does not increment the global step: do it here.
    new_global_step = global_step + 1
    return tf.group(train_op, [global_step.assign(new_global_step)])


# -- run_classifier ---------------------------------------------------------------------------------------------
def create_model(bert_config, is_training, input_ids, input_mask, segment_ids, labels, num_labels):
    output_layer = bert_model(bert_config, is_training, input_ids, input_mask, segment_ids)
    hidden_size = output_layer.shape[-1]
    output_weights = tf.get_variable("output_weights", [num_labels, hidden_size],
                                     initializer=tf.truncated_normal_initializer(stddev=0.02))
    output_bias = tf.get_variable("output_bias", [num_labels], initializer=tf.zeros_initializer())
    with tf.variable_scope("loss"):
        if is_training:
            output_layer = tf.nn.dropout(output_layer, rate=0.1)
        logits = tf.nn.bias_add(tf.matmul(output_layer, output_weights, transpose_b=True), output_bias)
        probabilities = tf.nn.softmax(logits, axis=-1)
        log_probs = tf.nn.log_softmax(logits, axis=-1)
        one_hot_labels = tf.one_hot(labels, depth=num_labels, dtype=tf.float32)
        per_example_loss = -tf.reduce_sum(one_hot_labels * log_probs, axis=-1)
        loss = tf.reduce_mean(per_example_loss)
        return loss, per_example_loss, logits, probabilities


def model_fn_builder(bert_config, num_labels, init_checkpoint, learning_rate, num_train_steps, num_warmup_steps,
                     use_tpu):
    """Returns `model_fn` closure for TPUEstimator."""

    def model_fn(features, labels, mode, params):
        del labels, params
        tf.logging.info("*** Features ***")
        for name in sorted(features.keys()):
            tf.logging.info("  name = %s, shape = %s", name, features[name].shape)

        input_ids = features["input_ids"]
        input_mask = features["input_mask"]
        segment_ids = features["segment_ids"]
        label_ids = features["label_ids"]
        if "is_real_example" in features:
            is_real_example = tf.cast(features["is_real_example"], dtype=tf.float32)
        else:
            is_real_example = tf.ones(tf.shape(label_ids), dtype=tf.float32)

        is_training = mode == estimators.ModeKeys.TRAIN
        total_loss, per_example_loss, logits, probabilities = create_model(
            bert_config, is_training, input_ids, input_mask, segment_ids, label_ids, num_labels)

        tvars = tf.trainable_variables()
        initialized_variable_names = {}
        scaffold_fn = None
        if init_checkpoint:
            assignment_map, initialized_variable_names = get_assignment_map_from_checkpoint(tvars, init_checkpoint)

            def tpu_scaffold():
                tf.train.init_from_checkpoint(init_checkpoint, assignment_map)
                return tf.train.Scaffold()

            scaffold_fn = tpu_scaffold

        tf.logging.info("**** Trainable Variables ****")
        for var in tvars:
            init_string = ", *INIT_FROM_CKPT*" if var.name in initialized_variable_names else ""
            tf.logging.info("  name = %s, shape = %s%s", var.name, var.shape, init_string)

        if mode == estimators.ModeKeys.TRAIN:
            train_op = create_optimizer(total_loss, learning_rate, num_train_steps, num_warmup_steps, use_tpu)
            return estimators.TPUEstimatorSpec(
                mode=mode, loss=total_loss, train_op=train_op, scaffold_fn=scaffold_fn)
        if mode == estimators.ModeKeys.EVAL:

            def metric_fn(per_example_loss, label_ids, logits, is_real_example):
                predictions = tf.argmax(logits, axis=-1, output_type=tf.int32)
                accuracy = tf.metrics.accuracy(labels=label_ids, predictions=predictions, weights=is_real_example)
                loss = tf.metrics.mean(values=per_example_loss, weights=is_real_example)
                return {"eval_accuracy": accuracy, "eval_loss": loss}

            eval_metrics = (metric_fn, [per_example_loss, label_ids, logits, is_real_example])
            return estimators.TPUEstimatorSpec(
                mode=mode, loss=total_loss, eval_metrics=eval_metrics, scaffold_fn=scaffold_fn)
        return estimators.TPUEstimatorSpec(
            mode=mode, predictions={"probabilities": probabilities}, scaffold_fn=scaffold_fn)

    return model_fn


def file_based_convert_examples_to_features(examples, output_file):
    """Writes the (already tokenised) examples as tf.train.Examples, as run_classifier does."""
    writer = tf.python_io.TFRecordWriter(output_file)

    def create_int_feature(values):
        return tf.train.Feature(int64_list=tf.train.Int64List(value=list(values)))

    for i in range(len(examples["label_ids"])):
        features = collections.OrderedDict()
        features["input_ids"] = create_int_feature(examples["input_ids"][i])
        features["input_mask"] = create_int_feature(examples["input_mask"][i])
        features["segment_ids"] = create_int_feature(examples["segment_ids"][i])
        features["label_ids"] = create_int_feature([examples["label_ids"][i]])
        features["is_real_example"] = create_int_feature([1])
        tf_example = tf.train.Example(features=tf.train.Features(feature=features))
        writer.write(tf_example.SerializeToString())
    writer.close()


def file_based_input_fn_builder(input_file, seq_length, is_training, drop_remainder):
    name_to_features = {
        "input_ids": tf.FixedLenFeature([seq_length], tf.int64),
        "input_mask": tf.FixedLenFeature([seq_length], tf.int64),
        "segment_ids": tf.FixedLenFeature([seq_length], tf.int64),
        "label_ids": tf.FixedLenFeature([], tf.int64),
        "is_real_example": tf.FixedLenFeature([], tf.int64),
    }

    def _decode_record(record, name_to_features):
        example = tf.parse_single_example(record, name_to_features)
        # tf.Example only supports tf.int64, but the TPU only supports tf.int32.
        for name in list(example.keys()):
            t = example[name]
            if t.dtype == tf.int64:
                t = tf.to_int32(t)
            example[name] = t
        return example

    def input_fn(params):
        batch_size = params["batch_size"]
        d = tf.data.TFRecordDataset(input_file)
        if is_training:
            d = d.repeat()
            d = d.shuffle(buffer_size=100)
        d = d.apply(tf.data.experimental.map_and_batch(
            lambda record: _decode_record(record, name_to_features),
            batch_size=batch_size, drop_remainder=drop_remainder))
        return d

    return input_fn


# -- the "pre-trained" checkpoint ----------------------------------------------------------------------------------
def pretrained_values(bert_config):
    """name -> the value BERT's pre-training left: fixed numpy draws (LayerNorm gamma 1, beta 0)."""
    rng = np.random.RandomState(PRETRAINED_SEED)
    with tf.Graph().as_default():
        ids = tf.placeholder(tf.int32, [None, FLAGS.max_seq_length])
        bert_model(bert_config, False, ids, ids, ids)
        shapes = [(v.op.name, v.shape.as_list()) for v in tf.global_variables()]
    values = {}
    for name, shape in shapes:
        if name.endswith("/gamma"):
            values[name] = np.ones(shape, np.float32)
        elif name.endswith("/beta"):
            values[name] = np.zeros(shape, np.float32)
        else:
            values[name] = rng.normal(0.0, PRETRAINED_STDDEV, shape).astype(np.float32)
    return values


def write_pretrained_checkpoint(bert_config, init_checkpoint):
    """BertModel in a graph, loaded with the pre-trained values, saved with tf.train.Saver."""
    values = pretrained_values(bert_config)
    with tf.Graph().as_default():
        ids = tf.placeholder(tf.int32, [None, FLAGS.max_seq_length])
        bert_model(bert_config, False, ids, ids, ids)
        saver = tf.train.Saver(tf.global_variables())
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for var in tf.global_variables():
                var.load(values[var.op.name], sess)
            saver.save(sess, init_checkpoint, write_meta_graph=False)
    return values


def main(_):
    tf.logging.set_verbosity(tf.logging.INFO)
    bert_config = BertConfig(vocab_size=64)
    data_dir = os.path.join(FLAGS.model_dir, "data")
    tf.gfile.MakeDirs(data_dir)
    init_checkpoint = FLAGS.init_checkpoint or os.path.join(FLAGS.model_dir, "pretrained", "bert_model.ckpt")
    tf.gfile.MakeDirs(os.path.dirname(init_checkpoint))
    pretrained = write_pretrained_checkpoint(bert_config, init_checkpoint)

    train_examples = compat_support.token_sequences(NUM_TRAIN_EXAMPLES, seed=1, seq_length=FLAGS.max_seq_length)
    eval_examples = compat_support.token_sequences(NUM_EVAL_EXAMPLES, seed=2, seq_length=FLAGS.max_seq_length)
    predict_examples = compat_support.token_sequences(NUM_PREDICT_EXAMPLES, seed=3, seq_length=FLAGS.max_seq_length)

    tpu_cluster_resolver = None
    is_per_host = estimators.InputPipelineConfig.PER_HOST_V2
    run_config = estimators.tpu.RunConfig(
        cluster=tpu_cluster_resolver,
        model_dir=FLAGS.model_dir,
        tf_random_seed=FLAGS.seed,
        save_checkpoints_steps=FLAGS.save_checkpoints_steps,
        tpu_config=estimators.TPUConfig(
            iterations_per_loop=FLAGS.iterations_per_loop,
            num_shards=FLAGS.num_tpu_cores,
            per_host_input_for_training=is_per_host))

    num_train_steps = FLAGS.num_train_steps
    num_warmup_steps = int(num_train_steps * FLAGS.warmup_proportion)
    model_fn = model_fn_builder(
        bert_config=bert_config, num_labels=NUM_LABELS, init_checkpoint=init_checkpoint,
        learning_rate=FLAGS.learning_rate, num_train_steps=num_train_steps, num_warmup_steps=num_warmup_steps,
        use_tpu=FLAGS.use_tpu)
    estimator = estimators.TPUEstimator(
        use_tpu=FLAGS.use_tpu,
        model_fn=model_fn,
        config=run_config,
        train_batch_size=FLAGS.train_batch_size,
        eval_batch_size=FLAGS.eval_batch_size,
        predict_batch_size=FLAGS.predict_batch_size)

    train_file = os.path.join(data_dir, "train.tf_record")
    file_based_convert_examples_to_features(train_examples, train_file)
    tf.logging.info("***** Running training *****")
    tf.logging.info("  Num examples = %d", NUM_TRAIN_EXAMPLES)
    tf.logging.info("  Batch size = %d", FLAGS.train_batch_size)
    tf.logging.info("  Num steps = %d", num_train_steps)
    train_input_fn = file_based_input_fn_builder(
        input_file=train_file, seq_length=FLAGS.max_seq_length, is_training=True, drop_remainder=True)
    estimator.train(input_fn=train_input_fn, max_steps=num_train_steps)

    eval_file = os.path.join(data_dir, "eval.tf_record")
    file_based_convert_examples_to_features(eval_examples, eval_file)
    eval_steps = None
    eval_drop_remainder = True if FLAGS.use_tpu else False
    eval_input_fn = file_based_input_fn_builder(
        input_file=eval_file, seq_length=FLAGS.max_seq_length, is_training=False, drop_remainder=eval_drop_remainder)
    result = estimator.evaluate(input_fn=eval_input_fn, steps=eval_steps)
    for key in sorted(result.keys()):
        tf.logging.info("  %s = %s", key, str(result[key]))

    predict_file = os.path.join(data_dir, "predict.tf_record")
    file_based_convert_examples_to_features(predict_examples, predict_file)
    predict_input_fn = file_based_input_fn_builder(
        input_file=predict_file, seq_length=FLAGS.max_seq_length, is_training=False, drop_remainder=False)
    predictions = list(estimator.predict(input_fn=predict_input_fn))

    # Did fine-tuning start from the pre-trained values? The correlation of the fine-tuned encoder's
    # weights with them (LayerNorm's constant gamma/beta left out): 0 for a fresh initialisation.
    encoder = [name for name in sorted(pretrained) if not name.endswith(("/gamma", "/beta"))]
    fine_tuned = np.concatenate([estimator.get_variable_value(name).ravel() for name in encoder])
    original = np.concatenate([pretrained[name].ravel() for name in encoder])
    correlation = float(np.corrcoef(fine_tuned, original)[0, 1])
    compat_support.emit({
        "program": "bert_finetune",
        "eval": result,
        # model_fn's tf.variable_scope("loss") took the name: 2.15 wrote the Estimator's loss as `loss_1`.
        "loss_curve": compat_support.loss_curve(FLAGS.model_dir, tag="loss_1"),
        "summary_tags": sorted(compat_support.scalar_events(FLAGS.model_dir)),
        "predictions": compat_support.prediction_summary(predictions, predict_examples["label_ids"]),
        "variables": compat_support.variables(estimator),
        "checks": {"pretrained_correlation": correlation},
    })


if __name__ == "__main__":
    flags.mark_flag_as_required("model_dir")
    app.run(main)
