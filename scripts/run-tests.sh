#!/usr/bin/env bash
# Runs the built tests (`swift test --skip-build`), keeping their whole output in .build/test-output.log. When the run
# fails, its last lines say why, because a CI log is often read from its tail: the tests that started and never ended
# (a crash or a hang), the failed tests, what printed an abort, and a crash's backtrace, which is limited to the
# crashed thread (no registers, no image list) so that it stays short.
set -uo pipefail
cd "$(dirname "$0")/.."
log=.build/test-output.log
mkdir -p .build
SWIFT_BACKTRACE="${SWIFT_BACKTRACE:-enable=yes,threads=crashed,registers=none,images=none}" \
    "${SWIFT:-swift}" test --skip-build 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
if [ "$status" -ne 0 ]; then
    echo
    echo "swift test failed (exit $status); the whole output is in $log. Tests started and not ended (a crash or a hang):"
    # swift-testing: `◇ Test "NAME" started.` ... `✔|━ Test "NAME" [with N test cases] passed after` / `✘ ... failed after`;
    # XCTest: `Test Case 'NAME' started.` ... `Test Case 'NAME' passed (` / `failed (`.
    awk '
        /^◇ Test .* started\.$/ && !/^◇ Test (case|run) / { name = substr($0, index($0, "Test ")); sub(/ started\.$/, "", name); open[name] = NR }
        /^(✔|✘|━) Test .* (passed|failed) after / { name = substr($0, index($0, "Test ")); sub(/ (passed|failed) after .*/, "", name); sub(/ with [0-9]+ test cases?$/, "", name); delete open[name] }
        /^Test Case .* started\.$/          { name = $0; sub(/ started\.$/, "", name); open[name] = NR }
        /^Test Case .* (passed|failed) \(/  { name = $0; sub(/ (passed|failed) \(.*/, "", name); delete open[name] }
        END { for (name in open) print "  " name }
    ' "$log" | sort
    echo "Tests that failed:"
    grep -E "^✘ Test .* failed after|^Test Case .* failed \(" "$log" | cut -c1-300
    # What printed the abort: Swift's runtime and libmicrohttpd ("Fatal error"), glibc's heap checks, a C assert.
    grep -n -E "Fatal error|Program crashed|free\(\)|double free|corrupted|malloc\(\)|Assertion .* failed|\*\*\* .* \*\*\*: terminated" "$log" | head -8
    grep -n -A 40 "crashed:$" "$log" | head -60
fi
exit "$status"
