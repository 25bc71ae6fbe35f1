"""Concurrent requests batched into one forward pass, as TF Serving's
batching does.

Requests wait in one queue. One worker thread runs the signatures, one call
at a time: while it runs, new requests gather, and the next call takes
every waiting request of the same model and signature (up to
`max_batch_size` sentences) as one batch. A signature whose per-token
outputs are padded to the longest sentence (`Signature.batchable`) is cut
apart after, each request's columns trimmed to its own longest sentence,
so that a request gets the answer it would get alone; other signatures
run one request per call.
"""

import asyncio
import concurrent.futures

import numpy as np


class Batcher:
    """Runs the signatures of served models for concurrent requests.

    Args:
        max_batch_size: the most sentences of one call (a single request
            larger than this still runs, alone).
        batch_timeout: seconds the first request of a batch waits for
            others to join while the worker is idle (TF Serving's
            `batch_timeout_micros`).
    """

    def __init__(self, max_batch_size=64, batch_timeout=0.002):
        self.max_batch_size = max_batch_size
        self.batch_timeout = batch_timeout
        self._queue = None
        self._task = None
        self._executor = concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="keras-ordered-serve")
        self.calls = 0
        self.sentences = 0

    async def start(self):
        self._queue = asyncio.Queue()
        self._task = asyncio.get_running_loop().create_task(self._loop())

    async def stop(self):
        if self._task is not None:
            self._task.cancel()
        self._executor.shutdown(wait=False, cancel_futures=True)

    async def run(self, signature, sentences):
        """The signature's outputs for `sentences` (dict of NumPy arrays)."""
        future = asyncio.get_running_loop().create_future()
        await self._queue.put((signature, list(sentences), future))
        return await future

    async def _loop(self):
        loop = asyncio.get_running_loop()
        waiting = []
        while True:
            if not waiting:
                waiting.append(await self._queue.get())
                deadline = loop.time() + self.batch_timeout
                while True:
                    remaining = deadline - loop.time()
                    if remaining <= 0:
                        break
                    try:
                        waiting.append(await asyncio.wait_for(
                            self._queue.get(), remaining))
                    except asyncio.TimeoutError:
                        break
            while not self._queue.empty():
                waiting.append(self._queue.get_nowait())
            batch, waiting = self._take(waiting)
            signature = batch[0][0]
            sentences = [s for _, request, _ in batch for s in request]
            try:
                outputs = await loop.run_in_executor(
                    self._executor, signature.run, sentences)
            except Exception as error:  # the requests get it, the loop goes on
                for _, _, future in batch:
                    if not future.done():
                        future.set_exception(error)
                continue
            self.calls += 1
            self.sentences += len(sentences)
            start = 0
            for _, request, future in batch:
                part = split_outputs(outputs, start, start + len(request),
                                     signature.batchable and len(batch) > 1)
                start += len(request)
                if not future.done():
                    future.set_result(part)

    def _take(self, waiting):
        """The next batch: the first request, and the later ones of the same
        signature while they fit; the rest keep their order."""
        first = waiting[0]
        batch, rest = [first], []
        size = len(first[1])
        for item in waiting[1:]:
            fits = size + len(item[1]) <= self.max_batch_size
            if item[0] is first[0] and first[0].batchable and fits:
                batch.append(item)
                size += len(item[1])
            else:
                rest.append(item)
        return batch, rest


def split_outputs(outputs, start, stop, trim):
    """Rows `start:stop` of every output; with `trim`, per-token columns cut
    to the longest `length` of those rows."""
    part = {key: value[start:stop] for key, value in outputs.items()}
    if trim and "length" in part:
        width = int(np.max(part["length"])) if stop > start else 0
        for key, value in part.items():
            if value.ndim >= 2:
                part[key] = value[:, :width]
    return part
