#!/usr/bin/env bash
# Builds the libFuzzer targets in Fuzz/Targets/ and runs each for SECONDS seconds.
#
#   Fuzz/run.sh SECONDS [target...]     # default: every Fuzz/Targets/*.swift, one after the other
#   Fuzz/run.sh --build-only [target...]
#
# Build: plain swiftc, no SwiftPM (the package gains no fuzz products and the shared .build is untouched).
# SesameCrypto and WebAuthn are compiled from Sources/ as static libraries with -sanitize=fuzzer,address, so
# they carry both AddressSanitizer checks and libFuzzer's coverage instrumentation (and -enable-testing, for
# targets that `@testable import WebAuthn`); each target file is then
# linked against them (and libcrypto through the COpenSSL module map). Everything lives in Fuzz/out/
# (gitignored); a build step is skipped when its inputs (sources, flags, compiler version) are unchanged.
#
# Run: working corpus Fuzz/out/corpus/<target> (new inputs go there; seeded from Fuzz/Corpus/<target> the first
# time) plus the committed seeds Fuzz/Corpus/<target> as a second, read-only corpus directory. Crash inputs are
# written to Fuzz/out/artifacts/<target>/, the full libFuzzer log to Fuzz/out/logs/<target>.log.
# Exit status: 0 when no target crashed, 1 when any did, 2 for a usage or build error.
set -euo pipefail

