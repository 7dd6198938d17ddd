"""The Enzyme-JAX worker: pipelines, failures and crashes become CompilationError; it dies with
its parent; an interrupted request leaves no stale reply."""
import functools
import os
import signal
import subprocess
import sys
import threading
import time
import warnings

import numpy as np
import pytest

import cofactor as cf
from cofactor.passes import pipelines, runner, worker
from cofactor.passes.pipelines import EXCLUDED_PATTERNS

IDENTITY = "module { func.func @main(%a: tensor<f64>) -> tensor<f64> { return %a : tensor<f64> } }"

# Reverse mode with width 2 over a dot_general aborts Enzyme 0.0.16 (spike finding §2).
ABORTS = """module {
  func.func private @f(%x: tensor<3x3xf64>) -> tensor<3x3xf64> {
    %0 = stablehlo.dot_general %x, %x, contracting_dims = [1] x [0] : (tensor<3x3xf64>, tensor<3x3xf64>) -> tensor<3x3xf64>
    return %0 : tensor<3x3xf64>
  }
  func.func @main(%x: tensor<3x3xf64>, %s: tensor<2x3x3xf64>) -> tensor<2x3x3xf64> {
    %r = enzyme.autodiff @f(%x, %s) <{activity = [#enzyme.activity<enzyme_active>], ret_activity = [#enzyme.activity<enzyme_activenoneed>], width = 2 : i64}> : (tensor<3x3xf64>, tensor<2x3x3xf64>) -> tensor<2x3x3xf64>
    return %r : tensor<2x3x3xf64>
  }
}"""


def test_pipeline_keeps_main_public():
    out = runner.run(IDENTITY, "curated")
    assert "func.func @main" in out and "private" not in out


def test_parse_error_is_a_compilation_error_with_the_diagnostic():
    with pytest.raises(cf.CompilationError) as info:
        runner.run("module { func.func @main( }", "curated")
    assert "expected" in info.value.diagnostic  # MLIR's parser message, captured from the worker's stderr
    assert info.value.mlir.startswith("module")


def test_worker_crash_is_a_compilation_error_and_the_worker_restarts():
    with pytest.raises(cf.CompilationError) as info:
        runner.run(ABORTS, "none", differentiate=True)
    assert "died" in str(info.value) and "LLVM ERROR" in info.value.diagnostic
    assert "func.func @main" in runner.run(IDENTITY, "curated")  # a fresh worker serves the next request


def test_failed_optimization_warns_and_compiles_unoptimized(monkeypatch):
    def failing(text, kind, differentiate=False):
        raise cf.CompilationError("the Enzyme-JAX 'curated' pipeline failed", diagnostic="error: boom")

    monkeypatch.setattr(runner, "run", failing)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = cf.jit(lambda x: np.sin(x) + 1)(np.arange(3.0))
    np.testing.assert_allclose(np.asarray(got), np.sin(np.arange(3.0)) + 1, rtol=1e-12)
    assert any(issubclass(w.category, cf.OptimizationWarning) and "boom" in str(w.message) for w in caught)


