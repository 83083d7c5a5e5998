#!/usr/bin/env bash
# Runs every test of thymio-rt on a bare Debian 12 machine (installs what it needs first):
# formatting, lints, the workspace tests (real peers: Debian aseba, pyaseba, pseudo-terminals),
# the ROS 2 end-to-end tests (feature `ros2`, rclpy as the independent client), the ROS 1 ones (feature `ros1`,
# Debian's rosmaster and rospy) and bounded fuzzing.
#   scripts/test.sh [--soak] [--no-ros] [--no-fuzz]
#     --soak     also run the long soak tests (about an hour)
#     --no-ros   neither install nor run the ROS 2 / ROS 1 steps (their tests are not built without the features;
#                tests/project/scripts_env.rs, built by default, needs the ROS 2 venv: on a machine without ROS add the opt-out)
# A real-peer test whose peer is missing FAILS, naming the install step. THYMIO_SKIP_MISSING_PEERS=1 (a machine
# without ROS or Aseba; refused with CI=true) skips such tests instead. Every skipped test is recorded in
# target/skipped-tests.tsv (THYMIO_SKIP_RECORD, tests/common/missing.rs) and summed up at the end ("skipped: N");
# under CI (CI set, not false/0) a skip fails the test and the run. Outside CI, a test the machine cannot run
# (network namespaces or capabilities without the privileges) is skipped and listed.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"

ros=1 fuzz=1
export THYMIO_SOAK=0
for a in "$@"; do
    case "$a" in
        --soak) export THYMIO_SOAK=1 ;;
        --no-ros) ros=0 ;;
        --no-fuzz) fuzz=0 ;;
        *) log "unknown option $a"; exit 2 ;;
    esac
done

if [ "${THYMIO_SKIP_MISSING_PEERS:-}" = 1 ] && [ -n "${CI:-}" ] && [ "${CI}" != false ] && [ "${CI}" != 0 ]; then
    log "THYMIO_SKIP_MISSING_PEERS=1 is refused with CI=${CI}: CI must run every real-peer test"
    exit 2
fi

[ "${THYMIO_SKIP_MISSING_PEERS:-}" = 1 ] &&
    log "THYMIO_SKIP_MISSING_PEERS=1: tests whose peer is missing are skipped, not failed (listed at the end)"

# Every skipped test adds a line here (tests/common/missing.rs); summary() sums them up, whatever the outcome.
export THYMIO_SKIP_RECORD="$ROOT/target/skipped-tests.tsv"
mkdir -p "$ROOT/target"
: >"$THYMIO_SKIP_RECORD"
not_run=()
# The steps' names and start times (step below), for summary()'s times.
t0=$SECONDS
step_names=() step_starts=()
# A CI run: CI set to anything but empty, 0 or false (tests/common/missing.rs `is_ci`).
ci_run() { case "$(printf '%s' "${CI:-}" | tr '[:upper:]' '[:lower:]' | tr -d '[:space:]')" in ""|0|false) return 1 ;; esac; }
# The fuzz targets' build while the end-to-end tests run (start_fuzz_build): its process group, ended at exit.
fuzz_build_pid=
summary() {
    local rc=$? n
    if [ -n "$fuzz_build_pid" ]; then kill -- "-$fuzz_build_pid" 2>/dev/null || true; fi
    n=$(grep -c . "$THYMIO_SKIP_RECORD" 2>/dev/null || true)
    n=${n:-0}
    printf '\n==== skipped: %s\n' "$n" >&2
    if [ "$n" -gt 0 ]; then
        # kind, test, reason
        awk -F'\t' '{ printf "  %-15s %s: %s\n", $1, $2, $3 }' "$THYMIO_SKIP_RECORD" >&2
    fi
    local step i
    for step in "${not_run[@]}"; do
        printf '==== step not run: %s\n' "$step" >&2
    done
    # How long each step took (the last one until now, whether it passed or not)
    if [ "${#step_names[@]}" -gt 0 ]; then
        printf '==== step times (s), %d in all:\n' "$((SECONDS - t0))" >&2
        for i in "${!step_names[@]}"; do
            local end=$SECONDS
            [ $((i + 1)) -lt "${#step_names[@]}" ] && end=${step_starts[$((i + 1))]}
            printf '  %6d  %s\n' "$((end - step_starts[i]))" "${step_names[i]}" >&2
        done
    fi
    # A test that checked nothing fails a CI run (the tests fail themselves in CI; this catches any skip left).
    if [ "$n" -gt 0 ] && ci_run; then
        printf '==== FAILED: %s tests skipped with CI=%s: a CI run must check every test\n' "$n" "$CI" >&2
        [ "$rc" -ne 0 ] || exit 1
    fi
}
trap summary EXIT
# Builds the fuzz targets (release, about a minute of both cores) in the background at the lowest priority (nice 19)
# while the end-to-end tests run: those mostly wait on their peers, and the build takes only the CPU they leave idle.
# Their dependencies are fetched first, in the foreground, so that the build holds no lock of cargo's package cache
# that a test's cargo (colcon's, the controller crate's) would wait for. The fuzzing step waits for it.
start_fuzz_build() {
    [ $fuzz -eq 1 ] || return 0
    (cd "$ROOT/fuzz" && cargo fetch -q) || log "fetching the fuzz crate's dependencies failed (the fuzzing step says why)"
    set -m # a process group of its own, for the kill above
    nice -n 19 "$ROOT/scripts/fuzz.sh" --build </dev/null >"$ROOT/target/fuzz-build.log" 2>&1 &
    fuzz_build_pid=$!
    set +m
}
[ $ros -eq 0 ] && not_run+=("ROS 2 and ROS 1 end-to-end (--no-ros)")
[ $fuzz -eq 0 ] && not_run+=("fuzzing (--no-fuzz)")