usage() { echo "usage: $0 SECONDS|--build-only [target...]" >&2; exit 2; }
[[ $# -ge 1 ]] || usage
SECONDS_EACH=$1; shift
if [[ $SECONDS_EACH != --build-only && ! $SECONDS_EACH =~ ^[0-9]+$ ]]; then usage; fi

FUZZ_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$FUZZ_DIR")
OUT=$FUZZ_DIR/out
BUILD=$OUT/build
BIN=$OUT/bin
SWIFTC=${SWIFTC:-swiftc}

if [[ $# -gt 0 ]]; then
    TARGETS=("$@")
else
    TARGETS=()
    for f in "$FUZZ_DIR"/Targets/*.swift; do TARGETS+=("$(basename "$f" .swift)"); done
fi
for t in "${TARGETS[@]}"; do
    [[ -f $FUZZ_DIR/Targets/$t.swift ]] || { echo "run.sh: no target Fuzz/Targets/$t.swift" >&2; exit 2; }
done

mkdir -p "$BUILD" "$BIN"

# -O keeps Swift's own run-time checks (bounds, overflow, force-unwrap, precondition) and is fast enough to
# fuzz; -g gives file:line in stack traces. Language settings match Package.swift.
SWIFT_FLAGS=(-parse-as-library -O -g -swift-version 6
    -enable-upcoming-feature ExistentialAny -enable-upcoming-feature MemberImportVisibility
    -sanitize=fuzzer,address
    -module-cache-path "$BUILD/module-cache"
    -I "$ROOT/Sources/COpenSSL" -I "$BUILD")
# The libraries only: -enable-testing lets a target `@testable import WebAuthn` to reach an internal parser directly
# (tpm, androidkey, safetynet) instead of through a ceremony that first needs a valid signature.
LIBRARY_FLAGS=(-enable-testing)
# Link flags for libcrypto when pkg-config knows a non-default location (the module map links "crypto").
LINK_FLAGS=()
for flag in $(pkg-config --libs-only-L openssl 2>/dev/null || true); do LINK_FLAGS+=("$flag"); done

stamp_of() {  # hash of the compiler version, flags and the given files
    { "$SWIFTC" --version 2>&1; echo "${SWIFT_FLAGS[*]} ${LIBRARY_FLAGS[*]} ${LINK_FLAGS[*]}"; cat "$@"; } | sha256sum | cut -d' ' -f1
}

build_library() {  # build_library MODULE SOURCE_DIR [extra stamp inputs...]; sets LIB_STAMP
    local module=$1 dir=$2; shift 2
    local sources=()
    mapfile -t sources < <(find "$ROOT/$dir" -name '*.swift' | LC_ALL=C sort)
    local stamp; stamp=$(stamp_of "${sources[@]}" "$@")
    if [[ -f $BUILD/lib$module.a && -f $BUILD/$module.stamp && $(cat "$BUILD/$module.stamp") == "$stamp" ]]; then
        echo "build: $module up to date"
    else
        echo "build: $module (${#sources[@]} files)"
        rm -f "$BUILD/$module.stamp"
        "$SWIFTC" "${SWIFT_FLAGS[@]}" "${LIBRARY_FLAGS[@]}" -wmo -module-name "$module" -emit-library -static \
            -emit-module -emit-module-path "$BUILD/$module.swiftmodule" \
            -o "$BUILD/lib$module.a" "${sources[@]}" || { echo "run.sh: building $module failed" >&2; exit 2; }
        echo "$stamp" > "$BUILD/$module.stamp"
    fi
    LIB_STAMP=$stamp
}

build_start=$(date +%s)
build_library SesameCrypto Sources/SesameCrypto "$ROOT/Sources/COpenSSL/module.modulemap" "$ROOT/Sources/COpenSSL/shim.h"
crypto_stamp=$LIB_STAMP
build_library WebAuthn Sources/WebAuthn "$BUILD/SesameCrypto.stamp"
webauthn_stamp=$LIB_STAMP

for t in "${TARGETS[@]}"; do
    src=$FUZZ_DIR/Targets/$t.swift
    stamp=$( { echo "$crypto_stamp $webauthn_stamp"; stamp_of "$src"; } | sha256sum | cut -d' ' -f1)
    if [[ -x $BIN/$t && -f $BUILD/$t.stamp && $(cat "$BUILD/$t.stamp") == "$stamp" ]]; then
        echo "build: target $t up to date"
        continue
    fi
    echo "build: target $t"
    rm -f "$BUILD/$t.stamp"
    # The gold linker warns "Cannot export local symbol '__asan_...'" for every instrumented global; harmless.
    "$SWIFTC" "${SWIFT_FLAGS[@]}" -module-name "fuzz_$t" "$src" -o "$BIN/$t" \
        -L "$BUILD" -lWebAuthn -lSesameCrypto "${LINK_FLAGS[@]}" -lcrypto \
        2> >(grep -v "Cannot export local symbol '__asan_" >&2) || { echo "run.sh: building target $t failed" >&2; exit 2; }
    echo "$stamp" > "$BUILD/$t.stamp"
done
echo "build: done in $(( $(date +%s) - build_start )) s"
[[ $SECONDS_EACH == --build-only ]] && exit 0

# Crashes: Swift's own backtracer would compete with libFuzzer's signal handlers; let libFuzzer report.
export SWIFT_BACKTRACE=enable=no
# malloc_context_size=8: ASan keeps every distinct allocation stack forever; the recursive CBOR decoder makes
# endlessly many distinct 30-frame stacks, so with the default RSS grew ~0.5 KB per input (1 GB in 150 s) and
# long runs would hit -rss_limit_mb. Eight frames keep RSS flat (~550 MB) and still name the allocating code.
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:symbolize=1:malloc_context_size=8}
if [[ -z ${ASAN_SYMBOLIZER_PATH:-} ]]; then
    for s in "$(dirname "$(command -v "$SWIFTC")")/llvm-symbolizer" "$(command -v llvm-symbolizer || true)"; do
        if [[ -x $s ]]; then export ASAN_SYMBOLIZER_PATH=$s; break; fi
    done
fi

failed=()
summaries=()
for t in "${TARGETS[@]}"; do
    corpus=$OUT/corpus/$t seeds=$FUZZ_DIR/Corpus/$t artifacts=$OUT/artifacts/$t log=$OUT/logs/$t.log
    mkdir -p "$artifacts" "$OUT/logs" "$seeds"
    if [[ ! -d $corpus ]]; then mkdir -p "$corpus"; cp -n "$seeds"/* "$corpus"/ 2>/dev/null || true; fi
    echo "fuzz: $t for $SECONDS_EACH s (log $log)"
    start=$(date +%s)
    status=0
    "$BIN/$t" "$corpus" "$seeds" \
        -max_total_time="$SECONDS_EACH" -max_len=16384 -rss_limit_mb=2048 -timeout=25 \
        -print_final_stats=1 -artifact_prefix="$artifacts/" > "$log" 2>&1 || status=$?
    elapsed=$(( $(date +%s) - start ))

    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -1)
    if [[ -n ${execs:-} && ( -z ${rate:-} || ${rate:-0} -eq 0 ) && $elapsed -gt 0 ]]; then rate=$(( execs / elapsed )); fi
    last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
    cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
    ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
    corp=$(sed -n 's/.* corp: \([0-9]*\/[0-9]*[a-zA-Z]*\).*/\1/p' <<<"$last")
    if [[ $status -eq 0 ]]; then verdict=OK; else verdict="CRASH(exit $status)"; failed+=("$t"); fi
    line=$(printf '%-12s %-14s execs=%s exec/s=%s cov=%s ft=%s corpus=%s rss=%sMB time=%ss' \
        "$t" "$verdict" "${execs:-?}" "${rate:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}" "${rss:-?}" "$elapsed")
    summaries+=("$line")
    echo "$line"
    if [[ $status -ne 0 ]]; then
        echo "---- $t: end of $log ----"
        grep -E 'ERROR|Fatal error|SUMMARY|Test unit written|artifact_prefix|Base64' "$log" | head -20 || true
        tail -40 "$log"
        echo "---- reproduce: $BIN/$t <crash file from $artifacts/> ----"
    fi
done

echo "==== fuzz summary (${SECONDS_EACH} s per target) ===="
printf '%s\n' "${summaries[@]}"
if [[ ${#failed[@]} -gt 0 ]]; then
    echo "FAILED: ${failed[*]}"
    exit 1
fi
echo "all targets ran without a crash"
