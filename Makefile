# The two commands of the README's quick start:
#   make vectors   installs libsodium-dev and libsqlite3-dev if missing, builds signal-vectors (the debug build,
#                  which `make test` shares) and runs it over TestVectors/ (prints one line per
#                  file and a total)
#   make test      installs libsodium-dev and libsqlite3-dev (and strace) if missing, runs swift test
#   make bench     builds Benchmarks/ in release and measures the library against raw
#                  libsodium and swift-crypto; writes Benchmarks/results/latest.json
#                  (BENCH_QUICK=1 make bench: a short smoke run for CI)
#   make fuzz      runs every fuzz harness for FUZZ_SECONDS (default 30) seconds each
#   make fuzz-seeds builds every fuzz harness and runs each once over its committed seeds and the
#                  kept inputs of fixed findings (no fuzzing; the CI step): fails when a harness
#                  fails on any of them, e.g. one gone stale after a persisted format changed
#   make asan      runs the tests under AddressSanitizer with leak detection (scratch path
#                  .build-asan; toolchain suppressions in .ci/lsan-suppressions.txt)
#   make tsan      runs the tests under ThreadSanitizer (scratch path .build-tsan; the single-threaded
#                  vector, field and fixed-base suites are left to the plain and ASan runs)
#   make demo      builds Examples/ (debug): starts the example relay server on 127.0.0.1 and runs
#                  three chat clients through Examples/demo.sh (1:1, a group of three, a client
#                  offline and back, a crash before acknowledging, a restart from the database, a
#                  changed identity key with its safety numbers, a reinstalled device refused as
#                  stale by the relay's device list and re-sent to from the send log, an account
#                  export restored on a new device, an older copy of a database file put back, a
#                  file as an attachment); prints what each client received,
#                  fails if anything is missing
#   make crash     runs the process tests (SessionKitSQLiteProcessTests, sessionkit-stress): an app
#                  and its extension as two OS processes on one SQLite file, and a conversation of two
#                  processes killed with SIGKILL at random points CRASH_ITERATIONS times (default 250:
#                  500 kills, about 1.5 minutes), then checked (README, "Crash and multi-process tests");
#                  `swift test` runs a short version (10 iterations). CRASH_SEED reproduces the kill
#                  times, PROCESS_TESTS_KEEP=1 keeps the folder of ledgers and files
#   make docs      builds the DocC documentation of the seven library products (Sources/*/*.docc)
#                  with swift-docc-plugin, warnings as errors (a broken symbol link, a parameter
#                  without documentation), and fails when a public symbol has no doc comment;
#                  archives in .build/plugins/Swift-DocC/outputs/ (SESSIONKIT_DOCS=1 adds the
#                  plugin to Package.swift: apps that use the package never resolve it)

SWIFT ?= swift

.PHONY: all deps vectors test bench demo fuzz fuzz-seeds asan tsan crash docs

all: test vectors

