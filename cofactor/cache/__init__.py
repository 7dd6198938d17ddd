"""The persistent compile cache on disk: optimized StableHLO, serialized XLA executables, and
which of two programs ``optimize="auto"`` found faster.

A second process that compiles the same function skips Enzyme-JAX and XLA: the pass runner
keys its output by the input module and the pipeline, the XLA layer keys executables by the
module it compiles, the compile options and the platform, and the compiler keys an "auto"
choice by both programs and the platform (so it does not run both again).  Callers build keys
with ``key``; this module only stores bytes.

The directory is ``$COFACTOR_CACHE_DIR`` if set (set but empty: no disk cache), otherwise
``$XDG_CACHE_HOME/cofactor`` or ``~/.cache/cofactor``; ``set_directory`` overrides it for this
process.  ``python -m cofactor.cache [info|clear]`` shows or empties it.

Several processes may share the directory: an entry is written to a temporary file and
renamed into place, so readers see a whole entry or none.  An entry carries a checksum; a
damaged one is a miss (and is removed), never an error.  Failing to write is not an error
either: the cache only ever saves time.
"""
from __future__ import annotations

import collections
import hashlib
import os
import shutil
import tempfile
from pathlib import Path

_MAGIC = b"cofactor-cache-1\n"
_DIGEST = 32  # sha256
KINDS = ("mlir", "xla", "auto")  # the subfolders, one a cache level

# ("mlir" | "xla", "hit" | "miss") -> count, for this process: how a compile was served.
stats: collections.Counter = collections.Counter()

_ENV = object()  # the directory comes from the environment, read at each use
_directory = _ENV


def directory() -> Path | None:
    """The cache directory, or None when the disk cache is disabled."""
    if _directory is not _ENV:
        return _directory
    configured = os.environ.get("COFACTOR_CACHE_DIR")
    if configured is not None:
        return Path(configured).expanduser() if configured else None
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "cofactor"


def set_directory(path) -> None:
    """Use ``path`` as the cache directory in this process; None disables the disk cache."""
    global _directory
    _directory = None if path is None else Path(path).expanduser()


def key(*parts) -> str:
    """A hex sha256 of ``parts`` (str or bytes), each length-prefixed so that no two lists collide."""
    h = hashlib.sha256()
    for part in parts:
        data = part.encode() if isinstance(part, str) else bytes(part)
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


def load(kind: str, name: str) -> bytes | None:
    """The entry ``name`` of ``kind``, or None if absent, unreadable or damaged (then removed)."""
    root = directory()
    if root is None:
        return None
    path = root / kind / name
    start = len(_MAGIC) + _DIGEST
    try:
        data = path.read_bytes()
        if data[:len(_MAGIC)] == _MAGIC and hashlib.sha256(data[start:]).digest() == data[len(_MAGIC):start]:
            stats[kind, "hit"] += 1
            return data[start:]
        path.unlink()  # damaged (another process may have removed it already: an OSError too)
    except OSError:
        pass
    stats[kind, "miss"] += 1
    return None


def store(kind: str, name: str, payload: bytes) -> None:
    """Write the entry atomically: a temporary file in the same folder, then a rename."""
    root = directory()
    if root is None:
        return
    folder = root / kind
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(_MAGIC + hashlib.sha256(payload).digest() + payload)
            os.replace(tmp, folder / name)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        pass


def clear() -> None:
    """Remove every entry (only cofactor's own subfolders: the directory may hold other files)."""
    root = directory()
    if root is not None:
        for kind in KINDS:
            shutil.rmtree(root / kind, ignore_errors=True)
