#!/usr/bin/env bash
# Client programs the end-to-end tests drive besides the Python drivers (issue 11):
# Debian's PostgreSQL JDBC driver for tests/e2e/test_jdbc_client.py. Idempotent: only as
# root, only where Java (javac) is present and the jar is missing; the test skips without
# Java and fails, naming this script, when Java is there but the jar is not.
set -uo pipefail
JAR=/usr/share/java/postgresql.jar
if [ "$(id -u)" = 0 ] && command -v javac >/dev/null 2>&1 && [ ! -f "$JAR" ] \
   && command -v apt-get >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-get install -y -q libpostgresql-jdbc-java >/dev/null 2>&1; then
    apt-get update -q >/dev/null 2>&1
    apt-get install -y -q libpostgresql-jdbc-java >/dev/null 2>&1 \
      || echo "deploy/test_clients.sh: could not install libpostgresql-jdbc-java" >&2
  fi
fi
exit 0
