"""The Enzyme-JAX worker: pipelines, failures and crashes become CompilationError."""
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import cofactor as cf
from cofactor.passes import pipelines, runner
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
upstream = set(pipelines._patterns(enzyme_call, 1, []).split(';'))
curated = set(pipelines._patterns(enzyme_call, 1, list(pipelines.EXCLUDED_PATTERNS)).split(';'))
print(sorted(p.split('<')[0] for p in upstream - curated))
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
