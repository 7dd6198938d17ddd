"""Products: matmul/@, dot, vdot, inner, outer, tensordot, einsum, all as stablehlo.dot_general."""
from __future__ import annotations

import string

import numpy as np

from ..errors import UnsupportedError
from ..ir import ops
from ..tracing.array import TracedArray
from ..tracing.dispatch import implements, implements_ufunc
from ._core import broadcast_shapes, broadcast_to, convert_like_numpy, reject, result_type, value, view, wrap
from .matrices import Diagonal
from .reductions import reduce_ufunc
from .ufuncs import apply


def _dot(a, b, batch, contract, dtype):
    """dot_general in ``dtype``; booleans multiply as integers and test non-zero, as NumPy does."""
    if np.dtype(dtype) == np.bool_:
        r = ops.dot_general(ops.convert(a, np.int64), ops.convert(b, np.int64), batch, contract)
        return ops.compare(r, ops.broadcast_in_dim(ops.constant(np.int64(0)), r.shape, ()), "NE", "SIGNED")
    dtype = np.dtype(dtype)
    return ops.dot_general(convert_like_numpy(a, dtype), convert_like_numpy(b, dtype), batch, contract)


@implements_ufunc(np.matmul)
def matmul(a, b, out=None, dtype=None, casting="same_kind", **kwargs):
    reject("numpy.matmul", out=(out, None))
    if kwargs:
        raise UnsupportedError(f"numpy.matmul: arguments {sorted(kwargs)} are not supported")
    dtype = np.dtype(dtype) if dtype is not None else result_type(a, b)
    x, y = value(a), value(b)
    for i, v in enumerate((x, y)):
        if v.type.rank == 0:
            raise ValueError(f"matmul: Input operand {i} does not have enough dimensions (has 0, gufunc core "
                             "with signature (n?,k),(k,m?)->(n?,m?) requires 1)")
    x1, y1 = x.type.rank == 1, y.type.rank == 1
    if x1:
        x = ops.reshape(x, (1,) + x.shape)
    if y1:
        y = ops.reshape(y, y.shape + (1,))
    if x.shape[-1] != y.shape[-2]:
        raise ValueError(f"matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature "
                         f"(n?,k),(k,m?)->(n?,m?) (size {y.shape[-2]} is different from {x.shape[-1]})")
    batch = broadcast_shapes(x.shape[:-2], y.shape[:-2])
    x = broadcast_to(x, batch + x.shape[-2:])
    y = broadcast_to(y, batch + y.shape[-2:])
    nb = len(batch)
    r = _dot(x, y, (range(nb), range(nb)), ([nb + 1], [nb]), dtype)
    shape = batch + (() if x1 else (r.shape[-2],)) + (() if y1 else (r.shape[-1],))
    return wrap(ops.reshape(r, shape))


@implements(np.dot)
def dot(a, b, out=None):
    reject("numpy.dot", out=(out, None))
    x, y = value(a), value(b)
    if x.type.rank == 0 or y.type.rank == 0:
        return apply(np.multiply, a, b)
    dtype = result_type(a, b)
    cy = 0 if y.type.rank == 1 else y.type.rank - 2
    if x.shape[-1] != y.shape[cy]:
        raise ValueError(f"shapes {x.shape} and {y.shape} not aligned: {x.shape[-1]} (dim {x.type.rank - 1}) "
                         f"!= {y.shape[cy]} (dim {cy})")
    return wrap(_dot(x, y, ((), ()), ([x.type.rank - 1], [cy]), dtype))


@implements(np.vdot)
def vdot(a, b):
    x, y = np.ravel(a), np.ravel(b)
    return dot(x.conj(), y)  # the method: real arrays (booleans too) stay as they are


