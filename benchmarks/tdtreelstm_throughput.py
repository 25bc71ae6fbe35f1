"""Training words/s and scoring sentences/s of the TD-TreeLSTM against a
`keras.layers.LSTM` language model of the same size, on the same words.

Both models read the same batches of WSJ sentences (the WSJ sample's
dependency trees, or random trees of WSJ-like lengths without the data):
the TD-TreeLSTM (preset `wsj`: embeddings 100, 2 layers of 200, dropout
0.2, full softmax) along their trees, the sequential model (Embedding 100,
two `keras.layers.LSTM(200)`, dropout 0.2, Dense softmax) left to right
from a `<root>` symbol; each predicts every word once. Both train steps are
XLA-compiled (`jit_compile=True`) unless `--no-jit`; batches are padded to
lengths of a multiple of 8 and warmed up on every shape first, so that
compilation is not timed; the models are then timed batch by batch,
interleaved, in `--repeats` rounds, each keeping its fastest time of each
batch (the load of a shared machine drifts). The tree model runs three
ways:

- `tree_schedule` (the default of the model's batches): the steps of the
  batch's trees in an action-homogeneous schedule prepared with the batch
  (`inputs.action_schedule`, iterations of at most `--schedule-rows`
  steps, one action each), so each iteration multiplies by one LSTM's
  kernel;
- `tree_gates`: generation order, the four actions' gate pre-activations
  from one fused matmul, each row keeping its own (`selection="gates"`);
- `tree_states`: generation order, the naive way (`selection="states"`,
  four whole LSTM steps per step).

The schedules are built before timing (they are prepared in the input
pipeline, off the training step); `schedule_ms_per_batch` says what they
cost in NumPy.

Prints one JSON object. The target: the tree model costs at most 1.5x the
sequential one per training word.

    python benchmarks/tdtreelstm_throughput.py --data ../shared/data/wsj_sample/dep
"""

import argparse
import json
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from keras_ordered.datasets import dependency  # noqa: E402
from keras_ordered.models import TDTreeLSTMLanguageModel  # noqa: E402
from keras_ordered.training.batching import TreeBatches  # noqa: E402
from keras_ordered.models.tdtreelstm import get_preset  # noqa: E402
from keras_ordered.models.tdtreelstm.inputs import encode_tree  # noqa: E402
from keras_ordered.models.tdtreelstm.inputs import action_schedule  # noqa: E402


def sequential_model(vocabulary_size, config):
    """Embedding -> L x LSTM -> dropout -> Dense softmax, same sizes."""
    inputs = keras.Input((None,), dtype="int32")
    x = keras.layers.Embedding(vocabulary_size, config["embedding_dim"])(inputs)
    for _ in range(config["num_layers"]):
        x = keras.layers.LSTM(config["units"], return_sequences=True)(x)
    x = keras.layers.Dropout(config["dropout"])(x)
    logits = keras.layers.Dense(vocabulary_size)(x)
    return keras.Model(inputs, logits)


def sequential_batches(encoded, batches):
    """`(inputs, targets)` of the same sentences, left to right: the input is
    `<root> w_1 .. w_{n-1}`, the targets `w_1 .. w_n` (0 = padding)."""
    out = []
    for indices in batches:
        steps = max(len(encoded[i]["targets"]) for i in indices)
        steps = int(np.ceil(steps / 8) * 8)
        x = np.zeros((len(indices), steps), "int32")
        y = np.zeros((len(indices), steps), "int32")
        for row, i in enumerate(indices):
            order = np.argsort(encoded[i]["positions"])
            words = np.asarray(encoded[i]["targets"])[order]
            x[row, 0] = 2
            x[row, 1:len(words)] = words[:-1]
            y[row, :len(words)] = words
        out.append((x, y))
    return out


