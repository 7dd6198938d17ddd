"""The Enzyme-JAX worker process: loads ``enzyme_call.so`` once and runs pipelines.

Run as a script (not through the package, so it starts without NumPy or
jaxlib).  Enzyme can abort the process (LLVM ERROR) and holds the GIL while it
runs, so it lives here and not in the user's process.  Protocol on the
inherited pipe fds: length-prefixed pickles, request ``(text, kind,
differentiate)``, reply ``("ok", text)`` or ``("error", message)``.

It dies with its parent: idle, it sees EOF on the request pipe; busy in a pass
(which holds the GIL, so no Python code of its own runs), the kernel kills it
(Linux's parent-death signal); elsewhere a watchdog thread notices the new
parent pid once the pass gives the GIL back.  Ctrl-C is the parent's business
(the runner kills an interrupted worker), so it ignores SIGINT.
"""
import ctypes
import importlib.util
import os
import pickle
import signal
import struct
import sys
import threading
import time


def _load_enzyme_call():
    import enzyme_ad  # a namespace package: its spec has no origin, only a path

    path = os.path.join(list(enzyme_ad.__path__)[0], "jax", "enzyme_call.so")
    spec = importlib.util.spec_from_file_location("enzyme_call", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def read_message(stream):
    header = stream.read(4)
    if len(header) < 4:
        return None
    (size,) = struct.unpack("<I", header)
    return pickle.loads(stream.read(size))


def write_message(stream, message):
    data = pickle.dumps(message)
    stream.write(struct.pack("<I", len(data)) + data)
    stream.flush()


def _run(enzyme_call, pipelines, text, kind, differentiate):
    pipeline = pipelines.build(enzyme_call, kind, differentiate, kernels="enzymexla.kernel_call" in text)
    name, out = enzyme_call.run_pass_pipeline([], text, pipeline)
    # The pass makes the entry function private; XLA needs it public.
    return out.replace(f"func.func private @{name}(", f"func.func @{name}(", 1)


_PR_SET_PDEATHSIG = 1


def _exit_with_parent(parent: int, poll_s: float = 1.0):
    """Exit when process ``parent`` does.  The parent-death signal fires when the *thread* that
    started this process exits; the runner starts it from a thread that lives as long as its process."""
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        except (OSError, AttributeError):
            pass
    started_by = os.getppid()
    if started_by != parent:  # the parent died before the signal was asked for, or a wrapper started this
        try:
            os.kill(parent, 0)
        except ProcessLookupError:
            os._exit(1)
        except OSError:
            pass

    def watch():  # portable, but runs only while no pass holds the GIL
        while True:
            time.sleep(poll_s)
            if os.getppid() != started_by:  # reparented: to init, or to a subreaper
                os._exit(1)

    threading.Thread(target=watch, name="parent-watchdog", daemon=True).start()


def main():
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if len(sys.argv) > 3:
        _exit_with_parent(int(sys.argv[3]))
    requests = os.fdopen(int(sys.argv[1]), "rb")
    replies = os.fdopen(int(sys.argv[2]), "wb")
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import pipelines

    enzyme_call = _load_enzyme_call()
    write_message(replies, ("ready", None))
    while (request := read_message(requests)) is not None:
        try:
            reply = ("ok", _run(enzyme_call, pipelines, *request))
        except Exception as e:  # a pass failure: report it, keep serving
            reply = ("error", str(e))
        write_message(replies, reply)


if __name__ == "__main__":
    main()
