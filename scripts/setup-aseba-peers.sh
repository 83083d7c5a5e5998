#!/usr/bin/env bash
# Installs the official Aseba peers used by the tests, idempotently:
#  - Debian package `aseba` (asebaplayground, asebaswitch, asebamassloader, asebadump), Xvfb, socat;
#  - PyPI `pyaseba` (official Mobsya compiler and VM, cp312) in the git-ignored venv .venv-aseba.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

apt_install aseba xvfb socat locales
# The official compilers need a UTF-8 locale they can construct (en_US.UTF-8).
if ! locale -a 2>/dev/null | grep -qi '^en_US.utf8$'; then
    log "generating the en_US.UTF-8 locale"
    sudo_=""; [ "$(id -u)" -ne 0 ] && sudo_="sudo"
    $sudo_ sed -i 's/^# *en_US.UTF-8 UTF-8/en_US.UTF-8 UTF-8/' /etc/locale.gen
    $sudo_ locale-gen >/dev/null
fi

VENV="$ROOT/.venv-aseba"
if ! "$VENV/bin/python" -c 'import pyaseba' 2>/dev/null; then
    PY=$(find_python 3.12) || { log "CPython 3.12 not found (pyenv install 3.12)"; exit 1; }
    log "creating $VENV with $PY"
    "$PY" -m venv "$VENV"
    "$VENV/bin/pip" install -q --disable-pip-version-check "pyaseba==0.0.6"
fi
