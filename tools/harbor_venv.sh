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
  # litellm comes with Harbor: held to Workbench's pin (1.82.7 and 1.82.8 were a supply-chain compromise)
  printf 'litellm==1.110.2\n' > .venv-harbor/constraints.txt
  .venv-harbor/bin/python -m pip install --quiet -c .venv-harbor/constraints.txt "harbor==$HARBOR_VERSION"
fi
version=$(.venv-harbor/bin/python -c 'import importlib.metadata as m; print(m.version("litellm"))' 2>/dev/null || true)
case "$version" in 1.82.7|1.82.8) echo "harbor_venv: litellm $version is a compromised release" >&2; exit 1;; esac
if grep -rilq --include='*.pth' litellm .venv-harbor || find .venv-harbor -iname '*litellm*.pth' | grep -q .; then
  echo "harbor_venv: a litellm .pth file is installed: refusing" >&2
  exit 1
fi
.venv-harbor/bin/python -c "import importlib.metadata as m; print('harbor', m.version('harbor'))"
