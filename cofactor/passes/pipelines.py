"""The pass pipelines cofactor runs, and the curated list of excluded patterns.

Imported by the worker process (which has ``enzyme_call`` loaded), never with
relative imports, so the worker can load it without importing the package.
"""

# Enzyme-JAX transform patterns excluded from ``optimize=True``.  Each entry is
# a measurement on this project's CPU benchmarks (shared/reference/optbench):
# a pattern is listed only when it makes a program slower or breaks it.
#
# Not excluded, though wrong in general (enzyme-ad 0.0.16): greedy_while_loop_batch_fission, Enzyme-JAX's
# loop raising, which turns the element reads of a loop into tensor operations over all its trips (what
# makes correlation's and covariance's triangular loops 2.5x faster, and element loops one gather and a
# reduce).  Where a slice's start is computed per trip other than from the counter (read from data, or
# through a select: g[1, idx[j]], g[r, j - 1] with its negative index wrapped) it builds a gather that
# reads the slice's other axes from 0, silently: row 1, or a row r passed in, became row 0 (a helper's
# newcomer programs: an HMM's E[1, obs[t]], periodic stencils, table lookups; 18 of 50 wrong); and it takes
# one lane along such a start's axis where the slice spans more, reshaped ill-typed to the slice's shape,
# which folding made garbage (s += np.sum(np.flip(x[:i - 2]) * x[:i - 2]), fuzz seed 9300801).  Writes at
# such positions went wrong too (out[2, j - 1] = x[j] wrote row 0), and so did reads in a loop nest once
# the inner loop was raised, and reads through a view whose slice folding moved into the read.  cofactor
# puts every such start (computed per trip of any loop around the slice) behind an optimization_barrier,
# except in a one-lane read of a vector, which becomes a right gather (ir/ops.py, _shielded_starts), so
# the pattern leaves those slices in the loop (268 adversarial element loops of a helper, 43 of them
# wrong with a narrower barrier, all right); it also emits a counter's index without the select that
# wraps negatives, where its bounds show none (numpy/indexing.py, _wrapped).  Measured with it against
# without it (benchmarks/run.py, one run each, with the narrower barrier): rt_correlation 37 -> 14 ms,
# rt_covariance 36 -> 15 ms, loop_rows 0.68 -> 0.32 ms, but loop_diagonal 0.11 -> 0.37 ms (a gather of
# the diagonal, as slow as JAX's jnp.diag on CPU) and loop_stencil 0.045 -> 0.096 ms, both still 13x and
# more faster than NumPy; on an accelerator, a loop of scalar trips costs far more than one gather.
EXCLUDED_PATTERNS = {
    # while_dus is why optimize="upstream" beats the default on stencil_1d / stencil_3d: it narrows a
    # loop-carried buffer to the updated interior and rebuilds the full array from the loop-invariant
    # input each step.  With one buffer updated in place that wins (XLA cannot fuse the stencil's
    # slices into an in-place dynamic_update_slice of the buffer they read, so without while_dus it
    # materializes every slice); with two buffers in turn, XLA copies both whole arrays every step.
    # Re-enabled alone (benchmarks/programs.py, x optimize=False, medians of 3-5 interleaved runs):
    # stencil_3d 0.26-0.38x, stencil_1d 0.74-0.82x, but stencil_2d 2.4-2.7x and stencil_grad 0.58-0.59x
    # (vs 0.53-0.54x without it); no other program changes.  Older suite (optbench): jacobi_2d 4.6x,
    # heat_3d 2.8x, fdtd_2d 4.1x slower.  The slowdown is while_dus's own: all 525 other patterns
    # excluded, stencil_2d is still 3.5x.
    "while_dus": "stencil_2d 2.4-2.7x slower than optimize=False (helps stencil_3d 0.26-0.38x, "
                 "stencil_1d 0.74-0.82x; see above)",
    # Unswitching a loop on a condition that does not change in it copies the loop once per arm, and
    # with the loop-invariant code motion patterns it does so again for each condition it exposes:
    # a while loop holding a for loop with a traced break (fuzz seed 61640, 38 kB of MLIR) became
    # 5.2 MB, which XLA did not compile in minutes (6 kB with it excluded, and 12 kB unoptimized).
    # No benchmark's optimized program changes (benchmarks/programs.py, both sizes, curated and
    # curated+loops).
    "loop_unswitch": "seed 61640: a 38 kB loop nest grows to 5.2 MB (see above), compiled for minutes",
    "scatter_op_canon": "pass failure ('Pipeline failed') on conv2d_bias / resnet",
    # Fails a pass (mistyped IR at the inner lax.scan of conv2d_bias in optbench) together with
    # greedy_while_loop_batch_fission.
    "broadcastindim_is_reshape": "pass failure together with greedy_while_loop_batch_fission (conv2d_bias)",
    # The next two, together, turn the in-place slice updates of a time-stepped stencil into one
    # slice/concatenate DAG, which XLA's fusion duplicates exponentially: 60 unrolled steps of a
    # 1-D three-point stencil on 2 x f64[32] took 103 s to compile (0.78 s without either, 26 s
    # without the first only, 69 s without the second only; the raw trace: 0.7 s).
    # Re-measured one at a time (enzyme-ad 0.0.16): dynamic_update_to_concat alone helps the loops
    # of benchmarks/programs.py (stencil_1d 0.64x of optimize=False, stencil_grad 0.45x, against 1.01x
    # and 0.54x without it; no other program changes), but compiling a 1-D three-point stencil on two
    # f64[32] updated in turn, with unroll=1000, grows from 0.26 / 0.31 / 1.2 s to 1.7 / 4.5 / 20 s at
    # 16 / 30 / 60 unrolled steps (8 steps, the default unroll limit: 0.7 s either way).  slice_of_dynamic_update
    # alone changes only stencil_2d: 4.2x slower.
    "dynamic_update_to_concat": "stencil compile blow-up (see above): 60 unrolled steps 20 s, not 1.2 s",
    "slice_of_dynamic_update": "stencil compile blow-up (see above); stencil_2d 4.2x slower than optimize=False",
    # Wrong in general (enzyme-ad 0.0.16): replaces a loop's counter after the loop (and counters that
    # step with it) by the bound of its < condition, which is right only when the step lands on the
    # bound: k = 0; while k < 17: ...; k += 2 leaves 17, not 18 (and j += 3 alongside, 30 not 32).
    # Found by a helper's adversarial element loops; 322 start/bound/step/comparison combinations are
    # right with it excluded (tests/test_control_flow.py).
    "while_op_induction_replacement": "wrong answers: k = 0; while k < 17: k += 2 leaves k == 17, not 18 "
                                      "(see above)",
    "common_compare_expression_rewrite": "wrong answers: rewrites x >= y as not(x < y) when both are "
                                         "computed, which is false for NaN (tests/numpy/test_ufuncs.py)",
    "real_convert_simplify": "pass failure on real-to-complex converts (np.sqrt(f32, dtype=complex128), "
                             "x < 1j), so the whole optimization was dropped",
    "concat_slice": "pass failure (mistyped IR) on the concatenation np.repeat builds for uneven counts",
    "slice_reverse": "pass failure (a mistyped select): b[4] = b.min(); b[3:] = b[::-1][1] (fuzz seed 36237); "
                     "no benchmark program changes without it",
    # Wrong in general (enzyme-ad 0.0.16): for dus(dus(x, u2, a), u1, b) with b < a < b+len(u1) < a+len(u2)
    # (the second write starts before the first and ends inside it) it keeps the first update's tail
    # as u2 sliced from 0 instead of from b+len(u1)-a.  y[a:a+n2] = u2; y[b:b+n1] = u1 on f64[8]: wrong
    # for exactly those 126 of 1296 (a, n2, b, n1), right for all with it excluded.  Upstream is right
    # only because dynamic_update_to_concat rewrites the updates first.
    "dus_dus_concat": "wrong answers: s = np.arange(5.0); s[1:] += s[:-1]; s[:-1] *= 1.5 gives s[-1] == 1, "
                      "not 7 (see above)",
    # Wrong in general (enzyme-ad 0.0.16): drops a reduce's broadcast dimensions for an xor reduction as
    # if xor were idempotent, so xor-reducing an even number of copies gives x instead of 0.  With
    # while_elementwise_reduction_to_reduce (a loop of k = k ^ c becomes an xor-reduce of c broadcast to
    # the trip count): k = 5; for i in range(10): k = k ^ 3 gives 6, not 5 (also optimize="upstream").
    "broadcast_reduce": "wrong answers: k = 5; for i in range(10): k = k ^ 3 (a stablehlo.while) gives 6, "
                        "not 5 (see above)",
    # Wrong in general (enzyme-ad 0.0.16): its non-negativity analysis takes an integer xor or or with a
    # non-negative operand to be non-negative, and drops the abs.  np.abs(c ^ 7) on [-6, 6, -8, -1, -5]
    # gives [-3, 1, -1, -8, -4], not [3, 1, 1, 8, 4] (also optimize="upstream"; found by the fuzzer).  What it
    # saves is one abs of a value already non-negative: no benchmark program changes (benchmarks/programs.py
    # has one abs, of x * x - a, which it cannot prove non-negative).
    "abs_positive_simplify": "wrong answers: np.abs(c ^ 7) on negative ints keeps the sign (see above)",
    # Wrong in general (enzyme-ad 0.0.16, ReducePad in EnzymeHLOOpt.cpp): reduce(pad(x, p)) becomes
    # reduce(x) combined with p once per padding element, but it counts the padding elements as the
    # *sum* over the reduced dimensions of each one's padding (lo + hi + interior), not the size of
    # the padded region, so a sum (prod) over two or more dimensions adds p (multiplies by p) too few
    # times; and padding in a dimension that is not reduced is put back as p itself instead of the
    # reduction of a padded row.  It needs no np.pad: with dus_to_dynamic_pad, clamp_const_prop and
    # dynamic_pad_to_pad an update into a constant-filled array becomes a pad of the update:
    # y = np.full((3, 4), 2.0); y[0] = x; y.sum() gives sum(x) + 4, not + 16, and y.sum(axis=1) gives 2,
    # not 8, for the filled rows; np.pad(b, ((1, 1), (0, 0)), constant_values=2.0).prod() gives 96, not
    # 6144 (optimize="upstream" too, where no other pattern rewrites the update first; found by the fuzzer:
    # seeds 1986, 3427, 3693 and 10638, 11081, 11480 of the old generator, each right with reduce_pad
    # alone excluded).  No benchmark program changes: excluding it leaves the optimized MLIR of every
    # program in benchmarks/programs.py (curated and curated+loops, --quick and full sizes) byte for byte.
    "reduce_pad": "wrong answers: np.pad(x, ((0, 2), (0, 0)), constant_values=2.0).sum() adds 2 per padded "
                  "row, not per padded element (see above)",
    # Wrong in general (enzyme-ad 0.0.16): it folds float compares of constants as if -0.0 were below 0.0:
    # -0.0 != 0 and -0.0 < 0 become true (compares that canonicalize folds earlier come out right).  The
    # -0.0 comes from folding constants, e.g. the remainder in cofactor's floor division: with
    # bin_broadcast_splat_subtract and broadcast_in_dim_simplify, (np.zeros(3) - 1.0) // 0.5 gives -3, not
    # -2, and (np.zeros(3) - 1.0) % 0.5 gives 0.5, not 0 (also optimize="upstream"; found by the fuzzer:
    # seed 12654 of the old generator).  No benchmark program changes: excluding it leaves the optimized
    # MLIR of every program in benchmarks/programs.py (--quick and full sizes) unchanged.
    "compare_op_canon": "wrong answers: (np.zeros(3) - 1.0) // 0.5 gives -3, not -2 (-0.0 folded as "
                        "below zero, see above)",
    # Wrong in general (enzyme-ad 0.0.16): it replaces one reduce with another whose input is the same
    # op of the same operands without comparing the ops' attributes (as its output shows; its source is
    # not in the Enzyme-JAX tree at hand), so a reduction of x < y and one of x > y (or x >= y) become
    # one: (a < b).all() & (a > b).all() is (a < b).all(), np.count_nonzero(a < b) - np.count_nonzero(a > b)
    # is 0 (also optimize="upstream"; found by the fuzzer: seed 29463, where
    # `if (a < 0.5).all() and (a > 0.5).all(): m += m` ran the update).  Right with it excluded alone.
    # No benchmark program changes: the optimized MLIR of every program in benchmarks/programs.py
    # (curated and curated+loops, --quick and full sizes) is byte for byte the same without it.
    "cse_reduce_transposed": "wrong answers: (a < 0.5).all() and (a > 0.5).all() is true when the first "
                             "is (reduces of compares differing only in direction merged, see above)",
    # compare_select_simplify rewrites select(a < b, a, b) into minimum(a, b) (and the max forms), but
    # StableHLO's minimum/maximum propagate NaN where the select takes b: Python's min(a[1], a[0]) on
    # [nan, 5.0] (cofactor routes it through a conditional expression) and `a if a < b else b` gave
    # nan, NumPy 5.0 (ddmin over the 511 curated patterns: if_to_select + this one).  No benchmark
    # program's optimized MLIR changes (curated and curated+loops, --quick and full sizes).
    # Wrong in general (enzyme-ad 0.0.16): when an elementwise op (add, select, ...) has several strided
    # slices as users, it slices the op once to cover them all and then takes each user from that slice
    # with the wrong extent: slices [0:5:2] and [0:4:2] of one f64[5] both become the 3-element slice (a
    # verifier error, so the pipeline is dropped), [1:5:2] and [1:4:2] both become 1 element, and in a
    # longer chain the mis-sized value can type-check: `v = b[::2]; v[1:] = v[:-1]` twice (a strided
    # view written twice, the second read through the first's select) left b's last element unchanged
    # (found by the fuzzer: seed 48367; 28 of 135 such programs wrong, none with it excluded alone; ddmin
    # over the 510 curated patterns needs it with slice_slice, select_select_same_cond and pad_simplify).
    # No benchmark program's optimized MLIR changes (curated and curated+loops, --quick and full sizes).
    "slice_elementwise": "wrong answers: several strided slices of one elementwise op get the wrong extents "
                         "(b[::2] written twice through a view; see above)",
    "compare_select_simplify": "wrong answers with NaN: a select of a compare's operands becomes minimum/maximum",
    # It reads an element a loop writes later in the same trip from the array the loop started with (the
    # loop's operand, not its carried value) where each trip writes a different element: Cholesky's inner
    # loop reading A[i, j] at the counter j before writing it.  Right, but the loop then updates in place
    # an array it still reads from, so XLA copies A once per trip of the outer loop (three copies in the
    # program, not one: tests/test_mutation.py).  It first applied once cofactor stopped wrapping a
    # counter's index (numpy/indexing.py, _wrapped).  Measured (benchmarks/run.py, one run): rt_cholesky
    # 3.1 -> 1.8 ms, rt_lu 1.9 -> 1.5 ms with it excluded, rt_correlation and rt_covariance no slower.
    # cofactor reads such elements from the loop's operand itself where the loop is then raised, so that
    # no copy is left (ir/loops.py: loop_rows, m[i] = m[i] / norm of m[i]).
    "remove_loop_carried_dependencies_from_while_load_operations":
        "an element loop copies its array each trip (Cholesky: see above)",
    # Wrong about conversions (tests/test_passes.py, test_conversions_round_where_numpy_rounds, and
    # test_complex_functions_of_a_real_array_made_complex, found by a newcomer's quadratic roots):
    "elementwise_complex_simplify": "np.sqrt(x + 0j) became the real sqrt of x, NaN for x < 0 (so did "
                                    "log, log10, arcsin, arccos, arctanh and ** 0.5 of a real array made complex)",
    "convert_convert_float": "x.astype(np.float32).astype(np.float64) became x (float16: no overflow to inf)",
    "convert_binop_convert_min": "np.minimum of two float32 roundings of float64 arrays, back in float64, took "
                                 "the float64 minimum: the rounding was lost",
    "convert_binop_convert_max": "as convert_binop_convert_min, for np.maximum",
    # Wrong in general (enzyme-ad 0.0.16): a concatenation of concatenations of slices of one array
    # becomes a dynamic_update_slice that writes a column at the wrong place (past the end, so clamped):
    # np.array([[x[0, 0], x[0, 1], x[0, 2]], [x[1, 0], x[1, 1], x[1, 2]]]), x itself, gave column 1 in
    # column 0, for 2 x 3 and 3 x 3 (a helper's grid of Python floats updated element by element);
    # tests/test_passes.py, test_an_array_rebuilt_from_its_elements.
    "concat_concat_to_dus": "wrong answers: np.array of x's own elements, row by row, put column 1 in "
                            "column 0 (see above)",
    # Wrong in general (enzyme-ad 0.0.16), found by a helper's differential sweep of optimize=True against
    # optimize=False and NumPy (4,000 random programs and 77 hand-written ones; one minimal program each
    # in tests/test_passes.py, test_rewrites_that_were_wrong).  The first eight are wrong for ordinary
    # inputs, NaN and infinities included (a padded zero times NaN is NaN); the last three only where a
    # result overflows, which NumPy keeps too.  Excluding all eleven leaves the optimized program of every
    # benchmark in benchmarks/programs.py unchanged but rt_nussinov's (see the closing note of the session).
    # Wrong in general (enzyme-ad 0.0.16): a concatenation of the results of several reduces (sorts) of
    # one shape becomes one reduce (sort) over their inputs stacked along a new axis, but for one with
    # two results (argmin / argmax: values and indices; argsort: keys and indices) the batched op's
    # results are mistaken for each other, and on most compiles the worker crashes (SIGSEGV) first:
    # np.array([np.argmin(v[0]), np.argmin(v[1])]) of int64 rows gave the rows' minima, and
    # np.stack([np.argsort(r) for r in v]) the sorted rows (a helper's kNN and k-means predictions,
    # one program in six wrong, the rest crashed; a wrong one was then kept by the disk cache).
    "concat_insert_dim_reduce": "np.array([np.argmin(v[0]), np.argmin(v[1])]) gave the minima, not their "
                                "indices, or crashed the worker (see above)",
    "concat_insert_dim_sort": "np.stack([np.argsort(r) for r in v]) gave the sorted rows, or crashed the "
                              "worker (see above)",
    # Wrong in general (enzyme-ad 0.0.16), found by a fuzzer of element loops: a slice of a loop's carried
    # array that each trip writes with a value the loop does not change (a[3] = a[1] + a[2], then
    # s = s * a[0] + a[3]) is hoisted out of the loop as a slice of the array the loop began with, so
    # every trip read a[3] as it was before the first (tests/test_passes.py, test_rewrites_that_were_wrong;
    # there before this session's loop rewrites).  No benchmark program's optimized MLIR changes (both
    # sizes).
    "hoist_slice": "a[3] = a[1] + a[2]; s = s * a[0] + a[3] in a loop read a[3] as it was before the loop",
    # Wrong in general (enzyme-ad 0.0.16), found by the fuzzer (seed 42400891, shrunk; there before this
    # session): a dynamic_update_slice sunk past a read of the place it writes, in a loop's trip: a[1:] = 3.0
    # then `if a[0] < a[2]` compared with the old a[2] (tests/test_passes.py, test_rewrites_that_were_wrong).
    # No benchmark program's optimized MLIR changes (both sizes).
    "sink_dus": "a[1:] = 3.0, then a[0] < a[2] in the same trip of a loop read the old a[2]",
    # Wrong for signed zeros (enzyme-ad 0.0.16, SubSimplify): 0 - x becomes negate(x), -0.0 where x is 0.0
    # (NumPy's 0.0 - 0.0 is 0.0): out = np.zeros(n); out[i] -= x[i] then 1.0 / out gave -inf, np.arctan2(0.0,
    # out) pi (found by a helper's sweep; optimize=False was right: XLA does not rewrite it).  What else it
    # does, x - 0 to x, XLA does too.
    "sub_simplify": "1.0 / (0.0 - x) at x = 0.0 gave -inf, not inf (0 - x became negate(x))",
    # Wrong in general (enzyme-ad 0.0.16, RemoveNoOpsFromWhileLoop in EnzymeHLOOpt.cpp, still so upstream):
    # from the bounds of the values a loop's counter makes it folds their comparisons, and where the two
    # sides' ranges do not meet it folds `!=` to false, not true.  `for i in range(40): if i != 50:` never
    # took its branch, nor `r.max() if r.size else 0.0` of r = p[t:] (found testing np.arange of a loop's
    # counter; tests/test_passes.py, and tests/fuzz/element_loops.py's counter comparisons find it).  Without
    # it: rt_durbin about 1.2x slower (5.4 -> 6.3-6.8 ms, still half NumPy's), rt_gram_schmidt, rt_nussinov,
    # rt_cholesky and the rest unchanged within noise.
    "remove_no_ops_from_while_loop": "`for i in range(40): if i != 50:` never took its branch (!= of counter "
                                     "values whose ranges do not meet folded to false)",
    "mul_zero_pad": "np.pad(x, (1, 0)) * y gave 0 where y is NaN or inf (0 * NaN taken as 0)",
    "div_zero_pad": "np.pad(x, (1, 0)) / np.pad(y, (1, 0)) gave 0 for the padding's 0 / 0",
    "pad_dot_general": "np.pad(x, ((0, 0), (1, 0))) @ y dropped the padded part, so y's NaN was lost",
    "not_compare": "~(x < 1.0) became x >= 1.0, false for NaN",
    "binop_const_simplify": "x * 2 // 2 on int32 became x, ignoring the wrap-around of x * 2",
    "compare_negate_const_simplify": "-x > 0 became x < 0, wrong at the integer minimum",
    "pow_simplify": "x ** -0.5 became rsqrt(x): -inf at -0.0 (NumPy inf), NaN at -inf (NumPy 0)",
    "power_multiply_to_power": "x ** 2 * x ** -1 became x (NumPy NaN at 0 and inf); x ** 0.5 * x ** 0.5 "
                               "became x (NumPy NaN for x < 0)",
    "associative_common_mul_op_reordering": "2.0 * x - 3.0 * x became -x: -inf at inf, where NumPy gives NaN",
    "dot_general_add_distributive_simplify": "x @ y + x @ (-y) became x @ (y - y): 0 where x @ y overflows "
                                             "(NumPy NaN)",
    "factor_scalars_in_dot_general": "(x * 1e-300) @ (y * 1e300) had its scalars moved, which overflows "
                                     "differently",
}

