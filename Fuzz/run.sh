#!/usr/bin/env bash
# Runs the libFuzzer harnesses; exits non-zero on any finding.
#
#   Fuzz/run.sh [harness...]          fuzz each harness for FUZZ_SECONDS seconds (default 30)
#   Fuzz/run.sh seeds [harness...]    regenerate the committed seed corpora Fuzz/corpus/<harness>/
#   Fuzz/run.sh list                  print the harness names
#   Fuzz/run.sh regressions [harness...]   replay the kept inputs of reported findings
#                                     (Fuzz/regressions/<harness>/); exits non-zero while any
#                                     still reproduces
#   Fuzz/run.sh replay [harness...]   run each harness once over every committed input of it:
#                                     its seeds (Fuzz/corpus/<harness>/) and the kept inputs of
#                                     fixed findings (Fuzz/regressions/<harness>/); no fuzzing.
#                                     Exits non-zero when a harness fails on any of them, or has
#                                     no seeds (`make fuzz-seeds`, the CI step)
#
# Each harness starts from its committed seeds (Fuzz/corpus/<harness>/, read only) and a
# working corpus in Fuzz/build/corpus/<harness>/ that persists between runs (git-ignored).
# A finding (a trap, an invariant violation, an ASan report, a leak, a timeout or an
# out-of-memory) leaves its input in Fuzz/build/findings/<harness>/ and fails the run.
# Logs go to Fuzz/build/logs/<harness>.<time>.<pid>.log, and one line per run is appended to
# Fuzz/build/stats.tsv:
#   date  harness  seconds  executions  coverage(edges)  features  corpus  status
set -uo pipefail
cd "$(dirname "$0")/.."

FUZZ_SECONDS=${FUZZ_SECONDS:-30}
# Swift's crash backtracer would wait for a debugger-style attach on a trap; libFuzzer
# reports the crash itself.
export SWIFT_BACKTRACE=enable=no
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:handle_abort=1}

