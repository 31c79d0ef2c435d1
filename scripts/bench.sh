#!/usr/bin/env bash
# Runs the benchmarks behind BENCHMARKS.md, side by side with the peers in
# the same run, and summarises them with benchstat. Usage:
#   scripts/bench.sh [count] [benchtime] [package]   (defaults: 5, 300ms, all)
# where package, if given, is one directory from the repository root (e.g.
# benchmarks/middleware) whose benchmarks alone run.
# Raw output goes to bench/<package>.txt; medians to bench/<package>.stat
# (<package> with / as -, e.g. benchmarks-middleware for benchmarks/middleware).
# Run it on an otherwise idle machine: nothing else should compete for CPU.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
count=${1:-5}
benchtime=${2:-300ms}
only=${3:-}
mkdir -p bench
benchstat="go run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da"
# Two modules: the main one (our own benchmarks that compare with nothing)
# and benchmarks/ (everything side by side with a peer). $pkg is the
# directory from the repository root; $mod the module's directory.
pkgs=$(go list ./... && (cd benchmarks && go list ./...))
pkgs=$(echo "$pkgs" | sed 's|github.com/ratekeeper/ratekeeper/\{0,1\}||')
if [ -n "$only" ] && ! echo "$pkgs" | grep -qx "$only"; then
  echo "bench: no package $only (give a directory from the repository root, e.g. benchmarks/middleware)" >&2
  exit 2
fi
for pkg in $pkgs; do
  [ -z "$pkg" ] && continue
  [ -n "$only" ] && [ "$pkg" != "$only" ] && continue
  mod=.
  case "$pkg" in benchmarks/*) mod=benchmarks;; esac
  if ! grep -qs '^func Benchmark' "$pkg"/*_test.go; then continue; fi
  name=$(echo "$pkg" | tr '/' '-')
  echo "bench: $pkg" >&2
  pattern=.
  case "$pkg" in
    benchmarks/algorithms) pattern='^Benchmark(HotKey|Keys)';;  # MemoryPerKey runs once below
  esac
  # Interleaved: count passes over every benchmark of the package, not count
  # runs of one benchmark in a row, so that a slow phase of the (shared)
  # machine lands on every variant alike instead of on a few.
  (cd "$mod" && go test -c -o "$root/bench/$name.test" "./${pkg#benchmarks/}")
  : >"bench/$name.txt"
  for _ in $(seq "$count"); do
    (cd "$pkg" && RATEKEEPER_REQUIRE_REDIS=1 "$root/bench/$name.test" -test.run='^$' -test.bench="$pattern" \
      -test.benchmem -test.count=1 -test.benchtime="$benchtime") >>"bench/$name.txt"
  done
  rm -f "bench/$name.test"
  if [ "$pkg" = benchmarks/algorithms ]; then
    (cd benchmarks && go test ./algorithms -run='^$' -bench='^BenchmarkMemoryPerKey' -benchtime=1x -count=3) >>"bench/$name.txt"
  fi
  $benchstat "bench/$name.txt" >"bench/$name.stat"
done
