"""Client side of the Enzyme-JAX worker: send MLIR text, get optimized text back.

A crash of the worker becomes a ``CompilationError`` carrying what the worker
printed to stderr (where MLIR parse errors and LLVM aborts go); the next
request starts a fresh worker.  So does an interrupted request (Ctrl-C while a
pipeline runs) and one past ``TIME_LIMIT`` (a rewrite that does not terminate on
some program): the worker is killed, not left to send a reply the next request
would read.

The worker exits when this process dies (worker.py); for Linux's parent-death
signal, which fires when the thread that started the worker exits, workers are
started from one thread that lives as long as this process.
"""
from __future__ import annotations

import atexit
import concurrent.futures
import functools
import importlib.metadata
import os
import queue
import re
import select
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from .. import cache
from ..errors import CompilationError
from . import worker as _protocol

# MLIR prints source locations; cofactor's are all unknown, so they are noise.
_LOCATION = re.compile(r' loc\((?:[^()"]|"[^"]*"|\([^()]*\))*\)|^#loc.*\n', re.MULTILINE)

# Seconds a pipeline may run on one module before it counts as failed (the function is then compiled
# without it): the pipelines take well under a second on ordinary functions, a few seconds on huge
# unrolled ones, and some patterns loop forever on a few programs.
TIME_LIMIT = 30.0

_WORKER_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "worker.py")


class _Spawner:
    """A thread that starts the workers and lives as long as this process: the worker's
    parent-death signal follows the thread that forked it, and callers may be short-lived threads."""

    def __init__(self):
        self._requests = queue.SimpleQueue()
        threading.Thread(target=self._serve, name="cofactor-enzyme-spawner", daemon=True).start()

    def _serve(self):
        while True:
            future = self._requests.get()
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(_Worker())
                except BaseException as e:
                    future.set_exception(e)

    def new_worker(self) -> _Worker:
        future = concurrent.futures.Future()
        self._requests.put(future)
        try:
            return future.result()
        except BaseException:
            if not future.cancel():  # interrupted while it was starting one: do not leak it
                future.add_done_callback(lambda f: f.exception() is None and f.result().kill())
            raise


class _TimedOut(Exception):
    """No reply within the time limit (not an OSError: those mean the worker died)."""


class _Worker:
    def __init__(self):
        self.log = tempfile.TemporaryFile()
        req_r, self._req_w = os.pipe()
        self._rep_r, rep_w = os.pipe()
        self.process = subprocess.Popen(
            [sys.executable, _WORKER_SCRIPT, str(req_r), str(rep_w), str(os.getpid())],
            pass_fds=(req_r, rep_w), stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log)
        os.close(req_r)
        os.close(rep_w)
        self.requests = os.fdopen(self._req_w, "wb")
        self.replies = os.fdopen(self._rep_r, "rb")
        self._ready = False

    def _stderr_since(self, offset: int) -> str:
        self.log.seek(offset)
        return self.log.read().decode(errors="replace").strip()

    def call(self, request, seconds: float):
        """The worker's reply to ``request`` (None if it died), its stderr and exit code; raises
        _TimedOut when no reply comes within ``seconds``."""
        offset = self.log.seek(0, os.SEEK_END)
        try:
            if not self._ready:
                self._ready = _protocol.read_message(self.replies) is not None
            _protocol.write_message(self.requests, request)
            if not select.select([self.replies], [], [], seconds)[0]:
                raise _TimedOut
            reply = _protocol.read_message(self.replies)
        except (BrokenPipeError, OSError):
            reply = None
        stderr = self._stderr_since(offset)
        if reply is None:
            self.process.wait()
            return None, stderr, self.process.returncode
        return reply, stderr, None

    def close(self):
        for stream in (self.requests, self.replies):
            try:
                stream.close()
            except OSError:
                pass
        self.process.wait()
        self.log.close()

    def disown(self):
        """In a forked child: point this process's copies of the pipes at /dev/null (not close: that
        would flush a request another thread was writing at the fork into the parent's pipe)."""
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (self._req_w, self._rep_r):
            os.dup2(null, fd)
        os.close(null)

    def kill(self):
        self.process.kill()
        self.close()


_lock = threading.Lock()
_worker: _Worker | None = None
_spawner: _Spawner | None = None


def _forget_worker_after_fork():
    """In a child made by os.fork: the parent's worker, pipes and lock are the parent's.  Let go of
    this process's copies of the pipes (held open, they would keep the worker from seeing EOF when
    the parent exits) and start afresh."""
    global _lock, _worker, _spawner
    if _worker is not None:
        _worker.disown()
    _lock, _worker, _spawner = threading.Lock(), None, None


os.register_at_fork(after_in_child=_forget_worker_after_fork)


@atexit.register
def _stop():
    global _worker
    if _worker is not None:
        _worker.close()
        _worker = None


def start():
    """Start the worker ahead of time (it loads a large shared library)."""
    global _worker, _spawner
    with _lock:
        if _worker is None or _worker.process.poll() is not None:
            if _spawner is None:
                _spawner = _Spawner()
            _worker = _spawner.new_worker()


@functools.cache
def _pipeline_identity() -> str:
    """What decides a pipeline's output besides its input: this folder's code (the pipelines,
    the excluded-pattern table, the worker's post-processing) and Enzyme-JAX's version."""
    sources = [p.read_bytes() for p in sorted(Path(__file__).parent.glob("*.py"))]
    return cache.key(*sources, importlib.metadata.version("enzyme-ad"))


def run(text: str, kind: str, differentiate: bool = False) -> str:
    """Run the ``kind`` pipeline ("curated", "upstream", "none") over module ``text``,
    or take its output from the disk cache."""
    name = cache.key(text, kind, str(bool(differentiate)), _pipeline_identity())
    cached = cache.load("mlir", name)
    if cached is not None:
        return cached.decode()
    out = _run_in_worker(text, kind, differentiate)
    cache.store("mlir", name, out.encode())
    return out


def _run_in_worker(text: str, kind: str, differentiate: bool) -> str:
    global _worker
    start()
    with _lock:
        try:
            reply, stderr, returncode = _worker.call((text, kind, differentiate), TIME_LIMIT)
        except BaseException as e:  # KeyboardInterrupt, _TimedOut: where the exchange stopped is unknown
            _worker.kill()
            _worker = None
            if isinstance(e, _TimedOut):
                raise CompilationError(f"the Enzyme-JAX {kind!r} pipeline ran past cofactor's limit of "
                                       f"{TIME_LIMIT:g} s on this function", diagnostic="", mlir=text) from None
            raise
        if reply is None:
            _worker.close()
            _worker = None
            raise CompilationError(
                f"the Enzyme-JAX worker process died (exit code {returncode}) while running the "
                f"{kind!r} pipeline", diagnostic=stderr, mlir=text)
    status, payload = reply
    if status != "ok":
        diagnostic = "\n".join(s for s in (stderr, payload) if s)
        raise CompilationError(f"the Enzyme-JAX {kind!r} pipeline failed", diagnostic=diagnostic, mlir=text)
    return _LOCATION.sub("", payload)
