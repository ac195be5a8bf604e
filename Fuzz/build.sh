#!/usr/bin/env bash
# Builds the libFuzzer harnesses into Fuzz/build/.
#
#   Fuzz/build.sh                 # every harness in Fuzz/Harnesses/
#   Fuzz/build.sh padding qr_payload
#
# How: each library module is compiled once with swiftc into a static library plus its
# .swiftmodule (the same module split as Package.swift), instrumented with
# `-sanitize=fuzzer,address`; then each harness (Fuzz/Harnesses/<name>.swift plus
# Fuzz/Support/FuzzSupport.swift) is compiled and linked against them with libFuzzer's main.
# libsodium itself is the system library (not instrumented). Optimised (-O) with overflow
# and bounds checks kept, so a trap in library code is a finding.
set -euo pipefail
cd "$(dirname "$0")/.."

OUT=Fuzz/build
LIB=$OUT/lib
mkdir -p "$LIB"
FLAGS=(-O -g -swift-version 6 -parse-as-library -sanitize=fuzzer,address -I "$LIB" -I Sources/CSodium)
LINK=(-use-ld=lld -L "$LIB")

# module name, then the modules it needs (in link order after itself).
MODULES=(SignalPrimitives SessionKit Verification SignalVectorKit)

# A module or harness is rebuilt when the hash of its inputs (sources, flags, this script and
# the modules it imports) differs from the one recorded at its last build.
inputs_hash() { cat "$@" Fuzz/build.sh | sha256sum | cut -c1-32; }

build_module() {
    local name=$1
    local lib=$LIB/lib$name.a
    local sources
    mapfile -t sources < <(find "Sources/$name" -name '*.swift' | sort)
    local hash
    hash=$( (echo "${FLAGS[*]} $DEPENDENCIES"; inputs_hash "${sources[@]}") | sha256sum | cut -c1-32)
    DEPENDENCIES="$DEPENDENCIES $hash"
    if [ -f "$lib" ] && [ "$(cat "$LIB/$name.hash" 2>/dev/null)" = "$name $hash" ]; then return; fi
    echo "  module $name"
    swiftc "${FLAGS[@]}" -module-name "$name" -emit-module -emit-module-path "$LIB/$name.swiftmodule" \
        -emit-library -static -o "$lib" "${sources[@]}"
    echo "$name $hash" > "$LIB/$name.hash"
}

echo "building library modules (swiftc -sanitize=fuzzer,address)"
DEPENDENCIES=""   # the hashes of the modules built so far (each module may import the earlier ones)
for module in "${MODULES[@]}"; do build_module "$module"; done

CORE_LIBS=(-lVerification -lSessionKit -lSignalPrimitives -lsodium)

if [ $# -gt 0 ]; then
    HARNESSES=("$@")
else
    HARNESSES=()
    for file in Fuzz/Harnesses/*.swift; do HARNESSES+=("$(basename "$file" .swift)"); done
fi

for harness in "${HARNESSES[@]}"; do
    src=Fuzz/Harnesses/$harness.swift
    [ -f "$src" ] || { echo "no harness $src" >&2; exit 1; }
    LIBS=("${CORE_LIBS[@]}")
    # The vector-file loader harness also needs the conformance engine (and Foundation).
    if [ "$harness" = vector_loader ]; then LIBS=(-lSignalVectorKit "${LIBS[@]}"); fi
    bin=$OUT/$harness
    hash=$( (echo "${FLAGS[*]} ${LIBS[*]}"; cat "$LIB"/*.hash; inputs_hash Fuzz/Support/*.swift "$src") | sha256sum | cut -c1-32)
    if [ -f "$bin" ] && [ "$(cat "$bin.hash" 2>/dev/null)" = "$hash" ]; then continue; fi
    echo "  harness $harness"
    swiftc "${FLAGS[@]}" "${LINK[@]}" Fuzz/Support/*.swift "$src" "${LIBS[@]}" -o "$bin"
    echo "$hash" > "$bin.hash"
done
echo "harnesses in $OUT/"
