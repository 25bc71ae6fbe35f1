"""ON-LSTM presets: the paper's PTB setup, two CPU-sized ones, a tiny one.

Each preset has `model` (its departures from the defaults of
`ONLSTMLanguageModel`: the defaults are the paper's configuration;
`get_preset` returns every argument) and `training`
(the recipe's optimisation settings), optionally `precision` (the recipe's
default `--precision` for it; float32 when absent), and what the recipes'
`--help` quotes: `description`, `parameters` (with the
10,000-word PTB vocabulary; tests/training/test_recipe_usability.py
checks it). Measured times per epoch are in
`keras_ordered.training.cpu_time.CPU_MINUTES_PER_EPOCH`, not
in the presets.
"""

PAPER_TRAINING = {
    "batch_size": 20,
    "eval_batch_size": 10,
    "test_batch_size": 1,
    "bptt": 70,
    "variable_length": True,
    "optimizer": "sgd",
    "learning_rate": 30.0,
    "clip_norm": 0.25,
    "weight_decay": 1.2e-6,
    "nonmono": 5,
    "epochs": 1000,
}

# Shen et al. (2019), section 6.1 (the official code's PTB command).
PRESETS = {
    # Shen et al. (2019), section 6.1: about 25M parameters with 10k words.
    "ptb": {
        "description": "The paper's PTB model (embedding 400, 1150/1150/400, "
        "chunk 10); needs a GPU.",
        "parameters": 25220840,  # with the 10,000-word PTB vocabulary
        "model": {},
        "training": dict(PAPER_TRAINING),
    },
    # Trains to a useful perplexity on a 2-core CPU within about an hour.
    "small": {
        "description": "A CPU-sized model (embedding 200, 400/400/200, "
        "chunk 10) with lighter dropout, trained in mixed_bfloat16 "
        "(docs/models/onlstm.md has its figures).",
        "parameters": 4870200,  # with the 10,000-word PTB vocabulary
        # The recipe's default --precision for this preset: over 5 seeds
        # mixed_bfloat16 passes the rule for defaults against float32
        # (docs/models/onlstm.md, "Results").
        # `--precision float32` trains as the official code.
        "precision": "mixed_bfloat16",
        "model": {
            "embedding_dim": 200,
            "hidden_dims": [400, 400, 200],
            "dropout_output": 0.3,
            "dropout_hidden": 0.2,
            "dropout_input": 0.3,
            "dropout_embedding": 0.05,
            "weight_drop": 0.2,
        },
        "training": {**PAPER_TRAINING, "bptt": 35, "epochs": 6},
    },
    # The learning-parity benchmark's shape trained for 6 epochs: it trades
    # perplexity for trees, its layer 2 parsing better than `small`'s over
    # seeds (docs/models/onlstm.md, "Results: the `medium` preset").
    "medium": {
        "description": "A CPU-sized model (embedding 200, 600/600/200, "
        "chunk 10) with the paper's dropouts, no AR/TAR and fixed windows "
        "of 70, trained in mixed_bfloat16 (docs/models/onlstm.md has its "
        "figures).",
        "parameters": 7727880,  # with the 10,000-word PTB vocabulary
        # As for `small`: mixed_bfloat16 passes the rule for defaults at
        # this shape (the learning-parity benchmark over 5 seeds a
        # precision; docs/models/onlstm.md).
        "precision": "mixed_bfloat16",
        "model": {
            "embedding_dim": 200,
            "hidden_dims": [600, 600, 200],
            "ar_alpha": 0.0,
            "tar_beta": 0.0,
        },
        "training": {**PAPER_TRAINING, "bptt": 70, "variable_length": False,
                     "epochs": 6},
    },
    # For tests: a few thousand parameters plus the embedding.
    "tiny": {
        "description": "A test-sized model (embedding 16, 20/16, chunk 4), "
        "for a few lines (--max-lines, --steps-per-epoch): its batches of 4 "
        "windows of 8 tokens make an epoch of the whole PTB text slower "
        "than small's.",
        "parameters": 175994,  # with the 10,000-word PTB vocabulary
        "model": {
            "embedding_dim": 16,
            "hidden_dims": [20, 16],
            "chunk_size": 4,
            "dropout_output": 0.1,
            "dropout_hidden": 0.1,
            "dropout_input": 0.1,
            "dropout_embedding": 0.0,
            "weight_drop": 0.1,
        },
        "training": {
            **PAPER_TRAINING,
            "batch_size": 4,
            "eval_batch_size": 2,
            "test_batch_size": 1,
            "bptt": 8,
            "epochs": 2,
        },
    },
}

