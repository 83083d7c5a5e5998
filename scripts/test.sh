#!/usr/bin/env bash
# Runs every test of thymio-rt on a bare Debian 12 machine (installs what it needs first):
# formatting, lints, the workspace tests (real peers: Debian aseba, pyaseba, pseudo-terminals),
# the ROS 2 end-to-end tests (feature `ros2`, rclpy as the independent client), the ROS 1 ones (feature `ros1`,
# Debian's rosmaster and rospy) and bounded fuzzing.
#   scripts/test.sh [--soak] [--no-ros] [--no-fuzz]
#     --soak     also run the long soak tests (about an hour)
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

setup_args=()
[ $ros -eq 0 ] && setup_args+=(--no-ros)
[ $fuzz -eq 1 ] && setup_args+=(--fuzz)
"$ROOT/scripts/setup.sh" "${setup_args[@]}"

step() { printf '\n==== %s\n' "$*" >&2; }
# Loopback-only DDS for everything below.
export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
export LANG=C.UTF-8 LC_ALL=C.UTF-8

step "format"
cargo fmt --all -- --check
step "lints"
cargo clippy --workspace --all-targets -- -D warnings
step "release binary"
# The integration tests run the binary users run (tests/common::thymio_rt reads THYMIO_RT_BIN),
# built in a target directory of its own so that run.sh's ROS 2 build in target/release stays.
cargo build --release --bin thymio-rt --target-dir "$ROOT/target/tests-release"
step "workspace tests"
THYMIO_RT_BIN="$ROOT/target/tests-release/release/thymio-rt" cargo test --workspace --no-fail-fast

if [ $ros -eq 1 ]; then
    # shellcheck source=scripts/ros2-env.sh
    source "$ROOT/scripts/ros2-env.sh"
    step "lints (ros2)"
    cargo clippy --workspace --all-targets --features ros2 -- -D warnings
    step "ROS 2 end-to-end tests"
    cargo test --workspace --features ros2 --no-fail-fast -- --test-threads=2
    step "lints (ros1, ros1+ros2)"
    cargo clippy --workspace --all-targets --features ros1 -- -D warnings
    cargo clippy --workspace --all-targets --features ros1,ros2 -- -D warnings
    step "ROS 1 end-to-end tests"
    cargo test --features ros1 -p nrt-ros1 -p thymio_rt --no-fail-fast --test 'ros1_*' --lib -- --test-threads=2
    cargo test --features ros1,ros2 --no-fail-fast --test ros1_with_ros2
fi

if [ $fuzz -eq 1 ]; then
    step "fuzzing (bounded)"
    "$ROOT/scripts/fuzz.sh" "${FUZZ_SECONDS:-20}"
fi
step "all tests passed"
