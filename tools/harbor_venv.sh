#!/usr/bin/env bash
# Harbor (the Terminal-Bench harness) in a venv of its own: it needs Python >= 3.12 and is never
# installed into Workbench's venv. The tests marked `harbor` use .venv-harbor/bin/python.
set -euo pipefail
cd "$(dirname "$0")/.."
HARBOR_VERSION=0.25.0
py=${HARBOR_BASE_PYTHON:-}
if [ -z "$py" ]; then
  for candidate in /root/.pyenv/versions/3.12.1/bin/python python3.12 python3.13; do
    if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then
      py=$candidate; break
    fi
  done
fi
[ -n "$py" ] || { echo "harbor_venv: no Python >= 3.12 found (set HARBOR_BASE_PYTHON)" >&2; exit 1; }
if ! .venv-harbor/bin/python -c "import importlib.metadata as m, sys; sys.exit(m.version('harbor') != '$HARBOR_VERSION')" 2>/dev/null; then
  rm -rf .venv-harbor
  "$py" -m venv .venv-harbor
  .venv-harbor/bin/python -m pip install --quiet "harbor==$HARBOR_VERSION"
fi
.venv-harbor/bin/python -c "import importlib.metadata as m; print('harbor', m.version('harbor'))"
