#!/usr/bin/env bash
# Makes sure ./.venv exists and holds cofactor (editable) with its pinned dependencies.
# Re-installs when pyproject.toml, setup.py or the C files they build change.  Sourced by ./demo and ./test.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.venv"
stamp="$venv/.cofactor-installed"
want="$(cat "$root/pyproject.toml" "$root/setup.py" "$root/cofactor/runtime/_aligned.c" "$root/cofactor/xla/_blas.c" | sha256sum | cut -d' ' -f1)"
if [ ! -x "$venv/bin/python" ]; then
  python=""
  for candidate in python3.11 python3; do
    if command -v "$candidate" >/dev/null && "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
      python="$candidate"; break
    fi
  done
  if [ -z "$python" ]; then
    echo "cofactor needs Python 3.11 (enzyme-ad 0.0.16 is built for it only)" >&2
    exit 1
  fi
  "$python" -m venv "$venv"
fi
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -e "$root[test]"
  echo "$want" > "$stamp"
fi