# Starts a step: says when, and keeps its start for the times summary() prints at the end.
step() {
    step_names+=("$*")
    step_starts+=("$SECONDS")
    printf '\n==== %s (at %d s)\n' "$*" "$((SECONDS - t0))" >&2
}

step "setup"
setup_args=(--test-runner)
[ $ros -eq 0 ] && setup_args+=(--no-ros)
[ $fuzz -eq 1 ] && setup_args+=(--fuzz)
"$ROOT/scripts/setup.sh" "${setup_args[@]}"
# Loopback-only DDS for everything below.
export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
export LANG=C.UTF-8 LC_ALL=C.UTF-8

step "format"
cargo fmt --all -- --check
step "lints"
if [ $ros -eq 0 ]; then
    cargo clippy --workspace --all-targets -- -D warnings
else
    # What a build without ROS compiles (its own cfg branches); every target, tests included, is linted below with
    # both front ends, and the build without ROS's tests run in their own step.
    cargo clippy --workspace --lib --bins -- -D warnings
fi

if [ $ros -eq 0 ]; then
    step "release binary"
    # The integration tests run the release binary (tests/common::thymio_rt reads THYMIO_RT_BIN), built in a
    # target directory of its own so that run.sh's ROS 2 build in target/release stays.
    cargo build --release --bin thymio-rt --target-dir "$ROOT/target/tests-release"
    step "workspace tests"
    cargo nextest run --workspace --no-run
    start_fuzz_build
    THYMIO_RT_BIN="$ROOT/target/tests-release/release/thymio-rt" cargo nextest run --workspace --no-fail-fast
    step "doc examples"
    cargo test --workspace --doc --no-fail-fast
else
    # shellcheck source=scripts/ros2-env.sh
    source "$ROOT/scripts/ros2-env.sh"
    step "lints (ros1+ros2; ros2, ros1)"
    # Every target with both front ends; the code each front end builds alone (a ROS 1 build needs no ROS 2
    # install) without the tests, which the build with both compiles and lints.
    cargo clippy --workspace --all-targets --features ros1,ros2 -- -D warnings
    cargo clippy --workspace --lib --bins --features ros2 -- -D warnings
    cargo clippy --workspace --lib --bins --features ros1 -- -D warnings
    # Every test once, in one build with both front ends (each test built and run once: the ROS 2 and ROS 1
    # end-to-end tests beside the others, which then run the binary with ROS compiled in, as users build it;
    # the ROS 1 tests pass --no-ros, the tests of both at once and the controller crate built as a user builds it
    # need both features).
    step "workspace tests with ROS 2 and ROS 1 (end to end)"
    # cargo-nextest: each test in a process of its own (a ROS 2 domain of its own: tests/common/domain.rs), the
    # tests of every binary sharing the cores (.config/nextest.toml: how many at once, what runs alone, bounds).
    cargo nextest run --workspace --features ros1,ros2 --no-run
    start_fuzz_build
    cargo nextest run --workspace --features ros1,ros2 --no-fail-fast
    step "doc examples"
    cargo test --workspace --features ros1,ros2 --doc --no-fail-fast
    # What a build without ROS does differently: the CLI's refusals of --ros1 and of ROS 2 options, its unit tests.
    step "tests of the build without ROS"
    cargo test -p thymio_rt --no-fail-fast --lib --bins --test cli
fi

if [ $fuzz -eq 1 ]; then
    step "fuzzing (bounded)"
    if [ -n "$fuzz_build_pid" ]; then
        # Started with the end-to-end tests; on failure fuzz.sh builds again and reports it.
        wait "$fuzz_build_pid" || { log "the fuzz targets' build failed:"; tail -30 "$ROOT/target/fuzz-build.log" >&2; }
        fuzz_build_pid=
    fi
    # 10 s a target in a test run (two at a time: ~25 s after the build); longer with FUZZ_SECONDS, or
    # scripts/fuzz.sh alone (20 s a target by default)
    "$ROOT/scripts/fuzz.sh" "${FUZZ_SECONDS:-10}"
fi
printf '\n==== all tests passed (at %d s)\n' "$((SECONDS - t0))" >&2
