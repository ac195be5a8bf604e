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
#
# swift-crypto (for SessionKitMLKEM, which SignalVectorKit imports) is built only when the
# `vector_loader` or `age_hybrid` harness is built: SwiftPM builds its `Crypto` target (release, not
# instrumented, like libsodium) in its own scratch path Fuzz/build/swiftpm, using the versions
# pinned in Package.resolved; its objects are archived into Fuzz/build/lib/libSwiftCryptoDeps.a
# and SessionKitMLKEM (and for `vector_loader` SignalVectorKit) are compiled here, instrumented,
# against its modules.
set -euo pipefail
cd "$(dirname "$0")/.."

OUT=Fuzz/build
LIB=$OUT/lib
SWIFTPM=$OUT/swiftpm
CRYPTO_MODULES=$LIB/swift-crypto-modules
mkdir -p "$LIB"
# One package name for every module, as SwiftPM gives them: SessionKit uses SessionKitAge's
# `package` declarations (the age payload and file pipe under attachments).
FLAGS=(-O -g -swift-version 6 -parse-as-library -sanitize=fuzzer,address -package-name SessionKit -I "$LIB" -I Sources/CSodium -I Sources/CZlib)
LINK=(-use-ld=lld -L "$LIB")

if [ $# -gt 0 ]; then
    HARNESSES=("$@")
else
    HARNESSES=()
    for file in Fuzz/Harnesses/*.swift; do HARNESSES+=("$(basename "$file" .swift)"); done
fi
NEEDS_VECTOR_KIT=no
NEEDS_MLKEM=no
for harness in "${HARNESSES[@]}"; do
    case $harness in
        vector_loader) NEEDS_VECTOR_KIT=yes; NEEDS_MLKEM=yes ;;
        age_hybrid) NEEDS_MLKEM=yes ;;
    esac
done

# The core modules, in dependency order (each module may import the earlier ones); with the
# vector-file and hybrid age harnesses also the KEM adapter, with the vector-file harness the
# conformance engine.
MODULES=(SignalPrimitives SessionKitAge SessionKit Verification)
if [ $NEEDS_MLKEM = yes ]; then MODULES+=(SessionKitMLKEM); fi
if [ $NEEDS_VECTOR_KIT = yes ]; then MODULES+=(SignalVectorKit); fi

# A module or harness is rebuilt when the hash of its inputs (sources, flags, this script and
# the modules it imports) differs from the one recorded at its last build.
inputs_hash() { cat "$@" Fuzz/build.sh | sha256sum | cut -c1-32; }

# Builds swift-crypto's `Crypto` target with SwiftPM (a no-op when it is up to date) and
# archives its objects and those of its C and Swift dependencies.
build_swift_crypto() {
    echo "  swift-crypto (swift build -c release --target Crypto --scratch-path $SWIFTPM)"
    swift build -c release --target Crypto --scratch-path "$SWIFTPM" >"$OUT/swiftpm.log" 2>&1 \
        || { cat "$OUT/swiftpm.log" >&2; echo "building swift-crypto failed" >&2; exit 1; }
    local release=$SWIFTPM/release
    local objects
    mapfile -t objects < <(for target in Crypto CryptoBoringWrapper CCryptoBoringSSL CCryptoBoringSSLShims CXKCP CXKCPShims; do
        [ -d "$release/$target.build" ] && find "$release/$target.build" -name '*.o'
    done | sort)
    [ ${#objects[@]} -gt 0 ] || { echo "no swift-crypto objects in $release" >&2; exit 1; }
    local hash
    hash=$(cat "${objects[@]}" "$release/Modules/Crypto.swiftmodule" | sha256sum | cut -c1-32)
    if [ ! -f "$LIB/libSwiftCryptoDeps.a" ] || [ "$(cat "$LIB/SwiftCryptoDeps.hash" 2>/dev/null)" != "$hash" ]; then
        rm -f "$LIB/libSwiftCryptoDeps.a"
        llvm-ar rcsD "$LIB/libSwiftCryptoDeps.a" "${objects[@]}" 2>/dev/null || ar rcsD "$LIB/libSwiftCryptoDeps.a" "${objects[@]}"
        echo "$hash" > "$LIB/SwiftCryptoDeps.hash"
    fi
    # Only swift-crypto's modules, apart from the SwiftPM build's own (uninstrumented) copies of
    # this package's modules, which sit next to them.
    rm -rf "$CRYPTO_MODULES" && mkdir -p "$CRYPTO_MODULES"
    cp "$release/Modules/Crypto.swiftmodule" "$release/Modules/CryptoBoringWrapper.swiftmodule" "$CRYPTO_MODULES/"
    DEPENDENCIES="$DEPENDENCIES $hash"
}

build_module() {
    local name=$1
    local lib=$LIB/lib$name.a
    local sources
    mapfile -t sources < <(find "Sources/$name" -name '*.swift' | sort)
    local extra=()
    case $name in SessionKitMLKEM | SignalVectorKit) extra=(-I "$CRYPTO_MODULES") ;; esac
    local hash
    hash=$( (echo "${FLAGS[*]} ${extra[*]} $DEPENDENCIES"; inputs_hash "${sources[@]}") | sha256sum | cut -c1-32)
    DEPENDENCIES="$DEPENDENCIES $hash"
    if [ -f "$lib" ] && [ "$(cat "$LIB/$name.hash" 2>/dev/null)" = "$name $hash" ]; then return; fi
    echo "  module $name"
    swiftc "${FLAGS[@]}" "${extra[@]}" -module-name "$name" -emit-module -emit-module-path "$LIB/$name.swiftmodule" \
        -emit-library -static -o "$lib" "${sources[@]}"
    echo "$name $hash" > "$LIB/$name.hash"
}

echo "building library modules (swiftc -sanitize=fuzzer,address)"
DEPENDENCIES=""   # the hashes of the modules built so far (each module may import the earlier ones)
for module in "${MODULES[@]}"; do
    if [ "$module" = SessionKitMLKEM ]; then build_swift_crypto; fi
    build_module "$module"
done

CORE_LIBS=(-lVerification -lSessionKit -lSessionKitAge -lSignalPrimitives -lsodium)

for harness in "${HARNESSES[@]}"; do
    src=Fuzz/Harnesses/$harness.swift
    [ -f "$src" ] || { echo "no harness $src" >&2; exit 1; }
    LIBS=("${CORE_LIBS[@]}")
    EXTRA=()
    EXTRA_SOURCES=()
    HASHES=("$LIB/SignalPrimitives.hash" "$LIB/SessionKitAge.hash" "$LIB/SessionKit.hash" "$LIB/Verification.hash")
    # The export reader is compiled in from SessionKitSQLite (its file has no GRDB code; the
    # module itself is not built here).
    if [ "$harness" = export_reader ]; then
        EXTRA_SOURCES=(Sources/SessionKitSQLite/Export/ExportFormat.swift)
    fi
    # The vector-file loader harness also needs the conformance engine, the KEM adapter,
    # swift-crypto and zlib (for C2SP/CCTV's compressed age vectors), and Foundation.
    if [ "$harness" = vector_loader ]; then
        LIBS=(-lSignalVectorKit -lSessionKitMLKEM "${LIBS[@]}" -lSwiftCryptoDeps -lstdc++ -lz)
        EXTRA=(-I "$CRYPTO_MODULES")
        HASHES+=("$LIB/SessionKitMLKEM.hash" "$LIB/SignalVectorKit.hash" "$LIB/SwiftCryptoDeps.hash")
    fi
    # The hybrid age harness links the KEM adapter and swift-crypto (not the engine).
    if [ "$harness" = age_hybrid ]; then
        LIBS=(-lSessionKitMLKEM "${LIBS[@]}" -lSwiftCryptoDeps -lstdc++)
        EXTRA=(-I "$CRYPTO_MODULES")
        HASHES+=("$LIB/SessionKitMLKEM.hash" "$LIB/SwiftCryptoDeps.hash")
    fi
    bin=$OUT/$harness
    hash=$( (echo "${FLAGS[*]} ${LIBS[*]}"; cat "${HASHES[@]}"; inputs_hash Fuzz/Support/*.swift "$src" "${EXTRA_SOURCES[@]}") | sha256sum | cut -c1-32)
    if [ -f "$bin" ] && [ "$(cat "$bin.hash" 2>/dev/null)" = "$hash" ]; then continue; fi
    echo "  harness $harness"
    swiftc "${FLAGS[@]}" "${EXTRA[@]}" "${LINK[@]}" Fuzz/Support/*.swift "$src" "${EXTRA_SOURCES[@]}" "${LIBS[@]}" -o "$bin"
    echo "$hash" > "$bin.hash"
done
echo "harnesses in $OUT/"