# libsodium and (for SessionKitSQLite, through GRDB) SQLite, found with pkg-config (SwiftPM's
# systemLibrary targets CSodium and GRDBSQLite read them; on macOS SQLite comes with the SDK);
# zlib for the conformance runner's compressed C2SP/CCTV age vectors (CZlib; the SDK's on macOS);
# the `age` command (apt or Homebrew) and PyPI pyrage (pip), the two other age implementations
# AgeInteropTests exchange files with (skipped without them unless CI is set); PyPI cryptography
# for the generator's Python mlkem768x25519 peer of AgeHybridInteropTests.
# On Linux also strace, with which SyncCountTests counts the store's syncs per commit (skipped
# without it). Installs what is missing with apt-get (sudo when not root) or Homebrew; otherwise
# prints the command to run.
deps:
	@missing=""; brewing=""; \
	if pkg-config --exists libsodium 2>/dev/null; then \
		echo "libsodium $$(pkg-config --modversion libsodium) found"; \
	else \
		missing="libsodium-dev"; brewing="libsodium"; \
	fi; \
	if [ "$$(uname -s)" = Darwin ]; then \
		echo "SQLite: the macOS SDK's"; \
	elif pkg-config --exists sqlite3 2>/dev/null; then \
		echo "SQLite $$(pkg-config --modversion sqlite3) found"; \
	else \
		missing="$$missing libsqlite3-dev"; \
	fi; \
	if [ "$$(uname -s)" != Darwin ] && ! pkg-config --exists zlib 2>/dev/null; then \
		missing="$$missing zlib1g-dev"; \
	fi; \
	if ! command -v age >/dev/null 2>&1; then \
		if command -v apt-get >/dev/null 2>&1; then \
			missing="$$missing age"; \
		elif command -v brew >/dev/null 2>&1; then \
			missing="$$missing age"; brewing="$$brewing age"; \
		else \
			echo "age not found: AgeInteropTests will be skipped (and fail when CI is set)"; \
		fi; \
	fi; \
	if ! python3 -c 'import pyrage' >/dev/null 2>&1; then \
		echo "pyrage not found: installing it with pip"; \
		python3 -m pip install --quiet pyrage >/dev/null 2>&1 || python3 -m pip install --quiet --user pyrage >/dev/null 2>&1 \
			|| python3 -m pip install --quiet --break-system-packages pyrage >/dev/null 2>&1 \
			|| echo "pyrage could not be installed (pip install pyrage): AgeInteropTests will be skipped (and fail when CI is set)"; \
	fi; \
	if ! python3 -c 'import cryptography' >/dev/null 2>&1; then \
		echo "PyPI cryptography not found (AgeHybridInteropTests' Python peer): installing it with pip"; \
		python3 -m pip install --quiet cryptography >/dev/null 2>&1 || python3 -m pip install --quiet --user cryptography >/dev/null 2>&1 \
			|| python3 -m pip install --quiet --break-system-packages cryptography >/dev/null 2>&1 \
			|| echo "cryptography could not be installed (pip install cryptography): AgeHybridInteropTests will be skipped (and fail when CI is set)"; \
	fi; \
	if [ "$$(uname -s)" != Darwin ] && ! command -v strace >/dev/null 2>&1; then \
		if command -v apt-get >/dev/null 2>&1; then \
			missing="$$missing strace"; \
		else \
			echo "strace not found: SyncCountTests will be skipped"; \
		fi; \
	fi; \
	[ -n "$$missing" ] || exit 0; \
	packages=$$(echo $$missing); \
	command -v pkg-config >/dev/null 2>&1 || packages="pkg-config $$packages"; \
	if [ "$$(id -u)" = 0 ]; then sudo=""; elif command -v sudo >/dev/null 2>&1; then sudo="sudo"; else sudo="none"; fi; \
	if command -v apt-get >/dev/null 2>&1 && [ "$$sudo" != none ]; then \
		echo "not found: installing $$packages with apt-get"; \
		$$sudo apt-get update && $$sudo apt-get install -y $$packages || exit 1; \
	elif command -v brew >/dev/null 2>&1 && [ -n "$$brewing" ]; then \
		echo "not found: installing $$brewing with Homebrew"; \
		brew install $$brewing pkg-config || exit 1; \
	else \
		echo "missing: $$packages; it cannot be installed automatically here." >&2; \
		if command -v apt-get >/dev/null 2>&1; then \
			echo "Run as root:  apt-get update && apt-get install -y $$packages" >&2; \
		else \
			echo "Debian/Ubuntu, as root:  apt-get update && apt-get install -y pkg-config libsodium-dev libsqlite3-dev zlib1g-dev strace age" >&2; \
			echo "macOS (Homebrew):        brew install libsodium pkg-config" >&2; \
		fi; \
		exit 1; \
	fi; \
	if ! pkg-config --exists libsodium; then \
		echo "libsodium was installed but pkg-config still cannot find it (check PKG_CONFIG_PATH)" >&2; \
		exit 1; \
	fi; \
	if [ "$$(uname -s)" != Darwin ] && ! pkg-config --exists sqlite3; then \
		echo "libsqlite3-dev was installed but pkg-config still cannot find sqlite3 (check PKG_CONFIG_PATH)" >&2; \
		exit 1; \
	fi; \
	echo "libsodium $$(pkg-config --modversion libsodium) installed"; \
	[ "$$(uname -s)" = Darwin ] || echo "SQLite $$(pkg-config --modversion sqlite3) installed"

vectors: deps
	$(SWIFT) build --product signal-vectors
	$$($(SWIFT) build --show-bin-path)/signal-vectors verify TestVectors

test: deps
	$(SWIFT) test

bench: deps
	Benchmarks/run.sh

# The examples (Examples/README.md): a relay on Hummingbird and a command-line client on
# SessionKit and SessionKitSQLite, in their own package so that Hummingbird stays out of the
# library. The script stops the relay and the clients on every exit (DEMO_KEEP=1 keeps the
# working folder).
demo: deps
	SWIFT=$(SWIFT) Examples/demo.sh

