"""The disk compile cache: hits give the same program, a second process skips compiling, damaged
entries are misses, clear empties it, concurrent writers never leave a torn entry."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import cofactor as cf

# Run in a fresh process: the first call of a stencil, timed after the runtime has started.
FIRST_CALL = """
import json, time
import numpy as np
import cofactor as cf

def heat(u, v):
    for _ in range(50):
        u[1:-1] = u[1:-1] + 0.1 * (u[:-2] - 2.0 * u[1:-1] + u[2:])
    return np.tanh(u) @ v.T + np.exp(-v).sum(axis=1)

cf.devices()
start = time.perf_counter()
out = np.asarray(cf.jit(heat)(np.linspace(0.0, 1.0, 64), np.ones((3, 64))))
print(json.dumps({"seconds": time.perf_counter() - start, "sum": float(out.sum()),
                  "stats": {" ".join(k): n for k, n in cf.cache.stats.items()}}))
"""


def _run(script, cache_dir):
    env = dict(os.environ, COFACTOR_CACHE_DIR=str(cache_dir))
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.splitlines()[-1])


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("COFACTOR_CACHE_DIR", str(tmp_path))
    cf.cache.stats.clear()
    return tmp_path


def _entries(root, kind):
    return sorted((root / kind).glob("[!.]*"))


def f(x, y):
    return np.sin(x) @ y.T + (x * y).sum(axis=1)


X, Y = np.linspace(0.0, 1.0, 12).reshape(3, 4), np.arange(12.0).reshape(3, 4)


def test_directory_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("COFACTOR_CACHE_DIR")
    assert cf.cache.directory() == tmp_path / "cofactor"
    monkeypatch.setenv("COFACTOR_CACHE_DIR", str(tmp_path / "elsewhere"))
    assert cf.cache.directory() == tmp_path / "elsewhere"
    monkeypatch.setenv("COFACTOR_CACHE_DIR", "")
    assert cf.cache.directory() is None


def test_a_hit_gives_the_same_program_and_results(cache_dir):
    first = cf.compile(f, X, Y)
    assert cf.cache.stats == {("mlir", "miss"): 1, ("xla", "miss"): 1}
    assert len(_entries(cache_dir, "mlir")) == len(_entries(cache_dir, "xla")) == 1
    second = cf.compile(f, X, Y)  # a new trace, served from disk
    assert cf.cache.stats[("mlir", "hit")] == cf.cache.stats[("xla", "hit")] == 1
    assert second.mlir == first.mlir and second.xla_hlo() == first.xla_hlo()
    np.testing.assert_array_equal(np.asarray(second(X, Y)), np.asarray(first(X, Y)))
    cf.compile(f, X, Y, optimize="upstream")  # another pipeline: another entry
    assert len(_entries(cache_dir, "mlir")) == 2


def _heat(u):
    for _ in range(20):  # rolled: optimize="auto" has two programs to choose from
        u[1:-1] = u[1:-1] + 0.1 * (u[2:] - 2 * u[1:-1] + u[:-2])
    return u.sum()


def test_the_auto_choice_is_remembered(cache_dir):
    """optimize="auto" runs its two programs once, on the first call; later compiles of the same
    function (a new process) take the faster one from the cache and compile only it."""
    u = np.linspace(0.0, 1.0, 16) ** 2
    first = cf.compile(_heat, u.copy())
    assert first._rival is not None
    first(u.copy())
    assert len(_entries(cache_dir, "auto")) == 1
    second = cf.compile(_heat, u.copy())
    assert second._rival is None and second.mlir == first.mlir
    mine = u.copy()
    np.testing.assert_allclose(np.asarray(second(mine)), _heat(u.copy()), rtol=1e-12)


def test_a_second_process_compiles_from_the_cache(tmp_path):
    cold = _run(FIRST_CALL, tmp_path)
    warm = _run(FIRST_CALL, tmp_path)
    assert cold["stats"] == {"mlir miss": 1, "xla miss": 1}
    assert warm["stats"] == {"mlir hit": 1, "xla hit": 1}
    assert warm["sum"] == cold["sum"]
    assert warm["seconds"] < cold["seconds"] / 2, (cold, warm)


@pytest.mark.parametrize("damage", [lambda b: b[:len(b) // 2], lambda b: b[:-1] + bytes([b[-1] ^ 1]), lambda b: b""])
def test_a_damaged_entry_is_a_miss_and_is_replaced(cache_dir, damage):
    want = np.asarray(cf.compile(f, X, Y)(X, Y))
    for kind in ("mlir", "xla"):
        path, = _entries(cache_dir, kind)
        path.write_bytes(damage(path.read_bytes()))
    cf.cache.stats.clear()
    np.testing.assert_array_equal(np.asarray(cf.compile(f, X, Y)(X, Y)), want)
    assert cf.cache.stats == {("mlir", "miss"): 1, ("xla", "miss"): 1}
    cf.compile(f, X, Y)
    assert cf.cache.stats[("mlir", "hit")] == cf.cache.stats[("xla", "hit")] == 1  # rewritten whole


def test_an_executable_xla_cannot_load_is_compiled_again(cache_dir):
    want = np.asarray(cf.compile(f, X, Y)(X, Y))
    path, = _entries(cache_dir, "xla")
    cf.cache.store("xla", path.name, b"not an executable")  # a valid entry, from an incompatible build say
    np.testing.assert_array_equal(np.asarray(cf.compile(f, X, Y)(X, Y)), want)
    assert cf.cache.load("xla", path.name) != b"not an executable"


def test_clear(cache_dir):
    (cache_dir / "unrelated.txt").write_text("kept")
    cf.compile(f, X, Y)
    cf.cache.clear()
    assert not _entries(cache_dir, "mlir") and not _entries(cache_dir, "xla")
    assert (cache_dir / "unrelated.txt").exists()
    cf.cache.stats.clear()
    cf.compile(f, X, Y)
    assert cf.cache.stats == {("mlir", "miss"): 1, ("xla", "miss"): 1}


def test_set_directory_overrides_the_environment(cache_dir, tmp_path, monkeypatch):
    monkeypatch.setattr(cf.cache, "_directory", cf.cache._directory)  # restored after the test
    cf.cache.set_directory(None)
    cf.compile(f, X, Y)
    cf.cache.set_directory(tmp_path / "set")
    cf.compile(f, X, Y)
    assert not _entries(cache_dir, "xla") and _entries(tmp_path / "set", "xla")


# Writes and reads one entry many times while another process does the same with other bytes.
STRESS = """
import sys
from cofactor import cache
mine = bytes([int(sys.argv[1])]) * 200_000
for _ in range(300):
    cache.store("xla", "shared", mine)
    got = cache.load("xla", "shared")
    assert got is not None and len(got) == len(mine) and len(set(got)) == 1, "torn entry"
print('{"ok": 1}')
"""


def _concurrently(script, cache_dir, args):
    env = dict(os.environ, COFACTOR_CACHE_DIR=str(cache_dir))
    processes = [subprocess.Popen([sys.executable, "-c", script, *a], env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for a in args]
    for p in processes:
        out, err = p.communicate()
        assert p.returncode == 0, err


def test_concurrent_writers_never_leave_a_torn_entry(tmp_path):
    _concurrently(STRESS, tmp_path, [["1"], ["2"]])
    assert not list((tmp_path / "xla").glob(".tmp-*"))


def test_concurrent_compiles_leave_a_usable_cache(tmp_path):
    _concurrently(FIRST_CALL, tmp_path, [[], []])
    assert _run(FIRST_CALL, tmp_path)["stats"] == {"mlir hit": 1, "xla hit": 1}
