"""From a Python function to a callable executable: trace, optimize, compile, cache.

This is the one module that walks the whole pipeline (tracing -> IR ->
passes -> XLA -> runtime); each step lives in its own layer, and what a call does with its
arguments (signatures, validation, write-back) in call.py, where they run in placement.py.
"""
from __future__ import annotations

import functools
import threading
import time
import types
import warnings

import numpy as np

from .errors import ArgumentError, CompilationError, UnsupportedError, check_call, warn_in_user_code
from . import cache, placement
from .call import (aval_key, changed_arguments, check_implicit_writable, check_shared_containers, check_writable,
                   cut_to_lengths, numbers_traced, signature, static_arguments, traced_arguments, unsharded, wait_for,
                   write_back)
from .convert.calls import converted
from .runtime.devices import devices
from .passes import runner
from .pytree import flatten, unflatten
from .runtime.array import ConcreteArray
from .tracing.context import DEFAULT_OP_BUDGET, DEFAULT_UNROLL, Options
from .tracing.context import is_tracing
from .tracing import checks, implicit, outside
from .tracing.trace import trace
from .xla.executable import Executable, target

_PIPELINES = {True: "curated", "auto": "curated", "upstream": "upstream", False: "none"}


class OptimizationWarning(UserWarning):
    """An optimization pipeline failed; the program was compiled without it."""


class RecompileWarning(UserWarning):
    """A jit function compiled more than RECOMPILE_WARNING times, for new signatures or because
    what it reads from outside changed: each costs a trace and a compile."""


RECOMPILE_WARNING = 8
# Signatures a jit function keeps compiled; past it the oldest is dropped (its executable stays in
# the disk cache). cf.grad(lambda v: ...)(x) in a loop is a new signature at every call (the
# lambda is one of its constants), which would otherwise hold every lambda and program forever.
CACHE_SIZE = 64


class TraceTimeRandomWarning(UserWarning):
    """NumPy's global random generator ran while tracing, outside code cofactor could convert:
    its numbers became constants of the compiled function."""


def _trace_user_function(fn, args, kwargs, options: Options = Options()):
    check_call(fn, args, kwargs)
    devices()  # jax's first import moves NumPy's global random state: not the user's draw
    before = np.random.get_state()[2]  # the global generator's position
    result = trace(converted(fn), args, kwargs, options)
    if np.random.get_state()[2] != before:
        warnings.warn("cofactor: np.random ran at trace time in code it could not convert (no source "
                      "available?); the numbers drawn are now constants of the compiled function",
                      TraceTimeRandomWarning, stacklevel=4)
    return result


def _pipeline_kind(optimize) -> str:
    try:
        return _PIPELINES[optimize]
    except (KeyError, TypeError):
        raise ValueError(f"optimize must be True, False, 'auto' or 'upstream', not {optimize!r}") from None


def optimize_mlir(text: str, optimize=True, differentiate=False) -> str:
    """Run the optimization pipeline (with Enzyme's AD pass when ``differentiate``, for modules
    holding enzyme ops); if it fails, warn and fall back to no optimization (AD only)."""
    return _optimized(text, optimize, differentiate)[0]


def _optimized(text: str, optimize, differentiate) -> tuple[str, bool]:
    """``optimize_mlir``'s program, and whether the pipeline failed (so it was not applied)."""
    kind = _pipeline_kind(optimize)
    if kind == "none" and not differentiate and not launches_kernels(text):
        return text, False
    try:
        return runner.run(text, kind, differentiate), False
    except CompilationError as e:
        if kind == "none":
            raise
        fallback = differentiate or launches_kernels(text)
        unoptimized = runner.run(text, "none", differentiate) if fallback else text  # (its error, if it fails too)
        warnings.warn(f"cofactor: the {kind} optimization pipeline failed, so this function is compiled "
                      f"without it. {_first_error(e)}",
                      OptimizationWarning, stacklevel=4)
        return unoptimized, True


