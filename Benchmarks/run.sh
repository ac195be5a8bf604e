#!/usr/bin/env bash
# `make bench`: builds the benchmark suite in release (in Benchmarks/.build) and runs it.
# Prints the table and writes Benchmarks/results/latest.json, latest.md and memory.json (a
# quick or filtered run writes partial.json, partial.md and partial-memory.json instead).
#   BENCH_QUICK=1   short smoke run (a few seconds of measuring), for CI
#   BENCH_ROUNDS=n  interleaved rounds per case (default 41, quick 9)
#   arguments       case filters, e.g. `Benchmarks/run.sh ratchet x3dh`
set -euo pipefail
cd "$(dirname "$0")"
swift build -c release --product bench
exec "$(swift build -c release --show-bin-path)/bench" "$@"
