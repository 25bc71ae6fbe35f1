"""How fast could a training step be? Its matrix products alone, as JSON.

A training step of ON-LSTM or PRPN is, by FLOPs, matrix products; the
issue's goal for the default path is 75 % of the same process's 2048 x 2048
float32 product rate (`keras_ordered.training.throughput` counts the
FLOPs). This script
asks how much of that rate the step's products reach by themselves, with
nothing else in the step: no gate math, no dropout, no optimizer, no loop.

It builds, from a preset's model, a TensorFlow program of only the step's
products, at their shapes and in their order:

- `batched`: the products that do not depend on the recurrence, over all
  `batch x window` rows at once: each layer's input projection forward,
  its input gradient and its kernel gradients backward, the parsing
  convolution (PRPN) as a product over the unfolded look-back, PRPN's
  predict network and the tied output projection, forward and backward;
- `per_step`: the recurrences' products, `window` steps of `batch` rows,
  each step's first product fed by the step before (unrolled: no loop
  overhead): ON-LSTM's `h_{t-1} @ U` forward and `dz_t @ U^T` backward
  (the kernel transposed once, as the AVX-512 path does); PRPN's attention
  query from `h_{t-1}`, the scores against the memory and the read-out of
  `h` and `c` (batched products over the 15 slots), and the LSTM's
  recurrent product from the read-out, forward, and their transposes
  backward (the memory's gradients beside the chain).

Each program is timed alone (best of `--repeats` calls), then `batched`
and `per_step` together as one step (`products`), and the real training
step (`keras_ordered.training.throughput.training_step`: the recipe's
`train_step`, every dropout, clipping, carried state, the optimizer) in the same process,
alternating with the 2048 x 2048 product chain. FLOPs are counted from
the programs' shapes and, for the step, as
`keras_ordered.training.throughput` counts them (the two counts are printed; they agree to a few per cent: the
program leaves out PRPN's distance heads and gate biases).

`products_fraction_of_matmul` is then what the step's fraction of the
matmul rate (the best of the run's product chains) would be if everything
else in it were free; `parts_fraction_of_matmul` adds the times of the
`batched` and `per_step` programs run apart instead, for a schedule in
which neither kind slows the other. `recurrent_product_gflops_by_rows`
gives the rate of a chain of products by the largest recurrent kernel at
the batch's rows, 64, 200 and all the window's rows: what a per-step
product loses to its few rows alone. Where these are under 0.75, the goal
cannot be met by this arithmetic at this batch and window on this
machine, however the rest of the step is written.

    python benchmarks/step_bound.py --model onlstm --preset ptb
    python benchmarks/step_bound.py --model prpn --preset ptb
"""

import argparse
import json
import os
import time

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("KERAS_ORDERED_QUIET", "1")

import keras_ordered  # noqa: E402,F401  (first: it sets the process up)
from keras_ordered._cpu import describe_cpu  # noqa: E402
from keras_ordered.training import throughput  # noqa: E402


