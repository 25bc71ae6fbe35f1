"""The web application of `keras-ordered serve` (aiohttp).

Routes:

- `GET /v1/models/<name>`, `GET /v1/models/<name>/metadata`,
  `POST /v1/models/<name>:predict` (also under `/versions/<version>`):
  TF Serving's REST API (`keras_ordered_cli._serving.rest`);
- `GET /`: the parse page, `GET /assets/page.js` and `/assets/page.css`
  its files (a fixed list, read from the package: no request names a
  file), `GET /api/models` the models it offers, `POST /api/parse` the
  trees it draws.

Every error is a JSON body `{"error": "..."}` with its 4xx status; a
failing request never stops the server.
"""

import asyncio
import json
import os
import re

from aiohttp import web

from keras_ordered_cli._serving import rest
from keras_ordered_cli._serving.batching import Batcher

ASSETS = {
    "/": ("index.html", "text/html"),
    "/assets/page.js": ("page.js", "application/javascript"),
    "/assets/page.css": ("page.css", "text/css"),
}
"""The page's files: URL -> (file in `assets/`, content type)."""

_ASSET_FOLDER = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                             "assets")

_MODEL_URL = re.compile(
    r"^(?P<name>[^/:]+)(?:/versions/(?P<version>[^/:]+)|/labels/(?P<label>[^/:]+))?"
    r"(?P<tail>/metadata|:[A-Za-z]+)?$")