harness_names() {
    for file in Fuzz/Harnesses/*.swift; do
        basename "$file" .swift
    done
}

command=${1:-fuzz}
case "$command" in
    list) harness_names; exit 0 ;;
    seeds) shift ;;
    regressions) shift ;;
    replay) shift ;;
    fuzz) shift ;;
    *) command=fuzz ;;
esac

if [ $# -gt 0 ]; then HARNESSES=("$@"); else mapfile -t HARNESSES < <(harness_names); fi
if [ "$command" = regressions ] && [ $# -eq 0 ]; then
    HARNESSES=()
    for directory in Fuzz/regressions/*/; do [ -d "$directory" ] && HARNESSES+=("$(basename "$directory")"); done
    [ ${#HARNESSES[@]} -gt 0 ] || { echo "no regression inputs"; exit 0; }
fi

Fuzz/build.sh "${HARNESSES[@]}" || { echo "fuzz: build failed" >&2; exit 1; }

if [ "$command" = seeds ]; then
    for harness in "${HARNESSES[@]}"; do
        rm -rf "Fuzz/corpus/$harness"
        mkdir -p "Fuzz/corpus/$harness"
        FUZZ_EMIT_SEEDS="Fuzz/corpus/$harness" "Fuzz/build/$harness" >/dev/null 2>&1 \
            || { echo "seeds: $harness failed" >&2; exit 1; }
    done
    python3 Fuzz/seeds_from_vectors.py "${HARNESSES[@]}"
    exit 0
fi

if [ "$command" = regressions ]; then
    reproduced=0
    for harness in "${HARNESSES[@]}"; do
        for input in Fuzz/regressions/"$harness"/*; do
            [ -f "$input" ] || continue
            if "Fuzz/build/$harness" "$input" >"Fuzz/build/regression.log" 2>&1; then
                echo "fixed       $input"
            else
                echo "REPRODUCES  $input: $(grep -a -m1 -E 'FUZZ INVARIANT|ERROR: |runtime error|Fatal error' Fuzz/build/regression.log)"
                reproduced=$((reproduced + 1))
            fi
        done
    done
    [ $reproduced -eq 0 ] || exit 1
    exit 0
fi

# Each harness is given its inputs as files: libFuzzer then runs every one exactly once, as it
# is (no mutation, no length limit), and stops at the first that fails, naming it ("Running:").
# Every input must have been executed (libFuzzer's "Executed" line per file).
if [ "$command" = replay ]; then
    elapsed() { awk -v now="$(date +%s.%N)" -v start="$1" 'BEGIN { printf "%.1f", now - start }'; }
    mkdir -p Fuzz/build/logs
    failed=()
    total_inputs=0
    started_all=$(date +%s.%N)
    printf '%-26s %7s %8s  %s\n' harness inputs seconds status
    for harness in "${HARNESSES[@]}"; do
        inputs=()
        for input in Fuzz/corpus/"$harness"/* Fuzz/regressions/"$harness"/*; do
            [ -f "$input" ] && inputs+=("$input")
        done
        log=Fuzz/build/logs/$harness.replay.log
        started=$(date +%s.%N)
        if [ ${#inputs[@]} -eq 0 ]; then
            status="FAILED: no seeds in Fuzz/corpus/$harness/ (Fuzz/run.sh seeds $harness)"
        else
            "Fuzz/build/$harness" -timeout=20 -rss_limit_mb=2560 "${inputs[@]}" >"$log" 2>&1
            rc=$?
            executed=$(grep -ac '^Executed ' "$log")
            if [ $rc -ne 0 ]; then
                status="FAILED (exit $rc) on $(grep -a '^Running: ' "$log" | tail -1 | cut -c10-): $(grep -a -m1 -E 'FUZZ INVARIANT|ERROR: |runtime error|Fatal error' "$log") (log $log)"
            elif [ "$executed" -ne ${#inputs[@]} ]; then
                status="FAILED: $executed of ${#inputs[@]} inputs executed (log $log)"
            else
                status=ok
            fi
        fi
        [ "$status" = ok ] || failed+=("$harness")
        total_inputs=$((total_inputs + ${#inputs[@]}))
        printf '%-26s %7s %8s  %s\n' "$harness" "${#inputs[@]}" "$(elapsed "$started")" "$status"
    done
    seconds=$(elapsed "$started_all")
    if [ ${#failed[@]} -gt 0 ]; then
        echo "fuzz replay: ${#failed[@]} harness(es) failed on committed inputs: ${failed[*]}" >&2
        exit 1
    fi
    printf 'fuzz replay: every committed input passes (%d harnesses, %d inputs, %s s after the build)\n' \
        "${#HARNESSES[@]}" "$total_inputs" "$seconds"
    exit 0
fi

mkdir -p Fuzz/build/logs
failed=()
printf '%-26s %8s %12s %8s %8s %8s  %s\n' harness seconds executions cov ft corpus status
for harness in "${HARNESSES[@]}"; do
    work=Fuzz/build/corpus/$harness
    findings=Fuzz/build/findings/$harness
    log=Fuzz/build/logs/$harness.$(date -u +%Y%m%dT%H%M%S).$$.log
    mkdir -p "$work" "$findings" "Fuzz/corpus/$harness"
    "Fuzz/build/$harness" -max_total_time="$FUZZ_SECONDS" -timeout=20 -rss_limit_mb=2560 \
        -print_final_stats=1 -artifact_prefix="$findings/" \
        "$work" "Fuzz/corpus/$harness" >"$log" 2>&1
    rc=$?
    executions=$(grep -ao 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
    seconds=$(grep -ao 'Done [0-9]* runs in [0-9]* second' "$log" | awk '{print $5}' | tail -1)
    last=$(grep -aE '^#[0-9]+' "$log" | tail -1)
    cov=$(echo "$last" | grep -o 'cov: [0-9]*' | grep -o '[0-9]*')
    ft=$(echo "$last" | grep -o 'ft: [0-9]*' | grep -o '[0-9]*')
    corp=$(echo "$last" | grep -o 'corp: [0-9]*' | grep -o '[0-9]*')
    if [ $rc -eq 0 ]; then status=ok; else status="FINDING (exit $rc, see $log)"; failed+=("$harness"); fi
    printf '%-26s %8s %12s %8s %8s %8s  %s\n' "$harness" "${seconds:-?}" "${executions:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}" "$status"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$harness" "${seconds:-0}" "${executions:-0}" \
        "${cov:-0}" "${ft:-0}" "${corp:-0}" "$status" >> Fuzz/build/stats.tsv
done

if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz: findings in ${failed[*]}" >&2
    exit 1
fi
echo "fuzz: no findings (${#HARNESSES[@]} harnesses, ${FUZZ_SECONDS}s each)"
