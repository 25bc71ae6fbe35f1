"""Stopping a long job safely: Ctrl-C within seconds, files written whole.

Two rules keep a training run, a search or a benchmark resumable whatever
stops it (Ctrl-C, `kill -9`, a crash):

- every file a resumed run reads is written to a temporary name beside it
  and moved into place with `os.replace` (`atomic_path`,
  `write_json_atomically`): a kill leaves the previous version whole;
- Ctrl-C (`CtrlC`) stops the run within seconds wherever it is, and never
  in the middle of a write (`writing()`).
"""

import contextlib
import faulthandler
import json
import os
import select
import signal
import sys
import threading


_active = None  # the `CtrlC` handling SIGINT now, if any


@contextlib.contextmanager
def atomic_path(path):
    """A temporary path to write `path`'s new content to; moved into place.

    Yields a path in the same folder whose name ends as `path`'s does (Keras
    checks the `.keras` / `.weights.h5` endings). When the block ends
    normally the file, if the block wrote one, replaces `path` in one
    `os.replace`; when it raises, the temporary file is removed and `path`
    keeps its previous content.

    Example:

    ```python
    from keras_ordered.training.crash_safety import atomic_path

    with atomic_path("results.txt") as partial:
        with open(partial, "w") as f:
            f.write("finished")
    ```
    """
    folder, name = os.path.split(path)
    partial = os.path.join(folder, f".partial-{name}")
    try:
        yield partial
        if os.path.exists(partial):
            os.replace(partial, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(partial)
        raise


def write_json_atomically(path, obj, **kwargs):
    """`json.dump(obj)` to `path` through `atomic_path` (kwargs: json's),
    making `path`'s folder when it is missing."""
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    with atomic_path(path) as partial:
        with open(partial, "w") as f:
            json.dump(obj, f, **kwargs)


def save_run(model, model_path, results, results_path):
    """A finished run's model, then its `results.json`, each written whole.

    `results.json` goes last: a run whose results are there is finished. A
    Ctrl-C during the writes waits for them to end.
    """
    with writing():
        with atomic_path(model_path) as partial:
            model.save(partial)
        write_json_atomically(results_path, results, indent=2)


@contextlib.contextmanager
def writing():
    """Within it, a Ctrl-C waits until the block has ended.

    For writes of state a resumed run reads (a backup, a checkpoint, the
    final model): the first Ctrl-C inside the block is raised as
    `KeyboardInterrupt` when it ends. A no-op outside `CtrlC`.
    """
    handler = _active
    if handler is None:
        yield
        return
    with handler._lock:
        handler._writes += 1
    try:
        yield
    finally:
        with handler._lock:
            handler._writes -= 1
            if not handler._writes:
                handler._written.notify_all()
    check_interrupt()


def check_interrupt():
    """Raises `KeyboardInterrupt` if Ctrl-C was pressed within `CtrlC`.

    Long loops call it between two units of work (Keras batches through
    `callbacks.StopOnCtrlC`, the parsing callback between batches of sentences).
    """
    handler = _active
    if handler is not None and handler.requested and not handler._writes:
        raise KeyboardInterrupt


class CtrlC:
    """Ctrl-C stops a job within seconds, and never inside a write.

    Python raises `KeyboardInterrupt` wherever the main thread is when the
    signal arrives; inside the C code of a weight save (h5py) it can be
    swallowed and a run then trains on, and inside one long TensorFlow call
    (the first training step builds and optimizes the graph: a minute for
    PRPN's `quick` preset on a loaded 2-core CPU) it waits until the call
    returns. Within this context:

    - the first Ctrl-C sets `requested`; the next safe point raises
      `KeyboardInterrupt` (`check_interrupt`: the end of a batch with
      `callbacks.StopOnCtrlC`, of a write with `writing()`), and `call` prints the
      job's message (`on_exit()`) and leaves;
    - a watchdog thread, woken by the signal itself
      (`signal.set_wakeup_fd`, which works while the main thread is inside
      TensorFlow), ends the process after `grace` seconds if no safe point
      came: it waits for a write in progress to end, calls `on_exit()`
      (which prints the message and returns the exit status) and leaves
      with `os._exit`. What is on disk is whole, so only the work since the
      last backup is lost;
    - a second Ctrl-C ends the process at once the same way (files are
      written atomically, so even a write it cuts short leaves the previous
      version whole).

    A process that ignores SIGINT (started in the background), a thread
    other than the main one, or a nested `CtrlC` leaves the signal alone.

    Args:
        on_exit: callable printing what the user needs to know (where the
            backup is, how to resume) and returning the exit status.
        grace: float, seconds the watchdog gives the main thread to reach a
            safe point.

    Example:

    ```python
    from keras_ordered.training.crash_safety import CtrlC
    from keras_ordered.training.callbacks import StopOnCtrlC

    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")

    def interrupted():
        print("Interrupted: run the same command again to resume.")
        return 130

    def train():
        model.fit(np.zeros((8, 3)), np.zeros((8, 1)), verbose=0,
                  callbacks=[StopOnCtrlC()])
        return 0

    status = CtrlC(interrupted).call(train)  # 0, or 130 after Ctrl-C
    ```
    """

    def __init__(self, on_exit, grace=3.0):
        self.on_exit = on_exit
        self.grace = float(grace)
        self.requested = False
        self._lock = threading.RLock()
        self._written = threading.Condition(self._lock)
        self._writes = 0
        self._closed = False
        self._installed = False

    def _handler(self, signum, frame):
        if self.requested:  # the watchdog missed it (no wakeup fd): leave
            self._exit()
        self.requested = True

    def __enter__(self):
        global _active
        # A crash in native code (a segmentation fault inside TensorFlow)
        # prints the Python stack of every thread on stderr (the recipe's
        # log), which says where in the run it happened.
        if not faulthandler.is_enabled():
            faulthandler.enable()
        if _active is not None:
            return self
        try:
            if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
                return self  # ignored or someone else's: leave it
            reader, writer = os.pipe()
            os.set_blocking(writer, False)
            self._previous_fd = signal.set_wakeup_fd(writer)
        except ValueError:  # not the main thread: signals are not ours
            return self
        self._pipe = (reader, writer)
        signal.signal(signal.SIGINT, self._handler)
        self._installed = True
        _active = self
        self._watchdog = threading.Thread(target=self._watch, daemon=True,
                                          name="ctrl-c watchdog")
        self._watchdog.start()
        return self

    def __exit__(self, *exc):
        global _active
        if not self._installed:
            return False
        with self._lock:
            self._closed = True
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.set_wakeup_fd(self._previous_fd)
        os.write(self._pipe[1], b"\0")  # wakes the watchdog, which leaves
        self._watchdog.join()
        for fd in self._pipe:
            os.close(fd)
        _active = None
        self._installed = False
        return False

    def call(self, function, *args, **kwargs):
        """`function(*args, **kwargs)` within this context.

        Returns:
            What `function` returns or, after a `KeyboardInterrupt`,
            `on_exit()`. After a real Ctrl-C the process leaves at once
            with `on_exit()`'s status (`os._exit`): TensorFlow's teardown
            of an interrupted `fit` (a half-read dataset, its functions)
            took 5 to 30 seconds on a loaded 2-core CPU, and every file is
            whole already.
        """
        with self:
            try:
                return function(*args, **kwargs)
            except KeyboardInterrupt:
                if self.requested and self._installed:
                    self._exit()
        return self.on_exit()

    def _watch(self):
        reader = self._pipe[0]
        signals = 0
        while True:
            data = os.read(reader, 64)
            with self._lock:
                if self._closed or not data:
                    return
            signals += data.count(signal.SIGINT)
            if signals == 1:
                # Give the main thread `grace` seconds to raise it cleanly.
                ready, _, _ = select.select([reader], [], [], self.grace)
                if ready:
                    continue  # closed, or a second signal: read it
                self._exit(wait_for_writes=True)
            elif signals > 1:
                self._exit()

    def _exit(self, wait_for_writes=False):
        with self._lock:
            if self._closed:
                return
            while wait_for_writes and self._writes:
                self._written.wait()
            for stream in (sys.stdout, sys.stderr):
                with contextlib.suppress(Exception):
                    stream.flush()
            try:
                status = self.on_exit()
            except BaseException:
                status = 130
            for stream in (sys.stdout, sys.stderr):
                with contextlib.suppress(Exception):
                    stream.flush()
            os._exit(130 if status is None else status)

