"""Pytrees: nested tuples, lists, dicts and namedtuples of leaves, and *nodes*: objects of a class
with ``tree_flatten()`` -> (children, hashable static part) and ``tree_unflatten(static, children)``
(an array with run-time extents is its data and its windows' traced bounds).

Every layer that accepts "any pytree of arrays" (to_device, compile, the
outputs of a compiled function) flattens with these two functions.  A
``TreeDef`` is hashable, so it can be part of a cache key.
"""
from __future__ import annotations

from typing import Any, NamedTuple


class TreeDef(NamedTuple):
    kind: str  # "leaf", "none", "tuple", "list", "dict", "namedtuple" or "node"
    meta: Any  # dict keys, the namedtuple class, or (a node's class, its static part)
    children: tuple


_LEAF = TreeDef("leaf", None, ())


def is_namedtuple(x) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def containers(tree, path=()):
    """(path, node) for ``tree`` and each list, tuple, dict and namedtuple in it: the containers
    ``unflatten`` builds anew (a dict subclass is a leaf, the caller's own object)."""
    yield path, tree
    if type(tree) in (list, tuple, dict) or is_namedtuple(tree):
        for key, item in tree.items() if type(tree) is dict else enumerate(tree):
            yield from containers(item, path + (key,))


def flatten(tree, is_leaf=None):
    """(leaves, treedef) of ``tree``; ``is_leaf(x)`` can stop the descent early."""
    leaves = []

    def walk(x):
        if is_leaf is not None and is_leaf(x):
            leaves.append(x)
            return _LEAF
        if x is None:
            return TreeDef("none", None, ())
        if is_namedtuple(x):
            return TreeDef("namedtuple", type(x), tuple(walk(c) for c in x))
        if isinstance(x, (tuple, list)):
            return TreeDef(type(x).__name__, None, tuple(walk(c) for c in x)) \
                if type(x) in (tuple, list) else _leaf(x)
        if type(x) is dict:
            keys = tuple(x)
            return TreeDef("dict", keys, tuple(walk(x[k]) for k in keys))
        if hasattr(type(x), "tree_flatten"):
            children, static = x.tree_flatten()
            return TreeDef("node", (type(x), static), tuple(walk(c) for c in children))
        return _leaf(x)

    def _leaf(x):
        leaves.append(x)
        return _LEAF

    return leaves, walk(tree)


def unflatten(treedef: TreeDef, leaves):
    it = iter(leaves)

    def build(td):
        if td.kind == "leaf":
            return next(it)
        if td.kind == "none":
            return None
        children = [build(c) for c in td.children]
        if td.kind == "tuple":
            return tuple(children)
        if td.kind == "list":
            return children
        if td.kind == "dict":
            return dict(zip(td.meta, children))
        if td.kind == "node":
            return td.meta[0].tree_unflatten(td.meta[1], children)
        return td.meta(*children)

    return build(treedef)


def tree_map(fn, tree, is_leaf=None):
    leaves, treedef = flatten(tree, is_leaf)
    return unflatten(treedef, [fn(x) for x in leaves])