@implements(np.inner)
def inner(a, b):
    x, y = value(a), value(b)
    if x.type.rank == 0 or y.type.rank == 0:
        return apply(np.multiply, a, b)
    if x.shape[-1] != y.shape[-1]:
        raise ValueError(f"shapes {x.shape} and {y.shape} not aligned: {x.shape[-1]} (dim {x.type.rank - 1}) "
                         f"!= {y.shape[-1]} (dim {y.type.rank - 1})")
    return wrap(_dot(x, y, ((), ()), ([x.type.rank - 1], [y.type.rank - 1]), result_type(a, b)))


@implements(np.outer)
def outer(a, b, out=None):
    reject("numpy.outer", out=(out, None))
    x, y = np.ravel(a), np.ravel(b)
    return apply(np.multiply, np.reshape(x, (-1, 1)), np.reshape(y, (1, -1)))


@implements(np.tensordot)
def tensordot(a, b, axes=2):
    x, y = value(a), value(b)
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        ax_a, ax_b = list(range(x.type.rank - n, x.type.rank)), list(range(n))
    else:
        ax_a, ax_b = axes
        ax_a = [ax_a] if isinstance(ax_a, (int, np.integer)) else list(ax_a)
        ax_b = [ax_b] if isinstance(ax_b, (int, np.integer)) else list(ax_b)
        if len(ax_a) != len(ax_b):
            raise ValueError("shape-mismatch for sum")
    ax_a = [d % x.type.rank if x.type.rank else d for d in ax_a]
    ax_b = [d % y.type.rank if y.type.rank else d for d in ax_b]
    if any(x.shape[i] != y.shape[j] for i, j in zip(ax_a, ax_b)):
        raise ValueError("shape-mismatch for sum")
    return wrap(_dot(x, y, ((), ()), (ax_a, ax_b), result_type(a, b)))


# --- einsum -----------------------------------------------------------------------------------

def _parse_einsum(subscripts: str, ranks):
    subscripts = subscripts.replace(" ", "")
    inputs, arrow, output = subscripts.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(ranks):
        raise ValueError("more operands provided to einstein sum function than specified in the subscripts "
                         "string" if len(ranks) > len(terms) else
                         "fewer operands provided to einstein sum function than specified in the subscripts string")
    # Ellipsis dimensions get labels that cannot clash with letters.
    spare = [c for c in string.digits + "!#$%&*+:;<=>?@^_|~"]
    ell_rank = max((r - len(t.replace("...", "")) for t, r in zip(terms, ranks) if "..." in t), default=0)
    ell = spare[:ell_rank]
    labels = []
    for t, r in zip(terms, ranks):
        if "..." in t:
            k = r - len(t.replace("...", ""))
            t = t.replace("...", "".join(ell[ell_rank - k:]))
        if len(t) != r or not all(c.isalpha() or c in ell for c in t):
            raise ValueError("einstein sum subscripts string contains too many subscripts for operand"
                             if len(t) > r else "operand has more dimensions than subscripts given in einstein sum")
        labels.append(t)
    if arrow:
        output = output.replace("...", "".join(ell))
    else:
        counts = {c: sum(t.count(c) for t in labels) for t in labels for c in t}
        output = "".join(ell) + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in ell))
    return labels, output


def _einsum_view(a, labels, output):
    """One operand's einsum with no sum is NumPy's view of it (``np.einsum("ii->i", m)[:] = 0`` writes
    m's diagonal), of its dtype whatever ``dtype`` says, as NumPy's: its diagonals, then a transpose; None
    where a repeated label's axes differ in size."""
    labels = list(labels)
    while len(set(labels)) != len(labels):
        c = next(c for c in labels if labels.count(c) > 1)
        i = labels.index(c)
        j = labels.index(c, i + 1)
        if a.shape[i] != a.shape[j]:
            return None
        a = view(a, Diagonal(0, i, j))
        labels = [label for k, label in enumerate(labels) if k not in (i, j)] + [c]
    return np.transpose(a, [labels.index(c) for c in output])


