#!/usr/bin/env bash
# Runs the load tests (benchmarks/internal/loadtest, built in the benchmarks
# module): exactness under load in memory and on Redis shared by two servers,
# overhead against no limiter and httprate, and a 1,000,000-key flood.
# Everything targets 127.0.0.1 only, is bounded in rate and time, and stops
# by itself: its attacks last 2m58s (4m5s with Redis), and the program gives
# up after 5 minutes.
# Usage:
#   scripts/load.sh [output.md] [extra flags for the load command]
# Defaults to bench/load.md. Pass -quick for the reduced version: its attacks
# last 12s (17s with Redis).
# Redis parts start their own redis-server on a free port; without one they
# are skipped with the reason in the report, unless RATEKEEPER_REQUIRE_REDIS
# is set. Run it on an otherwise idle machine.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bench/load.md}
shift || true
bin=$(mktemp -d)/load
trap 'rm -rf "$(dirname "$bin")"' EXIT
(cd benchmarks && go build -o "$bin" ./internal/loadtest/cmd/load)
timeout 330 "$bin" -out "$out" -timeout 5m -cmdline "scripts/load.sh $out${*:+ $*}" "$@"
