#!/usr/bin/env bash
# Runs the tests of the RT/NRT handoff (handoff rings, latest values, live parameters; rt's ROS-from-RT
# primitives and the RT loop) under ThreadSanitizer. Needs a nightly toolchain with rust-src
# (`rustup toolchain install nightly --component rust-src`): std is rebuilt instrumented.
# Not part of scripts/test.sh, whose machines have the stable toolchain only.
#   scripts/tsan.sh [extra cargo test args]
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
if ! rustup +nightly component list --installed 2>/dev/null | grep -q '^rust-src'; then
    log "ThreadSanitizer needs nightly Rust with rust-src: rustup toolchain install nightly --component rust-src"
    exit 2
fi
target="$(rustc -vV | sed -n 's/^host: //p')"
export RUSTFLAGS="-Zsanitizer=thread" RUSTDOCFLAGS="-Zsanitizer=thread"
export CARGO_TARGET_DIR="$ROOT/target/tsan"
# A report makes the test process exit non-zero.
export TSAN_OPTIONS="halt_on_error=1"
exec cargo +nightly test -Zbuild-std --target "$target" -p handoff -p rt --lib "$@"
