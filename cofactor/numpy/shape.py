"""Shape manipulation: reshape, transpose, concatenation, flips, rolls, tiling, padding, sorting.

Functions that return views in NumPy return traced arrays that remember their
base, so that an in-place update through them is refused rather than lost.
"""
from __future__ import annotations

import builtins

import numpy as np

from ..errors import UnsupportedError, numpy_rules
from ..ir import ops
from ..tracing.array import TracedArray, share_storage
from ..tracing.dispatch import constructs, implements
from ..tracing.views import (BasicIndex, Broadcast, Lens, ReadOnly, Reshape, Transpose, full_slices, per_layout,
                             positions_view, strided_like)
from ._core import (asarray, axis_index, axis_tuple, broadcast_shapes, compare, keeps_order, known_value, static,
                    operator_index, reject, result_type, value, view, wrap)
from .ufuncs import KERNELS


def _reshape_view(of, shape, order="C"):
    """A reshape is a view where NumPy's strides allow one, as in NumPy (asked of NumPy itself, on
    an array with ``of``'s strides), and a copy where they do not (on each path, where they depend
    on the path a traced branch took).  ``order``: the index order, "C", "F" or "A"."""
    def reshaped(a):
        fake = strided_like(a)
        in_f = order == "F" or order == "A" and fake.flags.f_contiguous and not fake.flags.c_contiguous
        try:
            np.reshape(fake, shape, order="F" if in_f else "C", copy=False)
        except ValueError:  # NumPy would copy
            return wrap(_reverse_axes(ops.reshape(_reverse_axes(a.value), shape[::-1])) if in_f
                        else ops.reshape(a.value, shape))
        if not in_f:
            return view(a, Reshape(shape))
        reversed_ = view(view(a, Transpose(range(a.ndim)[::-1])), Reshape(shape[::-1]))
        return view(reversed_, Transpose(range(len(shape))[::-1]))
    return per_layout(of, reshaped)


def _raveled(a, order):
    """``a.ravel(order)``: NumPy's elements in NumPy's order, a view where NumPy's strides give one
    (its ``PyArray_Ravel``: "C" and "F" where ``a`` is contiguous in that order, "K" where its axes,
    ordered by their strides, are), else a copy."""
    fake = strided_like(a)
    if order == "A":
        order = "F" if fake.flags.f_contiguous and not fake.flags.c_contiguous else "C"
    if order == "K" and (fake.flags.c_contiguous or fake.flags.f_contiguous):
        order = "C" if fake.flags.c_contiguous else "F"
    axes = list(range(a.ndim))
    if order == "C":
        viewed = fake.flags.c_contiguous
    elif order == "F":
        axes, viewed = axes[::-1], fake.flags.f_contiguous
    else:  # memory order: the axes by their strides, largest first; a view where they step through memory
        axes = sorted(axes, key=lambda k: -abs(fake.strides[k]))
        step, viewed = fake.itemsize, True
        for k in reversed(axes):
            if fake.shape[k] != 1:
                viewed, step = viewed and fake.strides[k] == step, step * fake.shape[k]
    if not viewed:
        return wrap(ops.reshape(ops.transpose(a.value, axes), (a.size,)))
    return view(view(a, Transpose(axes)) if axes != sorted(axes) else a, Reshape((a.size,)))


def _known_length(d):
    """A length of a shape: a traced scalar made of constants, as its value."""
    known = d.known() if isinstance(d, TracedArray) and d.ndim == 0 else None
    return d if known is None else known[()]


def static_lengths(shape) -> tuple:
    """The lengths of ``shape`` (a tuple), each known now, or a clear error."""
    shape = tuple(_known_length(d) for d in shape)
    if any(isinstance(d, TracedArray) for d in shape):
        raise UnsupportedError("a shape known only at run time (a traced number, such as the length of x[mask], "
                               "of x[:k] or of np.unique(x)): an array made in a compiled function needs its shape "
                               "at compile time")
    return shape