def test_curated_pipeline_excludes_the_measured_patterns():
    """The pattern list the worker builds lacks exactly the excluded names that upstream has."""
    script = f"""
import sys; sys.path.insert(0, {os.path.dirname(pipelines.__file__)!r})
import pipelines, worker
enzyme_call = worker._load_enzyme_call()
upstream = set(pipelines._patterns(enzyme_call, 1, [])[0].split(';'))
curated = set(pipelines._patterns(enzyme_call, 1, list(pipelines.EXCLUDED_PATTERNS))[0].split(';'))
print(sorted(p.split('<')[0].split('(')[0] for p in upstream - curated))
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert out.strip() == str(sorted(EXCLUDED_PATTERNS))


# Regressions for patterns excluded as wrong (EXCLUDED_PATTERNS): each program under the default
# optimize, and optimize=True, against NumPy.

def _shift_then_scale(s):
    s[1:] += s[:-1]
    s[:-1] *= 1.5
    return s


def _overlapping_writes(x, u1, u2):
    y = x.copy()
    y[2:6] = u2
    y[0:3] = u1  # starts before the first write and ends inside it
    return y


def _xor_loop(x):
    k = 5
    for _ in range(10):  # more iterations than the unroll limit: a stablehlo.while
        k = k ^ 3
    return k, x


@pytest.mark.parametrize("optimize", ["auto", True])
def test_dus_dus_concat_overlapping_updates(optimize):
    got = cf.jit(_shift_then_scale, optimize=optimize)(np.arange(5.0))
    np.testing.assert_array_equal(np.asarray(got), _shift_then_scale(np.arange(5.0)))
    assert np.asarray(got)[-1] == 7.0  # dus_dus_concat made it 1.0
    x, u1, u2 = np.arange(8.0), -np.arange(1.0, 4.0), np.arange(10.0, 14.0)
    np.testing.assert_array_equal(np.asarray(cf.jit(_overlapping_writes, optimize=optimize)(x, u1, u2)),
                                  _overlapping_writes(x, u1, u2))


@pytest.mark.parametrize("optimize", ["auto", True])
def test_broadcast_reduce_xor_in_a_loop(optimize):
    k, _ = cf.jit(_xor_loop, optimize=optimize)(np.arange(3.0))
    assert int(np.asarray(k)) == _xor_loop(None)[0] == 5  # broadcast_reduce made it 6


@pytest.mark.parametrize("optimize", ["auto", True])
def test_abs_of_an_integer_xor_or_or_keeps_the_abs(optimize):
    c = np.array([-6, 6, -8, -1, -5], dtype=np.int64)
    for fn in (lambda c: np.abs(c ^ 7), lambda c: np.abs(c | 1), lambda c: np.abs(c.astype(np.int32) ^ c.max())):
        got = np.asarray(cf.jit(fn, optimize=optimize)(c))
        np.testing.assert_array_equal(got, fn(c))  # abs_positive_simplify dropped the abs
        assert got.dtype == fn(c).dtype


def _row_into_filled(x):
    y = np.full((3, 4), 2.0)
    y[0] = x
    return y.sum(), y.sum(axis=1), y


def _padded_sum(x):
    p = np.pad(x, ((0, 2), (0, 0)), constant_values=2.0)
    return p.sum(), p.sum(axis=1)


def _padded_prod(b):
    p = np.pad(b, ((1, 1), (0, 0)), constant_values=2.0)
    return p.prod(), p.prod(axis=1)  # reduce_pad: 96, not 6144


def _mean_of_splat_then_update(m):
    m[...] = 2.0
    m[0, 3] = -1.0  # an update into a splat: a pad of the update, through dus_to_dynamic_pad
    return m.mean()  # reduce_pad: 0.75, not 1.75


@pytest.mark.parametrize("optimize", ["auto", True])
def test_reduce_of_a_pad_counts_every_padded_element(optimize):
    x = np.arange(4.0)
    for fn, arg in ((_row_into_filled, x), (_padded_sum, x.reshape(1, 4)), (_padded_prod, x.reshape(1, 4) + 1)):
        for got, want in zip(cf.jit(fn, optimize=optimize)(arg), fn(arg)):
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)  # reduce_pad: sum 10, not 22
    m, expected = np.arange(12.0).reshape(3, 4), np.arange(12.0).reshape(3, 4)
    assert float(np.asarray(cf.jit(_mean_of_splat_then_update, optimize=optimize)(m))) == \
        _mean_of_splat_then_update(expected) == 1.75
    np.testing.assert_array_equal(m, expected)


def _floor_div_of_a_constant(x):
    a = np.zeros(3) - 1.0
    return a // 0.5, a % 0.5, np.fmod(a, 0.5) != 0, x


@pytest.mark.parametrize("optimize", ["auto", True])
def test_floor_division_of_a_folded_constant(optimize):
    x = np.arange(3.0)
    for got, want in zip(cf.jit(_floor_div_of_a_constant, optimize=optimize)(x), _floor_div_of_a_constant(x)):
        np.testing.assert_array_equal(np.asarray(got), want)  # compare_op_canon: -3, not -2 (-0.0 < 0)


def _write_strided_view_twice(b, view, write, read):
    for _ in range(2):
        v = b[view]
        v[write] = v[read]
    return b


@pytest.mark.parametrize("optimize", ["auto", True])
@pytest.mark.parametrize("view", [slice(None, None, 2), slice(1, None, 2), slice(None, None, 3), slice(0, 6, 2),
                                  slice(None, None, -2)])
def test_strided_view_written_twice(optimize, view):
    for write, read in ((slice(1, None), slice(None, -1)), (slice(None, -1), slice(1, None))):
        b, expected = np.arange(1.0, 8.0), np.arange(1.0, 8.0)
        fn = functools.partial(_write_strided_view_twice, view=view, write=write, read=read)
        got = cf.jit(fn, optimize=optimize)(b)
        _write_strided_view_twice(expected, view, write, read)
        np.testing.assert_array_equal(np.asarray(got), expected)  # slice_elementwise: b[-1] unchanged
        np.testing.assert_array_equal(b, expected)


def _window_products(x, cut, flip):
    s = x[0] * 0
    for i in range(11):
        w = x[:i - cut]                 # a stop that wraps below zero: the start of the shifted read is a select
        s += np.sum((np.flip(w) if flip else w[::-1][::-1]) * w)
    return s


@pytest.mark.parametrize("optimize", ["auto", True])
@pytest.mark.parametrize("n, cut, flip", [(5, 2, True), (5, 1, True), (7, 3, True), (6, 4, True), (5, 2, False)])
def test_windows_with_stops_that_wrap_in_a_rolled_loop(optimize, n, cut, flip):
    """greedy_while_loop_batch_fission reshaped 11 counters to 11 x 5 x 1 indices, and folding made the
    reshape a constant of garbage (it is excluded: pipelines.py)."""
    x = np.linspace(-1.5, 2.0, n).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error", cf.OptimizationWarning)
        got = cf.jit(_window_products, optimize=optimize)(x, cut, flip)
    np.testing.assert_allclose(np.asarray(got), _window_products(x, cut, flip), rtol=1e-5)



# greedy_while_loop_batch_fission (Enzyme-JAX's loop raising) is enabled, with the starts it would
# mistreat kept from it (ir/ops.py, _shielded_starts): element reads in rolled loops beside a fixed row,
# a row passed in, a negative index wrapped, an index read from data, in 2-D and 3-D, with values and
# gradients (whose private functions pass the row on through the loop) against NumPy.

def _lookup_beside_a_fixed_row(g, idx, r):
    out = np.zeros(idx.shape[0])
    for j in range(idx.shape[0]):
        out[j] = g[1, idx[j]] + g[r, j - 1] + g[j % 4 - 1, 2] * 0.5
    return out


def _wrapped_beside_a_row_passed_in(g, idx, r):
    out = np.zeros(idx.shape[0])
    for j in range(idx.shape[0]):
        out[j] = g[r, j - 2] * g[-1, -j] + g[r + 1, j - 1]
    return out


def _two_indices_from_data(g, idx, r):
    s = 0.0
    for j in range(idx.shape[0]):
        s += g[idx[j] % 4, idx[(j + 3) % 10]] * g[idx[j] % 4, 1] + g[3, j - 1]
    return s


def _block_beside_an_index_from_data(g, idx, r):
    out = np.zeros((idx.shape[0], 3))
    for j in range(idx.shape[0]):
        out[j] = g[1:4, idx[j]] + g[2:4, j - 1].sum()
    return out


def _three_axes(g, idx, r):
    h = g.reshape(2, 2, 10)
    out = np.zeros(idx.shape[0])
    for j in range(idx.shape[0]):
        out[j] = h[1, idx[j] % 2, 3] + h[r % 2, 1, j - 1]
    return out


def _emissions_of_a_hidden_markov_model(g, idx, r):
    emissions, states = np.exp(g[:, :4]), idx % 4
    alpha = np.ones(4)
    for t in range(idx.shape[0]):
        alpha = alpha * emissions[:, states[t]] + emissions[r, states[t]] + g[1, t - 1] ** 2
        alpha = alpha / alpha.sum()
    return alpha


def _periodic_and_branching(g, idx, r):
    out = np.zeros(idx.shape[0])
    for j in range(idx.shape[0]):
        out[j] = (g[(j + r) % 4, (j * 3) % 10] + g[1 + (j > 4), j]
                  + (g[2, j - 3] if idx[j] > 2 else g[1, idx[j]]))
    return out


def _nested_rows(g, idx, r):
    out = np.zeros(4)
    for i in range(4):
        for j in range(idx.shape[0]):
            out[i] += g[r, idx[j]] * g[i, j - 1] + g[i, idx[j]]
    return out


def _outer_counter_wrapped_in_an_inner_loop(g, idx, r):
    out = np.zeros((10, 10))
    for i in range(10):
        for j in range(10):
            out[i, j] = g[1, i - 1] * idx[j] + g[1:3, -i].sum()
    return out


def _through_a_view_of_rows(g, idx, r):
    rows, out = g[1:], np.zeros(idx.shape[0])
    for j in range(idx.shape[0]):
        out[j] = rows[0, j - 1] + g[-1:][0, -j]
    return out


def _writes_beside_a_fixed_row(g, idx, r):
    out = g.copy()
    for j in range(idx.shape[0]):
        out[1, j - 1] = g[2, j] * 2
        out[1:3, -j] += 1.0
        g[r, j - 1] = j
    return out


LOOKUPS = [_outer_counter_wrapped_in_an_inner_loop, _through_a_view_of_rows, _writes_beside_a_fixed_row,
           _lookup_beside_a_fixed_row, _wrapped_beside_a_row_passed_in, _two_indices_from_data,
           _block_beside_an_index_from_data, _three_axes, _emissions_of_a_hidden_markov_model,
           _periodic_and_branching, _nested_rows]


@pytest.mark.parametrize("fn", LOOKUPS, ids=lambda fn: fn.__name__.strip("_"))
def test_lookups_beside_fixed_indices_in_rolled_loops(fn):
    """The raising built a gather that read the fixed axes from 0: row 1 (or row r) became row 0."""
    rng = np.random.default_rng(7)
    compiled = cf.jit(fn, optimize=True)
    for r in (2, 1):
        g, idx = rng.standard_normal((4, 10)), rng.integers(-10, 10, 10)
        got_g, want_g = g.copy(), g.copy()
        np.testing.assert_allclose(np.asarray(compiled(got_g, idx, np.int64(r))), fn(want_g, idx, r),
                                   rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(got_g, want_g)


def test_a_program_for_xla_off_cpu_has_no_barriers_and_products_in_full_precision():
    """XLA:GPU's evaluator has no opt-barrier (the compile failed), and it multiplies float32 in TF32 where a
    product does not ask for more: off CPU each barrier is the value it holds, every product asks for
    HIGHEST, and the program still parses (xla/executable.py, _for_accelerators)."""
    from cofactor.passes import runner
    from cofactor.xla.executable import _for_accelerators
    rng = np.random.default_rng(7)
    g, idx = rng.standard_normal((4, 10)), rng.integers(-10, 10, 10)
    text = cf.code_hlo(LOOKUPS[0], g, idx, np.int64(2))
    assert "stablehlo.optimization_barrier" in text
    stripped = _for_accelerators(text)
    assert "optimization_barrier" not in stripped
    assert "stablehlo.while" in runner.run(stripped, "none")
    unoptimized = cf.compile(LOOKUPS[0], g, idx, np.int64(2), optimize=False).mlir  # (cofactor's generic form)
    assert "optimization_barrier" in unoptimized
    assert "optimization_barrier" not in _for_accelerators(unoptimized)
    assert "stablehlo.while" in runner.run(_for_accelerators(unoptimized), "none")
    products = runner.run(_for_accelerators(cf.code_hlo(lambda a, b: (a @ b, np.dot(a[0], b[:, 0])), g[:, :4], g)),
                          "none")
    assert products.count("precision = [HIGHEST, HIGHEST]") == products.count("stablehlo.dot_general") == 2


def _shifted_in_place(y, x):
    for j in range(12):
        y[j - 1] = x[j] + y[j]
    return y


def test_a_vector_written_at_a_wrapped_counter_compiles_promptly():
    """The raising kept the pipeline busy past its time limit (an OptimizationWarning, then the
    unoptimized program) on a write one lane at a time at a wrapped position."""
    y, x = np.zeros(12), np.arange(12.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", cf.OptimizationWarning)
        got = cf.jit(_shifted_in_place, optimize=True)(y.copy(), x)
    np.testing.assert_array_equal(np.asarray(got), _shifted_in_place(y.copy(), x))


def _summed(fn):
    def loss(g, idx, r):
        return np.sum(fn(g, idx, r))
    return loss


@pytest.mark.parametrize("fn", [_lookup_beside_a_fixed_row, _wrapped_beside_a_row_passed_in, _three_axes,
                                _emissions_of_a_hidden_markov_model, _through_a_view_of_rows,
                                _outer_counter_wrapped_in_an_inner_loop], ids=lambda fn: fn.__name__.strip("_"))
def test_gradients_of_lookups_beside_fixed_indices(fn):
    rng = np.random.default_rng(8)
    g, idx, r = rng.standard_normal((4, 10)), rng.integers(-10, 10, 10), np.int64(2)
    loss = _summed(fn)
    got = np.asarray(cf.grad(loss)(g, idx, r))
    want = np.zeros_like(g)
    for k in np.ndindex(g.shape):
        step = np.zeros_like(g)
        step[k] = 1e-6
        want[k] = (loss(g + step, idx, r) - loss(g - step, idx, r)) / 2e-6
    np.testing.assert_allclose(got, want, atol=1e-6)


# The worker's lifetime.

def _slow_module(steps=600):
    """A 1-D three-point stencil on two f64[32] updated in turn, unrolled ``steps`` times: the
    upstream pipeline spends 10-20 s on it (4 s at 300 steps, 11 s at 500, 34 s at 800)."""
    lines = ["%c1 = stablehlo.constant dense<1> : tensor<i64>",
             "%third = stablehlo.constant dense<3.0> : tensor<30xf64>"]
    a, b = "%a", "%b"
    for i in range(2 * steps):
        src, t = (a, f"%b{i}") if i % 2 == 0 else (b, f"%a{i}")
        lines += [f"{t}l = stablehlo.slice {src} [0:30] : (tensor<32xf64>) -> tensor<30xf64>",
                  f"{t}m = stablehlo.slice {src} [1:31] : (tensor<32xf64>) -> tensor<30xf64>",
                  f"{t}r = stablehlo.slice {src} [2:32] : (tensor<32xf64>) -> tensor<30xf64>",
                  f"{t}s = stablehlo.add {t}l, {t}m : tensor<30xf64>",
                  f"{t}t = stablehlo.add {t}s, {t}r : tensor<30xf64>",
                  f"{t}d = stablehlo.divide {t}t, %third : tensor<30xf64>",
                  f"{t} = stablehlo.dynamic_update_slice {b if i % 2 == 0 else a}, {t}d, %c1"
                  " : (tensor<32xf64>, tensor<30xf64>, tensor<i64>) -> tensor<32xf64>"]
        a, b = (a, t) if i % 2 == 0 else (t, b)
    return ("module {\n func.func @main(%a: tensor<32xf64>, %b: tensor<32xf64>) -> (tensor<32xf64>, tensor<32xf64>) {\n"
            + "\n".join(lines) + f"\nreturn {a}, {b} : tensor<32xf64>, tensor<32xf64>\n }}\n}}")


def _alive(pid) -> bool:
    """Whether process ``pid`` runs (a zombie, dead and not yet reaped by its new parent, does not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
    except OSError:  # no /proc
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True


def _gone_within(pid, seconds) -> bool:
    deadline = time.monotonic() + seconds
    while _alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def _python(script, *args, **kwargs):
    return subprocess.Popen([sys.executable, "-c", script, *args], text=True, env={**os.environ, "COFACTOR_CACHE_DIR": ""},
                            **kwargs)


# Starts the worker and prints its pid; then idles (stdin left open) or runs the slow module it reads.
_STARTS_A_WORKER = """
import sys
from cofactor.passes import runner
runner.run(sys.argv[1], "curated")
print(runner._worker.process.pid, flush=True)
runner.run(sys.stdin.read(), "upstream")
"""


@pytest.mark.parametrize("busy", [False, pytest.param(True, marks=pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="a pass holds the GIL: without Linux's parent-death "
    "signal the worker notices only when the pass ends"))], ids=["idle", "in-a-long-pass"])
