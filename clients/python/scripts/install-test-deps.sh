#!/usr/bin/env bash
# Creates clients/python/.venv with everything the Python client's tests need, at
# exact pins (scripts/test-requirements.txt), from whatever index pip is
# configured to use. Re-running is a no-op while the pins and stand-ins are unchanged.
#
# Everything is installed with --no-deps because three packages that
# langchain-core and celery declare are absent from some package indexes
# (langchain-protocol, click-didyoumean, click-repl), and pip's resolver then
# refuses the whole set. In their place the venv gets the import-only stand-ins
# of tests/standins/, which nothing under test calls. A user installing
# fencegate[langgraph] or fencegate[celery] from PyPI gets the real packages.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
project="$(dirname "$here")"
venv="$project/.venv"
pins="$here/test-requirements.txt"
standins="$project/tests/standins"
marker="$venv/.fencegate-test-deps"

pick_python() {
  local candidate
  for candidate in "${FENCEGATE_PYTHON:-}" python3.13 python3.12 python3.11 python3.10 python3; do
    [ -n "$candidate" ] || continue
    command -v "$candidate" >/dev/null 2>&1 || continue
    if "$candidate" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' 2>/dev/null; then
      echo "$candidate"
      return 0
    fi
  done
  echo "install-test-deps: no python3 >= 3.10 found (set FENCEGATE_PYTHON to one)" >&2
  return 1
}

fingerprint() {
  cat "$pins" "$0" $(find "$standins" -name '*.py' | sort) | sha256sum | cut -d' ' -f1
}

wanted="$(fingerprint)"
if [ -x "$venv/bin/python" ] && [ -f "$marker" ] && [ "$(cat "$marker")" = "$wanted" ]; then
  echo "install-test-deps: $venv is up to date"
  exit 0
fi

if [ ! -x "$venv/bin/python" ]; then
  python="$(pick_python)"
  "$python" -m venv "$venv"
fi
rm -f "$marker"

# An unreachable index in the pip configuration should fail fast, not retry for minutes.
export PIP_RETRIES="${PIP_RETRIES:-1}" PIP_DISABLE_PIP_VERSION_CHECK=1
# pip's warnings about unreachable indexes are noise when it succeeds; shown when it fails.
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
if ! "$venv/bin/python" -m pip install --quiet --no-deps --requirement "$pins" >"$log" 2>&1; then
  cat "$log" >&2
  echo "install-test-deps: pip could not install $pins" >&2
  exit 1
fi

# The stand-ins go on the venv's path through a .pth file, so they stay the
# files of tests/standins/ and are never mistaken for installed packages.
site="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
echo "$standins" >"$site/fencegate-test-standins.pth"

"$venv/bin/python" - <<'PY'
import langgraph.graph  # noqa: F401
from langgraph.checkpoint.base import BaseCheckpointSaver  # noqa: F401
import celery  # noqa: F401
import celery.bin.celery  # noqa: F401  (the command-line module imports the stand-ins)
import pytest  # noqa: F401
import pytest_asyncio  # noqa: F401
print("install-test-deps: langgraph, langgraph-checkpoint, celery and pytest import")
PY

echo "$wanted" >"$marker"
