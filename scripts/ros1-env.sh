# Puts thymio-rt's ROS 1 package (launch/ros1: package.xml, the launch files, the `thymio-rt` roslaunch runs) on
# ROS_PACKAGE_PATH in the current shell, so that `roslaunch thymio_rt main.launch ...` finds it (Debian's roslaunch,
# installed by scripts/setup-ros1.sh). Re-sourcing is harmless.
# Usage: source scripts/ros1-env.sh
# shellcheck shell=bash
_thymio_rt_ros1_env() {
    local here pkg
    if [ -n "${BASH_SOURCE[0]:-}" ]; then here="${BASH_SOURCE[0]}"; else here="${(%):-%x}"; fi
    pkg="$(cd "$(dirname "$here")/../launch/ros1" && pwd)" || return 1
    case ":${ROS_PACKAGE_PATH:-}:" in
        *":$pkg:"*) ;;
        *) export ROS_PACKAGE_PATH="$pkg${ROS_PACKAGE_PATH:+:$ROS_PACKAGE_PATH}" ;;
    esac
    if [ -z "${THYMIO_RT_BIN:-}" ] && [ ! -x "$pkg/../../target/release/thymio-rt" ] \
        && ! command -v thymio-rt >/dev/null 2>&1; then
        echo "ros1-env.sh: build the driver first: cargo build --release --features ros1" >&2
    fi
}
_thymio_rt_ros1_env
unset -f _thymio_rt_ros1_env