def resolve_shape(shape, size=None) -> tuple:
    """``shape`` as a tuple of ints, its -1 resolved for ``size`` elements (by default, the shape's own)."""
    if isinstance(shape, (tuple, list)) and len(shape) == 1 and isinstance(shape[0], TracedArray) and shape[0].ndim:
        shape = shape[0]  # (x.reshape(np.array([2, 3])): the one argument is the shape)
    shape = static(shape)
    shape = shape.tolist() if isinstance(shape, np.ndarray) else shape  # (of constants: np.zeros(k[0] * k[1]))
    shape = (shape,) if not isinstance(shape, (tuple, list)) else tuple(shape)
    shape = static_lengths(shape)
    if size is None:
        if any(operator_index(d, "shape") < 0 for d in shape):
            raise ValueError("negative dimensions are not allowed")
        size = int(np.prod([operator_index(d, "shape") for d in shape], dtype=np.int64))
    shape = tuple(operator_index(d, "shape") for d in shape)
    unknown = [i for i, d in enumerate(shape) if d == -1]
    if len(unknown) > 1:
        raise ValueError("can only specify one unknown dimension")
    known = int(np.prod([d for d in shape if d != -1], dtype=np.int64))
    if unknown and known and size % known == 0:
        shape = shape[:unknown[0]] + (size // known,) + shape[unknown[0] + 1:]
    if any(d < 0 for d in shape) or int(np.prod(shape, dtype=np.int64)) != size:
        raise ValueError(f"cannot reshape array of size {size} into shape {_shape_text(shape)}")
    return shape


def _shape_text(shape):
    return "(" + ", ".join("-1" if d == -1 else str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def _reverse_axes(v):
    return ops.transpose(v, list(reversed(range(v.type.rank))))


@implements(np.reshape)
def reshape(a, shape=None, order="C", *, newshape=None, copy=None):
    shape = newshape if shape is None else shape
    a = asarray(a)
    shape = resolve_shape(shape, a.size)
    if order == "K":
        raise ValueError("order 'K' is not permitted for reshaping")
    if order not in ("C", "F", "A"):
        raise ValueError(f"order must be one of 'C', 'F', 'A', or 'K' (got '{order}')")
    result = _reshape_view(a, shape, order)
    if copy:
        return TracedArray(result.value)
    if copy is False and share_storage(a, result) is False:
        raise ValueError("Unable to avoid creating a copy while reshaping.")
    return result


@implements("ndarray.reshape")
def reshape_method(a, *shape, order="C", copy=None):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    return reshape(a, shape, order=order, copy=copy)


@implements(np.ravel)
def ravel(a, order="C"):
    if order not in ("C", "F", "A", "K"):
        raise ValueError(f"order must be one of 'C', 'F', 'A', or 'K' (got '{order}')")
    return per_layout(asarray(a), lambda x: _raveled(x, order))


@implements("ndarray.ravel")
def ravel_method(a, order="C"):
    return ravel(a, order)


@implements("ndarray.flatten")
def flatten(a, order="C"):
    return TracedArray(value(ravel(a, order)))


class _Bitcast(Lens):
    """``a.view(dtype)``: the same bits read as ``dtype``, and written back.  A dtype of another
    width changes the last axis (NumPy requires it contiguous): a narrower one has more elements
    along it, a wider one fewer."""

    def __init__(self, dtype):
        self.dtype = np.dtype(dtype)

    def read(self, base):
        old, new = base.dtype.itemsize, self.dtype.itemsize
        if new > old:  # groups of elements along the last axis become one
            base = ops.reshape(base, (*base.shape[:-1], base.shape[-1] * old // new, new // old))
        bits = ops.bitcast_convert(base, self.dtype)
        if new < old:  # each element's pieces follow one another along the last axis
            bits = ops.reshape(bits, (*base.shape[:-1], base.shape[-1] * old // new))
        return bits

    def write(self, base, new):
        old, wide = base.dtype.itemsize, self.dtype.itemsize
        if wide < old:
            new = ops.reshape(new, (*base.shape, old // wide))
        bits = ops.bitcast_convert(new, base.dtype)
        return ops.reshape(bits, base.shape) if wide > old else bits

    def type_of(self, base):
        old, new = base.dtype.itemsize, self.dtype.itemsize
        return base.with_shape((*base.shape[:-1], base.shape[-1] * old // new) if base.shape else ()
                               ).with_dtype(self.dtype)

    def on_numpy(self, array):
        return array.view(self.dtype)


@implements("ndarray.view")
def view_method(a, dtype=None, type=None):
    """``a.view()``: another array object on the same storage (NumPy's identity view); with an integer
    or real dtype, the same bits reinterpreted, writable through as in NumPy."""
    if isinstance(dtype, builtins.type) and issubclass(dtype, np.ndarray):
        dtype, type = None, dtype
    if type is not None and type is not np.ndarray:
        raise UnsupportedError("ndarray.view with a type other than ndarray is not supported")
    v = value(a)
    if dtype is None or np.dtype(dtype) == v.type.dtype:
        return view(a, Transpose(list(range(v.type.rank))))
    dtype = np.dtype(dtype)
    if {dtype.kind, v.dtype.kind} & {"b", "c"} or dtype.kind not in "iuf" or dtype.fields is not None:
        raise UnsupportedError(f"ndarray.view as {dtype} of an array of {v.dtype} is not supported: only a "
                               "reinterpretation between integer and real dtypes is")
    if dtype.itemsize != v.dtype.itemsize:
        with numpy_rules():  # NumPy's errors: a 0-d array, a last axis that is not contiguous or does not divide
            strided_like(a).view(dtype)
    return view(a, _Bitcast(dtype))


@implements(np.transpose, np.permute_dims)
def transpose(a, axes=None):
    v = value(a)
    if axes is None:
        axes = list(reversed(range(v.type.rank)))
    else:
        if len(axes) != v.type.rank:
            raise ValueError("axes don't match array")
        axes = [axis_index(ax, v.type.rank) for ax in axes]
        if len(set(axes)) != len(axes):
            raise ValueError("repeated axis in transpose")
    return view(a, Transpose(axes))


@implements("ndarray.transpose")
def transpose_method(a, *axes):
    if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
        axes = axes[0]
    return transpose(a, axes or None)


@implements(np.matrix_transpose)
def matrix_transpose(x):
    return swapaxes(x, -1, -2)


@implements(np.swapaxes)
def swapaxes(a, axis1, axis2):
    v = value(a)
    i, j = axis_index(axis1, v.type.rank), axis_index(axis2, v.type.rank)
    perm = list(range(v.type.rank))
    perm[i], perm[j] = perm[j], perm[i]
    return view(a, Transpose(perm))


@implements(np.moveaxis)
def moveaxis(a, source, destination):
    v = value(a)
    source, destination = axis_tuple_ordered(source, v.type.rank), axis_tuple_ordered(destination, v.type.rank)
    if len(source) != len(destination):
        raise ValueError("`source` and `destination` arguments must have the same number of elements")
    order = [n for n in range(v.type.rank) if n not in source]
    for dest, src in sorted(zip(destination, source)):
        order.insert(dest, src)
    return view(a, Transpose(order))


def axis_tuple_ordered(axis, ndim):
    from numpy.lib.array_utils import normalize_axis_tuple
    return normalize_axis_tuple(axis, ndim)


@implements(np.expand_dims)
def expand_dims(a, axis):
    v = value(a)
    axis = (axis,) if not isinstance(axis, (tuple, list)) else axis
    out_ndim = v.type.rank + len(axis)
    axes = axis_tuple_ordered(axis, out_ndim)
    shape = iter(v.shape)
    return view(a, Reshape([1 if d in axes else next(shape) for d in range(out_ndim)]))


@implements(np.squeeze)
def squeeze(a, axis=None):
    v = value(a)
    if axis is None:
        axes = [d for d, n in enumerate(v.shape) if n == 1]
    else:
        axes = axis_tuple(axis, v.type.rank)
        if any(v.shape[d] != 1 for d in axes):
            raise ValueError("cannot select an axis to squeeze out which has size not equal to one")
    return view(a, Reshape([n for d, n in enumerate(v.shape) if d not in axes]))


@implements("ndarray.squeeze")
def squeeze_method(a, axis=None):
    return squeeze(a, axis)


@implements(np.broadcast_to)
def broadcast_to_(array, shape, subok=False):
    shape = static_lengths((shape,) if not isinstance(shape, (tuple, list)) else tuple(shape))
    v = value(array)
    if broadcast_shapes(v.shape, shape) != tuple(shape):
        raise ValueError(f"operands could not be broadcast together with remapped shapes "
                         f"[original->remapped]: {v.shape} and requested shape {tuple(shape)}")
    return view(array, ReadOnly(Broadcast(shape), "assignment destination is read-only"))


class _Windows(Lens):
    """``sliding_window_view``: each window of ``window_shape`` along ``axes``, its elements on new
    trailing axes, read as one slice of the base per position in the window."""

    def __init__(self, window_shape, axes):
        self.window_shape, self.axes = tuple(window_shape), tuple(axes)

    def _positions(self, shape):
        """The shape of the window starts, and the base's starts for each position in a window."""
        starts_shape = list(shape)
        for a, w in zip(self.axes, self.window_shape):
            starts_shape[a] -= w - 1
        for offsets in np.ndindex(*self.window_shape):
            start = [0] * len(shape)
            for a, o in zip(self.axes, offsets):
                start[a] += o
            yield starts_shape, start

    def read(self, base):
        pieces, shape = [], None
        for shape, start in self._positions(base.shape):
            piece = ops.slice(base, start, [s + n for s, n in zip(start, shape)])
            pieces.append(ops.reshape(piece, [*shape, 1]))
        stacked = ops.concatenate(pieces, len(shape)) if len(pieces) > 1 else pieces[0]
        return ops.reshape(stacked, [*shape, *self.window_shape])

    def type_of(self, base):
        shape = next(self._positions(base.shape))[0]
        return base.with_shape([*shape, *self.window_shape])

    def on_numpy(self, array):
        return np.lib.stride_tricks.sliding_window_view(array, self.window_shape, self.axes)


@implements(np.lib.stride_tricks.sliding_window_view)
def sliding_window_view(x, window_shape, axis=None, *, subok=False, writeable=False):
    """A read-only view (NumPy's default; ``writeable=True`` windows overlap, so writes through
    them are not supported)."""
    if writeable:
        raise UnsupportedError("numpy.lib.stride_tricks.sliding_window_view(..., writeable=True) is not supported "
                               "(its windows overlap); read the windows, and write into the array itself")
    window_shape = tuple(window_shape) if np.iterable(window_shape) else (window_shape,)
    # NumPy checks the arguments (and gives its errors) on an array of the same shape.
    np.lib.stride_tricks.sliding_window_view(np.broadcast_to(np.zeros((), np.dtype(x.dtype)), np.shape(x)),
                                             window_shape, axis)
    ndim = np.ndim(x)
    axes = tuple(range(ndim)) if axis is None else tuple(axis_index(a, ndim) for a in
                                                          (axis if np.iterable(axis) else (axis,)))
    return view(x, ReadOnly(_Windows(window_shape, axes), "assignment destination is read-only"))


class _Strided(Lens):
    """``as_strided`` of an owner: the elements at memory offset ``start`` plus whole-element ``strides``,
    read as one gather of the flattened owner (``logical``: the owner's element at each memory offset,
    where its memory is not in C order).  NumPy writes through it element by element, where elements
    repeat too; cofactor does not (the view is read-only)."""

    def __init__(self, start: int, shape, strides, logical=None):
        self.start, self.shape, self.strides, self.logical = int(start), tuple(shape), tuple(strides), logical

    def same_template(self, other):
        return type(other) is _Strided and (self.start, self.shape, self.strides) == \
            (other.start, other.shape, other.strides) and np.array_equal(self.logical, other.logical)

    def offsets(self) -> np.ndarray:
        """The memory offset (in elements, from the owner's first) of each element."""
        grid = np.indices(self.shape, dtype=np.int64)
        return self.start + sum((s * g for s, g in zip(self.strides, grid)), np.zeros(self.shape, np.int64))

    def positions(self) -> np.ndarray:
        """The flat position in the owner of each element."""
        offsets = self.offsets()
        return offsets if self.logical is None else self.logical[offsets]

    def read(self, base):
        from .indexing import getitem
        flat = TracedArray(ops.reshape(base, (base.type.size,)))
        return getitem(flat, (self.positions(),)).value

    def type_of(self, base):
        return base.with_shape(self.shape)

    def on_numpy(self, array):
        return np.lib.stride_tricks.as_strided(np.zeros(1, array.dtype), self.shape,
                                               [s * array.itemsize for s in self.strides], writeable=False)


@constructs(np.lib.stride_tricks.as_strided)  # not dispatched by NumPy: routed by the source conversion
def as_strided(x, shape=None, strides=None, subok=False, writeable=True):
    """The elements of ``x``'s storage that NumPy would read at these strides (from the strides the
    owner has: an argument's own, a Fortran-order copy's), as a read-only view (a gather of the owner)."""
    if not isinstance(x, TracedArray):
        return np.lib.stride_tricks.as_strided(x, shape, strides, subok, writeable)
    owner = x.owners()[0]
    itemsize = x.dtype.itemsize
    element_strides = [s // itemsize for s in strided_like(owner).strides]
    offsets = sum((s * g for s, g in zip(element_strides, np.indices(owner.shape, dtype=np.int64))),
                  np.zeros(owner.shape, np.int64))
    offsets = offsets - (offsets.min() if owner.size else 0)  # (from the owner's first element in memory)
    positions = positions_view(x, offsets) if len(x.owners()) == 1 else None
    if positions is None:
        raise UnsupportedError("numpy.lib.stride_tricks.as_strided of this array (a view through a traced index, or "
                               "one of several arrays chosen at run time) is not supported")
    shape = x.shape if shape is None else tuple(int(n) for n in shape)
    strides = strided_like(x).strides if strides is None else tuple(int(s) for s in strides)
    if len(strides) != len(shape) or any(s % itemsize for s in strides):
        raise UnsupportedError("numpy.lib.stride_tricks.as_strided with strides that are not whole elements of "
                               f"{x.dtype} (or not one per axis) is not supported")
    span = int(offsets.max()) + 1 if owner.size else 0
    logical = np.full(span, -1, np.int64)
    logical[offsets.ravel()] = np.arange(owner.size)
    lens = _Strided(positions.flat[0] if positions.size else 0, shape, [s // itemsize for s in strides],
                    None if np.array_equal(logical, np.arange(owner.size)) else logical)
    read = lens.offsets()
    if read.size and (read.min() < 0 or read.max() >= span or (logical[read] < 0).any()):
        raise UnsupportedError("numpy.lib.stride_tricks.as_strided reads outside the array's memory (NumPy would read "
                               "whatever lies there): choose a shape and strides that stay inside it")
    return view(owner, ReadOnly(lens, "writing through numpy.lib.stride_tricks.as_strided is not supported (its "
                                      "elements may repeat): write into the array itself", UnsupportedError))


@implements(np.broadcast_arrays)
def broadcast_arrays(*args, subok=False):
    shape = broadcast_shapes(*[np.shape(a) for a in args])
    return tuple(broadcast_to_(a, shape) for a in args)


def _atleast(ndim, place):
    def impl(*arys):
        out = []
        for a in arys:
            v = value(a)
            shape = v.shape
            if len(shape) < ndim:
                shape = place(shape)
            out.append(view(a, Reshape(shape)))
        return out[0] if len(out) == 1 else tuple(out)
    return impl


implements(np.atleast_1d)(_atleast(1, lambda s: (1,)))
implements(np.atleast_2d)(_atleast(2, lambda s: (1,) * (2 - len(s)) + s))
implements(np.atleast_3d)(_atleast(3, lambda s: {0: (1, 1, 1), 1: (1,) + s + (1,), 2: s + (1,)}[len(s)]))


@implements(np.concatenate, np.concat)
def concatenate(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    reject("numpy.concatenate", out=(out, None))
    arrays = list(arrays)
    if not arrays:
        raise ValueError("need at least one array to concatenate")
    target = np.dtype(dtype) if dtype is not None else result_type(*arrays)
    vs = [value(a) for a in arrays]
    for v in vs:
        if not np.can_cast(v.dtype, target, casting=casting):
            raise TypeError(f"Cannot cast array data from {v.dtype!r} to {target!r} according to the rule '{casting}'")
    if axis is None:
        vs, axis = [ops.reshape(v, (v.type.size,)) for v in vs], 0
    rank = vs[0].type.rank
    if rank == 0:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    ax = axis_index(axis, rank)
    for i, v in enumerate(vs[1:], 1):
        if v.type.rank != rank:
            raise ValueError(f"all the input arrays must have same number of dimensions, but the array at index 0 "
                             f"has {rank} dimension(s) and the array at index {i} has {v.type.rank} dimension(s)")
        for d in range(rank):
            if d != ax and v.shape[d] != vs[0].shape[d]:
                raise ValueError("all the input array dimensions except for the concatenation axis must match "
                                 f"exactly, but along dimension {d}, the array at index 0 has size "
                                 f"{vs[0].shape[d]} and the array at index {i} has size {v.shape[d]}")
    return wrap(ops.concatenate([ops.convert(v, target) for v in vs], ax))


@implements(np.stack)
def stack(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    arrays = list(arrays)
    if not arrays:
        raise ValueError("need at least one array to stack")
    shapes = {np.shape(a) for a in arrays}
    if len(shapes) != 1:
        raise ValueError("all input arrays must have the same shape")
    ax = axis_index(axis, len(shapes.pop()) + 1)
    return concatenate([expand_dims(a, ax) for a in arrays], ax, out, dtype=dtype, casting=casting)


@implements(np.vstack, np.row_stack)
def vstack(tup, *, dtype=None, casting="same_kind"):
    return concatenate([np.atleast_2d(a) for a in tup], 0, dtype=dtype, casting=casting)


@implements(np.hstack)
def hstack(tup, *, dtype=None, casting="same_kind"):
    arrs = [np.atleast_1d(a) for a in tup]
    axis = 0 if arrs and np.ndim(arrs[0]) == 1 else 1
    return concatenate(arrs, axis, dtype=dtype, casting=casting)


@implements(np.dstack)
def dstack(tup):
    return concatenate([np.atleast_3d(a) for a in tup], 2)


@implements(np.column_stack)
def column_stack(tup):
    return concatenate([a if np.ndim(a) >= 2 else reshape(a, (-1, 1)) for a in tup], 1)


@implements(np.split)
def split(ary, indices_or_sections, axis=0):
    if isinstance(indices_or_sections, (int, np.integer)) and np.shape(ary)[axis] % indices_or_sections:
        raise ValueError("array split does not result in an equal division")
    return array_split(ary, indices_or_sections, axis)


@implements(np.array_split)
def array_split(ary, indices_or_sections, axis=0):
    v = value(ary)
    ax = axis_index(axis, v.type.rank)
    n = v.shape[ax]
    if isinstance(indices_or_sections, (int, np.integer)):
        sections = int(indices_or_sections)
        if sections <= 0:
            raise ValueError("number sections must be larger than 0.")
        each, extra = divmod(n, sections)
        sizes = [each + 1] * extra + [each] * (sections - extra)
        bounds = np.cumsum([0] + sizes).tolist()
    else:
        bounds = [0] + [min(max(int(i) + (n if int(i) < 0 else 0), 0), n) for i in indices_or_sections] + [n]
    parts = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        items = full_slices(v.shape)
        items[ax] = ("slice", lo, max(0, hi - lo), 1)
        shape = list(v.shape)
        shape[ax] = max(0, hi - lo)
        parts.append(view(ary, BasicIndex(items, shape)))
    return parts


@implements(np.flip)
def flip(m, axis=None):
    v = value(m)
    items = full_slices(v.shape)
    for ax in axis_tuple(axis, v.type.rank):
        items[ax] = ("slice", v.shape[ax] - 1, v.shape[ax], -1)
    return view(m, BasicIndex(items, v.shape))


@implements(np.fliplr)
def fliplr(m):
    return flip(m, 1)


@implements(np.flipud)
def flipud(m):
    return flip(m, 0)


@implements(np.roll)
def roll(a, shift, axis=None):
    v = value(a)
    if axis is None:
        return reshape(roll(wrap(ops.reshape(v, (v.type.size,))), shift, 0), v.shape)
    if isinstance(shift, TracedArray):
        known = known_value(shift)
        if known is None:
            return _rolled_by_traced(v, shift, axis)
        shift = known
    shifts = np.broadcast_to(np.asarray(shift), np.broadcast_shapes(np.shape(shift), np.shape(axis)))
    axes = np.broadcast_to(np.asarray(axis), shifts.shape)
    total = {}
    for s, ax in zip(shifts.reshape(-1), axes.reshape(-1)):
        ax = axis_index(int(ax), v.type.rank)
        total[ax] = total.get(ax, 0) + int(s)
    for ax, s in total.items():
        n = v.shape[ax]
        if n == 0 or s % n == 0:
            continue
        s %= n
        start, limit = [0] * v.type.rank, list(v.shape)
        limit[ax] = n - s
        head = ops.slice(v, start, limit)
        start[ax], limit[ax] = n - s, n
        tail = ops.slice(v, start, limit)
        v = ops.concatenate([tail, head], ax)
    return wrap(v)


def _rolled_by_traced(v, shift: TracedArray, axis):
    """``np.roll`` by a shift known only at run time (a 0-d integer, along one axis): the window of
    ``v`` repeated twice along that axis that starts ``shift`` (mod its length) from the end."""
    if shift.ndim or shift.dtype.kind not in "iub" or not isinstance(axis, (int, np.integer)):
        raise UnsupportedError("numpy.roll by a traced shift supports one integer shift along one axis")
    ax = axis_index(int(axis), v.type.rank)
    n = v.shape[ax]
    if n == 0:
        return wrap(v)
    start = np.subtract(n, np.remainder(np.astype(shift, np.int64), n))  # (n where the shift is a multiple of n)
    starts = [ops.constant(np.asarray(0, np.int64))] * v.type.rank
    starts[ax] = value(start)
    return wrap(ops.dynamic_slice(ops.concatenate([v, v], ax), starts, v.shape))


@implements(np.tile)
def tile(A, reps):
    v = value(A)
    reps = static(reps)
    reps = tuple(np.atleast_1d(reps).tolist()) if isinstance(reps, np.ndarray) else \
        (reps,) if not isinstance(reps, (tuple, list)) else tuple(reps)
    reps = tuple(operator_index(r, "reps") for r in reps)
    ndim = max(len(reps), v.type.rank)
    reps = (1,) * (ndim - len(reps)) + reps
    if any(r < 0 for r in reps):
        raise ValueError("negative dimensions are not allowed")
    shape = (1,) * (ndim - v.type.rank) + v.shape
    v = ops.reshape(v, shape)
    # Broadcast into (r0, s0, r1, s1, ...) and merge pairs.
    expanded = [n for pair in zip(reps, shape) for n in pair]
    b = ops.broadcast_in_dim(v, expanded, [2 * i + 1 for i in range(ndim)])
    return wrap(ops.reshape(b, [r * s for r, s in zip(reps, shape)]))


@implements(np.repeat)
def repeat(a, repeats, axis=None):
    v = value(a)
    repeats = static(repeats)
    if isinstance(repeats, TracedArray):
        raise UnsupportedError("numpy.repeat with traced repeat counts has a data-dependent shape")
    if axis is None:
        v, ax = ops.reshape(v, (v.type.size,)), 0
    else:
        ax = axis_index(axis, v.type.rank)
    if isinstance(repeats, (float, np.floating)):  # (a float scalar is truncated, as NumPy's int() of it; a 0-d array is not)
        repeats = int(repeats)
    counts = np.broadcast_to(np.asarray(repeats), (v.shape[ax],))
    if counts.dtype.kind not in "iu" and counts.dtype != bool:
        raise TypeError("Cannot cast array data from dtype('float64') to dtype('int64') according to the rule 'safe'")
    if np.any(counts < 0):
        raise ValueError("repeats may not contain negative values.")
    if np.all(counts == counts[:1]) and counts.size:
        r = int(counts[0])
        shape = list(v.shape)
        expanded = shape[:ax + 1] + [r] + shape[ax + 1:]
        b = ops.broadcast_in_dim(v, expanded, [d if d <= ax else d + 1 for d in range(v.type.rank)])
        shape[ax] *= r
        return wrap(ops.reshape(b, shape))
    pieces = []
    for i, c in enumerate(counts):
        if c:
            start, limit = [0] * v.type.rank, list(v.shape)
            start[ax], limit[ax] = i, i + 1
            pieces.append(repeat(wrap(ops.slice(v, start, limit)), int(c), ax).value)
    if not pieces:
        shape = list(v.shape)
        shape[ax] = 0
        return wrap(ops.slice(v, [0] * v.type.rank, shape))
    return wrap(ops.concatenate(pieces, ax))


_INDEX_MODES = ("edge", "wrap", "reflect", "symmetric")  # each padded element is an element of the array


@implements(np.pad)
def pad(array, pad_width, mode="constant", **kwargs):
    if mode != "constant" and mode not in _INDEX_MODES:
        raise UnsupportedError(f"numpy.pad(mode={mode!r}) is not supported; the modes are 'constant', "
                               + ", ".join(repr(m) for m in _INDEX_MODES))
    v = value(array)
    if v.type.rank == 0:  # (nothing to pad: NumPy's copy)
        return wrap(v)
    widths = _pad_widths(static(pad_width), v.type.rank)
    if np.any(widths < 0):
        raise ValueError("index can't contain negative values")
    if mode in _INDEX_MODES:
        if kwargs and kwargs != {"reflect_type": "even"}:
            raise UnsupportedError(f"numpy.pad(mode={mode!r}) with {', '.join(kwargs)} is not supported")
        out = wrap(v)
        for d, (low, high) in enumerate(widths.tolist()):
            if low or high:  # which element each position of the padded axis holds: NumPy's own answer
                out = np.take(out, np.pad(np.arange(v.shape[d]), (low, high), mode=mode), axis=d)
        return out
    fill = np.broadcast_to(np.asarray(kwargs.pop("constant_values", 0)), (v.type.rank, 2))
    if kwargs:
        raise TypeError(f"unsupported keyword arguments for mode 'constant': {set(kwargs)}")
    for x in fill.flat:  # NumPy stores each into the array: its errors (NaN into int32: ValueError)
        with numpy_rules():
            np.empty(1, v.dtype)[0] = x
    if np.all(fill == fill.flat[0]):
        scalar = ops.constant(np.array(fill.flat[0]).astype(v.dtype))
        return wrap(ops.pad(v, scalar, widths[:, 0].tolist(), widths[:, 1].tolist()))
    # Different values per side: NumPy pads one axis at a time, each side with its own value.
    for d in range(v.type.rank):
        for side in (0, 1):
            low = [0] * v.type.rank
            high = [0] * v.type.rank
            (low if side == 0 else high)[d] = int(widths[d, side])
            v = ops.pad(v, ops.constant(np.array(fill[d, side]).astype(v.dtype)), low, high)
    return wrap(v)


def _pad_widths(pad_width, rank: int) -> np.ndarray:
    """(before, after) for each axis, as np.pad reads ``pad_width``: a number, pairs, or a dict of
    axes (NumPy 2.3; the others 0)."""
    if not isinstance(pad_width, dict):
        return np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (rank, 2))
    widths = np.zeros((rank, 2), np.int64)
    for axis, width in pad_width.items():
        widths[axis_index(axis, rank)] = np.broadcast_to(np.asarray(width, dtype=np.int64), (2,))
    return widths


def _sort_comparator(dtype):
    """NumPy's sort order: ascending, NaNs last (complex: lexicographic; those with a NaN after the others, in
    NumPy's classes: a NaN imaginary part by real part, then a NaN real part by imaginary part, then both)."""
    less, isnan = KERNELS[np.less], KERNELS[np.isnan]

    def both(x, y):
        return ops.binary("stablehlo.and", x, y)

    def either(x, y):
        return ops.binary("stablehlo.or", x, y)

    def before(a, b, *payload):
        if dtype.kind == "c":
            (ar, ai), (br, bi) = [(ops.real(v), ops.imag(v)) for v in (a, b)]
            ca, cb = [ops.binary("stablehlo.add", ops.convert(isnan(i), np.int8), ops.binary(  # the classes 0-3
                "stablehlo.multiply", ops.convert(isnan(r), np.int8), ops.constant(np.int8(2))))
                for r, i in ((ar, ai), (br, bi))]
            same_real = either(ops.compare(ar, br, "EQ"), both(isnan(ar), isnan(br)))
            within = either(ops.compare(ar, br, "LT"), both(same_real, ops.compare(ai, bi, "LT")))
            return either(ops.compare(ca, cb, "LT"), both(ops.compare(ca, cb, "EQ"), within))
        if dtype.kind != "f":
            return less(a, b)
        # a < b, or b is NaN while a is not.
        return either(less(a, b), both(isnan(b), ops.unary("stablehlo.not", isnan(a))))
    return before


def _sort_kind(kind):
    """NumPy's check of a sort's ``kind`` (by its first letter: quicksort, heapsort, mergesort,
    stable); every kind sorts stably here."""
    if kind is not None and (not isinstance(kind, str) or kind[:1].lower() not in ("q", "h", "m", "s")):
        raise ValueError(f"sort kind must be one of 'quick', 'heap', or 'stable' (got {kind!r})")


def _sort_values(a, axis, kind):
    _sort_kind(kind)
    v = value(a)
    if axis is None:
        v, axis = ops.reshape(v, (v.type.size,)), 0
    ax = axis_index(axis, v.type.rank)
    return v, ax


@implements(np.sort)
@keeps_order
def sort(a, axis=-1, kind=None, order=None, *, stable=None):
    reject("numpy.sort", order=(order, None))
    v, ax = _sort_values(a, axis, kind)
    if v.type.rank == 0:
        raise np.exceptions.AxisError(axis, 0)
    return wrap(ops.sort([v], ax, _sort_comparator(v.dtype))[0])


@implements(np.argsort)
def argsort(a, axis=-1, kind=None, order=None, *, stable=None):
    reject("numpy.argsort", order=(order, None))
    v, ax = _sort_values(a, axis, kind)
    index = ops.iota(v.shape, np.int64, ax)
    return wrap(ops.sort([v, index], ax, _sort_comparator(v.dtype))[1])


@implements("ndarray.sort")
def sort_method(a, axis=-1, kind=None, order=None, *, stable=None):
    """In place: the array (and the base it views) holds the sorted values."""
    a.value = sort(a, axis, kind, order).value


@implements(np.shape)
def shape(a):
    return np.shape(value(a)) if not isinstance(a, TracedArray) else a.shape


@implements(np.ndim)
def ndim(a):
    return len(shape(a))


@implements(np.size)
def size(a, axis=None):
    s = shape(a)
    return int(np.prod(s, dtype=np.int64)) if axis is None else s[axis_index(axis, len(s))]


@implements(np.result_type)
def result_type_(*arrays_and_dtypes):
    return np.result_type(*[a.dtype if isinstance(a, TracedArray) else a for a in arrays_and_dtypes])


@implements(np.iscomplexobj)
def iscomplexobj(x):
    return np.dtype(x.dtype if isinstance(x, TracedArray) else np.asarray(x).dtype).kind == "c"


@implements(np.isrealobj)
def isrealobj(x):
    return not iscomplexobj(x)


@implements(np.diff)
def diff(a, n=1, axis=-1, prepend=np._NoValue, append=np._NoValue):
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n!r}")
    v = value(a)
    ax = axis_index(axis, v.type.rank)
    parts = [p for p in (prepend, a, append) if p is not np._NoValue]
    if len(parts) > 1:
        shape = list(v.shape)
        shape[ax] = 1
        parts = [p if p is a or np.ndim(p) else np.broadcast_to(p, shape) for p in parts]
        v = value(concatenate(parts, ax))
    for _ in range(min(n, v.shape[ax])):  # further differences of an empty axis stay empty
        start, limit = [0] * v.type.rank, list(v.shape)
        start[ax] = 1
        hi = ops.slice(v, start, limit)
        start[ax], limit[ax] = 0, v.shape[ax] - 1
        lo = ops.slice(v, start, limit)
        v = compare(hi, lo, "NE") if v.dtype == np.bool_ else ops.binary("stablehlo.subtract", hi, lo)
    return wrap(v)
