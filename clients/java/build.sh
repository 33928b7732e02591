#!/bin/sh
# Builds the Java client with the JDK alone (no Maven registry needed): compiles it, compiles and
# runs its unit tests with JUnit 5 from Debian's junit5 package, and makes ticketd-client-<version>.jar.
#   ./build.sh                  everything, into ./build
#   ./build.sh --skip-tests     compile and jar only
#   TICKETD_JAVA_BUILD_DIR=/tmp/x ./build.sh   build elsewhere (the conformance test does)
# The test classes (with the conformance and bench programs) land in $out/test-classes.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${TICKETD_JAVA_BUILD_DIR:-$here/build}
version=$(cat "$here/VERSION")
junit_dir=${JUNIT_DIR:-/usr/share/java}
standalone=$junit_dir/junit-platform-console-standalone.jar
skip_tests=false
[ "${1:-}" = "--skip-tests" ] && skip_tests=true

for tool in javac jar java; do
  command -v "$tool" >/dev/null || { echo "build.sh: $tool not found: install openjdk-17-jdk-headless" >&2; exit 2; }
done

rm -rf "$out/classes" "$out/test-classes"
mkdir -p "$out/classes" "$out/test-classes"
javac --release 17 -Xlint:all -Werror -d "$out/classes" $(find "$here/src/main/java" -name '*.java')
jar --create --file "$out/ticketd-client-$version.jar" -C "$out/classes" .
echo "build.sh: $out/ticketd-client-$version.jar"

if [ ! -f "$standalone" ]; then
  echo "build.sh: $standalone not found: install Debian's junit5 to compile and run the tests" >&2
  [ "$skip_tests" = true ] && exit 0
  exit 3
fi
# The tests, the conformance program and the bench program: one javac for all of them.
javac --release 17 -d "$out/test-classes" -cp "$out/classes:$standalone" \
  $(find "$here/src/test/java" "$here/src/conformance/java" "$here/src/bench/java" -name '*.java' 2>/dev/null)
[ "$skip_tests" = true ] && exit 0
vectors=$(cd "$here/.." && pwd)/vectors
java -Dticketd.vectors="$vectors" -jar "$standalone" --disable-banner --disable-ansi-colors --details=tree --fail-if-no-tests \
  -cp "$out/classes:$out/test-classes" --include-classname '.*Test' --select-package dev.ticketd.client
