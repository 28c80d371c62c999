#!/usr/bin/env bash
# Runs each libFuzzer target of a SIMPACT_BUILD_FUZZERS build for a bounded
# time over its checked-in corpus:
#   tests/fuzz/run_fuzzers.sh BUILD_DIR [SECONDS] [JOBS]
# (default 20 s per target, JOBS targets at a time, default the number of
# cores: each target is one process on one core, so on two cores three
# targets take 40 s instead of 60 with the same fuzzing time each). New
# inputs go to a scratch directory, never into the checked-in corpus; a
# crash, a broken promise (abort), a leak, a timeout (> 30 s for one input)
# or an out-of-memory input is written to BUILD_DIR/fuzz-artifacts/ and
# makes the script fail. The targets' outputs are printed whole, in order,
# once all of them have finished.
set -euo pipefail
build=${1:?usage: run_fuzzers.sh BUILD_DIR [SECONDS] [JOBS]}
seconds=${2:-20}
jobs=${3:-$(nproc)}
here=$(cd "$(dirname "$0")" && pwd)
artifacts="$build/fuzz-artifacts"
mkdir -p "$artifacts"
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
logs=$(mktemp -d)
# Interrupted, the script stops its fuzzers too.
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$logs"' EXIT

# One target: its log in $logs/TARGET.log, its verdict in $logs/TARGET.status.
fuzz_one() {
  local target=$1 binary="$build/bin/simpact_fuzz_$1" scratch
  scratch=$(mktemp -d)
  echo "=== simpact_fuzz_$target: ${seconds} s over corpus/$target ==="
  # -timeout: one input may take up to 30 s (the CLI's own work limits keep
  # valid documents to seconds); -rss_limit_mb: the documented size limits
  # keep memory far below 2 GB.
  if "$binary" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=2048 \
       -print_final_stats=1 -artifact_prefix="$artifacts/$target-" \
       "$scratch" "$here/corpus/$target" 2>&1 | grep -v '^#[0-9]*.*\(NEW\|REDUCE\|pulse\)'; then
    echo 0 > "$logs/$target.status"
  else
    echo "=== simpact_fuzz_$target FAILED: see $artifacts ==="
    echo 1 > "$logs/$target.status"
  fi
  rm -rf "$scratch"
}

targets=()
for target in resolve scene core; do
  if [ -x "$build/bin/simpact_fuzz_$target" ]; then
    targets+=("$target")
  else
    echo "=== simpact_fuzz_$target: not built, skipped ==="
  fi
done
running=0
for target in "${targets[@]}"; do
  if ((running >= jobs)); then
    wait -n || true
    running=$((running - 1))
  fi
  fuzz_one "$target" > "$logs/$target.log" 2>&1 &
  running=$((running + 1))
done
wait || true

status=0
for target in "${targets[@]}"; do
  cat "$logs/$target.log"
  [ "$(cat "$logs/$target.status" 2>/dev/null)" = 0 ] || status=1
done
exit $status
