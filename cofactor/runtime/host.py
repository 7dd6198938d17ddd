"""NumPy's data allocator.  XLA's CPU client reads an argument's host memory in place, without a
copy, only when it starts on a 64-byte boundary, and NumPy's own allocator gives 16.  cofactor
installs one that gives 64 (``_aligned.c``, NEP 49) when it is imported, so that the arrays a
program makes from then on are passed to compiled functions without a copy.

NumPy keeps its allocator per context: threads started later, and arrays made before cofactor
was imported, use NumPy's own, and such arguments are copied as before.  The allocator is absent
where cofactor was installed without a C compiler, and stays off with
``COFACTOR_ALIGNED_ALLOCATOR=0``."""
from __future__ import annotations

import os

ALIGNMENT = 64
IN_PLACE_MIN_BYTES = 1 << 16  # smaller arrays are copied: the copy costs less than the wait


def install_aligned_allocator() -> bool:
    """Make the aligned allocator NumPy's in this context; False where it is off or absent."""
    if os.environ.get("COFACTOR_ALIGNED_ALLOCATOR", "1") == "0":
        return False
    try:
        from . import _aligned
    except ImportError:
        return False
    _aligned.install()
    return True


def readable_in_place(array) -> bool:
    """Whether a CPU device can read this C-contiguous NumPy array's memory in place, and it is
    worth it: aligned, and large enough that a copy costs more than waiting for the run to end
    (the caller must not write it before then)."""
    return array.nbytes >= IN_PLACE_MIN_BYTES and array.ctypes.data % ALIGNMENT == 0
