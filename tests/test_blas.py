"""Large float matrix products on CPU run in NumPy's own BLAS (cofactor/xla/blas.py), against NumPy:
every transpose and matrix/vector form, in loops, updating arguments, with NaN and infinities,
differentiated; and the products it leaves to XLA."""
import numpy as np
import pytest

import cofactor as cf
from cofactor.xla import blas

from autodiff.gradcheck import check_derivatives
from conftest import check, sample

pytestmark = pytest.mark.skipif(not blas.available(), reason="built without a C compiler, or NumPy has no ILP64 OpenBLAS")


def blas_calls(f, *args) -> int:
    return cf.code_xla(f, *args).count(f'custom_call_target="{blas.TARGET}"')


def every_form(a, d, c, e, m, x, y, z, w):
    """a (40, 30), d (40, 32), c (32, 30), e (32, 40): the four transposes of a matrix product;
    m (80, 60), x and w (60), y and z (80): a matrix and a vector, either side, either orientation."""
    return a.T.T @ d[:30].T.T, a.T @ d, a @ c.T, a.T @ e.T, m @ x, m.T @ y, z @ m, w @ m.T


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_every_form_of_a_large_product_is_a_blas_call_with_numpys_values(dtype):
    shapes = [(40, 30), (40, 32), (32, 30), (32, 40), (80, 60), (60,), (80,), (80,), (60,)]
    args = [sample(s, dtype, seed=k) for k, s in enumerate(shapes)]
    check(every_form, *args)
    assert blas_calls(every_form, *args) == 8


def one_column_forms(m, x, y):
    """m (80, 60), x (60), y (80): products with a matrix of one row or column, as gemv."""
    return m @ x[:, None], y[None, :] @ m, x[None, :] @ m.T, m.T @ y[:, None], (m @ x) @ m


@pytest.mark.parametrize("optimize", [True, False])
def test_a_matrix_of_one_row_or_column_is_a_matrix_vector_product(optimize):
    """cofactor's raw trace writes A @ x as a product with a 60 x 1 matrix: OpenBLAS's gemm with N = 1
    took 2.4x its gemv's time."""
    args = [sample((80, 60)), sample((60,)), sample((80,))]
    want = one_column_forms(*args)
    compiled = cf.jit(one_column_forms, optimize=optimize)
    for got, w in zip(compiled(*args), want):
        np.testing.assert_allclose(np.asarray(got), w, rtol=1e-12)
        assert got.shape == w.shape
    hlo = compiled.lower(*args).xla_hlo()  # (the optimizer finds three distinct products, the raw trace five)
    assert hlo.count('backend_config="d gemv') >= 3 and " dot(" not in hlo and "gemm" not in hlo


def test_products_of_3d_arrays():
    """np.tensordot of a 3-d array is a dot_general of rank 3 with no batch axes: the rewrite must
    leave it to XLA (it took it for a matrix-vector product and failed: the KAN benchmark)."""
    check(lambda c, w: (np.tensordot(c, w, axes=1), np.tensordot(c[0], c, axes=([0], [1])),
                        np.einsum("bik,kj->bij", c, w)), sample((8, 5, 60)), sample((60, 70)))


def test_small_integer_complex_and_batched_products_stay_xlas():
    def f(s, t, i, z, b):
        return s @ t, i @ i, z @ z, b @ b
    args = [sample((3, 4)), sample((4, 5)), sample((40, 40), np.int64), sample((40, 40), np.complex128),
            sample((2, 40, 40))]
    check(f, *args)
    assert blas_calls(f, *args) == 0


def test_products_in_a_rolled_loop_and_an_updated_argument():
    def power(m, x, steps):
        for _ in range(steps):
            x = m @ x
            x = x / np.sqrt(x @ x)
        return x

    def update(a, b):
        a[...] = a @ b
        a[:, :3] = b[:3].T @ a[:3, :3]

    m = sample((70, 70))
    check(power, m, sample((70,)), 30)
    assert cf.code_hlo(power, m, sample((70,)), 30).count("stablehlo.while") == 1
    a, b = np.array(sample((50, 50))), sample((50, 50))
    want = a.copy()
    update(want, b)
    cf.jit(update)(a, b)
    np.testing.assert_allclose(a, want, rtol=1e-12)


def test_nan_and_infinities_propagate_as_in_numpy():
    a = np.array(sample((40, 40)))
    a[3, 5], a[7, :] = np.nan, np.inf
    a[9, 9] = -np.inf
    b = np.array(sample((40, 40), seed=1))
    b[:, 2] = 0.0
    with np.errstate(invalid="ignore"):
        got, want = cf.jit(lambda a, b: a @ b)(a, b), a @ b
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)


def test_gradient_through_large_products():
    check_derivatives(lambda a, b, v: np.sum(np.tanh(a @ b) @ v), sample((40, 30)), sample((30, 36)),
                      sample((36,)), rtol=1e-5, atol=1e-6)


def test_the_rewrite_leaves_what_it_does_not_recognize():
    batched = ("    %0 = stablehlo.dot_general %arg0, %arg1, batching_dims = [0] x [0], contracting_dims = [2] x [1] : "
               "(tensor<4x64x64xf64>, tensor<4x64x64xf64>) -> tensor<4x64x64xf64>")
    mixed = ("    %1 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : "
             "(tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf64>")
    product = ("    %2 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [0] x [1], precision = [DEFAULT, DEFAULT] : "
               "(tensor<64x32xf64>, tensor<48x64xf64>) -> tensor<32x48xf64>")
    printed = ('    %3 = "stablehlo.dot_general"(%arg0, %arg1) <{dot_dimension_numbers = #stablehlo.dot<'
               'lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : '
               '(tensor<4096xf32>, tensor<4096x2xf32>) -> (tensor<2xf32>)')  # as cofactor prints it
    cube = ("    %4 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [2] x [0] : "
            "(tensor<8x5x60xf64>, tensor<60x70xf64>) -> tensor<8x5x70xf64>")
    text = "\n".join([batched, mixed, product, printed, cube])
    lines = blas.lowered(text).splitlines()
    assert lines[:2] == [batched, mixed] and lines[4] == cube
    assert lines[3] == ('    %3 = stablehlo.custom_call @cofactor_blas(%arg1, %arg0) {api_version = 3 : i32, '
                        'backend_config = "s gemv 1 4096 2", operand_layouts = [dense<[1, 0]> : tensor<2xindex>, '
                        'dense<0> : tensor<1xindex>], result_layouts = [dense<0> : tensor<1xindex>]} : '
                        '(tensor<4096x2xf32>, tensor<4096xf32>) -> tensor<2xf32>')
    assert lines[2] == ('    %2 = stablehlo.custom_call @cofactor_blas(%arg0, %arg1) {api_version = 3 : i32, '
                        'backend_config = "d gemm 1 1 32 48 64", operand_layouts = [dense<[1, 0]> : tensor<2xindex>, '
                        'dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<[1, 0]> : tensor<2xindex>]} : '
                        '(tensor<64x32xf64>, tensor<48x64xf64>) -> tensor<32x48xf64>')
