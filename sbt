#!/usr/bin/env bash
# Minimal sbt launcher for the repository's one sbt build (build.sbt here: projects core, akka, zio and their
# signbench jars). Fetches the pinned sbt-launch jar from Maven Central (via mvn) into ~/.sbt/launchers/<version>/
# and runs it with Maven Central as the only resolver (project/repositories + sbt.override.build.repos). Runs in
# this folder whatever the caller's: `../sbt -batch akka/assembly` from akka/ builds the same as `./sbt` here.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"
version="$(sed -n 's/^[[:space:]]*sbt\.version[[:space:]]*=[[:space:]]*//p' "$here/project/build.properties" | tr -d '[:space:]')"
[ -n "$version" ] || { echo "sbt: no sbt.version in project/build.properties" >&2; exit 1; }
dir="$HOME/.sbt/launchers/$version"
jar="$dir/sbt-launch-$version.jar"
if [ ! -f "$jar" ]; then
  mkdir -p "$dir"
  mvn -q dependency:copy -Dartifact="org.scala-sbt:sbt-launch:$version" -DoutputDirectory="$dir" >&2
fi
# -batch / --batch are options of the usual sbt runner script, not of the launcher jar:
# handle them here (no stdin, plain logs) and pass everything else through.
args=()
batch=""
for a in "$@"; do
  case "$a" in
    -batch|--batch) batch=1 ;;
    *) args+=("$a") ;;
  esac
done
extra=()
if [ -n "$batch" ]; then extra+=("-Dsbt.log.noformat=true" "-Dsbt.ci=true"); exec </dev/null; fi
if [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/java" ]; then java="$JAVA_HOME/bin/java"; else java=java; fi
exec "$java" ${SBT_JAVA_OPTS:--Xms512m -Xmx2g -Xss4m} \
  -Dsbt.override.build.repos=true \
  -Dsbt.repository.config="$here/project/repositories" \
  -Dsbt.server.forcestart=false -Dsbt.supershell=false -Dsbt.color=false \
  ${extra[@]+"${extra[@]}"} -jar "$jar" ${args[@]+"${args[@]}"}
