# shellcheck shell=bash
# Private apt: read other Debian suites (bullseye, trixie, bookworm-backports, ...) without
# touching the machine's own apt configuration. Sourced by tools/install-vng and
# tools/fetch-kernels, not run.
#
#   papt_init DIR SUITE...   write DIR/sources.list for SUITE... (main, deb.debian.org, signed by
#                            the Debian archive keyring) and run `apt-get update` into DIR/lists
#                            (skipped when the lists are younger than a day)
#   papt ARGS...             apt-get ARGS with the private sources and lists; e.g.
#                            `papt download PKG` (into the current folder)
#   papt_cache ARGS...       apt-cache ARGS likewise (policy, depends, show)
# Errors: papt_init returns non-zero when apt-get update fails (its output is printed).

PAPT_DIR=

papt_init() {
    PAPT_DIR=$1; shift
    local s src
    mkdir -p "$PAPT_DIR/lists/partial" "$PAPT_DIR/archives/partial"
    src=$(for s in "$@"; do
        echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $s main"
    done)
    # Rewrite and refresh only when the suite set changed or the lists are stale.
    if [ "$src" != "$(cat "$PAPT_DIR/sources.list" 2>/dev/null)" ] ||
       [ -z "$(find "$PAPT_DIR/lists" -maxdepth 1 -name '*_Packages' -mmin -1440 2>/dev/null | head -1)" ]; then
        echo "$src" >"$PAPT_DIR/sources.list"
        local log
        if ! log=$(papt update 2>&1); then
            echo "$log" >&2
            return 1
        fi
    fi
}

_papt_opts() {
    printf '%s\n' \
        -o "Dir::Etc::sourcelist=$PAPT_DIR/sources.list" \
        -o "Dir::Etc::sourceparts=/dev/null" \
        -o "Dir::State::Lists=$PAPT_DIR/lists" \
        -o "Dir::Cache=$PAPT_DIR" \
        -o "Dir::Cache::archives=$PAPT_DIR/archives" \
        -o "Dir::State::status=/var/lib/dpkg/status" \
        -o "APT::Get::List-Cleanup=false" \
        -o "APT::Sandbox::User=root"
}

papt() {
    local -a o
    mapfile -t o < <(_papt_opts)
    apt-get -q "${o[@]}" "$@"
}

papt_cache() {
    local -a o
    mapfile -t o < <(_papt_opts)
    apt-cache "${o[@]}" "$@"
}
