#!/usr/bin/env bash
# The GPU run, in one command, on the GPU machine (JAX and PyTorch, no
# TensorFlow), from the repository's root, with benchmarks/gpu/carry/ made
# by benchmarks/gpu/prepare.sh carried along:
#
#     bash benchmarks/gpu/run.sh              # on the GPU machine
#     bash benchmarks/gpu/run.sh --dry-run    # here, on the CPU (the test)
#
# 1. installs the carried wheels (keras, namex, optree, nltk, conllu);
# 2. times full training steps of ON-LSTM `ptb` and PRPN `ptb` on JAX, in
#    float32 and mixed_bfloat16, and the official PyTorch code on the same
#    GPU, in the same run (benchmarks/backend_throughput.py: one JSON line
#    each, naming the device);
# 3. trains PRPN `quick` on JAX for TRAIN_STEPS windows per epoch (default
#    a whole epoch) and its 2 epochs, with the parsing callback on the
#    development sentences: its perplexity and development sentence F1 are
#    in $OUT/prpn_quick/results.json and history.csv.
#
# Everything it writes goes to $OUT (the device tool's output folder;
# default runs/gpu). With --dry-run: the tiny presets, one step each, the
# data from $KERAS_ORDERED_DATA and ../shared/reference when carry/ is
# absent, no wheels installed.
set -euo pipefail
DRY=0
if [ "${1:-}" = "--dry-run" ]; then DRY=1; fi
CARRY=benchmarks/gpu/carry
OUT=${OUT:-runs/gpu}
mkdir -p "$OUT"
if [ -d "$CARRY/wheels" ] && [ "$DRY" = 0 ]; then
    python3 -m pip install -q --no-index --no-deps --no-compile \
        --no-cache-dir --upgrade --target /tmp/site "$CARRY"/wheels/*.whl
    export PYTHONPATH=/tmp/site:$PWD
else
    export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
fi
if [ -d "$CARRY/data" ]; then
    export KERAS_ORDERED_DATA=$CARRY/data
    REFERENCE=$CARRY/reference
else
    export KERAS_ORDERED_DATA=${KERAS_ORDERED_DATA:-../shared/data}
    REFERENCE=${REFERENCE:-../shared/reference}
fi
export KERAS_BACKEND=jax PYTHONUNBUFFERED=1
TREES=$KERAS_ORDERED_DATA/wsj_sample/mrg

if [ "$DRY" = 1 ]; then
    THROUGHPUT=(--dry-run)
    TRAIN=(--preset tiny --max-lines 300 --steps-per-epoch 2 --epochs 1
           --eval-steps 2 --parse-eval-sentences 20)
else
    THROUGHPUT=(--preset ptb --steps 10 --precision float32 mixed_bfloat16
                --device cuda)
    TRAIN=(--preset quick)
    if [ -n "${TRAIN_STEPS:-}" ]; then
        TRAIN+=(--steps-per-epoch "$TRAIN_STEPS")
    fi
fi

python3 -c "import jax; print('jax', jax.__version__, jax.devices())"
python3 benchmarks/backend_throughput.py --backends jax --model onlstm prpn \
    --official "$REFERENCE" "${THROUGHPUT[@]}" | tee "$OUT/throughput.jsonl"
python3 recipes/ptb_prpn.py "${TRAIN[@]}" --seed 1 --precision float32 \
    --skip-test --parse-eval "$TREES" --verbose 2 \
    --output "$OUT/prpn_quick" | tee "$OUT/prpn_quick.log"