def load_trees(args):
    if args.data:
        trees, _ = dependency.load_split(args.data, dependency.SAMPLE_SPLITS["train"])
        return [(t.words, t.heads) for t in trees]
    rng = np.random.default_rng(0)
    trees = []
    for _ in range(2000):
        n = int(np.clip(rng.gamma(4.0, 6.0), 2, 100))
        root = int(rng.integers(1, n + 1))
        heads = [0] * n
        order = [root] + [w for w in rng.permutation(n) + 1 if w != root]
        for k, w in enumerate(order[1:], 1):
            heads[w - 1] = int(order[rng.integers(0, k)])
        trees.append(([f"w{rng.integers(0, 5000)}" for _ in range(n)], heads))
    return trees


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=None,
                        help="folder of the WSJ sample's dependency trees "
                        "(default: random trees of WSJ-like lengths)")
    parser.add_argument("--preset", default="wsj")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--batches", type=int, default=8,
                        help="distinct batches timed (default 8)")
    parser.add_argument("--repeats", type=int, default=3,
                        help="interleaved timing rounds; each model's fastest "
                        "time of each batch is kept (default 3)")
    parser.add_argument("--schedule-rows", type=int, nargs="+", default=[32],
                        help="rows per iteration of the action-homogeneous "
                        "schedule; several values time one variant each "
                        "(default 32)")
    parser.add_argument("--no-jit", action="store_true")
    args = parser.parse_args(argv)
    keras.utils.set_random_seed(0)
    trees = load_trees(args)
    vocabulary = dependency.DependencyVocabulary.from_sentences(
        (w for w, _ in trees), min_count=2)
    encoded = [encode_tree(vocabulary.encode(w), h) for w, h in trees]
    config = get_preset(args.preset)["model"]
    batcher = TreeBatches(encoded, args.batch_size, seed=0, left_context=False,
                          schedule_rows=None)
    chosen = batcher.batch_indices(0)[:args.batches]
    words = sum(len(encoded[i]["targets"]) for b in chosen for i in b)
    sentences = sum(len(b) for b in chosen)
    jit = not args.no_jit
    result = {
        "preset": args.preset, "vocabulary": len(vocabulary),
        "batch_size": args.batch_size, "batches": len(chosen),
        "words_per_pass": words, "mean_length": round(words / sentences, 1),
        "jit_compile": jit, "device": "GPU" if tf.config.list_physical_devices(
            "GPU") else "CPU", "threads": os.cpu_count(),
        "data": "WSJ sample dependency trees" if args.data else "random trees",
    }

    tree_inputs = [{k: tf.constant(v) for k, v in batcher.arrays(b).items()}
                   for b in chosen]
    seq_batches = [tuple(tf.constant(a) for a in batch)
                   for batch in sequential_batches(encoded, chosen)]
    variants = {}  # name -> (selection, batches)
    for rows in args.schedule_rows:
        started = time.perf_counter()
        scheduled = []
        for inputs in tree_inputs:
            lengths = np.sum(np.asarray(inputs["targets"]) > 0, axis=1)
            schedule = action_schedule(np.asarray(inputs["actions"]),
                                       np.asarray(inputs["sources"]), lengths,
                                       rows=rows, pad_to=4 * batcher.pad_to)
            scheduled.append(dict(inputs, schedule=tf.constant(schedule)))
        elapsed = (time.perf_counter() - started) / len(tree_inputs)
        name = ("tree_schedule" if len(args.schedule_rows) == 1
                else f"tree_schedule_{rows}")
        variants[name] = ("gates", scheduled)
        result.setdefault("schedules", {})[name] = {
            "rows": rows,
            "iterations_per_batch": [
                int(np.sum(np.asarray(b["schedule"])[:, 0] < b["targets"].shape[0]
                           * b["targets"].shape[1])) for b in scheduled],
            "padded_iterations_per_batch": [int(b["schedule"].shape[0])
                                            for b in scheduled],
            "steps_per_batch": [int(np.sum(np.asarray(b["targets"]) > 0))
                                for b in scheduled],
            "schedule_ms_per_batch": round(1000 * elapsed, 1),
        }
    result["generation_order_iterations_per_batch"] = [
        int(b["targets"].shape[1]) for b in tree_inputs]
    variants["tree_gates"] = ("gates", tree_inputs)
    variants["tree_states"] = ("states", tree_inputs)
    functions = {}  # name -> (train step, score step, batches, parameters)
    for name, (selection, batches) in variants.items():
        model = TDTreeLSTMLanguageModel(vocabulary, **config, seed=0)
        model.tree_lstm.selection = selection
        optimizer = keras.optimizers.SGD(1.0)
        optimizer.build(model.trainable_variables)

        @tf.function(jit_compile=jit, reduce_retracing=True)
        def train_step(inputs, model=model, optimizer=optimizer):
            with tf.GradientTape() as tape:
                total, _ = model.objective(inputs, training=True)
                loss = total / tf.cast(tf.shape(inputs["targets"])[0], tf.float32)
            grads = tape.gradient(loss, model.trainable_variables)
            grads, _ = tf.clip_by_global_norm(grads, 5.0)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            return loss

        @tf.function(jit_compile=jit, reduce_retracing=True)
        def score_step(inputs, model=model):
            return model(inputs, training=False)

        functions[name] = (train_step, score_step, batches,
                           int(model.count_params()))

    sequential = sequential_model(len(vocabulary), config)
    seq_optimizer = keras.optimizers.SGD(1.0)
    seq_optimizer.build(sequential.trainable_variables)

    @tf.function(jit_compile=jit, reduce_retracing=True)
    def seq_train(batch):
        x, y = batch
        with tf.GradientTape() as tape:
            logits = sequential(x, training=True)
            mask = tf.cast(y > 0, tf.float32)
            nll = tf.nn.sparse_softmax_cross_entropy_with_logits(y, logits)
            loss = tf.reduce_sum(nll * mask) / tf.cast(tf.shape(y)[0], tf.float32)
        grads = tape.gradient(loss, sequential.trainable_variables)
        grads, _ = tf.clip_by_global_norm(grads, 5.0)
        seq_optimizer.apply_gradients(zip(grads, sequential.trainable_variables))
        return loss

    @tf.function(jit_compile=jit, reduce_retracing=True)
    def seq_score(batch):
        x, y = batch
        return -tf.nn.sparse_softmax_cross_entropy_with_logits(
            y, sequential(x, training=False))

    functions["sequential_lstm"] = (seq_train, seq_score, seq_batches,
                                    int(sequential.count_params()))
    # Warm up every shape of every function, then time the models batch by
    # batch, interleaved (batch k of every model, then batch k + 1, ...),
    # and keep each model's fastest time of each batch over the rounds:
    # the machine's load drifts, and the fastest step is the least
    # disturbed one.
    for train_step, score_step, batches, _ in functions.values():
        for batch in batches:
            train_step(batch)
            score_step(batch)
    best = {name: np.full((2, len(chosen)), np.inf) for name in functions}
    for _ in range(args.repeats):
        for b in range(len(chosen)):
            for name, (train_step, score_step, batches, _) in functions.items():
                for k, step in enumerate((train_step, score_step)):
                    started = time.perf_counter()
                    np.asarray(step(batches[b]))
                    best[name][k, b] = min(best[name][k, b],
                                           time.perf_counter() - started)
    best = {name: times.sum(axis=1) for name, times in best.items()}
    for name, (_, _, _, parameters) in functions.items():
        result[name] = {
            "train_words_per_second": round(words / best[name][0], 1),
            "score_sentences_per_second": round(sentences / best[name][1], 1),
            "parameters": parameters,
        }
    base = result["sequential_lstm"]["train_words_per_second"]
    for name in variants:
        tree = result[name]
        tree["train_cost_per_word_vs_sequential"] = round(
            base / tree["train_words_per_second"], 2)
        tree["score_cost_per_sentence_vs_sequential"] = round(
            result["sequential_lstm"]["score_sentences_per_second"]
            / tree["score_sentences_per_second"], 2)
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
