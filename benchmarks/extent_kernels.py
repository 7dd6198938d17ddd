"""Kernels with run-time extents as people write them in NumPy: slices whose bounds depend on a loop's
counter (dense linear algebra, dynamic programming), on data (CSR rows) and masks (k-means).  cofactor
compiles them unchanged (numpy/extent.py); benchmarks/programs.py times them and tests/test_extents.py
checks them against NumPy."""
import numpy as np


def cholesky(A):
    A = A.copy()
    n = A.shape[0]
    for i in range(n):
        for j in range(i):
            A[i, j] -= np.dot(A[i, :j], A[j, :j])
            A[i, j] /= A[j, j]
        A[i, i] -= np.dot(A[i, :i], A[i, :i])
        A[i, i] = np.sqrt(A[i, i])
    return np.tril(A)


def lu(A):
    N = A.shape[0]
    for i in range(N):
        for j in range(i):
            A[i, j] -= A[i, :j] @ A[:j, j]
            A[i, j] /= A[j, j]
        for j in range(i, N):
            A[i, j] -= A[i, :i] @ A[:i, j]


def durbin(r):
    N = r.shape[0]
    y, z = np.empty_like(r), np.empty_like(r)
    alpha, beta = -r[0], 1.0
    y[0] = -r[0]
    for k in range(1, N):
        beta *= 1.0 - alpha * alpha
        alpha = -(r[k] + np.dot(np.flip(r[:k]), y[:k])) / beta
        z[:k] = y[:k] + alpha * np.flip(y[:k])
        y[:k] = z[:k]
        y[k] = alpha
    return y


def forward_substitution(L, b):
    x = np.zeros_like(b)
    for i in range(L.shape[0]):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]
    return x


def back_substitution(U, b):
    n = U.shape[0]
    x = np.zeros_like(b)
    for i in range(n - 1, -1, -1):
        x[i] = (b[i] - np.sum(U[i, i + 1:] * x[i + 1:])) / U[i, i]
    return x


def gram_schmidt(A):
    A = A.copy()
    M, N = A.shape
    Q, R = np.zeros_like(A), np.zeros((N, N), A.dtype)
    for k in range(N):
        R[k, k] = np.sqrt(np.dot(A[:, k], A[:, k]))
        Q[:, k] = A[:, k] / R[k, k]
        R[k, k + 1:] = Q[:, k] @ A[:, k + 1:]
        A[:, k + 1:] -= np.outer(Q[:, k], R[k, k + 1:])
    return Q, R


def correlation(data):
    N, M = data.shape
    mean, stddev = np.mean(data, axis=0), np.std(data, axis=0)
    stddev[stddev <= 0.1] = 1.0
    data = (data - mean) / (np.sqrt(N) * stddev)
    corr = np.eye(M, dtype=data.dtype)
    for i in range(M - 1):
        corr[i + 1:M, i] = corr[i, i + 1:M] = data[:, i] @ data[:, i + 1:M]
    return corr


def covariance(data):
    N, M = data.shape
    data = data - np.mean(data, axis=0)
    cov = np.zeros((M, M), dtype=data.dtype)
    for i in range(M):
        cov[i:M, i] = cov[i, i:M] = data[:, i] @ data[:, i:M] / (N - 1.0)
    return cov


def nussinov(seq):
    N = seq.shape[0]
    table = np.zeros((N, N), np.int32)
    for i in range(N - 1, -1, -1):
        for j in range(i + 1, N):
            table[i, j] = max(table[i, j], table[i, j - 1])
            table[i, j] = max(table[i, j], table[i + 1, j])
            pair = table[i + 1, j - 1] + (seq[i] + seq[j] == 3) if i < j - 1 else table[i + 1, j - 1]
            table[i, j] = max(table[i, j], pair)
            if i + 1 < j:
                table[i, j] = max(table[i, j], np.max(table[i, i + 1:j] + table[i + 2:j + 1, j]))
    return table


def csr_matvec(values, columns, row_starts, x):
    y = np.zeros(row_starts.shape[0] - 1)
    for i in range(y.shape[0]):
        y[i] = values[row_starts[i]:row_starts[i + 1]] @ x[columns[row_starts[i]:row_starts[i + 1]]]
    return y


def kmeans(X, centers, steps=3):
    for _ in range(steps):
        distances = ((X[:, None, :] - centers[None, :, :]) ** 2).sum(-1)
        labels = np.argmin(distances, axis=1)
        for k in range(centers.shape[0]):
            if np.any(labels == k):
                centers[k] = X[labels == k].mean(axis=0)
    return labels


def _spd(n, rng):
    m = rng.random((n, n))
    return (m @ m.T + n * np.eye(n),)


def _triangular(which):
    return lambda n, rng: (which(rng.random((n, n))) + n * np.eye(n), rng.random(n))


def _csr(n, rng):
    dense = rng.random((n, n)) * (rng.random((n, n)) < 0.3)
    row_starts = np.concatenate([[0], np.cumsum((dense != 0).sum(1))]).astype(np.int64)
    return dense[dense != 0], np.nonzero(dense)[1].astype(np.int64), row_starts, rng.random(n)


# name -> (kernel, inputs(n, rng): its arguments at size n)
KERNELS = {
    "cholesky": (cholesky, _spd),
    "lu": (lu, _spd),
    "durbin": (durbin, lambda n, rng: (0.6 ** np.arange(1, n + 1) * (1 + 0.01 * rng.random(n)),)),  # positive definite
    "forward_substitution": (forward_substitution, _triangular(np.tril)),
    "back_substitution": (back_substitution, _triangular(np.triu)),
    "gram_schmidt": (gram_schmidt, lambda n, rng: (rng.random((n + 2, n)),)),
    "correlation": (correlation, lambda n, rng: (rng.random((n + 3, n)),)),
    "covariance": (covariance, lambda n, rng: (rng.random((n + 3, n)),)),
    "nussinov": (nussinov, lambda n, rng: (rng.integers(0, 4, n),)),
    "csr_matvec": (csr_matvec, _csr),
    "kmeans": (kmeans, lambda n, rng: (rng.standard_normal((6 * n, 2)), rng.standard_normal((3, 2)))),
}
