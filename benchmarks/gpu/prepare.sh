#!/usr/bin/env bash
# Fills benchmarks/gpu/carry/ (git-ignored, never committed) with what the
# GPU machine lacks for benchmarks/gpu/run.sh: wheels of keras, namex,
# optree, nltk and conllu for its Python 3.12, the PTB text and the WSJ
# sample trees (from $KERAS_ORDERED_DATA, default ../shared/data), and the
# official code with its timing harness (from ../shared/reference). Run it
# here, in the repository's root, where pip can download.
#
#     bash benchmarks/gpu/prepare.sh
set -euo pipefail
CARRY=benchmarks/gpu/carry
DATA=${KERAS_ORDERED_DATA:-../shared/data}
REFERENCE=${REFERENCE:-../shared/reference}
rm -rf "$CARRY"
mkdir -p "$CARRY/wheels" "$CARRY/data/wsj_sample"
KERAS_VERSION=$(python3 -c "import keras; print(keras.__version__)")
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
    --implementation cp --platform manylinux_2_28_x86_64 \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    -d "$CARRY/wheels" "keras==$KERAS_VERSION" namex optree nltk conllu
cp -r "$DATA/ptb" "$CARRY/data/ptb"
cp -r "$DATA/wsj_sample/mrg" "$CARRY/data/wsj_sample/mrg"
cp -r "$REFERENCE" "$CARRY/reference"
du -sh "$CARRY"