def _same_outputs(first, rival) -> bool:
    """Whether two programs' outputs agree up to rounding (their rewrites may reassociate)."""
    for a, b in zip(first, rival):
        if a.dtype.kind not in "fc":
            if not np.array_equal(a, b):
                return False
        elif not np.allclose(a, b, rtol=1e-4 if a.dtype.itemsize >= 8 else 1e-3, atol=1e-6, equal_nan=True):
            return False
    return True


def _not_reversible(calls) -> UnsupportedError:
    """The error for a program Enzyme could not differentiate because of these LAPACK ``calls`` ((NumPy
    function, user line)), which it has no derivative of."""
    name, where = calls[0]
    return UnsupportedError(f"{name} (LAPACK's SVD or QR, which numpy.linalg.norm(ord=2 or 'nuc'), cond, pinv, lstsq "
                            f"and matrix_rank use too) cannot be differentiated by cofactor: Enzyme has no derivative "
                            f"of them" + (f"\n  in user code at {where}" if where else ""))


def _first_error(e: CompilationError) -> str:
    lines = [line for line in e.diagnostic.splitlines() if "error:" in line] or e.diagnostic.splitlines() or str(e).splitlines()
    return lines[0].strip()


def launches_kernels(text: str) -> bool:
    """Whether a module launches kernels (cofactor/kernels), which the passes must raise before XLA."""
    return '"enzymexla.kernel_call"' in text


def differentiates(text: str) -> bool:
    """Whether a module holds Enzyme ops (so it needs the AD pass before XLA can compile it)."""
    return '"enzyme.' in text


