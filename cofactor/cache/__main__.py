"""python -m cofactor.cache [info|clear]: where the disk cache is and what it holds, or empty it."""
import sys

from . import KINDS, clear, directory


def main(argv) -> int:
    command = argv[0] if argv else "info"
    if command not in ("info", "clear"):
        print("usage: python -m cofactor.cache [info|clear]", file=sys.stderr)
        return 2
    root = directory()
    if root is None:
        print("the disk cache is disabled (COFACTOR_CACHE_DIR is set and empty)")
    elif command == "clear":
        clear()
        print(f"cleared {root}")
    else:
        print(root)
        for kind in KINDS:
            entries = list((root / kind).glob("[!.]*"))
            print(f"  {kind}: {len(entries)} entries, {sum(p.stat().st_size for p in entries) / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