_HEADERS = {
    # The page loads only its own files; drawings are data: images.
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; "
                               "object-src 'none'; base-uri 'none'; "
                               "frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


class Limits:
    """What one request may hold.

    Attributes:
        max_body: bytes of a request body.
        max_sentences: sentences of one request.
        max_characters: characters of one sentence.
        max_length: tokens of one sentence (the signatures' limit).
    """

    def __init__(self, max_body=1 << 20, max_sentences=64,
                 max_characters=10_000, max_length=400):
        self.max_body = max_body
        self.max_sentences = max_sentences
        self.max_characters = max_characters
        self.max_length = max_length


def _json(body, status=200):
    return web.json_response(body, status=status, headers=_HEADERS,
                             dumps=lambda v: json.dumps(v, ensure_ascii=False))


def _error(status, message):
    return _json(rest.error_body(message), status)


@web.middleware
async def _json_errors(request, handler):
    """Every failure as a JSON error body, the server staying up."""
    try:
        return await handler(request)
    except rest.RequestError as error:
        return _error(error.status, error.message)
    except web.HTTPRequestEntityTooLarge:
        return _error(413, f"The request body is larger than the limit of "
                           f"{request.app['limits'].max_body} bytes: send "
                           "fewer or shorter sentences per request.")
    except web.HTTPException as error:
        if error.status < 400:
            raise
        return _error(error.status, error.reason)
    except Exception as error:  # a failed forward pass: this request only
        message = " ".join(str(error).split())[:500] or type(error).__name__
        return _error(500, f"The model failed on this request: {message}")


def build_app(served, limits=None, batcher=None):
    """The aiohttp application serving `served`.

    Args:
        served: dict name -> `ServedModel` (`models.load_all`).
        limits: a `Limits` (default: its defaults).
        batcher: a `Batcher` (default: one of 64 sentences).

    Returns:
        The `aiohttp.web.Application`.
    """
    limits = limits or Limits()
    batcher = batcher or Batcher()
    app = web.Application(client_max_size=limits.max_body,
                          middlewares=[_json_errors])
    app["served"] = served
    app["limits"] = limits
    app["batcher"] = batcher

    async def on_startup(app):
        await batcher.start()

    async def on_cleanup(app):
        await batcher.stop()

    app.on_startup.append(on_startup)
    app.on_cleanup.append(on_cleanup)
    for url in ASSETS:
        app.router.add_get(url, _asset)
    app.router.add_get("/api/models", _page_models)
    app.router.add_post("/api/parse", _page_parse)
    app.router.add_get("/v1/models/{rest:.+}", _model_get)
    app.router.add_post("/v1/models/{rest:.+}", _model_post)
    return app


async def _asset(request):
    file_name, content_type = ASSETS[request.path]
    with open(os.path.join(_ASSET_FOLDER, file_name), "rb") as f:
        body = f.read()
    return web.Response(body=body, content_type=content_type,
                        charset="utf-8", headers=_HEADERS)


def _model_of(request):
    """`(served model, tail)` of a `/v1/models/...` URL, or a 404."""
    match = _MODEL_URL.match(request.match_info["rest"])
    if match is None:
        raise rest.RequestError(404, f"No such URL: {request.path}.")
    name = match.group("name")
    served = request.app["served"].get(name)
    if served is None:
        raise rest.RequestError(
            404, f"Servable not found for request: Latest({name}); this "
                 f"server has {', '.join(sorted(request.app['served']))}.")
    version, label = match.group("version"), match.group("label")
    if label is not None or (version is not None
                             and version != str(served.version)):
        wanted = f"label {label}" if label else f"version {version}"
        raise rest.RequestError(
            404, f"Servable not found for request: {name} {wanted}; it "
                 f"serves version {served.version}.")
    return served, match.group("tail")


async def _model_get(request):
    served, tail = _model_of(request)
    if tail is None:
        return _json(rest.model_status(served))
    if tail == "/metadata":
        return _json(rest.model_metadata(served))
    raise rest.RequestError(405, f"{tail} takes POST.")


async def _model_post(request):
    served, tail = _model_of(request)
    if tail != ":predict":
        raise rest.RequestError(
            404 if tail in (None, "/metadata") or tail not in (
                ":classify", ":regress") else 400,
            f"POST {request.path}: this server answers :predict "
            "(classify and regress need tf.Example signatures).")
    limits = request.app["limits"]
    body = rest.read_json(await request.read())
    signature, sentences, columnar = rest.read_predict(
        body, served, limits.max_sentences, limits.max_characters)
    outputs = await request.app["batcher"].run(signature, sentences)
    return _json(rest.write_predict(outputs, columnar))


# --- the parse page ---------------------------------------------------------


async def _page_models(request):
    served = request.app["served"]
    return _json({
        "models": [{"name": name, "distance_names": model.distance_names}
                   for name, model in served.items() if model.parses_distances],
        "decoders": ["right", "left"],
        "max_sentences": request.app["limits"].max_sentences,
    })


def _page_sentences(text, limits):
    """The page's sentences: one per non-blank line, each checked."""
    from keras_ordered import _tokens

    if not isinstance(text, str):
        raise rest.RequestError(400, "\"text\" must be a string.")
    lines = [(number, line.strip()) for number, line in
             enumerate(text.split("\n"), start=1) if line.strip()]
    if not lines:
        raise rest.RequestError(400, "Type a sentence: the text is empty.")
    if len(lines) > limits.max_sentences:
        raise rest.RequestError(
            400, f"{len(lines)} sentences, more than the limit of "
                 f"{limits.max_sentences} per request.")
    for number, line in lines:
        problem = _tokens.control_character_problem(line)
        if problem is not None:
            raise rest.RequestError(400, f"Line {number} {problem}.")
        if len(line) > limits.max_characters:
            raise rest.RequestError(
                400, f"Line {number} has {len(line)} characters, more than "
                     f"the limit of {limits.max_characters}.")
    return lines


async def _page_parse(request):
    """`{"text", "models": [names], "decoder"}` -> one drawn tree per line."""
    body = rest.read_json(await request.read())
    unknown = sorted(set(body) - {"text", "models", "decoder"})
    if unknown:
        raise rest.RequestError(400, f"Unknown field {unknown[0]!r}: give "
                                     "\"text\", \"models\" and \"decoder\".")
    served = request.app["served"]
    limits = request.app["limits"]
    lines = _page_sentences(body.get("text"), limits)
    names = body.get("models")
    offered = [n for n, m in served.items() if m.parses_distances]
    if names is None:
        names = offered[:1]
    if (not isinstance(names, list) or not names
            or not all(isinstance(n, str) for n in names)):
        raise rest.RequestError(400, "\"models\" must be a list of one model "
                                     "name or more.")
    for name in names:
        if name not in offered:
            raise rest.RequestError(
                404, f"No model {name!r} to parse with; this server offers "
                     f"{', '.join(offered) or 'none'}.")
    names = list(dict.fromkeys(names))
    decoder = body.get("decoder", "right")
    if decoder not in ("right", "left"):
        raise rest.RequestError(400, "\"decoder\" is \"right\" or \"left\".")
    sentences = [line for _, line in lines]
    batcher = request.app["batcher"]
    results = await asyncio.gather(*[
        batcher.run(served[name].signatures["parse"], sentences)
        for name in names])
    for outputs in results:
        for (number, _), valid, error in zip(lines, outputs["valid"],
                                             outputs["error"]):
            if not valid:
                message = error.decode() if isinstance(error, bytes) else error
                raise rest.RequestError(400, f"Line {number}: {message}.")
    loop = asyncio.get_running_loop()
    own = [served[name].own_decoder for name in names]
    drawn = await loop.run_in_executor(
        None, _draw_sentences, results, decoder, own)
    return _json({"models": names, "decoder": decoder, "sentences": drawn})


def _draw_sentences(results, decoder, own_decoders=None):
    """Each sentence's tree, brackets and SVG drawing: one model's with its
    distances as bars, or an ensemble's average with each span's votes. A
    model with a decoder of its own (`own_decoders`) gives the signature's
    tree, without bars."""
    import numpy as np

    from keras_ordered.parsing import drawing
    from keras_ordered.parsing import trees as trees_lib
    from keras_ordered.parsing.ensemble import average_tree
    from keras_ordered_cli._common import escape

    drawn = []
    first = results[0]
    for row in range(len(first["length"])):
        n = int(first["length"][row])
        words = [w.decode() if isinstance(w, bytes) else str(w)
                 for w in first["tokens"][row][:n]]
        leaves = [escape(w) for w in words]
        trees, distances = [], []
        own_decoders = own_decoders or [None] * len(results)
        for outputs, own in zip(results, own_decoders):
            if own:
                tree = outputs["tree"][row]
                tree = tree.decode() if isinstance(tree, bytes) else str(tree)
                trees.append(trees_lib.replace_leaves(
                    trees_lib.brackets_to_tree(tree), leaves))
                distances.append(None)
                continue
            d = np.asarray(outputs["distance"][row][:n], dtype="float64")
            distances.append(d)
            trees.append(trees_lib.replace_leaves(
                trees_lib.distances_to_tree(words, d, decoder=decoder), leaves))
        entry = {"tokens": words}
        if len(results) == 1:
            tree = trees[0]
            entry["brackets"] = trees_lib.tree_to_brackets(tree)
            if distances[0] is not None:
                entry["distances"] = [round(float(v), 6) for v in distances[0]]
            entry["svg"] = drawing.draw_svg(tree, distances[0])
        else:
            averaged = average_tree(leaves, trees)
            entry["brackets"] = averaged.brackets
            entry["votes"] = {f"{a}-{b}": votes for (a, b), votes in
                              sorted(averaged.votes.items())}
            entry["members"] = len(results)
            entry["svg"] = drawing.draw_svg(averaged.voted_tree(leaves))
        drawn.append(entry)
    return drawn


async def start(app, host, port):
    """Starts serving `app` on `host:port`; returns the runner and the
    port bound (a free one for port 0)."""
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    sockets = site._server.sockets if site._server is not None else []
    bound = sockets[0].getsockname()[1] if sockets else port
    return runner, bound
