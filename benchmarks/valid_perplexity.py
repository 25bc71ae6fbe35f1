"""A saved language model's validation loss, as the recipes compute it.

Loads a model file and evaluates the PTB validation text with
`keras_ordered.training.tasks.language_model.evaluate_stream` (the
recipes' evaluation: `--batch-size` streams from zero state, windows of
`--bptt`, the state carried from window to window), on the backend
`KERAS_BACKEND` names. Prints one JSON line. Run on two backends, it
says whether they evaluate the same weights alike:

    python benchmarks/valid_perplexity.py --data ../shared/data/ptb \
        --model runs/pq/prpn_quick_float32_decoders/seed_11/model.keras
    KERAS_BACKEND=jax python benchmarks/valid_perplexity.py \
        --data ../shared/data/ptb \
        --model runs/pq/prpn_quick_float32_decoders/seed_11/model.keras

The figures and what they settle: benchmarks/records/prpn_quick_float32_jax/.
"""

import argparse
import json
import math
import time


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True, help="a .keras file")
    parser.add_argument("--data", required=True, help="the PTB folder")
    parser.add_argument("--batch-size", type=int, default=10,
                        help="evaluation streams (the presets' 10)")
    parser.add_argument("--bptt", type=int, default=35,
                        help="window length (PRPN's presets: 35)")
    args = parser.parse_args()

    import keras

    import keras_ordered
    from keras_ordered.datasets import ptb
    from keras_ordered.training.tasks.language_model import evaluate_stream

    model = keras_ordered.load_model(args.model)
    (_, valid_ids, _), _ = ptb.load_data(args.data, download=False)
    start = time.time()
    loss = evaluate_stream(model, valid_ids, args.batch_size, args.bptt)
    print(json.dumps({
        "backend": keras.backend.backend(), "model": args.model,
        "valid_loss": loss, "valid_perplexity": math.exp(loss),
        "seconds": round(time.time() - start, 1)}))


if __name__ == "__main__":
    main()
