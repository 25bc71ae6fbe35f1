"""PRPN presets: the paper's PTB language model, its unsupervised-parsing
setup, a CPU-sized model and a test-sized one.

Each preset has `model` (its departures from the defaults of
`PRPNLanguageModel`: the defaults are the paper's configuration;
`get_preset` returns every argument) and `training`
(the recipe's optimisation settings, read by `keras_ordered.training`), and
what the recipes' `--help` quotes: `description`,
`parameters` (with the 10,000-word PTB vocabulary; checked by
tests/training/test_recipe_usability.py). Measured times per epoch are
in `keras_ordered.training.cpu_time.CPU_MINUTES_PER_EPOCH`,
not in the presets.

Notes on the training settings:

- `optimizer: "adam"` with the paper's `beta_1 = 0` (no momentum),
  `beta_2 = 0.999`, `epsilon = 1e-9`, `weight_decay = 1e-6`: Adam with
  PyTorch's arithmetic (`keras_ordered.training.optimizers.TorchAdam`:
  the decay is coupled L2 added to the gradient, as the official code's
  `torch.optim.Adam`). `optimizer: "keras_adam"` (the recipes' `--adam
  keras`) takes Keras' Adam instead, whose decay is decoupled: a departure.
- `quick` and `small` build the parsing network as the official code
  does, with as many channels as the hidden size (`parser_units` unset):
  a narrower parser was not shown to parse as well. `parser_units` is an
  option of the model.
- `reduce_lr_patience: 2`, `reduce_lr_factor: 0.5`: as the official code's
  PyTorch `ReduceLROnPlateau(patience=2, threshold=0)`, the learning rate
  is halved once more than 2 epochs in a row (i.e. the 3rd) brought no
  strictly lower validation loss (`keras_ordered.training.callbacks.make_plateau`).
- `sentence_level: True` (the `up` preset) asks for training on sentences,
  each read from a zero state, instead of a continuous stream;
  `data: "treebank"` for sentences of a treebank folder (the recipe's
  `--treebank`), `max_sentence_length`, `min_count` and `shuffle` as the
  official unsupervised-parsing setup has them.
"""

PAPER_TRAINING = {
    "batch_size": 64,
    "eval_batch_size": 10,
    "test_batch_size": 1,
    "bptt": 35,
    "variable_length": False,
    "optimizer": "adam",
    "learning_rate": 0.003,
    "beta_1": 0.0,
    "beta_2": 0.999,
    "epsilon": 1e-9,
    "weight_decay": 1e-6,
    "clip_norm": 1.0,
    "reduce_lr_patience": 2,
    "reduce_lr_factor": 0.5,
    "nonmono": None,
    "sentence_level": False,
    "epochs": 100,
}

PRESETS = {
    # Shen et al. (2018): PTB test perplexity 61.98.
    "ptb": {
        "description": "The paper's PTB language model (embedding 800, 2 "
        "layers of 1200, 15 slots, look-back 5); needs a GPU.",
        "parameters": 43607202,  # with the 10,000-word PTB vocabulary
        # The official main_LM.py (--tied --hard): --emsize 800 --nhid 1200
        # --nlayers 2 --nslots 15 --nlookback 5 --resolution 0.1, --dropout
        # 0.7 (layer-1 input, output), --idropout 0.5 (later inputs, keys,
        # parser, predict input; fresh per step), --rdropout 0.5 (h~, one
        # mask per window shared by the batch). 43,603,202 trainable
        # parameters, the official model's (tests/models/prpn/test_prpn_convert.py).
        "model": {},
        "training": dict(PAPER_TRAINING),
    },
    # The unsupervised-parsing setting of the paper and its reference code.
    "up": {
        "description": "The unsupervised-parsing setup (embedding 200, 2 "
        "layers of 400, light dropout), trained on a treebank's WSJ10 "
        "sentences, whole sentences a batch (not windows of the PTB text).",
        "parameters": 5635402,  # with the 10,000-word PTB vocabulary
        # The official main_UP.py: --emsize 200 --nhid 400, --dropout 0.2
        # --idropout 0.2 --rdropout 0, the rest as `ptb`.
        "model": {
            "embedding_dim": 200,
            "hidden_dim": 400,
            "dropout": 0.2,
            "input_dropout": 0.2,
            "recurrent_dropout": 0.0,
        },
        # The official unsupervised-parsing run: the sentences of a treebank
        # (WSJ10: at most 10 words after punctuation removal; words seen
        # fewer than 3 times are <unk>), read as <s> w_1 .. w_n </s> in the
        # treebank's order; the learning rate halves on the training loss
        # (patience 0); evaluation in batches of 64; parsed on the same
        # sentences. `--treebank DIR` names the folder (default:
        # $KERAS_ORDERED_DATA/wsj_sample/mrg, a small-scale version).
        "training": {
            **PAPER_TRAINING,
            "learning_rate": 0.001,
            "sentence_level": True,
            "data": "treebank",
            "max_sentence_length": 10,
            "min_count": 3,
            "shuffle": False,
            "eval_batch_size": 64,
            "test_batch_size": 64,
            "reduce_lr_patience": 0,
            "reduce_lr_monitor": "loss",
        },
    },
    # Trains to a useful perplexity on a 2-core CPU within about an hour.
    "small": {
        "description": "A CPU-sized model (embedding 200, 2 layers of 256, "
        "parser 256 channels as the official code, 15 slots) with lighter "
        "dropout.",
        "parameters": 3740794,  # with the 10,000-word PTB vocabulary
        "model": {
            "embedding_dim": 200,
            "hidden_dim": 256,
            "dropout": 0.3,
            "input_dropout": 0.2,
            "recurrent_dropout": 0.1,
        },
        # Evaluation in batches of 10.
        "training": {
            **PAPER_TRAINING,
            "learning_rate": 0.003,
            "test_batch_size": 10,
            "epochs": 3,
        },
    },
    # The quick path to a parsing model on a CPU (README, quick start): 2
    # epochs in float32 (its seed study: docs/models/prpn.md).
    "quick": {
        "description": "A parsing model in 2 epochs on a CPU (embedding "
        "128, 2 layers of 128, parser 128 channels as the official code, "
        "15 slots).",
        "parameters": 1773586,  # with the 10,000-word PTB vocabulary
        "model": {
            "embedding_dim": 128,
            "hidden_dim": 128,
            "dropout": 0.1,
            "input_dropout": 0.1,
            "recurrent_dropout": 0.0,
        },
        "training": {
            **PAPER_TRAINING,
            "learning_rate": 0.003,
            "test_batch_size": 10,
            "epochs": 2,
        },
    },
    # For tests.
    "tiny": {
        "description": "A test-sized model (embedding 16, 2 layers of 20, "
        "4 slots, look-back 2), for a few lines (--max-lines, "
        "--steps-per-epoch): its batches of 4 windows of 8 tokens make an "
        "epoch of the whole PTB text slower than quick's or small's.",
        "parameters": 180470,  # with the 10,000-word PTB vocabulary
        "model": {
            "embedding_dim": 16,
            "hidden_dim": 20,
            "parser_units": 12,
            "num_slots": 4,
            "lookback": 2,
            "dropout": 0.1,
            "input_dropout": 0.1,
            "recurrent_dropout": 0.1,
        },
        "training": {
            **PAPER_TRAINING,
            "batch_size": 4,
            "eval_batch_size": 2,
            "test_batch_size": 1,
            "bptt": 8,
            "learning_rate": 0.01,
            "epochs": 2,
        },
    },
}