# Fuzzing (see Fuzz/README.md): builds the libFuzzer harnesses (swiftc -sanitize=fuzzer,address)
# and runs each for FUZZ_SECONDS seconds; fails on any finding (trap, invariant violation,
# sanitizer report, timeout or out-of-memory), leaving the input in Fuzz/build/findings/.
FUZZ_SECONDS ?= 30

fuzz: deps
	FUZZ_SECONDS=$(FUZZ_SECONDS) Fuzz/run.sh

# The harnesses' own check, cheap enough for CI: builds every harness (the first build compiles
# the library modules instrumented, and swift-crypto for vector_loader and age_hybrid) and
# replays every committed input once, as it is: Fuzz/corpus/<harness>/ and
# Fuzz/regressions/<harness>/ (Fuzz/run.sh replay). A harness that fails on one of them, or has
# no seeds, fails the target, so a harness cannot go stale unnoticed when a format changes
# (update its invariants and `Fuzz/run.sh seeds <harness>`, Fuzz/README.md).
fuzz-seeds: deps
	Fuzz/run.sh replay

# The test suite under the sanitizers, each in its own scratch path. Both stop at the first
# report (ASan always does; TSan with halt_on_error=1), so any report fails the run.
# LeakSanitizer is on: at the exit of the test process and of every sessionkit-stress child
# (which closes its store and ends its tasks before exiting), any block no longer reachable
# fails the run. .ci/lsan-suppressions.txt names the few toolchain frames whose blocks are
# reported anyway (XCTest on Linux keeps its test cases in retain cycles; weak-reference side
# tables of XCTest and Foundation; a Foundation leak), each with why; never one of ours.
LSAN_SUPPRESSIONS = $(CURDIR)/.ci/lsan-suppressions.txt

# The sanitizer runs leave out the export of 100,000 archived messages (a streaming and memory
# test of one thread, 1 to 1.5 minutes under a sanitizer; the plain run keeps it).
SANITIZER_SKIPS = --skip testAHundredThousandMessagesStreamThroughInPagesAndBatches

asan: deps
	ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=$(LSAN_SUPPRESSIONS):print_suppressions=0 \
		$(SWIFT) test --sanitize=address --scratch-path .build-asan $(SANITIZER_SKIPS)

# ThreadSanitizer looks for data races: the suites that only compute on one thread (the vector
# runner over TestVectors/, field arithmetic and fixed-base scalar multiplication, together
# about a minute under TSan) and the interoperability runs of the age and pyrage commands (the
# parallel file paths they drive are covered by AgeParallelFileTests; a minute under TSan) are
# left to the plain and ASan runs.
tsan: deps
	TSAN_OPTIONS=halt_on_error=1 $(SWIFT) test --sanitize=thread --scratch-path .build-tsan \
		--skip SignalVectorKitTests --skip KeyConversionTests --skip X25519FixedBaseTests --skip AgeInteropTests \
		$(SANITIZER_SKIPS)

# Crash safety for real: SIGKILL at random points of a conversation over SQLite files, restarted
# from the files each time; and two processes on one file. Fails on any violation of the checks.
CRASH_ITERATIONS ?= 250

crash: deps
	CRASH_ITERATIONS=$(CRASH_ITERATIONS) $(SWIFT) test --filter SessionKitSQLiteProcessTests

# Documentation: one DocC archive per library product, built from the same debug build as
# `make test`. swift-docc-plugin is a dependency only while SESSIONKIT_DOCS is set (Package.swift).
# Then every public and open symbol must have a doc comment: .ci/check-doc-comments.swift reads
# the symbol graphs the plugin extracted (public API only: SPI and internal symbols are not in
# them). Preview one module with
#   SESSIONKIT_DOCS=1 swift package --disable-sandbox preview-documentation --target SessionKit
DOC_TARGETS = SignalPrimitives SessionKitAge SessionKit Verification SessionKitMLKEM SessionKitSQLite SessionKitStoreConformance

docs: deps
	SESSIONKIT_DOCS=1 $(SWIFT) package generate-documentation --warnings-as-errors \
		$(foreach target,$(DOC_TARGETS),--target $(target))
	@graphs=$$(dirname "$$(SESSIONKIT_DOCS=1 $(SWIFT) build --show-bin-path)")/extracted-symbols; \
	graphs=$$(dirname "$$(ls -d "$$graphs"/*/SessionKit | head -n 1)"); \
	$(SWIFT) .ci/check-doc-comments.swift "$$graphs" $(DOC_TARGETS)
