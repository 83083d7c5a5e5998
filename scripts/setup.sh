#!/usr/bin/env bash
# Installs everything thymio-rt needs on a bare Debian 12 machine, idempotently:
# Debian build packages, the official Aseba peers (Debian aseba, pyaseba venv), the ROS 2 Jazzy toolchain
# (PyPI wheels venv + interface packages), the ROS 1 peers (Debian rosmaster, rospy) and, with --fuzz, cargo-fuzz;
# with --test-runner, cargo-nextest (scripts/test.sh runs the tests with it).
#   scripts/setup.sh [--no-ros] [--no-peers] [--fuzz] [--test-runner]   (--no-ros: neither ROS 2 nor ROS 1)
set -euo pipefail
source "$(dirname "$0")/lib.sh"

ros=1 peers=1 fuzz=0 runner=0
for a in "$@"; do
    case "$a" in
        --no-ros) ros=0 ;;
        --no-peers) peers=0 ;;
        --fuzz) fuzz=1 ;;
        --test-runner) runner=1 ;;
        *) log "unknown option $a"; exit 2 ;;
    esac
done

command -v cargo >/dev/null || { log "cargo not found: install Rust (https://rustup.rs)"; exit 1; }
# serialport enumerates USB ports through libudev; the benchmark plots need fontconfig and a font
apt_install pkg-config libudev-dev build-essential libfontconfig1-dev fonts-dejavu-core iproute2
[ $peers -eq 1 ] && "$ROOT/scripts/setup-aseba-peers.sh"
[ $ros -eq 1 ] && "$ROOT/scripts/setup-ros2.sh"
[ $ros -eq 1 ] && "$ROOT/scripts/setup-ros1.sh"
if [ $fuzz -eq 1 ] && ! cargo fuzz --version >/dev/null 2>&1; then
    log "installing cargo-fuzz"
    cargo install -q --locked cargo-fuzz
fi
if [ $runner -eq 1 ] && ! cargo nextest --version >/dev/null 2>&1; then
    log "installing cargo-nextest"
    cargo install -q --locked cargo-nextest
fi
exit 0
