# Shared helpers for the setup scripts (sourced, not run).
# ROOT is the project root; every install is idempotent and quiet when already done.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export ROOT

log() { printf '[setup] %s\n' "$*" >&2; }

# apt_install PKG...: installs the Debian packages that are missing (one apt-get call).
apt_install() {
    local missing=()
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    log "apt: installing ${missing[*]}"
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    if ! $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null; then
        $sudo apt-get update -qq >/dev/null
        $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    fi
}

# find_python VERSION: prints the path of a CPython VERSION (e.g. 3.12) interpreter, pyenv first.
find_python() {
    local v="$1" p
    for p in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$v".*/bin/python"$v" "$(command -v python"$v" 2>/dev/null)"; do
        [ -x "$p" ] && { echo "$p"; return 0; }
    done
    return 1
}
