"""GFL parser presets: the paper's LSTM+A, a CPU-sized model, a test model.

Each preset has `model` (its departures from the defaults of
`GFLParser`: the defaults are the paper's configuration;
`get_preset` returns every argument besides the
vocabularies), `decoding` (arguments of `GFLParser.beam_decode`),
`training` (what `recipes/wsj_gfl.py` trains with: optimizer, learning
rate, batch size, epochs, gradient-norm clipping, and `min_count`, below
which training words are `<unk>`) and `description`.

Where the `paper` numbers come from (Vinyals et al., 2015, as summarised in
this project's seed notes):

- "Their 3-layer, 256-unit (per layer) LSTM": `num_layers=3`, `units=256`,
  for the encoder and the decoder ("another LSTM with the same
  architecture", "different sets of LSTM parameters").
- The attention's `W_1' h_i + W_2' d_t` "yield a 256-D vector":
  `attention_units=256`.
- "They used 512-D word2vec-trained pretrained word embeddings, which were
  also trainable": `embedding_dim=512` (load the vectors with
  `load_word_vectors`). The target-symbol embedding size is not given:
  `target_embedding_dim=None` (= `units`) is our choice.
- "Dropout was used between the LSTMs when training on small datasets"
  (the WSJ-only LSTM+A+D model): the rate is not in the notes; 0.3 is our
  choice. Train without dropout (`dropout=0.0`) on the large corpus.
- "Beam size being lowered from 10 to 2 degrades performance only
  slightly": `beam_size=10`.
- "They train the model via stochastic gradient descent": `optimizer:
  "sgd"`; learning rate, batch size and schedule are not in the notes.
  SGD at 0.7, batch 128 and the gradient norm clipped at 5 are those of
  the sequence-to-sequence setup of the same group (Sutskever et al.,
  2014); the 10 epochs are ours.
- `small` and `tiny` train with Adam; `small`'s 40 epochs are those of
  the WSJ-sample results in docs/models/gfl.md. `min_count=2` (ours):
  words seen once are `<unk>`, so that the `<unk>` embedding is trained.
- The output length limit `3 * n + 10` (n the sentence's words) is ours: a
  linearized tree of n words has n `XX` and at most about 2n brackets in
  the Penn Treebank.
"""

DECODING = {"beam_size": 10, "max_length_factor": 3, "max_length_offset": 10}

PRESETS = {
    "paper": {
        "description": "The paper's LSTM+A+D: 3 layers of 256 units in the "
        "encoder and the decoder, 512-d word embeddings, attention 256, "
        "dropout 0.3 between layers; needs a GPU.",
        "model": {
            "attention_units": 256,
        },
        "decoding": dict(DECODING),
        "training": {"optimizer": "sgd", "learning_rate": 0.7,
                     "batch_size": 128, "epochs": 10, "clip_norm": 5.0,
                     "min_count": 2},
    },
    "small": {
        "description": "A CPU-sized LSTM+A: 2 layers of 128 units, 128-d "
        "word embeddings, attention 128, dropout 0.2.",
        "model": {
            "embedding_dim": 128,
            "target_embedding_dim": 64,
            "units": 128,
            "num_layers": 2,
            "attention_units": 128,
            "dropout": 0.2,
        },
        "decoding": dict(DECODING),
        "training": {"optimizer": "adam", "learning_rate": 0.001,
                     "batch_size": 32, "epochs": 40, "clip_norm": 5.0,
                     "min_count": 2},
    },
    "tiny": {
        "description": "A test-sized LSTM+A: 2 layers of 16 units, 8-d "
        "embeddings, attention 8.",
        "model": {
            "embedding_dim": 8,
            "target_embedding_dim": 8,
            "units": 16,
            "num_layers": 2,
            "attention_units": 8,
            "dropout": 0.1,
        },
        "decoding": {**DECODING, "beam_size": 3},
        "training": {"optimizer": "adam", "learning_rate": 0.01,
                     "batch_size": 8, "epochs": 2, "clip_norm": 5.0,
                     "min_count": 2},
    },
}