# Excluded from the optimization that runs before Enzyme's AD pass (with ``optimize=True``): patterns
# that rebuild an op Enzyme 0.0.16 cannot differentiate out of the form cofactor emits instead.
EXCLUDED_BEFORE_AD = {
    "mul_reduce_slice_fusion": "turns the halving multiplications np.prod emits in differentiated code "
                               "(numpy/reductions.py, _pairwise_product) back into a multiplying reduce, "
                               "which Enzyme's forward mode cannot differentiate",
}

# What enzyme_ad's own JAX glue appends before handing text to XLA: it removes
# enzymexla attribute values XLA cannot parse.
XLA_SUFFIX = "tensor-empty-raise,drop-unsupported-attributes"

_ENZYME_PASS = ('enzyme{postpasses="arith-raise{stablehlo=true},enzyme-batch-to-stablehlo,canonicalize,'
                'cse,canonicalize,remove-unnecessary-enzyme-ops,enzyme-simplify-math,canonicalize,cse,canonicalize"}')


# Loops the optimizer may unroll: those of at most this many trips (enzyme_ad's default is 4).
# cofactor unrolls short loops itself, and keeps a short loop rolled only where unrolling it
# multiplies copies of a body past ``unroll`` (an 8-step unrolled loop around a 4-step one of
# a = a * np.tanh(a[::-1])): unrolled by the optimizer, each step reads the last one twice, and
# XLA's fusion recomputes 2**32 values (97 s to compile, 0.2 s rolled).  Among the benchmarks only
# rt_kmeans changes (its 3 cluster loops stay rolled).
WHILE_UNROLL_TRIPS = 1


