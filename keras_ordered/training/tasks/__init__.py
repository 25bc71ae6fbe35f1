"""One task module per family, after TF Model Garden's tasks.

Each module runs its recipe's whole job, in the same order: data ->
batches -> model -> callbacks -> fit -> evaluate, and has the same
entry points: `build_parser()` (options made from the typed config's
fields by `keras_ordered.training.options`), `experiment_from_options(args)`
(the one place that reads them; both in the task's `*_options` module
where it has one), `train(args, ...)` (the task) and `main(argv, ...)`
(through `keras_ordered.training.driver.run_recipe`).

- `language_model`: ON-LSTM, PRPN and the LSTM on PTB text or treebank
  sentences (`recipes/ptb_onlstm.py`, `recipes/ptb_prpn.py`,
  `recipes/ptb_lstm.py`), its options and `--help` in
  `language_model_options`;
- `gfl`: the Grammar-as-a-Foreign-Language parser (`recipes/wsj_gfl.py`),
  its options in `gfl_options`;
- `tdtreelstm`: the top-down TreeLSTM (`recipes/wsj_tdtreelstm.py`), its
  options in `tdtreelstm_options`.

The search recipes (`recipes/tune_*.py`) share the options and the driver
from `keras_ordered.tuning.search`.
"""
