#!/usr/bin/env bash
# One entry point for the README's two commands:
#   ./run.sh demo   set up (a .venv here: the package with its spark extra) and run
#                   examples/quickstart.py
#   ./run.sh test   set up (the package with its spark, test and bench extras) and run the
#                   test suite
# Extra arguments after "test" go to pytest.
set -euo pipefail
cd "$(dirname "$0")"

fail() { echo "error: $*" >&2; exit 1; }

case "${1:-}" in
  demo) extras="[spark]" ;;
  test) extras="[spark,test,bench]" ;;
  *) fail "usage: ./run.sh demo | ./run.sh test [pytest args]" ;;
esac

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
# One stamp per pyproject.toml and install: the demo's (the package and PySpark) and the
# test's (the package and its extras, which also covers the demo). A changed pyproject.toml
# reinstalls.
key=$(cksum pyproject.toml | cut -d' ' -f1)
stamp="$venv/.installed-$key-$1"
if [ ! -f "$stamp" ] && [ ! -f "$venv/.installed-$key-test" ]; then
  "$venv/bin/python" -m pip install --quiet --upgrade pip
  "$venv/bin/python" -m pip install --quiet -e ".$extras"
  touch "$stamp"
fi
export PYSPARK_PYTHON="$PWD/$venv/bin/python"

case "$1" in
  demo) exec "$venv/bin/python" examples/quickstart.py ;;
  test) shift; exec "$venv/bin/python" -m pytest "$@" ;;
esac
