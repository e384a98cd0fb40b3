#!/usr/bin/env bash
# Workbench into a venv of its own in a Harbor task environment: install.sh WHEEL VENV.
# Needs Python >= 3.11, tmux and bubblewrap; a missing one comes from the system's package manager.
set -euo pipefail
wheel=$1 venv=$2
missing=()
command -v tmux >/dev/null 2>&1 || missing+=(tmux)
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
pick_python() {
  for py in python3.13 python3.12 python3.11 python3; do
    if command -v "$py" >/dev/null 2>&1 && "$py" -c 'import sys, venv; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
      echo "$py"; return 0
    fi
  done
  return 1
}
python=$(pick_python || true)
[ -n "$python" ] || missing+=(python3 python3-venv)
if [ ${#missing[@]} -gt 0 ]; then
  if command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" python3-venv >/dev/null
  elif command -v apk >/dev/null 2>&1; then
    apk add --no-cache "${missing[@]/python3-venv/}" >/dev/null
  elif command -v dnf >/dev/null 2>&1; then
    dnf install -y -q "${missing[@]/python3-venv/}" >/dev/null
  else
    echo "workbench install: ${missing[*]} missing and no package manager (apt-get, apk, dnf) to install them" >&2
    exit 2
  fi
  python=$(pick_python || true)
fi
if [ -z "$python" ]; then
  echo "workbench install: Workbench needs Python >= 3.11; this environment has $(python3 --version 2>&1 || echo none)" >&2
  exit 2
fi
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$wheel"
"$venv/bin/workbench" --version
