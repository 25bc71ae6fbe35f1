"""`python -m keras_ordered_cli`: the `keras-ordered` command.

The installed `keras-ordered` script is the quicker way: under `python -m`,
Python imports the whole package (TensorFlow included) before this runs.
"""

import sys

from keras_ordered_cli import main

if __name__ == "__main__":
    sys.exit(main())
