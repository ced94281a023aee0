# Shared by the scripts that run perf/target/benchmarks.jar (source it; ROOT is the repository root):
#
#   benchmarks_java_home               # JAVA_HOME a JDK >= 25, else Temurin 25
#   benchmarks_jar ROOT                # (re)build the jar when missing or older than any module's sources
#
# The jar shades the daemon and the client: a change in any module's sources makes it stale, and the build takes
# those modules from this checkout (-am), never from snapshots installed in ~/.m2 by another checkout.

benchmarks_java_home() {
  if [[ -z "${JAVA_HOME:-}" || ! -x "$JAVA_HOME/bin/java" ]] || \
     ! "$JAVA_HOME/bin/java" -version 2>&1 | grep -qE 'version "(2[5-9]|[3-9][0-9])'; then
    export JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64
  fi
}

benchmarks_jar() { # root
  local jar="$1/perf/target/benchmarks.jar" sources=("$1/pom.xml") module
  for module in daemon ipc-client ringbuffer topology native-bindings perf; do
    sources+=("$1/$module/src" "$1/$module/pom.xml")
  done
  if [[ ! -f "$jar" ]] || [[ -n "$(find "${sources[@]}" -newer "$jar" -print -quit 2>/dev/null)" ]]; then
    echo "building perf/target/benchmarks.jar ..."
    # offline first; online only where the offline build fails (a dependency not yet in ~/.m2)
    (cd "$1" && ./mvnw -q -B -o -pl perf -am -DskipTests package) || \
      (cd "$1" && ./mvnw -q -B -pl perf -am -DskipTests package)
  fi
}
