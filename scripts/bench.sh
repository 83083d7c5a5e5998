#!/usr/bin/env bash
# Runs the benchmarks (cargo bench) with everything they need: the ROS 2 toolchain, the driver built with the
# ros2 feature (and ros1: the ROS 1 row, with Debian's rosmaster and rospy), the Python driver; the end-to-end
# section also needs Aseba Playground (Debian aseba, scripts/setup-aseba-peers.sh) and is skipped, saying so,
# without it. Results in target/bench-results/; the report
# docs/performance.md from them with scripts/bench-table.py. THYMIO_BENCH_QUICK=1 for the short version (the end-to-end section
# alone: `THYMIO_BENCH_QUICK=1 scripts/bench.sh --bench latency -- e2e`, about 5 to 7 minutes);
# THYMIO_BENCH_E2E_ROWS=thymio-rt,thymio-rt-record runs only the end-to-end rows it names.
# THYMIO_BENCH_DRIVER=<a thymio-rt binary built with ros2,ros1> measures that build instead (before/after comparisons);
# the idle rows alone: scripts/bench.sh --bench latency -- idle.
#   scripts/bench.sh [cargo bench arguments, e.g. --bench latency -- loop]
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
"$ROOT/scripts/setup.sh" --no-peers
# shellcheck source=scripts/ros2-env.sh
source "$ROOT/scripts/ros2-env.sh"
# Loopback-only DDS for what the benches start (ros2-env.sh keeps the user's setting; the harnesses also set it
# and their own ROS_DOMAIN_ID on every ROS process they spawn).
export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
# The features of scripts/run.sh, and ros1 for the ROS 1 row: cargo bench builds the package's binary into
# target/release too, and a build without ros2 would replace the driver run.sh built with one that has no ROS 2
# bridge.
cargo bench --features ros2,ros1 "$@"
# The RT crate's own criterion benches (one RT cycle, odometry, the rings: the table's "RT cycle" rows) belong
# to the rt package: a plain run measures them too.
if [ "$#" -eq 0 ]; then
    cargo bench -p rt
fi