def _take_diagonals(v, labels):
    """Repeated labels in one operand select a diagonal (ii -> i)."""
    while len(set(labels)) != len(labels):
        c = next(c for c in labels if labels.count(c) > 1)
        i = labels.index(c)
        j = labels.index(c, i + 1)
        n = v.shape[i]
        rest = [d for d in range(len(labels)) if d not in (i, j)]
        v = ops.transpose(v, rest + [i, j])
        flat = ops.reshape(v, [v.shape[d] for d in range(len(rest))] + [n * n])
        rank = len(rest) + 1
        v = ops.slice(flat, [0] * rank, list(flat.shape), [1] * len(rest) + [n + 1])
        labels = [labels[d] for d in rest] + [c]
    return v, labels


def _sum_out(v, labels, keep):
    axes = [d for d, c in enumerate(labels) if c not in keep]
    if axes:
        v = reduce_ufunc(v, axes, np.add if v.dtype != np.bool_ else np.logical_or)
    return v, [c for c in labels if c in keep]


@implements(np.einsum)
def einsum(subscripts, *operands, out=None, dtype=None, order="K", casting="safe", optimize=False):
    reject("numpy.einsum", out=(out, None))
    if not isinstance(subscripts, str):
        raise UnsupportedError("numpy.einsum: only the subscripts-string form is supported")
    values = [value(o) for o in operands]
    labels, output = _parse_einsum(subscripts, [v.type.rank for v in values])
    if len(operands) == 1 and isinstance(operands[0], TracedArray) and sorted(set(labels[0])) == sorted(output):
        viewed = _einsum_view(operands[0], labels[0], output)
        if viewed is not None:
            return viewed
    target = np.dtype(dtype) if dtype is not None else result_type(*operands)
    for k, v in enumerate(values if dtype is not None else ()):
        if not np.can_cast(v.dtype, target, casting):
            raise TypeError(f"Iterator operand {k} dtype could not be cast from dtype('{v.dtype}') to "
                            f"dtype('{target}') according to the rule '{casting}'")
    sizes = {}  # each label's size; 1 broadcasts against any other size, 0 included
    for v, ls in zip(values, labels):
        for n, c in zip(v.shape, ls):
            known = sizes.get(c, 1)
            if n != 1 and known != 1 and n != known:
                raise ValueError(f"operands could not be broadcast together with remapped shapes "
                                 f"[original->remapped]: size {n} vs {known} for label '{c}'")
            sizes[c] = n if known == 1 else known
    terms = []
    for k, (v, ls) in enumerate(zip(values, labels)):
        v = convert_like_numpy(v, target)
        v, ls = _take_diagonals(v, list(ls))
        v = broadcast_to(v, [sizes[c] for c in ls]) if any(sizes[c] != n for c, n in zip(ls, v.shape)) else v
        later = set(output) | {c for t in labels[:k] + labels[k + 1:] for c in t}
        v, ls = _sum_out(v, ls, later)
        terms.append((v, ls))
    acc, acc_labels = terms[0]
    for k in range(1, len(terms)):
        v, ls = terms[k]
        later = set(output) | {c for _, t in terms[k + 1:] for c in t}
        common = [c for c in acc_labels if c in ls]
        batch = [c for c in common if c in later]
        contract = [c for c in common if c not in later]
        acc = _dot(acc, v, ([acc_labels.index(c) for c in batch], [ls.index(c) for c in batch]),
                   ([acc_labels.index(c) for c in contract], [ls.index(c) for c in contract]), target)
        acc_labels = batch + [c for c in acc_labels if c not in common] + [c for c in ls if c not in common]
    acc, acc_labels = _sum_out(acc, acc_labels, set(output))
    if sorted(acc_labels) != sorted(output):
        raise ValueError(f"einstein sum subscripts string included output subscript that does not appear "
                         f"in an input: {output}")
    return wrap(ops.transpose(acc, [acc_labels.index(c) for c in output]))
