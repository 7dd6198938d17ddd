/* An XLA:CPU custom-call target that multiplies matrices with the BLAS NumPy itself uses.
 *
 * XLA's CPU dot is Eigen's, compiled for a baseline instruction set; NumPy's wheels bundle
 * OpenBLAS, which picks kernels for the machine it runs on (AVX-512 where there is one): 1.6x
 * faster on 400x400 float64 matrices on such a machine (blas.py says more).
 * cofactor/xla/blas.py rewrites a module's large float dot_generals into calls of this target
 * (the legacy custom-call API, which needs no XLA header: the shapes travel in the opaque string)
 * and hands it the addresses of OpenBLAS's CBLAS functions, found in NumPy's own library.
 *
 * opaque: "<d|s> gemm TA TB M N K"  C[M,N] = op(A) op(B), A [M,K] or [K,M] (TA), B [K,N] or [N,K] (TB)
 *         "<d|s> gemv T ROWS COLS"  y = op(A) x, A [ROWS,COLS], x the second operand
 * All arrays are row-major (blas.py gives the operands and result that layout). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* CBLAS of an ILP64 OpenBLAS: its integers are 64-bit, its enums int. */
typedef void dgemm_fn(int, int, int, int64_t, int64_t, int64_t, double, const double *, int64_t,
                      const double *, int64_t, double, double *, int64_t);
typedef void sgemm_fn(int, int, int, int64_t, int64_t, int64_t, float, const float *, int64_t,
                      const float *, int64_t, float, float *, int64_t);
typedef void dgemv_fn(int, int, int64_t, int64_t, double, const double *, int64_t, const double *, int64_t,
                      double, double *, int64_t);
typedef void sgemv_fn(int, int, int64_t, int64_t, float, const float *, int64_t, const float *, int64_t,
                      float, float *, int64_t);
enum { ROW_MAJOR = 101, NO_TRANS = 111, TRANS = 112 };

static dgemm_fn *dgemm;
static sgemm_fn *sgemm;
static dgemv_fn *dgemv;
static sgemv_fn *sgemv;

static void dot(void *out, const void **in, const char *opaque, size_t opaque_len, void *status) {
    char kind, op[5];
    long long t, u, m, n, k;
    (void)opaque_len, (void)status;  /* the opaque string is NUL-terminated: XLA keeps it as a std::string */
    int fields = sscanf(opaque, "%c %4s %lld %lld %lld %lld %lld", &kind, op, &t, &u, &m, &n, &k);
    if (fields == 7 && strcmp(op, "gemm") == 0) {
        int ta = t ? TRANS : NO_TRANS, tb = u ? TRANS : NO_TRANS;
        int64_t lda = t ? m : k, ldb = u ? k : n;
        if (kind == 'd') dgemm(ROW_MAJOR, ta, tb, m, n, k, 1.0, in[0], lda, in[1], ldb, 0.0, out, n);
        else sgemm(ROW_MAJOR, ta, tb, m, n, k, 1.0f, in[0], lda, in[1], ldb, 0.0f, out, n);
    } else if (fields == 5 && strcmp(op, "gemv") == 0) {  /* t, rows (u), cols (m) */
        if (kind == 'd') dgemv(ROW_MAJOR, t ? TRANS : NO_TRANS, u, m, 1.0, in[0], m, in[1], 1, 0.0, out, 1);
        else sgemv(ROW_MAJOR, t ? TRANS : NO_TRANS, u, m, 1.0f, in[0], m, in[1], 1, 0.0f, out, 1);
    }
}

static PyObject *bind(PyObject *self, PyObject *args) {
    unsigned long long d_mm, s_mm, d_mv, s_mv;
    if (!PyArg_ParseTuple(args, "KKKK", &d_mm, &s_mm, &d_mv, &s_mv)) return NULL;
    dgemm = (dgemm_fn *)(uintptr_t)d_mm;
    sgemm = (sgemm_fn *)(uintptr_t)s_mm;
    dgemv = (dgemv_fn *)(uintptr_t)d_mv;
    sgemv = (sgemv_fn *)(uintptr_t)s_mv;
    return PyCapsule_New((void *)dot, NULL, NULL);
}

static PyMethodDef methods[] = {
    {"bind", bind, METH_VARARGS,
     "bind(dgemm, sgemm, dgemv, sgemv): the target, calling these CBLAS functions (their addresses)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_blas", NULL, -1, methods};

PyMODINIT_FUNC PyInit__blas(void) { return PyModule_Create(&module); }
