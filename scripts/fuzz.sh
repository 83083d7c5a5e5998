#!/usr/bin/env bash
# Runs every cargo-fuzz target for a bounded time (default 20 s each; FUZZ_SECONDS to change).
# Crashers are left in fuzz/artifacts/<target>/ and make the script fail; record them as regression tests.
#   scripts/fuzz.sh [SECONDS] [TARGET...]
#   scripts/fuzz.sh --build     (only builds every target, as a run would: scripts/test.sh builds them while the
#                                end-to-end tests run)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT/fuzz"
# cargo-fuzz needs nightly flags; the stable toolchain accepts them with RUSTC_BOOTSTRAP.
export RUSTC_BOOTSTRAP=1
if [ "${1:-}" = --build ]; then
    exec cargo fuzz build -O
fi
secs="${1:-${FUZZ_SECONDS:-20}}"
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && mapfile -t targets < <(cargo fuzz list)
if [ $# -eq 0 ]; then
    cargo fuzz build -O >/dev/null # every target in one cargo run (built side by side)
else
    for t in "${targets[@]}"; do cargo fuzz build -O "$t" >/dev/null; done
fi
# One target per core at a time (each fuzzes for SECONDS on one core: the same work in less time).
cores=$(nproc 2>/dev/null || echo 1)
fuzz_one() {
    local t=$1
    mkdir -p "corpus/$t" "artifacts/$t"
    cargo fuzz run -O "$t" "corpus/$t" -- -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 2>&1 | grep -E '^(stat::number_of_executed_units|==|SUMMARY|INFO: Running)' |
        sed "s/^/[$t] /" || true
}
for t in "${targets[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$cores" ]; do wait -n || true; done
    log "fuzzing $t for ${secs}s"
    fuzz_one "$t" &
done
wait
failed=0
for t in "${targets[@]}"; do
    if [ -n "$(find "artifacts/$t" -type f \( -name 'crash-*' -o -name 'timeout-*' -o -name 'oom-*' \))" ]; then
        log "fuzz target $t found failing inputs in fuzz/artifacts/$t (record them as regression tests)"
        failed=1
    fi
done
exit $failed
