#!/usr/bin/env bash
# Instructions per operation of each contender of each case whose name contains FILTER,
# counted by callgrind. Unlike times, the counts repeat exactly whatever else the machine is
# doing, so they show small overheads (an allocation, a copy) that noise hides. They are not
# times: a cache miss or a slow instruction counts as one.
#
# Usage: Benchmarks/instructions.sh [FILTER [N]]      (needs valgrind, bc and objcopy)
#
# Each count is (N operations) − (the same run with --prepare-only), divided by N, so set-up,
# preparation and process start-up cancel out.
set -euo pipefail
cd "$(dirname "$0")"
filter="${1-}"
n="${2:-1000}"
for tool in valgrind bc objcopy; do
    command -v "$tool" >/dev/null || { echo "instructions.sh needs $tool" >&2; exit 2; }
done
swift build -c release --product bench >/dev/null || { echo "build failed (run swift build -c release)" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# valgrind cannot read the Swift DWARF: keep the symbols, drop the debug info.
objcopy --strip-debug "$(swift build -c release --show-bin-path)/bench" "$work/bench"
count() {
    valgrind --tool=callgrind --callgrind-out-file="$work/out" "$work/bench" "$@" </dev/null 2>&1 \
        | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
per_op() {  # case contender
    local base full
    # bench exits with 3 when the case has no such contender.
    if ! "$work/bench" --count 0 --contender "$2" "$1" </dev/null >/dev/null 2>&1; then echo "-"; return; fi
    base="$(count --count "$n" --contender "$2" --prepare-only "$1")"
    full="$(count --count "$n" --contender "$2" "$1")"
    echo "($full - $base) / $n" | bc -l | xargs printf '%.0f'
}
printf '%-30s %12s %12s %14s %14s\n' case library floor swift-crypto library/floor
"$work/bench" --list "$filter" | while read -r name _; do
    library="$(per_op "$name" library)"
    floor="$(per_op "$name" floor)"
    swiftcrypto="$(per_op "$name" swift-crypto)"
    ratio="-"
    if [ "$library" != "-" ] && [ "$floor" != "-" ]; then
        ratio="$(echo "$library / $floor" | bc -l | xargs printf '%.3f')"
    fi
    printf '%-30s %12s %12s %14s %14s\n' "$name" "$library" "$floor" "$swiftcrypto" "$ratio"
done
