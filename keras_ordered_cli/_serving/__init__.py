"""What `keras-ordered serve` runs: the served models (`models`), TF
Serving's REST contract (`rest`), the batching of concurrent requests
(`batching`), the web application (`app`) and the parse page's files
(`assets/`, shipped in the package: the page loads nothing from the
internet).

Imported only by `keras_ordered_cli.serve`'s `run`, after the package is
imported: `keras-ordered --help` never loads it.
"""