def test_worker_exits_when_its_parent_is_killed(busy):
    child = _python(_STARTS_A_WORKER, IDENTITY, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    pid = int(child.stdout.readline())
    try:
        if busy:  # a worker that ignored its parent's death would finish the pass first
            child.stdin.write(_slow_module())
            child.stdin.close()
            time.sleep(0.5)
        child.kill()
        child.wait()
        assert _gone_within(pid, 3), "the worker outlived its parent"
    finally:
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)


def test_worker_started_from_a_short_lived_thread_outlives_the_thread():
    """Linux's parent-death signal follows the thread that forked the worker: not the caller's."""
    runner._stop()
    # The thread exits after the worker answered, so after it asked for the signal.
    thread = threading.Thread(target=runner._run_in_worker, args=(IDENTITY, "curated", False))
    thread.start()
    thread.join()
    pid = runner._worker.process.pid
    time.sleep(0.2)
    assert _alive(pid)
    assert "func.func @main" in runner._run_in_worker(IDENTITY, "curated", False)
    assert runner._worker.process.pid == pid


def test_worker_started_through_a_wrapper_process_serves():
    """``sys.executable`` may be a wrapper that runs Python as its child: the worker's parent is then
    not the process that asked for it, which is no reason to exit."""
    req_r, req_w = os.pipe()
    rep_r, rep_w = os.pipe()
    command = f'"{sys.executable}" "{runner._WORKER_SCRIPT}" {req_r} {rep_w} {os.getpid()}; exit $?'
    process = subprocess.Popen(["sh", "-c", command], pass_fds=(req_r, rep_w))
    os.close(req_r)
    os.close(rep_w)
    with os.fdopen(req_w, "wb") as requests, os.fdopen(rep_r, "rb") as replies:
        assert worker.read_message(replies) == ("ready", None)
        worker.write_message(requests, (IDENTITY, "curated", False))
        status, text = worker.read_message(replies)
        assert status == "ok" and "func.func @main" in text
    assert process.wait(timeout=30) == 0