class Compiled:
    """A function compiled for one signature; call it with arguments of that signature."""

    def __init__(self, fn, args, kwargs=None, *, optimize="auto", unroll=DEFAULT_UNROLL,
                 max_iterations=None, checkpoint=None, op_budget=DEFAULT_OP_BUDGET, max_slice=None, static=((), ()),
                 in_shardings=None, out_shardings=None):
        """``static``: (positions, names) of the arguments whose Python floats are constants (the
        others' are traced, ``numbers_traced``); None: all of them are.  ``in_shardings``,
        ``out_shardings``: as for ``jit`` (placement.py)."""
        kwargs = kwargs or {}
        self.fn = fn
        self.optimize = optimize
        self.static = static
        start = time.perf_counter()
        self.trace = self._traced(args, kwargs, Options.of(unroll, max_iterations, checkpoint, op_budget,
                                                                         max_slice, unoptimized=optimize is False))
        self.key, _ = signature(*self.arguments(args, kwargs))
        self.placement = placement.of(self.trace, *self.arguments(args, kwargs), in_shardings, out_shardings)
        if self.placement is not None:
            placement.annotate(self.trace, self.placement)
        self.raw_mlir = str(self.trace.module)
        traced = time.perf_counter()
        try:
            self.mlir, failed = _optimized(self.raw_mlir, optimize, differentiates(self.raw_mlir))
        except CompilationError as e:
            if self.trace.without_adjoints and "could not compute the adjoint" in e.diagnostic:
                raise _not_reversible(self.trace.without_adjoints) from None
            raise
        # After a failed curated pipeline the rival would fail, or run as long, too.  A sharded program
        # is not timed against a rival: processes of one run could choose differently, and then hang.
        rival_mlir = self._rival_mlir() if optimize == "auto" and not failed and self.placement is None else None
        optimized = time.perf_counter()
        self.executable, self._rival = self._compile(rival_mlir)
        self._trial = threading.Lock()
        # Where compile latency goes (seconds): tracing, Enzyme-JAX passes, XLA (both count the
        # auto rival, and disk-cache hits).
        self.timings = {"trace": traced - start, "passes": optimized - traced, "xla": time.perf_counter() - optimized}
        self._out_avals = [(t.shape, t.dtype.str) for t in self.trace.out_types]
        if self.placement is not None:  # a result on several devices is keyed by its sharding too
            self._out_avals = [aval + (s,) if len(s.device_set) > 1 else aval
                               for aval, s in zip(self._out_avals, self.executable.out_shardings)]
        self._single_output = self.trace.out_treedef.kind == "leaf"
        self._params = self.trace.params
        self._writebacks = self.trace.writebacks
        self._donated = {k for k, _ in self._writebacks}  # updated arguments, never read in place
        self._written_hosts = {k for k, _ in self.trace.implicit_writebacks}
        self._host_inputs = self.trace.host_inputs
        self._guards = self.trace.guards
        self._checks = self.trace.checks
        self._native = None  # the C++ caller of the hot path, made once the auto rival is settled (False: none)

    def _traced(self, args, kwargs, options):
        """The trace with the Python floats traced, or, if that fails (the function needs their
        values: ``np.zeros(int(t / dt))``, a dict key), with them as constants (``static`` = None)."""
        wrapped = self.static is not None and numbers_traced(args, kwargs, self.static)
        if wrapped:
            try:
                return _trace_user_function(self.fn, *wrapped, options)
            except Exception:  # noqa: BLE001  (traced again below; an error there is the user's)
                self.static = None
        return _trace_user_function(self.fn, args, kwargs, options)

    def arguments(self, args, kwargs) -> tuple:
        """The arguments as traced: Python floats wrapped as PythonNumbers (where they are traced)."""
        return traced_arguments(args, kwargs, self.static)

    def _rival_mlir(self):
        """optimize="auto": the program from the pipeline with the patterns that help some programs
        and hurt others (pipelines.TRIED_BY_AUTO), when it differs; None otherwise.  A function
        with cf.print is not tried twice (it would print)."""
        raw = self.raw_mlir
        if "cofactor_print" in raw or "stablehlo.while" not in raw or "dynamic_update_slice" not in raw:
            return None  # cf.print would print twice; the loop rewrites need a loop updating slices
        try:
            mlir = runner.run(raw, "curated+loops", differentiates(raw))
        except CompilationError:
            return None
        return None if mlir == self.mlir else mlir

    def _compile(self, rival_mlir):
        """The executable, and the rival's.  (Compiling them in two threads was slower on two cores:
        XLA's compile already uses both.)  A choice an earlier run made between the two (the disk
        cache) is kept: only the chosen one is compiled."""
        types = self.trace.module.functions[0].result_types
        self._choice = None
        if rival_mlir is not None:
            self._choice = cache.key(self.mlir, rival_mlir, target())
            chosen = cache.load("auto", self._choice)
            if chosen is not None:
                self.mlir = rival_mlir if chosen == b"rival" else self.mlir
                return Executable(self.mlir, types, placement=self.placement), None
        executable = Executable(self.mlir, types, placement=self.placement)
        if rival_mlir is None or executable.slow:  # a program XLA compiles slowly is not compiled twice
            return executable, None
        try:
            return executable, (rival_mlir, Executable(rival_mlir, types, placement=self.placement))
        except CompilationError:
            return executable, None

    def _keep_faster(self, buffers):
        """Run both programs on the first call's arguments (after one run each to warm up) and keep
        the faster one.  Arguments the function updates are donated, so those runs get copies.
        Several threads may make the first call at once: one of them does the trial."""
        with self._trial:
            if self._rival is None:
                return
            (mlir, rival), self._rival = self._rival, None

        def arguments():
            if not self._writebacks:
                return buffers
            return [self.executable.to_buffer(np.asarray(b), k) for k, b in enumerate(buffers)]

        def timed(executable) -> float:
            copies = arguments()
            start = time.perf_counter()
            for out in executable(copies):
                out.block_until_ready()
            return time.perf_counter() - start

        # Warm up, and keep the rival only if it gives the first one's answers on these arguments: a
        # pattern it adds (while_dus) has given wrong answers (a row updated by itself in a loop).
        if not _same_outputs(*[[np.asarray(out) for out in executable(arguments())]
                               for executable in (self.executable, rival)]):
            cache.store("auto", self._choice, b"first")
            return
        seconds = [timed(self.executable), timed(rival)]
        # Short runs are noisy on a busy machine: the best of three, interleaved, for those.
        for _ in range(2 if max(seconds) < 0.05 else 0):
            seconds = [min(seconds[0], timed(self.executable)), min(seconds[1], timed(rival))]
        if seconds[1] < seconds[0]:
            self.mlir, self.executable = mlir, rival
        cache.store("auto", self._choice, b"rival" if seconds[1] < seconds[0] else b"first")

    @property
    def is_pure(self) -> bool:
        """Reads its array arguments only: updates none, reads no host state, aliases none, checks nothing."""
        return not self._writebacks and not self._host_inputs and self._params is None and self._checks is None \
            and not self.trace.extents and not self.trace.stores and not self.trace.returned

    def call_pure(self, arrays):
        """The hot path: array arguments only (ConcreteArrays, NumPy arrays), and an ``is_pure``
        function (raises implicit.StaleCall as ``call_leaves`` does)."""
        if self._guards:
            implicit.check(self._guards, arrays)
        native = self._native
        outputs = native(arrays) if native else None
        if outputs is None:
            buffers, waits = self.executable.buffers(arrays)
            if self._rival is not None:
                self._keep_faster(buffers)
            elif native is None:  # (the program is the one it keeps from now on; False: it has none)
                self._native = self.executable.native(len(arrays)) or False
            outputs = self.executable(buffers)
            if waits:
                wait_for(outputs)
        if self._single_output:
            return ConcreteArray(outputs[0], self._out_avals[0])
        return unflatten(self.trace.out_treedef, [ConcreteArray(b, aval) for b, aval in zip(outputs, self._out_avals)])

    def call_leaves(self, arrays, args, kwargs, guarded=True, originals=None):
        """Run on these arguments (``arrays``: their array leaves; ``originals``: the caller's
        ``(args, kwargs)``, before Python floats were wrapped); raises implicit.StaleCall when
        a global or cell the function read is not what it was at the trace.  Not ``guarded``: the
        call the trace was made for, whose Python code the trace ran (what it changed that the
        guards read, an attribute it counts, is this call's doing)."""
        originals = originals or (args, kwargs)
        if guarded and self._guards:
            implicit.check(self._guards, arrays)
        if self._writebacks:
            check_writable(arrays, self._writebacks)
        positions = range(len(arrays)) if self._params is None else self._params
        fetched = []
        if self._host_inputs:
            leaves = flatten((args, kwargs))[0]
            fetched = [h.fetch(leaves) for h in self._host_inputs]
            if self.trace.implicit_writebacks or self._writebacks:
                check_implicit_writable(arrays, fetched, self.trace.implicit_writebacks)
        buffers, waits = self.executable.buffers([arrays[k] for k in positions] + fetched,
                                                 [k not in self._donated for k in positions]
                                                 + [k not in self._written_hosts for k in range(len(fetched))])
        if self._rival is not None:
            self._keep_faster(buffers)
        outputs = self.executable(buffers)
        if waits:
            wait_for(outputs)
        for k, j in self._writebacks:
            write_back(arrays[k], outputs[j])
        for k, j in self.trace.implicit_writebacks:
            write_back(fetched[k], outputs[j])
        if self._checks is not None:
            checks.after_call(self._checks, np.asarray(outputs[-1]))
        if self.trace.stores:  # what it left in objects from outside it, as NumPy code leaves it
            outside.apply(self.trace.stores, outputs, arrays, fetched, originals)
        results = [ConcreteArray(b, aval) for b, aval in zip(outputs, self._out_avals)]
        for k, lengths, as_list in self.trace.extents:
            results[k] = cut_to_lengths(results[k], [(axis, int(np.asarray(outputs[j]))) for axis, j in lengths],
                                        as_list)
        for k, held in self.trace.returned:  # (in order of their places among the output leaves)
            results.insert(k, outside.target(held, originals))
        return results[0] if self._single_output else unflatten(self.trace.out_treedef, results)

    def __call__(self, *args, **kwargs):
        return self.call(args, kwargs)

    def call(self, args, kwargs, guarded=True):
        check_shared_containers(args, kwargs)
        originals = args, kwargs
        args, kwargs = self.arguments(args, kwargs)
        key, arrays = signature(args, kwargs)
        if key != self.key and unsharded(key) != unsharded(self.key):
            raise ArgumentError(f"this function was compiled for other arguments: {self.key[1]} "
                            f"(shapes and dtypes of arrays, values of constants), not {key[1]}")
        try:
            return self.call_leaves(arrays, args, kwargs, guarded, originals)
        except implicit.StaleCall as e:
            raise TypeError(f"this function was compiled for other globals: {e}; compile it again "
                            "(cf.jit does so by itself)") from None

    def xla_hlo(self) -> str:
        return self.executable.hlo_text()

    def collectives(self) -> list:
        """The collectives (cofactor.xla.executable.Collective: kind, dtype, shape) XLA's program does."""
        return self.executable.collectives()


