#!/usr/bin/env bash
# python/test.sh — build and install the attn Python package, then run its tests.
#
#   python/test.sh                  into .venv-python at the repository root
#                                   (made with /usr/bin/python3 -m venv
#                                   --system-site-packages, so that Debian's
#                                   python3-numpy, -pytest, -torch and
#                                   -matplotlib are used when installed)
#   python/test.sh --python PY      into the environment of the interpreter PY
#                                   instead (e.g. .venv-peers/bin/python)
#
# Idempotent: the venv is made once, the package is rebuilt (incrementally,
# in python/build/) and reinstalled on every run; pytest is installed from
# PyPI only when the environment cannot import it. Prints pip's log only on
# failure and pytest's short summary; exits nonzero on any failure.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

py=""
while (($#)); do
  case "$1" in
    --python) py="${2:?--python needs an interpreter}"; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "python/test.sh: unknown argument: $1" >&2; exit 2 ;;
  esac
done

if [[ -z "$py" ]]; then
  venv="$root/.venv-python"
  py="$venv/bin/python"
  if [[ ! -x "$py" ]]; then
    /usr/bin/python3 -m venv --system-site-packages "$venv"
  fi
fi

log="$(mktemp)"
trap 'rm -f "$log"' EXIT
pip=("$py" -m pip install --disable-pip-version-check --no-input --progress-bar off)

echo "python/test.sh: building and installing ./python for $("$py" -c 'import sys; print(sys.executable)')"
if ! PIP_ROOT_USER_ACTION=ignore "${pip[@]}" ./python >"$log" 2>&1; then
  cat "$log" >&2
  echo "python/test.sh: error: pip install ./python failed" >&2
  exit 1
fi
if ! "$py" -c 'import pytest' >/dev/null 2>&1; then
  if ! PIP_ROOT_USER_ACTION=ignore "${pip[@]}" pytest >"$log" 2>&1; then
    cat "$log" >&2
    echo "python/test.sh: error: pip install pytest failed" >&2
    exit 1
  fi
fi

# From the repository root the tests import the installed package (python/src
# is not on sys.path), so this checks what pip installed.
exec "$py" -m pytest python/tests -q -p no:cacheprovider