# Ctrl-C during a pipeline: the request is abandoned, the worker killed; the next request gets a
# fresh worker and its own reply (not the slow module's, which the old worker would send later).
_INTERRUPTED = """
import os, signal, sys, threading
signal.signal(signal.SIGINT, signal.default_int_handler)  # (a shell's background job starts with it ignored)
from cofactor.passes import runner
runner.run(sys.argv[1], "curated")
first = runner._worker.process.pid
threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT)).start()
try:
    runner.run(sys.stdin.read(), "upstream")
    print("finished")
except KeyboardInterrupt:
    print("interrupted")
print(first)
print(runner.run(sys.argv[2], "curated"))
print(runner._worker.process.pid)
"""


def test_interrupted_request_kills_the_worker_and_the_next_gets_its_own_reply():
    other = IDENTITY.replace("tensor<f64>", "tensor<7xf32>")
    child = _python(_INTERRUPTED, IDENTITY, other, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    out, _ = child.communicate(_slow_module(), timeout=60)
    lines = out.splitlines()
    assert lines[0] == "interrupted"
    first, second = int(lines[1]), int(lines[-1])
    assert second != first and not _alive(first)
    assert "tensor<7xf32>" in out and "tensor<32xf64>" not in out


def test_a_pipeline_past_the_time_limit_fails_and_the_worker_is_replaced(monkeypatch):
    monkeypatch.setattr(runner, "TIME_LIMIT", 0.5)
    runner.run(IDENTITY, "curated")
    first = runner._worker.process.pid
    started = time.monotonic()
    with pytest.raises(cf.CompilationError, match="ran past cofactor's limit of 0.5 s"):
        runner.run(_slow_module(), "upstream")  # 10-20 s of work
    assert time.monotonic() - started < 5
    assert _gone_within(first, 3)
    assert "tensor<f64>" in runner.run(IDENTITY, "curated")  # a new worker, with its own reply


# Ctrl-C in a terminal signals the whole process group, the worker too; a program that carries on
# after it keeps its worker (which ignores SIGINT: an interrupted request is the runner's to clean up).
_CARRIES_ON_AFTER_CTRL_C = """
import signal, sys
from cofactor.passes import runner
signal.signal(signal.SIGINT, lambda *args: None)
runner.run(sys.argv[1], "curated")
print(runner._worker.process.pid, flush=True)
sys.stdin.readline()
print(runner._worker.process.poll() is None, runner._worker.process.pid)
"""


def test_idle_worker_survives_ctrl_c_to_the_process_group():
    child = _python(_CARRIES_ON_AFTER_CTRL_C, IDENTITY, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                    start_new_session=True)
    pid = int(child.stdout.readline())
    os.killpg(child.pid, signal.SIGINT)
    time.sleep(0.3)
    out, _ = child.communicate("\n", timeout=30)
    assert out.split() == ["True", str(pid)]


# os.fork: the child must not share the parent's pipes to the worker.
_FORKS = """
import os, sys
from cofactor.passes import runner
runner.run(sys.argv[1], "curated")
parent_worker = runner._worker.process.pid
pid = os.fork()
if pid == 0:
    ok = "tensor<7xf32>" in runner.run(sys.argv[2], "curated") and runner._worker.process.pid != parent_worker
    os._exit(0 if ok else 1)
_, status = os.waitpid(pid, 0)
print(os.waitstatus_to_exitcode(status), "tensor<f64>" in runner.run(sys.argv[1], "upstream"),
      runner._worker.process.pid == parent_worker)
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork")
def test_forked_child_starts_its_own_worker():
    child = _python(_FORKS, IDENTITY, IDENTITY.replace("tensor<f64>", "tensor<7xf32>"), stdout=subprocess.PIPE)
    out, _ = child.communicate(timeout=60)
    assert out.split() == ["0", "True", "True"]


# Conversions: the value a narrowing conversion rounds (or wraps, or makes complex) is the value the
# operations after it see.  convert_convert_float folded x.astype(np.float32).astype(np.float64) into
# x, convert_binop_convert_min/max took np.minimum of two float32 roundings in float64, and
# elementwise_complex_simplify took np.sqrt(x + 0j) as the real sqrt of x (NaN for x < 0).  (And
# cofactor's own complex log10 and log2 of 0 had a NaN imaginary part.)

def _through(x, y, mid):
    """Operations on ``x`` and ``y`` converted to ``mid``, and back where NumPy would keep ``mid``."""
    a, b = x.astype(mid), y.astype(mid)
    out = [a.astype(x.dtype), np.minimum(a, b).astype(x.dtype), np.maximum(a, b).astype(x.dtype),
           a < b, a == b, np.abs(a).astype(x.dtype), (a + b).astype(x.dtype), (a * b).astype(x.dtype), a.sum()]
    if np.dtype(mid).kind in "fc":
        out += [np.sqrt(a), np.log(a), np.floor(a.real) if np.dtype(mid).kind == "c" else np.floor(a)]
    return tuple(out)


def _complex_of_real(x):
    z = x + 0j
    return (np.sqrt(z), np.log(x.astype(complex)), np.log10(z), np.log2(z), z ** 0.5, np.power(z, 1.5), np.arcsin(z),
            np.arccos(z), np.arctanh(x.astype(np.complex64)), np.sqrt(z).real, np.exp(z) * np.sqrt(z))


_CONVERSIONS = [
    (np.float64, np.float32), (np.float64, np.float16), (np.float32, np.float16), (np.float64, np.int32),
    (np.float64, np.uint8), (np.int64, np.int8), (np.int64, np.uint8), (np.int64, np.float32),
    (np.float64, np.complex64), (np.complex128, np.complex64)]


@pytest.mark.parametrize("optimize", ["auto", True])
@pytest.mark.parametrize("wide, mid", _CONVERSIONS, ids=lambda t: np.dtype(t).name)
def test_conversions_round_where_numpy_rounds(wide, mid, optimize):
    rng = np.random.default_rng(3)
    x, y = (np.concatenate([rng.normal(size=6) * 3, [1.2, -1.7, 3.1e5, 16777217.0, 200.0, -300.0]]) for _ in range(2))
    if np.dtype(wide).kind == "c":
        x, y = x + 1j * x[::-1], y - 1j * y[::-1]
    x, y = x.astype(wide), y.astype(wide)
    fn = functools.partial(_through, mid=mid)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = fn(x, y)
        got = cf.jit(lambda x, y: fn(x, y), optimize=optimize)(x, y)
    precision = np.finfo(mid).eps * 8 if np.dtype(mid).kind in "fc" else 0
    for k, (g, w) in enumerate(zip(got, want)):
        g = np.asarray(g)
        assert g.dtype == w.dtype, k
        np.testing.assert_allclose(g, w, rtol=precision if k > 4 else 0, equal_nan=True, err_msg=f"result {k}")


@pytest.mark.parametrize("optimize", ["auto", True])
def test_complex_functions_of_a_real_array_made_complex(optimize):
    x = np.array([-3.0, 2.0, -0.5, 0.0, 0.25])
    with np.errstate(all="ignore"):
        want = _complex_of_real(x)
    got = cf.jit(_complex_of_real, optimize=optimize)(x)
    for k, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-6, equal_nan=True, err_msg=f"result {k}")


def _rebuilt_from_elements(rows, cols, shifted):
    def f(x):
        built = []
        for i in range(rows):
            row = []
            for j in range(cols):
                row.append(x[i, j] + (i * cols + j + 0.5) if shifted else x[i, j])
            built.append(row)
        return np.array(built)
    return f


@pytest.mark.parametrize("rows, cols", [(2, 3), (3, 3), (3, 2), (2, 4)])
@pytest.mark.parametrize("shifted", [False, True])
def test_an_array_rebuilt_from_its_elements(rows, cols, shifted):
    """np.array of an array's own elements, row by row: concatenations of concatenations of its
    slices, which concat_concat_to_dus got wrong (EXCLUDED_PATTERNS)."""
    f = _rebuilt_from_elements(rows, cols, shifted)
    x = np.random.default_rng(rows * 10 + cols).random((rows, cols))
    np.testing.assert_array_equal(np.asarray(cf.jit(f, optimize=True)(x)), f(x))


_INF, _NAN = np.inf, np.nan
def _reads_what_each_trip_writes(a, y):
    s = y
    for _ in range(12):
        a[3] = a[1] + a[2]               # (the same value on every trip, but not the one a[3] starts with)
        s = s * a[0] + a[3]
    return s


def _compares_what_the_trip_wrote(a, b):
    for _ in range(11):
        a[1:] = np.full(a.shape[0] - 1, 3.0)
        if a[0] < a[2]:                  # (3.0 now, on every trip)
            pass
        else:
            np.maximum(0.32, a[1:], out=b[1:])
    return b


def _unequal_to_a_counter_out_of_its_range(x, y):
    out = np.zeros_like(x)
    for i in range(x.shape[0]):          # (a rolled loop: longer than the unroll limit)
        if i != 50:
            out[i] = x[i]
        out[i] += y * (i != -1) + (i == 60)
    return out


_REWRITES = {  # a wrong Enzyme-JAX rewrite (EXCLUDED_PATTERNS) -> a program it got wrong, and its inputs
    "remove_no_ops_from_while_loop": (_unequal_to_a_counter_out_of_its_range, np.arange(1.0, 41.0), 0.5),
    "sub_simplify": (lambda x, y: (1.0 / (0.0 - x), np.arctan2(0.0, np.zeros(3) - y)), [0.0, -0.0, 1.0], [0.0, 2.0, -0.0]),
    "hoist_slice": (_reads_what_each_trip_writes, [1.25, 0.5, -0.25, 0.75], 0.5),
    "sink_dus": (_compares_what_the_trip_wrote, [1.22, 0.15, -1.77, 0.79, 1.97], [-0.81, -0.41, -0.62, -1.8, -0.65]),
    "mul_zero_pad": (lambda x, y: np.pad(x, (1, 0)) * y, [1.0, 2.0], [_NAN, 1.0, _INF]),
    "div_zero_pad": (lambda x, y: np.pad(x, (1, 0)) / np.pad(y, (1, 0)), [1.0, 2.0], [1.0, 2.0]),
    "pad_dot_general": (lambda x, y: np.pad(x, ((0, 0), (1, 0))) @ y, [[1.0, 2.0], [3.0, 4.0]],
                        [[_NAN, 1.0], [2.0, 3.0], [5.0, 6.0]]),
    "not_compare": (lambda x, y: ~(x < y), [_NAN, 0.0, 2.0], 1.0),
    "binop_const_simplify": (lambda x, y: x * 2 // 2, np.array([2147483647, -2147483647, 5], np.int32), 0),
    "compare_negate_const_simplify": (lambda x, y: -x.T > 0, [[np.iinfo(np.int64).min, -5, 5]], 0),
    "pow_simplify": (lambda x, y: x ** -0.5, [-0.0, -_INF, 4.0], 0),
    "power_multiply_to_power": (lambda x, y: (x ** 2 * x ** -1, y ** 0.5 * y ** 0.5), [0.0, _INF, 2.0], [-3.0, 2.0]),
    "associative_common_mul_op_reordering": (lambda x, y: 2.0 * x - 3.0 * x, [_INF, 2.0], 0),
    "dot_general_add_distributive_simplify": (lambda x, y: x @ y + x @ (-y), [[2.0, 1.0], [1.0, 1.0]],
                                              [[1e308, 1.0], [0.0, 1.0]]),
    "factor_scalars_in_dot_general": (lambda x, y: (x * 1e-300) @ (y * 1e300), [0.0, -3.0, _INF, 2.0],
                                      [1e308, 1.0, -1e308, 2.0]),
}


@pytest.mark.parametrize("pattern", sorted(_REWRITES))
def test_rewrites_that_were_wrong(pattern):
    """Each program gives NumPy's answer with optimize=True (and did not with ``pattern`` enabled)."""
    assert pattern in EXCLUDED_PATTERNS
    fn, x, y = _REWRITES[pattern]
    x, y = np.asarray(x), np.asarray(y)
    with np.errstate(all="ignore"):
        want = fn(x.copy(), y.copy())  # (some update their arguments in place)
    got = cf.jit(fn, optimize=True)(x.copy(), y.copy())
    for g, w in zip(got if isinstance(want, tuple) else [got], want if isinstance(want, tuple) else [want]):
        np.testing.assert_array_equal(np.asarray(g), w)


_GATHERED_TWO_RESULT_OPS = {
    "argmin_of_each_row": lambda v, c: np.array([np.argmin(v[0]), np.argmin(v[1]), np.argmin(v[2])]),
    "argmax_by_comprehension": lambda v, c: np.array([np.argmax(r) for r in v]),
    "argsorts_stacked": lambda v, c: np.stack([np.argsort(r) for r in v]),
    "votes_of_neighbours": lambda v, c: np.array([np.bincount((r % 3).astype(np.int64), minlength=3).argmax() for r in v]),
    "nearest_centre": lambda v, c: np.array([np.argmin(np.sum((c - x) ** 2, axis=1)) for x in v]),
    "argmax_and_max_side_by_side": lambda v, c: np.stack([np.argmax(v, axis=1), np.max(v, axis=1),
                                                          np.argmin(v, axis=1)]),
}


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.float64])
@pytest.mark.parametrize("name", sorted(_GATHERED_TWO_RESULT_OPS))
def test_two_result_reductions_and_sorts_gathered_into_one_array(name, dtype):
    """Several argmin / argmax / argsort results (ops with two results: values and indices) put in one
    array: concat_insert_dim_reduce / _sort merged them into one op and returned its values, or crashed
    the worker (EXCLUDED_PATTERNS); every compile is right and needs no fallback."""
    fn = _GATHERED_TWO_RESULT_OPS[name]
    rng = np.random.default_rng(7)
    v = rng.integers(0, 9, (3, 4)).astype(dtype)
    c = rng.integers(0, 9, (2, 4)).astype(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error", cf.OptimizationWarning)
        got = cf.jit(fn, optimize=True)(v, c)
    want = fn(v, c)
    assert np.asarray(got).dtype == want.dtype
    np.testing.assert_array_equal(np.asarray(got), want)


def test_a_slice_of_a_reversed_array_after_a_write_optimizes():
    """slice_reverse built a mistyped select here, so the whole pipeline failed (EXCLUDED_PATTERNS)."""
    def f(b):
        b[4] = b.min()
        reversed_view = b[::-1]
        b[3:7] = reversed_view[1]
        return b

    b = np.array([1.82, 1.89, 0.12, 0.55, 1.72], dtype=np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error", cf.OptimizationWarning)
        got = cf.jit(f, optimize=True)(b.copy())
    np.testing.assert_array_equal(np.asarray(got), f(b.copy()))