def compile(fn, *args, optimize="auto", unroll=DEFAULT_UNROLL, max_iterations=None, checkpoint=None,
            op_budget=DEFAULT_OP_BUDGET, max_slice=None, static_argnums=(), static_argnames=(), in_shardings=None,
            out_shardings=None, **kwargs) -> Compiled:
    """Trace ``fn`` on these arguments and compile it ahead of time (options as for ``jit``)."""
    return Compiled(fn, args, kwargs, optimize=optimize, unroll=unroll, max_iterations=max_iterations,
                    checkpoint=checkpoint, op_budget=op_budget, max_slice=max_slice,
                    static=static_arguments(fn, static_argnums, static_argnames), in_shardings=in_shardings,
                    out_shardings=out_shardings)


class JitFunction:
    """``fn`` compiled on first call for each new signature, then served from a cache."""

    def __init__(self, fn, static_argnums=(), static_argnames=(), transform=False, **options):
        """``transform``: the program of a transform called outside a trace (cf.grad(f)(x)), whose
        arguments hold the user's function: its Python numbers stay constants (as they would be
        outside the transform), and new signatures are not warned about."""
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.options = options
        self._transform = transform
        self._static = None if transform else static_arguments(fn, static_argnums, static_argnames)
        self.cache: dict = {}
        self._compiles = 0  # traces made, for signatures new or stale (RecompileWarning)
        self._last_key = None
        # The hot path: array arguments only (ConcreteArrays, NumPy arrays), keyed by their (shape,
        # dtype)s alone, for compiled functions that neither update arguments nor read host state
        # (so passing the same array twice needs no special care).
        self._by_avals: dict = {}
        self._lock = threading.Lock()

    def __get__(self, obj, owner=None):
        """``@cf.jit`` on a method: ``obj.method`` is the compiled function with ``obj`` as its first
        argument (an object argument, whose attributes are read at every call)."""
        return self if obj is None else types.MethodType(self, obj)

    def __call__(self, *args, **kwargs):
        if not kwargs:
            try:
                avals = tuple([aval_key(a) for a in args])
                compiled = self._by_avals.get(avals)
            except TypeError:
                compiled = None
            if compiled is not None:
                try:
                    return compiled.call_pure(args)
                except implicit.StaleCall:
                    self._by_avals.pop(avals, None)  # compiled anew below
        if is_tracing():  # called from code being traced: it is part of that program
            return converted(self.fn)(*args, **kwargs)
        check_shared_containers(args, kwargs)
        call = self._arguments(args, kwargs)
        key, arrays = signature(*call)
        compiled = self.cache.get(key)
        if compiled is None:
            return self._compile(key, args, kwargs).call(args, kwargs, guarded=False)
        try:
            return compiled.call_leaves(arrays, *call, originals=(args, kwargs))
        except implicit.StaleCall as e:  # a global or cell it read changed: compiled again, as if new
            return self._compile(key, args, kwargs, stale=compiled, why=str(e)).call(args, kwargs, guarded=False)

    def _arguments(self, args, kwargs) -> tuple:
        return traced_arguments(args, kwargs, self._static)

    def _compile(self, key, args, kwargs, stale=None, why=None) -> Compiled:
        """The Compiled for ``key``, made once even when several threads ask at once (``stale``:
        the one to replace, because ``why``).  One that needed its Python floats' values has them as
        constants from then on."""
        with self._lock:
            compiled = self.cache.get(key)
            if compiled is None or compiled is stale:
                compiled = Compiled(self.fn, args, kwargs, static=self._static, **self.options)
                self._static = compiled.static
                self.cache[compiled.key] = compiled
                while len(self.cache) > CACHE_SIZE:
                    dropped = self.cache.pop(next(iter(self.cache)))
                    self._by_avals = {k: c for k, c in self._by_avals.items() if c is not dropped}
                self._compiles += 1
                if not self._transform and self._compiles == RECOMPILE_WARNING + 1:
                    warn_in_user_code(self._recompiled(compiled, args, kwargs, stale, why), RecompileWarning)
                self._last_key = compiled.key
                if not kwargs and all(type(a) in (ConcreteArray, np.ndarray) for a in args) and compiled.is_pure:
                    self._by_avals[tuple(aval_key(a) for a in args)] = compiled
            return compiled

    def _recompiled(self, compiled, args, kwargs, stale, why) -> str:
        """RecompileWarning's message: which arguments the last new signature changed, or which guard
        of the ``stale`` Compiled failed (``why``)."""
        if stale is None:
            changed = changed_arguments(self._last_key, compiled.key, self.fn, args, kwargs)
            return (f"cofactor: {self.__name__} has compiled for {len(self.cache)} signatures; the last call changed "
                    f"{changed}: each new one is traced and compiled again")
        return (f"cofactor: {self.__name__} has compiled {self._compiles} times; the last call compiled it again "
                f"because {why}: what it reads from outside it (a global, an attribute, a container's keys) is part "
                "of what it is compiled for, so a value that changes at every call compiles it at every call")

    def lower(self, *args, **kwargs) -> Compiled:
        key, _ = signature(*self._arguments(args, kwargs))
        return self.cache.get(key) or self._compile(key, args, kwargs)


