"""Presets of the conventional LSTM language model (the parsing control).

Each preset has `model` (its departures from the defaults of
`LSTMLanguageModel`: the defaults are the paper's configuration;
`get_preset` returns every argument) and `training`
(the recipe's optimisation settings), as the ON-LSTM presets have. The
sizes, dropouts and training of each preset are those of the ON-LSTM
preset of the same name, less what a conventional LSTM has not: the
chunk size (no master gates) and DropConnect on the recurrent kernels
(Keras' `LSTM` has none).
"""

from keras_ordered.models.onlstm.presets import PAPER_TRAINING

PRESETS = {
    "small": {
        "description": "ON-LSTM small's sizes as a conventional LSTM "
        "(embedding 200, 400/400/200), the control of Dyer et al. (2019).",
        "parameters": 4734000,  # with the 10,000-word PTB vocabulary
        "model": {
            "embedding_dim": 200,
            "hidden_dims": [400, 400, 200],
            "dropout_output": 0.3,
            "dropout_hidden": 0.2,
            "dropout_input": 0.3,
            "dropout_embedding": 0.05,
        },
        "training": {**PAPER_TRAINING, "bptt": 35, "epochs": 6},
    },
    "tiny": {
        "description": "A test-sized model (embedding 16, 20/16), for a few "
        "lines (--max-lines, --steps-per-epoch).",
        "parameters": 175328,  # with the 10,000-word PTB vocabulary
        "model": {
            "embedding_dim": 16,
            "hidden_dims": [20, 16],
            "dropout_output": 0.1,
            "dropout_hidden": 0.1,
            "dropout_input": 0.1,
            "dropout_embedding": 0.0,
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

