"""The Enzyme-JAX worker process: loads ``enzyme_call.so`` once and runs pipelines.

Run as a script (not through the package, so it starts without NumPy or
jaxlib).  Enzyme can abort the process (LLVM ERROR) and holds the GIL while it
runs, so it lives here and not in the user's process.  Protocol on the
inherited pipe fds: length-prefixed pickles, request ``(text, kind,
differentiate)``, reply ``("ok", text)`` or ``("error", message)``.
"""
import importlib.util
import os
import pickle
import struct
import sys


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
    pipeline = pipelines.build(enzyme_call, kind, differentiate)
    name, out = enzyme_call.run_pass_pipeline([], text, pipeline)
    # The pass makes the entry function private; XLA needs it public.
    return out.replace(f"func.func private @{name}(", f"func.func @{name}(", 1)


def main():
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