def jit(fn=None, *, optimize="auto", unroll=DEFAULT_UNROLL, max_iterations=None, checkpoint=None,
        op_budget=DEFAULT_OP_BUDGET, max_slice=None, static_argnums=(), static_argnames=(), in_shardings=None,
        out_shardings=None):
    """Compile ``fn`` when first called, once per signature.  Usable as ``@jit`` or ``@jit(optimize=...)``.

    ``unroll``: ``for`` loops over a static range of at most this many steps run as Python at trace
    time (unrolled); longer ones, and loops with a traced condition, become one stablehlo.while.
    ``max_iterations``: while loops with a traced condition run exactly this many iterations,
    keeping their state once the condition is false (a static trip count, for reverse-mode
    autodiff); iterations beyond it are not run. ``checkpoint``: True or a period N puts Enzyme's
    checkpointing attributes on the emitted while loops.  ``op_budget``: tracing stops with an
    error naming the unrolled loops once the program has this many operations (None: no limit),
    rather than leave XLA compiling for minutes.  ``max_slice``: a slice whose bounds are traced
    (``values[starts[i]:starts[i + 1]]``) holds at most this many elements (more raises when the
    function runs), so that it costs that many lanes instead of its whole axis.

    Arrays are traced by shape and dtype, and Python floats and complex numbers by type alone (as
    weak values: NEP 50), so calls with a new ``dt`` share one compile; ints, bools and other
    values are compile-time constants, and so are the floats of ``static_argnums`` /
    ``static_argnames`` and of a function that needs their values (``np.zeros(int(t / dt))``).

    ``in_shardings`` / ``out_shardings``: run as one SPMD program over a mesh of devices, the
    arguments and results laid out as these NamedShardings say (one for all, or one per
    positional argument / per result; None: the argument's own sharding, or XLA's choice for a
    result).  Without them, a function given sharded ConcreteArrays runs sharded as they are
    (placement.py).

    ``optimize``: "auto" (the default) compiles the curated pipeline and, when it gives another
    program, the curated pipeline with the loop rewrites that help some programs and hurt others
    (passes/pipelines.py, TRIED_BY_AUTO); the first call runs both and keeps the faster.  True:
    the curated pipeline only; "upstream": Enzyme-JAX's pipeline unmodified; False: none."""
    options = {"optimize": optimize, "unroll": unroll, "max_iterations": max_iterations, "checkpoint": checkpoint,
               "op_budget": op_budget, "max_slice": max_slice, "static_argnums": static_argnums, "static_argnames": static_argnames,
               "in_shardings": in_shardings, "out_shardings": out_shardings}
    if fn is None:
        return lambda f: JitFunction(f, **options)
    return JitFunction(fn, **options)
