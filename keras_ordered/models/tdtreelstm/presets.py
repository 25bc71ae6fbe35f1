"""TD-TreeLSTM presets: the paper's two setups, a CPU-sized model, a test model.

Each preset has `model` (its departures from the defaults of
`TDTreeLSTMLanguageModel`: the defaults are the paper's configuration;
`get_preset` returns every argument besides the
vocabulary; add `ld=True` for LdTreeLSTM), `training` (the official
optimisation: SGD at 1.0, batch 64, gradient norm clipped at 5, every
weight uniform in +-0.1, the learning rate halved when validation improves
by less than a factor of 1.0001) and `description`.

Where the numbers come from (the official scripts of Zhang, Lu and Lapata,
`experiments/depparse/*_train.sh` and `experiments/msr/*_h400.sh`):

- `wsj`, the dependency-reranking setup: `--nin 100 --nhid 200 --nlayers 2
  --dropout 0.2`, full softmax; LdTreeLSTM `--nlclayers 1 --nlchid 200`.
- `msr`, the sentence-completion setup: `--nin 200 --nhid 400 --nlayers 1`,
  NCE with `--nneg 20 --power 0.75 --lnZ 9 --learnZ`; LdTreeLSTM
  `--nlchid 400`; no dropout option given (0).
- `small` and `tiny` are ours.
"""

OFFICIAL_TRAINING = {
    "optimizer": "sgd",
    "learning_rate": 1.0,
    "batch_size": 64,
    "clip_norm": 5.0,
    "min_improvement": 1.0001,
    "max_epochs": 50,
    "min_count": 2,
}

PRESETS = {
    "wsj": {
        "description": "The official dependency-reranking setup: embeddings "
        "100, 2 layers of 200, dropout 0.2, full softmax.",
        "model": {},
        "training": dict(OFFICIAL_TRAINING),
    },
    "msr": {
        "description": "The official MSR sentence-completion setup: "
        "embeddings 200, 1 layer of 400, NCE (20 noise words, unigram^0.75, "
        "learned ln Z from 9); the vocabulary keeps words seen more than 5 "
        "times. Needs a GPU.",
        "model": {"embedding_dim": 200, "units": 400, "num_layers": 1,
                  "dropout": 0.0, "loss": "nce"},
        "training": dict(OFFICIAL_TRAINING, min_count=6),
    },
    "small": {
        "description": "A CPU-sized model: embeddings 64, 1 layer of 128, "
        "dropout 0.2, full softmax.",
        "model": {
            "embedding_dim": 64,
            "units": 128,
            "num_layers": 1,
        },
        "training": dict(OFFICIAL_TRAINING, max_epochs=20),
    },
    "tiny": {
        "description": "A test-sized model: embeddings 8, 2 layers of 16.",
        "model": {
            "embedding_dim": 8,
            "units": 16,
            "dropout": 0.0,
        },
        "training": dict(OFFICIAL_TRAINING, batch_size=8, max_epochs=2),
    },
}