def _patterns(enzyme_call, propagate: int, excluded, comms=False) -> tuple[str, str]:
    """The transform-pattern lists (main, lowering), with enzyme_ad 0.0.16's default arguments;
    ``comms``: with the patterns that recognize communication (rotate, wrap, extend) and their lowerings."""
    return enzyme_call.get_transform_passes_list(
        1024, WHILE_UNROLL_TRIPS, propagate, propagate,  # max constant, while unroll, reshape/transpose propagation
        False, False, False, True,  # no_nan, all_finite, dus_to_concat, dus_slice_simplify
        False, False, False, False,  # sum_to_reducewindow, sum_to_conv, aggressive_sum_to_conv, while_concat
        True, False, False, comms, comms,  # aggressive_propagation, is_sharded, raise to blas, recognize/lower comms
        True, True, True, False,  # structured tensors detection/rewrites, scatter/gather opt, slice_to_batch
        True, True, True, True, 10,  # reduce_slice_fusion, concat_to_batch, loop raising, licm, unswitch
        True, False, True, 1024,  # pad opt, self_to_convolution_like, dot formation, max reused constant
        list(excluded))


def _transform(patterns: str) -> str:
    return "enzyme-hlo-generate-td{patterns=" + patterns + "},transform-interpreter,enzyme-hlo-remove-transform"


