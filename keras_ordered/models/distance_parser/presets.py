"""Distance-parser presets: CPU-sized students and a tiny one for tests.

Each preset has `model` (its departures from the defaults of
`DistanceParser`), `training` (the recipe's optimisation settings),
`description` and `parameters` (with the 10,000-word PTB vocabulary).
"""

TRAINING = {
    "batch_size": 64,
    "learning_rate": 1e-3,
    "clip_norm": 1.0,
    "epochs": 6,
}

PRESETS = {
    "small": {
        "description": "The student of tree averaging: embedding 200, two "
        "BiLSTM layers of 200 per direction, a gap BiLSTM of 200, trained "
        "on silver trees with the ranking loss.",
        "parameters": 4485401,  # with the 10,000-word PTB vocabulary
        "model": {},
        "training": dict(TRAINING),
    },
    "compact": {
        "description": "A lighter student: embedding 128, one BiLSTM layer "
        "of 128 per direction, a gap BiLSTM of 128, trained as `small`.",
        "parameters": 1905025,  # with the 10,000-word PTB vocabulary
        "model": {"embedding_dim": 128, "hidden_dim": 128, "num_layers": 1},
        "training": dict(TRAINING),
    },
    "fast": {
        "description": "The lightest student: embedding 128, one BiLSTM "
        "layer of 64 per direction, a gap BiLSTM of 64, trained as `small`.",
        "parameters": 1469633,  # with the 10,000-word PTB vocabulary
        "model": {"embedding_dim": 128, "hidden_dim": 64, "num_layers": 1},
        "training": dict(TRAINING),
    },
    "span": {
        "description": "A span-scoring student (Stern et al., 2017): "
        "embedding 300, two BiLSTM layers of 256 per direction, a span "
        "feed-forward layer of 256, trained on silver trees with the span "
        "cross-entropy and parsed by CKY.",
        "parameters": 5847233,  # with the 10,000-word PTB vocabulary
        "model": {"embedding_dim": 300, "hidden_dim": 256, "head": "span"},
        "training": {**TRAINING, "batch_size": 32, "clip_norm": 5.0,
                     "epochs": 3},
    },
    "span_fast": {
        "description": "The lightest span-scoring student: embedding 128, "
        "one BiLSTM layer of 64 per direction, a span feed-forward layer "
        "of 64, trained as `span`.",
        "parameters": 1387137,  # with the 10,000-word PTB vocabulary
        "model": {"embedding_dim": 128, "hidden_dim": 64, "num_layers": 1,
                  "head": "span"},
        "training": {**TRAINING, "batch_size": 32, "clip_norm": 5.0},
    },
    "span_compact": {
        "description": "A span-scoring student between `span` and "
        "`span_fast`: embedding 200, one BiLSTM layer of 128 per direction, "
        "a span feed-forward layer of 128, trained as `span`.",
        "parameters": 2369921,  # with the 10,000-word PTB vocabulary
        "model": {"hidden_dim": 128, "num_layers": 1, "head": "span"},
        "training": {**TRAINING, "batch_size": 32, "clip_norm": 5.0},
    },
    "tiny": {
        "description": "A test-sized parser (embedding 16, one BiLSTM layer "
        "of 16, a gap BiLSTM of 16), for a few sentences.",
        "parameters": 170033,  # with the 10,000-word PTB vocabulary
        "model": {
            "embedding_dim": 16,
            "hidden_dim": 16,
            "num_layers": 1,
            "dropout": 0.1,
        },
        "training": {**TRAINING, "batch_size": 8, "epochs": 2},
    },
    "span_tiny": {
        "description": "A test-sized span parser (embedding 16, one BiLSTM "
        "layer of 16, a span layer of 16), for a few sentences.",
        "parameters": 164769,  # with the 10,000-word PTB vocabulary
        "model": {
            "embedding_dim": 16,
            "hidden_dim": 16,
            "num_layers": 1,
            "dropout": 0.1,
            "head": "span",
        },
        "training": {**TRAINING, "batch_size": 8, "epochs": 2},
    },
}
