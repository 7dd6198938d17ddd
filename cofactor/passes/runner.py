"""Client side of the Enzyme-JAX worker: send MLIR text, get optimized text back.

A crash of the worker becomes a ``CompilationError`` carrying what the worker
printed to stderr (where MLIR parse errors and LLVM aborts go); the next
request starts a fresh worker.
"""
from __future__ import annotations

import atexit
import functools
import importlib.metadata
import os
import re
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

_WORKER_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "worker.py")


class _Worker:
    def __init__(self):
        self.log = tempfile.TemporaryFile()
        req_r, self._req_w = os.pipe()
        self._rep_r, rep_w = os.pipe()
        self.process = subprocess.Popen(
            [sys.executable, _WORKER_SCRIPT, str(req_r), str(rep_w)],
            pass_fds=(req_r, rep_w), stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log)
        os.close(req_r)
        os.close(rep_w)
        self.requests = os.fdopen(self._req_w, "wb")
        self.replies = os.fdopen(self._rep_r, "rb")
        self._ready = False

    def _stderr_since(self, offset: int) -> str:
        self.log.seek(offset)
        return self.log.read().decode(errors="replace").strip()

    def call(self, request):
        offset = self.log.seek(0, os.SEEK_END)
        try:
            if not self._ready:
                self._ready = _protocol.read_message(self.replies) is not None
            _protocol.write_message(self.requests, request)
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


_lock = threading.Lock()
_worker: _Worker | None = None


@atexit.register
def _stop():
    global _worker
    if _worker is not None:
        _worker.close()
        _worker = None


def start():
    """Start the worker ahead of time (it loads a large shared library)."""
    global _worker
    with _lock:
        if _worker is None or _worker.process.poll() is not None:
            _worker = _Worker()


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
        reply, stderr, returncode = _worker.call((text, kind, differentiate))
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
