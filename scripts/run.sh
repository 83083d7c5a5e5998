#!/usr/bin/env bash
# Runs the driver on a bare Debian 12 machine (installs what it needs first): the ROS 2 bridge on, the embedded
# simulated Thymio-II unless a target is given. Arguments go to `thymio-rt run`, e.g.
#   scripts/run.sh                                   # embedded simulated Thymio-II
#   scripts/run.sh --target ser:name=Thymio-II       # a Thymio on USB
#   scripts/run.sh --target "tcp:host=127.0.0.1;port=33333" --switch-port 44444
#   scripts/run.sh -- --ros-args -p cmd_vel_timeout:=1.0
# Stop it with Ctrl-C: the robots are sent zero speed before it exits.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
"$ROOT/scripts/setup.sh" --no-peers
# shellcheck source=scripts/ros2-env.sh
source "$ROOT/scripts/ros2-env.sh"
cargo build --release --features ros2 --bin thymio-rt
exec "$ROOT/target/release/thymio-rt" run --config "$ROOT/config/thymio-rt.yaml" "$@"
