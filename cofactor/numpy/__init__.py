"""NumPy implementations on traced arrays, one module per family; importing them registers them."""
from . import ufuncs  # noqa: F401
from . import reductions  # noqa: F401
from . import shape  # noqa: F401
from . import indexing, extent_ops, selection  # noqa: F401
from . import products  # noqa: F401
from . import creation  # noqa: F401
from . import extras  # noqa: F401  (before ufunc_methods: the methods of its ufuncs, gcd's reduce)
from . import ufunc_methods  # noqa: F401
from . import random  # noqa: F401
from . import linalg, fft  # noqa: F401
from . import matrices, statistics, searching  # noqa: F401
from . import extent_order, extent_lists  # noqa: F401
from . import out

out.register()  # out= for all of them
