"""`keras-ordered serve`: a parse page and TF Serving's REST API, at once.

Loads models (`--model`, repeatable: shipped names, `.keras` files,
`MODEL:DISTANCE`, exported SavedModel folders; default the shipped
`prpn_ptb_quick`) and serves, on 127.0.0.1:8501 unless told otherwise:

- TF Serving's REST API, `GET /v1/models/<name>`, `GET
  /v1/models/<name>/metadata` and `POST /v1/models/<name>:predict` (row
  and columnar formats, `signature_name`), running the signatures
  `keras-ordered export` writes, so that a client written against it works
  unchanged against TF Serving;
- a page at `/`: sentences in, one drawn tree per sentence (the
  distances as bars; for several models, their averaged tree with each
  span's votes), and the brackets to copy. Every file of the page ships
  in the package.

Concurrent requests of one model and signature are batched into one
forward pass (`--max-batch-size` sentences). Request bodies, sentences per
request, characters and tokens per sentence are capped; a bad request gets
a JSON error with its 4xx status and the server stays up. Ctrl-C stops
it, with one line.

The server is aiohttp's: one asyncio event loop for the connections (so
that waiting requests cost no thread each, and gather into batches), with
the forward passes in one worker thread.

Example:

```
keras-ordered serve --model prpn_ptb_quick --model onlstm_ptb_small
curl -d '{"instances": ["The cat sat on the mat."]}' \\
    http://127.0.0.1:8501/v1/models/prpn_ptb_quick:predict
```
"""

from keras_ordered_cli import _common
from keras_ordered_cli import _options
from keras_ordered_cli._common import CommandError

NAME = "serve"
DEFAULT_PORT = 8501
"""TF Serving's REST port."""


def add_parser(subparsers):
    """Adds the `serve` subcommand; returns its parser."""
    parser = subparsers.add_parser(
        NAME,
        help="Serve a parse page and TF Serving's REST API on this machine.",
        description="Serve models over HTTP: TF Serving's REST API "
        "(/v1/models/NAME, /metadata, :predict with the exported signatures) "
        "and a page at / to type sentences into and see their trees. Binds "
        "127.0.0.1 unless --host says otherwise. Ctrl-C stops it.",
    )
    _options.add_model(
        parser, repeat="append", metavar="NAME_OR_PATH",
        help="A shipped model's name, a .keras file, MODEL:DISTANCE, or a "
        "SavedModel folder of keras-ordered export; repeat for several (the "
        "page averages the trees of those picked). Served under its name "
        "(the file's name without .keras; MODEL:DISTANCE as "
        "MODEL_DISTANCE). Default: the shipped prpn_ptb_quick.",
    )
    parser.add_argument(
        "--host", default="127.0.0.1",
        help="Address to bind (default 127.0.0.1: this machine only; "
        "0.0.0.0 opens it to the network).",
    )
    parser.add_argument(
        "--port", type=_common.non_negative_int, default=DEFAULT_PORT,
        help=f"Port (default {DEFAULT_PORT}, TF Serving's REST port; 0 picks "
        "a free one).",
    )
    _options.add_max_length(
        parser, "a longer one is answered with valid false (REST) or refused "
        "(page). For a SavedModel, the limit it was exported with holds.")
    parser.add_argument(
        "--max-sentences", type=_common.positive_int, default=64,
        help="Most sentences in one request (default 64).",
    )
    parser.add_argument(
        "--max-characters", type=_common.positive_int, default=10_000,
        help="Most characters in one sentence (default 10000).",
    )
    parser.add_argument(
        "--max-body", type=_common.positive_int, default=1 << 20,
        metavar="BYTES",
        help="Largest request body, in bytes (default 1048576); a larger "
        "one gets status 413.",
    )
    parser.add_argument(
        "--max-batch-size", type=_common.positive_int, default=64,
        help="Most sentences of concurrent requests run in one forward "
        "pass (default 64; 1 turns batching off).",
    )
    return parser


def _check_server_library():
    try:
        import aiohttp  # noqa: F401
    except ImportError:
        from keras_ordered._environment import install_hint

        raise CommandError(f"serve needs aiohttp: {install_hint('serve')}") from None


def run(args):
    """Runs `keras-ordered serve` until Ctrl-C."""
    _check_server_library()
    import asyncio

    from keras_ordered import shipped
    from keras_ordered_cli._serving import app as app_lib
    from keras_ordered_cli._serving import models
    from keras_ordered_cli._serving.batching import Batcher

    specs = args.model or [shipped.DEFAULT_PARSER]
    served = models.load_all(specs, args.max_length, note=_common.note)
    limits = app_lib.Limits(max_body=args.max_body,
                            max_sentences=args.max_sentences,
                            max_characters=args.max_characters,
                            max_length=args.max_length)
    application = app_lib.build_app(
        served, limits, Batcher(max_batch_size=args.max_batch_size))

    async def serve_forever():
        try:
            runner, port = await app_lib.start(application, args.host, args.port)
        except OSError as error:
            raise CommandError(
                f"Cannot listen on {args.host}:{args.port}: "
                f"{error.strerror or error} (--port 0 picks a free port)."
            ) from None
        host = f"[{args.host}]" if ":" in args.host else args.host
        url = f"http://{host}:{port}/"
        if args.host not in ("127.0.0.1", "localhost", "::1"):
            _common.note(f"note: listening on {args.host}: other machines "
                         "can reach this server.")
        print(f"serving {', '.join(served)} at {url} (REST: "
              f"{url}v1/models/{next(iter(served))}; Ctrl-C stops)",
              flush=True)
        try:
            while True:
                await asyncio.sleep(3600)
        finally:
            await runner.cleanup()

    asyncio.run(serve_forever())
    return 0

