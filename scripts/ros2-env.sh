# Puts the project's ROS 2 Jazzy environment (installed by scripts/setup-ros2.sh) in the current shell.
# Usage: source scripts/ros2-env.sh      (bash or zsh; re-sourcing is harmless)
#  - `python` is the venv's (rclpy and the project's interface packages import with no further setup);
#  - r2r builds: ROS_DISTRO, AMENT_PREFIX_PATH, CMAKE_PREFIX_PATH, IDL_PACKAGE_FILTER;
#  - binaries linking r2r run with no LD_LIBRARY_PATH: nrt/ros2/build.rs (and the root build.rs) read
#    THYMIO_RT_ROS2_RPATH and THYMIO_RT_ROS2_PYLIB and give them a DT_RPATH and a forced libpython NEEDED entry;
#  - LD_LIBRARY_PATH gets venv/lib (ROS libraries only) for one program: r2r's build script, which cargo links
#    against the message libraries with no rpath and runs during the build;
#  - the user's ROS networking settings are left as they are (ROS_DOMAIN_ID, ROS_AUTOMATIC_DISCOVERY_RANGE,
#    ROS_STATIC_PEERS, ROS_LOCALHOST_ONLY, ROS_MASTER_URI, ROS_IP, ROS_HOSTNAME): the driver started through
#    scripts/run.sh is reachable as ROS's defaults say (other computers too); the tests and benches set loopback
#    discovery and their own domain on what they start (tests/project/scripts_env.rs checks this script).
# shellcheck shell=bash

_thymio_rt_ros2_env() {
    local here root venv py_libdir py_ver rpath d
    if [ -n "${BASH_SOURCE[0]:-}" ]; then here="${BASH_SOURCE[0]}"; else here="${(%):-%x}"; fi
    root="$(cd "$(dirname "$here")/.." && pwd)"
    venv="$root/.venv-ros"
    if [ ! -x "$venv/bin/python" ] || [ ! -f "$venv/.thymio-rt/thymio_rt_msgs" ]; then
        echo "ros2-env.sh: $venv is missing or incomplete; run scripts/setup-ros2.sh first" >&2
        return 1
    fi
    # The interpreter the venv was made from: its LIBDIR holds libpython3.11.so.
    py_libdir="$(sed -n 's/^home *= *//p' "$venv/pyvenv.cfg")/../lib"
    py_libdir="$(cd "$py_libdir" && pwd)"
    py_ver="$(sed -n 's/^version *= *\([0-9]*\.[0-9]*\).*/\1/p' "$venv/pyvenv.cfg")"
    [ -n "$py_ver" ] || py_ver="$(sed -n 's/^version_info *= *\([0-9]*\.[0-9]*\).*/\1/p' "$venv/pyvenv.cfg")"

    rpath="$venv/lib"
    for d in "$venv"/lib/python"$py_ver"/site-packages/*.libs; do
        [ -d "$d" ] && rpath="$rpath:$d"
    done
    rpath="$rpath:$py_libdir"

    export ROS_DISTRO=jazzy ROS_VERSION=2 ROS_PYTHON_VERSION=3
    export AMENT_PREFIX_PATH="$venv" CMAKE_PREFIX_PATH="$venv"
    # Every interface package a crate of this project uses (r2r adds rcl_interfaces, builtin_interfaces,
    # unique_identifier_msgs and action_msgs itself); a package missing here has no r2r::<pkg> module.
    export IDL_PACKAGE_FILTER="std_msgs;std_srvs;geometry_msgs;sensor_msgs;nav_msgs;diagnostic_msgs;tf2_msgs;asebaros_msgs;thymio_msgs;thymio_rt_msgs;builtin_interfaces;rcl_interfaces;unique_identifier_msgs;action_msgs;lifecycle_msgs"
    export THYMIO_RT_ROS2_RPATH="$rpath" THYMIO_RT_ROS2_PYLIB="$py_libdir/libpython$py_ver.so"
    case ":${LD_LIBRARY_PATH:-}:" in *":$venv/lib:"*) ;;
        *) export LD_LIBRARY_PATH="$venv/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ;; esac
    export VIRTUAL_ENV="$venv"
    case ":$PATH:" in *":$venv/bin:"*) ;; *) export PATH="$venv/bin:$PATH" ;; esac
}
_thymio_rt_ros2_env
unset -f _thymio_rt_ros2_env