class Program:
    """Products of one training step, written out; counts their FLOPs."""

    def __init__(self, batch, window, seed=0):
        import tensorflow as tf

        self.tf = tf
        self.batch = batch
        self.window = window
        self.rows = batch * window
        self.flops = 0
        self._rng = tf.random.Generator.from_seed(seed)
        self.weights = []
        self.products = []

    def weight(self, *shape):
        w = self.tf.Variable(
            self._rng.normal(shape) / float(shape[-2]) ** 0.5, trainable=False)
        self.weights.append(w)
        return w

    def values(self, *shape):
        """Random values standing for states and inputs: never zeros, which
        TensorFlow's graph optimizer would fold through the products."""
        v = self.tf.Variable(self._rng.normal(shape), trainable=False)
        self.weights.append(v)
        return v

    def matmul(self, a, b, transpose_a=False, transpose_b=False):
        m = a.shape[1] if transpose_a else a.shape[0]
        k = a.shape[0] if transpose_a else a.shape[1]
        n = b.shape[0] if transpose_b else b.shape[1]
        self.flops += 2 * m * k * n
        return self._keep(self.tf.matmul(a, b, transpose_a=transpose_a,
                                         transpose_b=transpose_b))

    def einsum(self, equation, a, b, macs):
        self.flops += 2 * macs
        return self._keep(self.tf.einsum(equation, a, b))

    def _keep(self, product):
        # Every product reaches the program's output, so that the graph
        # optimizer prunes none (a chain whose end nothing reads would be
        # counted and not run).
        self.products.append(product)
        return product

    def fit(self, x, width):
        """`x` cut or repeated to `width` columns (feeds the next product)."""
        if x.shape[1] >= width:
            return x[:, :width]
        repeats = -(-width // x.shape[1])
        return self.tf.tile(x, (1, repeats))[:, :width]


def _dense_forward_backward(p, x, kernel):
    """`y = x @ W`, then `dx = dy @ W^T` and `dW = x^T @ dy` (dy = y)."""
    y = p.matmul(x, kernel)
    dx = p.matmul(y, kernel, transpose_b=True)
    dw = p.matmul(x, y, transpose_a=True)
    return y, dx, dw


def onlstm_program(model, batch, window, parts):
    """The products of an ON-LSTM training step (see the module docstring)."""
    p = Program(batch, window)
    tf = p.tf
    layers = []
    inputs = model.embedding_dim
    for layer in model.rnn_layers:
        cell = layer.cell
        layers.append((p.weight(inputs, cell.gate_size),
                       p.weight(cell.units, cell.gate_size), cell.units))
        inputs = cell.units
    vocabulary = p.weight(model.embedding_dim, model.vocabulary_size)
    x0 = p.values(p.rows, model.embedding_dim)
    starts = {units: p.values(batch, units) for _, _, units in layers}
    inputs_alone = {u.shape[1]: p.values(p.rows, u.shape[1])
                    for _, u, _ in layers}
    transposed = [tf.Variable(tf.transpose(u), trainable=False)
                  for _, u, _ in layers]

    def run():
        out = []
        x = x0
        hs_all = []
        for (w_in, u, units) in layers:
            gates = u.shape[1]
            z_in = (p.matmul(x, w_in) if "batched" in parts
                    else inputs_alone[gates])
            h = starts[units]
            hs = []
            for t in range(window):
                if "per_step" in parts:
                    z = z_in[t * batch:(t + 1) * batch] + p.matmul(h, u)
                else:
                    z = z_in[t * batch:(t + 1) * batch]
                h = z[:, :units]
                hs.append(h)
            hs_all.append((x, tf.concat(hs, 0)))
            x = hs_all[-1][1]
        if "batched" in parts:
            _, d_x, d_v = _dense_forward_backward(p, x, vocabulary)
            out.append(d_v)
        else:
            d_x = x
        for (w_in, u, units), u_t, (x_in, hs) in zip(
                reversed(layers), reversed(transposed), reversed(hs_all)):
            gates = u.shape[1]
            d_h = starts[units]
            d_zs = []
            for t in reversed(range(window)):
                d_z = p.fit(d_x[t * batch:(t + 1) * batch] + d_h, gates)
                d_zs.append(d_z)
                d_h = p.matmul(d_z, u_t) if "per_step" in parts else d_h
            d_z = tf.concat(d_zs[::-1], 0)
            if "batched" in parts:
                out.append(p.matmul(hs, d_z, transpose_a=True))  # dU
                out.append(p.matmul(x_in, d_z, transpose_a=True))  # dW
                d_x = p.matmul(d_z, w_in, transpose_b=True)  # d inputs
            else:
                d_x = p.fit(d_z, x_in.shape[1])
            out.append(d_h)
        return [tf.reduce_sum(o) for o in out] + [tf.reduce_sum(d_x)]

    return p, run


def prpn_program(model, batch, window, parts):
    """The products of a PRPN training step (see the module docstring)."""
    p = Program(batch, window)
    tf = p.tf
    e, d, m = model.embedding_dim, model.hidden_dim, model.num_slots
    look = model.lookback + 1
    conv = p.weight(look * e, model.parser_units)
    layers = []
    inputs = e
    for _ in range(model.num_layers):
        layers.append(dict(
            query_in=p.weight(inputs, d), query_h=p.weight(d, d),
            lstm_in=p.weight(inputs, 4 * d), lstm_h=p.weight(d, 4 * d),
            inputs=inputs))
        inputs = d
    predict = [p.weight(d, d), p.weight(2 * d, e)]
    vocabulary = p.weight(e, model.vocabulary_size)
    x0 = p.values(p.rows, e)
    unfolded = p.values(p.rows, look * e)
    memory = p.values(batch, m, d)
    memory.assign(memory / d)  # keeps the attention's values finite
    start = p.values(batch, d)
    queries_alone = p.values(p.rows, d)
    inputs_alone = p.values(p.rows, 4 * d)
    transposed = [
        (tf.Variable(tf.transpose(layer["query_h"]), trainable=False),
         tf.Variable(tf.transpose(layer["lstm_h"]), trainable=False))
        for layer in layers]
    bmd = batch * m * d

    def attend(q):
        scores = p.einsum("bd,bmd->bm", q, memory, bmd)
        read_h = p.einsum("bm,bmd->bd", scores, memory, bmd)
        read_c = p.einsum("bm,bmd->bd", scores, memory, bmd)
        return scores, read_h, read_c

    def run():
        out = []
        if "batched" in parts:
            _, d_unfolded, d_conv = _dense_forward_backward(p, unfolded, conv)
            out += [d_unfolded, d_conv]
        x = x0
        saved = []
        for layer in layers:
            if "batched" in parts:
                q_in = p.matmul(x, layer["query_in"])
                z_in = p.matmul(x, layer["lstm_in"])
            else:
                q_in, z_in = queries_alone, inputs_alone
            h = start
            hs, reads, queries = [], [], []
            for t in range(window):
                rows = slice(t * batch, (t + 1) * batch)
                if "per_step" in parts:
                    q = q_in[rows] + p.matmul(h, layer["query_h"])
                    _, read_h, read_c = attend(q)
                    z = z_in[rows] + p.matmul(read_h + read_c, layer["lstm_h"])
                else:
                    q, read_h = q_in[rows], q_in[rows]
                    z = z_in[rows]
                h = z[:, :d]
                hs.append(h)
                reads.append(read_h)
                queries.append(q)
            saved.append((x, tf.concat(hs, 0), tf.concat(reads, 0), queries))
            x = saved[-1][1]
        if "batched" in parts:
            # The predict network: its query, its attention over the memory
            # of each step (batched over time), the projection to E, and
            # the tied output; forward and backward.
            _, d_q, d_wq = _dense_forward_backward(p, x, predict[0])
            rows_m_d = p.rows * m * d
            many = tf.reshape(tf.tile(memory, (window, 1, 1)), (p.rows, m, d))
            scores = p.einsum("rd,rmd->rm", d_q, many, rows_m_d)
            read = p.einsum("rm,rmd->rd", scores, many, rows_m_d)
            d_scores = p.einsum("rd,rmd->rm", read, many, rows_m_d)
            d_many = (p.einsum("rm,rd->rmd", scores, read, rows_m_d)
                      + p.einsum("rm,rd->rmd", d_scores, d_q, rows_m_d))
            d_read = p.einsum("rm,rmd->rd", d_scores, many, rows_m_d)
            both = tf.concat([x, d_read], 1)
            y, d_both, d_wp = _dense_forward_backward(p, both, predict[1])
            _, d_y, d_v = _dense_forward_backward(p, y, vocabulary)
            out += [d_wq, tf.reduce_sum(d_many, 0), d_wp, d_v]
            d_x = p.fit(d_both + p.fit(d_y, 2 * d), d)
        else:
            d_x = x
        for layer, (q_t, u_t), (x_in, hs, reads, queries) in zip(
                reversed(layers), reversed(transposed), reversed(saved)):
            d_h = start
            d_zs, d_qs = [], []
            d_memory = []
            for t in reversed(range(window)):
                rows = slice(t * batch, (t + 1) * batch)
                d_z = p.fit(d_x[rows] + d_h, 4 * d)
                d_zs.append(d_z)
                if "per_step" in parts:
                    d_read = p.matmul(d_z, u_t)
                    # The scores' gradient from both read-outs, then the
                    # query's; the memory's three beside the chain.
                    d_scores = (p.einsum("bd,bmd->bm", d_read, memory, bmd)
                                + p.einsum("bd,bmd->bm", d_read, memory, bmd))
                    d_memory.append(p.einsum("bm,bd->bmd", d_scores,
                                             d_read, bmd))
                    d_memory.append(p.einsum("bm,bd->bmd", d_scores,
                                             reads[rows], bmd))
                    d_q = p.einsum("bm,bmd->bd", d_scores, memory, bmd)
                    d_memory.append(p.einsum("bm,bd->bmd", d_scores,
                                             queries[t], bmd))
                    d_qs.append(d_q)
                    d_h = p.matmul(d_q, q_t)
                else:
                    d_qs.append(d_h)
            d_z = tf.concat(d_zs[::-1], 0)
            d_q = tf.concat(d_qs[::-1], 0)
            if "batched" in parts:
                out.append(p.matmul(reads, d_z, transpose_a=True))  # dU
                out.append(p.matmul(hs, d_q, transpose_a=True))  # dWq (h)
                out.append(p.matmul(x_in, d_z, transpose_a=True))
                out.append(p.matmul(x_in, d_q, transpose_a=True))
                d_x = (p.matmul(d_z, layer["lstm_in"], transpose_b=True)
                       + p.matmul(d_q, layer["query_in"], transpose_b=True))
            else:
                d_x = p.fit(d_z, x_in.shape[1])
            if d_memory:
                out.append(tf.add_n(d_memory))
            out.append(d_h)
        return [tf.reduce_sum(o) for o in out] + [tf.reduce_sum(d_x)]

    return p, run


PROGRAMS = {"onlstm": onlstm_program, "prpn": prpn_program}


def time_program(family, model, batch, window, parts):
    """A compiled products-only program: `(run, flops, products)`, its
    FLOPs and its number of products per call."""
    import tensorflow as tf

    program, run = PROGRAMS[family](model, batch, window, parts)

    def outputs():
        program.products = []
        values = run()
        # One element of each product: enough to keep it, reading little.
        return values + [tf.add_n([product[(0,) * product.shape.rank]
                                   for product in program.products])]

    compiled = tf.function(outputs)
    program.flops = 0
    compiled.get_concrete_function()  # traces once: counts the FLOPs
    flops = program.flops

    def one():
        return [value.numpy() for value in compiled()]

    if not all(np.isfinite(value).all() for value in one()):
        # Products of infinities or NaNs would time something else.
        raise ValueError(f"the {family} program's values are not finite")
    return one, flops, len(program.products)


def rows_rates(kernel_shape, rows=(20, 64, 200, 1400), steps=70):
    """GFLOP/s of a chain of `steps` products `(rows, in) x kernel`, each
    fed by the one before, for each number of rows: how the per-step
    products' rate depends on the batch alone."""
    import tensorflow as tf

    inputs, outputs = kernel_shape
    rng = tf.random.Generator.from_seed(1)
    kernel = tf.Variable(rng.normal(kernel_shape) / inputs**0.5)
    rates = {}
    for count in rows:
        start = tf.Variable(rng.normal((count, inputs)))

        @tf.function
        def chain():
            h = start
            for _ in range(steps):
                h = tf.matmul(h, kernel)
                if outputs < inputs:
                    h = tf.tile(h, (1, -(-inputs // outputs)))
                h = h[:, :inputs]
            return h[0, 0]

        chain().numpy()
        seconds = best_of(lambda: chain().numpy(), 5)
        rates[count] = round(2 * count * inputs * outputs * steps / seconds
                             / 1e9, 1)
    return rates


def best_of(fn, repeats):
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=sorted(PROGRAMS),
                        default="onlstm")
    parser.add_argument("--preset", default="ptb")
    parser.add_argument("--vocab-size", type=int, default=10000)
    parser.add_argument("--batch", type=int, default=None,
                        help="default: the preset's batch size")
    parser.add_argument("--window", type=int, default=None,
                        help="default: the preset's bptt")
    parser.add_argument("--repeats", type=int, default=3,
                        help="rounds; each times every program and the step")
    throughput.add_matmul_size_option(parser)
    args = parser.parse_args()

    import tensorflow as tf

    model, step, batch, window = throughput.training_step(
        args.model, args.preset, jit_compile=False, precision="float32",
        vocab_size=args.vocab_size, batch=args.batch, window=args.window)
    step()  # trace
    step()
    programs = {
        name: time_program(args.model, model, batch, window, parts)
        for name, parts in (("products", ("batched", "per_step")),
                            ("batched", ("batched",)),
                            ("per_step", ("per_step",)))
    }
    step_flops = (throughput.FLOPS_PER_TOKEN[args.model](model)
                  * batch * window)
    seconds = {name: [] for name in list(programs) + ["step"]}
    matmul = []
    for _ in range(args.repeats):
        matmul.append(throughput.matmul_flops("float32", args.matmul_size))
        for name, (one, _, _) in programs.items():
            seconds[name].append(best_of(one, 3))
        seconds["step"].append(best_of(step, 2))
    rate = max(matmul)
    # The largest recurrent kernel: ON-LSTM's `U` of its widest layer,
    # PRPN's LSTM kernel `(d, 4d)`.
    if args.model == "onlstm":
        cell = max((layer.cell for layer in model.rnn_layers),
                   key=lambda cell: cell.units * cell.gate_size)
        kernel_shape = (cell.units, cell.gate_size)
    else:
        kernel_shape = (model.hidden_dim, 4 * model.hidden_dim)
    by_rows = rows_rates(kernel_shape,
                         rows=sorted({batch, 64, 200, batch * window}))
    tokens = batch * window
    best = {name: min(values) for name, values in seconds.items()}
    result = {
        "model": args.model,
        "preset": args.preset,
        "batch": batch,
        "window": window,
        "precision": "float32",
        "tensorflow": tf.__version__,
        "machine": describe_cpu(),
        "matmul_gflops": [round(x / 1e9, 1) for x in matmul],
        "step_flops_counted": step_flops,
        "program_flops": {name: flops for name, (_, flops, _)
                          in programs.items()},
        "seconds": {name: [round(x, 4) for x in values]
                    for name, values in seconds.items()},
        "tokens_per_second": {name: round(tokens / best[name], 1)
                              for name in ("products", "step")},
        "gflops": {
            name: round(programs[name][1] / best[name] / 1e9, 1)
            for name in programs},
        "products_fraction_of_matmul": round(
            programs["products"][1] / best["products"] / rate, 3),
        # The two kinds of products each timed alone, their times added:
        # what the products reach where neither slows the other.
        "parts_fraction_of_matmul": round(
            programs["products"][1] / (best["batched"] + best["per_step"])
            / rate, 3),
        "step_fraction_of_matmul": round(
            step_flops / best["step"] / rate, 3),
        "step_over_products_time": round(best["step"] / best["products"], 2),
        "recurrent_kernel": list(kernel_shape),
        "recurrent_product_gflops_by_rows": by_rows,
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
