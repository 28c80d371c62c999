#!/usr/bin/env bash
# Runs each libFuzzer target of a SIMPACT_BUILD_FUZZERS build for a bounded
# time over its checked-in corpus: tests/fuzz/run_fuzzers.sh BUILD_DIR [SECONDS]
# (default 20 s per target). New inputs go to a scratch directory, never into
# the checked-in corpus; a crash, a broken promise (abort), a leak, a timeout
# (> 30 s for one input) or an out-of-memory input is written to
# BUILD_DIR/fuzz-artifacts/ and makes the script fail.
set -euo pipefail
build=${1:?usage: run_fuzzers.sh BUILD_DIR [SECONDS]}
seconds=${2:-20}
here=$(cd "$(dirname "$0")" && pwd)
artifacts="$build/fuzz-artifacts"
mkdir -p "$artifacts"
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
status=0
for target in resolve scene core; do
  binary="$build/bin/simpact_fuzz_$target"
  if [ ! -x "$binary" ]; then
    echo "=== simpact_fuzz_$target: not built, skipped ==="
    continue
  fi
  scratch=$(mktemp -d)
  echo "=== simpact_fuzz_$target: ${seconds} s over corpus/$target ==="
  # -timeout: one input may take up to 30 s (the CLI's own work limits keep
  # valid documents to seconds); -rss_limit_mb: the documented size limits
  # keep memory far below 2 GB.
  if ! "$binary" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=2048 \
       -print_final_stats=1 -artifact_prefix="$artifacts/$target-" \
       "$scratch" "$here/corpus/$target" 2>&1 | grep -v '^#[0-9]*.*\(NEW\|REDUCE\|pulse\)'; then
    echo "=== simpact_fuzz_$target FAILED: see $artifacts ==="
    status=1
  fi
  rm -rf "$scratch"
done
exit $status