def _optimization_passes(enzyme_call, propagate, excluded, comms=False) -> str:
    main, lower = _patterns(enzyme_call, propagate, excluded, comms)
    # A recognized rotate left unlowered (enzymexla.rotate) fails in XLA: its lowering always follows.
    transforms = _transform(main) + ("," + _transform(lower) if comms else "")
    return "inline{default-pipeline=canonicalize max-iterations=4},canonicalize,cse,canonicalize," + transforms


# Excluded patterns that help some programs and hurt others (see their entries): optimize="auto"
# also compiles the "curated+loops" pipeline, with them enabled, and keeps the faster program.
TRIED_BY_AUTO = ("while_dus",)


# Kernels (cofactor/kernels): each enzymexla.kernel_call becomes a call of a clone of its kernel
# inside an affine.parallel over the grid (lower-kernel, then symbol-dce to drop the original,
# which the raise would fail on), then Reactant.jl's raise pipeline (src/compiler/Compiler.jl,
# raise=true) turns the loops into tensor operations: reference/spike/RAISING.md.
RAISE_KERNELS = (
    "lower-kernel{backend=cpu},symbol-dce,canonicalize,"
    "canonicalize,llvm-to-memref-access,canonicalize,convert-llvm-to-cf,canonicalize,enzyme-lift-cf-to-scf,canonicalize,"
    "func.func(canonicalize-loops),canonicalize-scf-for,canonicalize,libdevice-funcs-raise,canonicalize,affine-cfg,"
    "canonicalize,func.func(canonicalize-loops),canonicalize,llvm-to-affine-access,canonicalize,delinearize-indexing,"
    "canonicalize,simplify-affine-exprs,affine-cfg,canonicalize,func.func(affine-loop-invariant-code-motion),canonicalize,"
    "sort-memory,func.func(kernelcast),raise-affine-to-stablehlo{prefer_while_raising=false},canonicalize,"
    "arith-raise{stablehlo=true},symbol-dce,canonicalize")


