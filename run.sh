#!/usr/bin/env bash
# One entry point for the README's two commands:
#   ./run.sh demo   set up (a .venv here) and run examples/quickstart.py
#   ./run.sh test   set up and run the whole test suite
# Extra arguments after "test" go to pytest.
set -euo pipefail
cd "$(dirname "$0")"

fail() { echo "error: $*" >&2; exit 1; }

python_bin=${PYTHON:-python3}
command -v "$python_bin" >/dev/null || fail "Python 3.10+ is needed ($python_bin not found)"
"$python_bin" -c 'import sys; sys.exit(sys.version_info < (3, 10))' \
  || fail "Python 3.10+ is needed, found $("$python_bin" --version 2>&1)"

if [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/java" ]; then
  java_bin="$JAVA_HOME/bin/java"
else
  java_bin=$(command -v java || true)
fi
[ -n "$java_bin" ] || fail "Java 17+ is needed by PySpark and was not found: install a JDK/JRE 17+ (e.g. 'apt-get install openjdk-17-jre-headless') or set JAVA_HOME"
java_major=$("$java_bin" -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n1)
[ "${java_major:-0}" -ge 17 ] || fail "Java 17+ is needed by PySpark, found Java ${java_major:-unknown} at $java_bin"

venv=.venv
if [ ! -x "$venv/bin/python" ]; then
  "$python_bin" -m venv "$venv"
fi
stamp="$venv/.installed-$(cksum pyproject.toml | cut -d' ' -f1)"
if [ ! -f "$stamp" ]; then
  "$venv/bin/python" -m pip install --quiet --upgrade pip
  "$venv/bin/python" -m pip install --quiet -e ".[test,bench]"
  touch "$stamp"
fi
export PYSPARK_PYTHON="$PWD/$venv/bin/python"

case "${1:-}" in
  demo) exec "$venv/bin/python" examples/quickstart.py ;;
  test) shift; exec "$venv/bin/python" -m pytest "$@" ;;
  *) fail "usage: ./run.sh demo | ./run.sh test [pytest args]" ;;
esac
