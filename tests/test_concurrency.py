"""Several threads tracing, compiling and calling at once get NumPy's answers: each trace has a
context of its own, and the compile caches, the optimize="auto" trial and the Enzyme worker are
shared safely."""
import threading

import numpy as np

import cofactor as cf
from test_bindings import alias_before_loop, rebind_one_arm


def scalars(a):
    s = a.sum()
    t = s
    k = 0
    while k < 10 and s < 100:
        s += 3
        k += 1
    return t, s, k


def stencil(u):
    for _ in range(20):
        u[1:-1] = u[1:-1] + 0.1 * (u[:-2] - 2.0 * u[1:-1] + u[2:])
    return u


PROGRAMS = [rebind_one_arm, alias_before_loop, scalars, stencil]


def _run_all(shared, results, k):
    rng = np.random.default_rng(k)
    for round_ in range(3):
        for fn in PROGRAMS:
            x = rng.standard_normal(6)
            want_args, got_args = x.copy(), x.copy()
            want = fn(want_args)
            compiled = shared[fn] if round_ % 2 else cf.jit(fn)  # a shared one and fresh ones
            got = compiled(got_args)
            results.append((fn.__name__, want, got, want_args, got_args))


def test_threads_tracing_and_calling_at_once():
    shared = {fn: cf.jit(fn) for fn in PROGRAMS}
    results, errors = [], []

    def worker(k):
        try:
            _run_all(shared, results, k)
        except Exception as e:  # noqa: BLE001  (reported below, with the thread's traceback)
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert len(results) == 5 * 3 * len(PROGRAMS)
    for name, want, got, want_args, got_args in results:
        want, got = (want, got) if isinstance(want, tuple) else ((want,), (got,))
        for w, g in zip(want, got):
            np.testing.assert_allclose(np.asarray(g), w, rtol=1e-12, err_msg=name)
            assert np.asarray(g).dtype == np.asarray(w).dtype, name
        np.testing.assert_allclose(got_args, want_args, rtol=1e-12, err_msg=f"{name}: the argument after the call")