def build(enzyme_call, kind: str, differentiate: bool, kernels: bool = False) -> str:
    """The pipeline text for ``kind`` in {"curated", "curated+loops", "upstream", "none"}, or
    "curated+comms", with Enzyme-JAX's communication rewrites, which no program gets: measured by
    benchmarks/sharded.py (2026-11-26, 2-8 forced CPU devices), they leave the collectives and bytes
    moved of a row-sharded matmul chain (2 all-gather, 4 MiB) and a periodic np.roll stencil (2
    collective-permute, 8 KiB) as they are (XLA's partitioner already finds the halo exchange), and
    the optimize-communication pass needs per-op shardings no pass of enzyme-ad 0.0.16 propagates.

    With ``differentiate`` the Enzyme AD pass sits inside the optimization pipeline, so gradients
    are taken of the optimized program.  With ``kernels`` (the module launches kernels), they are
    raised first: Enzyme cannot differentiate a kernel_call, nor XLA run one.
    """
    pipeline = _build(enzyme_call, kind, differentiate)
    if not kernels:
        return pipeline
    return RAISE_KERNELS + "," + (XLA_SUFFIX if pipeline == "strip-debuginfo" else pipeline)


def _build(enzyme_call, kind: str, differentiate: bool) -> str:
    if kind == "none":
        if not differentiate:
            return "strip-debuginfo"  # only parses and pretty-prints
        return ",".join(["enzyme-batch", _ENZYME_PASS, "canonicalize", "remove-unnecessary-enzyme-ops",
                         "enzyme-simplify-math", "strip-debuginfo", XLA_SUFFIX])
    excluded = {"curated": list(EXCLUDED_PATTERNS), "upstream": [], "curated+comms": list(EXCLUDED_PATTERNS),
                "curated+loops": [p for p in EXCLUDED_PATTERNS if p not in TRIED_BY_AUTO]}[kind]
    up = _optimization_passes(enzyme_call, 1, excluded, comms=kind == "curated+comms")
    if not differentiate:
        return ",".join([up, "strip-debuginfo", XLA_SUFFIX])
    down = _optimization_passes(enzyme_call, 2, excluded)
    before_ad = _optimization_passes(enzyme_call, 1, excluded + list(EXCLUDED_BEFORE_AD)) if excluded else up
    return ",".join(["mark-func-memory-effects", before_ad, "enzyme-batch", before_ad, _ENZYME_PASS, up, "canonicalize",
                     "remove-unnecessary-enzyme-ops", "enzyme-simplify-math", up, down,
                     "strip-debuginfo", XLA_SUFFIX])
