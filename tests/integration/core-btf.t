#!/usr/bin/env bash
# The CO-RE BTF cache (IOLAYER_CACHE_DIR): made at the first start on a kernel, used after,
# made again when damaged, off when empty; the same exact answer with and without it. And the
# programs' load: verified on worker threads beside libbpf's load of stand-ins (the cases
# above: a stand-in left in place counts nothing), or one after another
# (IOLAYER_SERIAL_LOAD), with the same answer.
source "$(dirname "$0")/lib.sh"
require_root
plan 23

make_loop cb 16M
BL=$(tool biolatency)
cache=$TMPD/cache

# write requests of the loop device in biolatency -D -F --json output
writes_of() {
	jq -s --arg d "$LOOPNAME" '[.[] | .histograms? // [] | .[] | select(.disk == $d and .op == "write") | .total] | add // 0' "$1"
}
# N direct 4 KiB writes to the loop device under biolatency; prints the requests counted
run_writes() { # N OUT ERR [ENV...]
	local n=$1 out=$2 err=$3; shift 3
	env "$@" $BL -v ${MORE_V:-} -D -F --json -d "$LOOPNAME" >"$out" 2>"$err" & # MORE_V=-v: -vv
	local pid=$!
	wait_for 10 grep -q 'Hit Ctrl-C' "$err" || { kill -INT $pid; wait $pid; echo none; return; }
	dd if=/dev/zero of="$LOOPDEV" oflag=direct bs=4k count="$n" status=none
	kill -INT $pid; wait $pid
	echo "$?:$(writes_of "$out")"
}

# 1. first start: the file is made, private, and the run counts every request
got=$(run_writes 200 "$TMPD/1.out" "$TMPD/1.err" IOLAYER_CACHE_DIR="$cache")
is "$got" "0:200" "first start with an empty cache: exit 0, 200 writes in, 200 requests out"
check "-v says the CO-RE BTF was cached" grep -q 'CO-RE BTF cached for this kernel' "$TMPD/1.err"
files=("$cache"/core-btf/*.btf)
is "${#files[@]}" 1 "one cache file"
is "$(stat -c %a "$cache/core-btf")" 700 "the cache directory is root's alone (0700)"
check "the file is BTF (bpftool reads it)" eval "bpftool btf dump file '${files[0]}' >/dev/null"
# the BTF answers kept for this kernel (btf-answers/<build id>-<BTF size>): private, and the
# tracepoint's type id in it is the one bpftool reads from the kernel's BTF
answers=("$cache"/btf-answers/*)
ok "$([ "${#answers[@]}" = 1 ] && [ "$(stat -c %a "${answers[0]}")" = 600 ] &&
	[ "$(head -1 "${answers[0]}")" = "iolayer-btf-answers 1 $(basename "${answers[0]}")" ]; echo $?)" \
	"one BTF answers file, 0600, headed by its kernel key"
want_id=$(bpftool btf dump file /sys/kernel/btf/vmlinux | sed -n "s/^\[\([0-9]*\)\] TYPEDEF 'btf_trace_block_rq_issue'.*/\1/p")
is "$(awk '$1 == "i" && $3 == "btf_trace_block_rq_issue" { print $4 }' "${answers[0]}")" "$want_id" \
	"the answer kept for btf_trace_block_rq_issue is the kernel's type id ($want_id)"

# 2. second start: the file is used as it is
before=$(stat -c %Y.%i "${files[0]}")
abefore=$(stat -c %Y.%i "${answers[0]}")
got=$(run_writes 150 "$TMPD/2.out" "$TMPD/2.err" IOLAYER_CACHE_DIR="$cache")
is "$got" "0:150" "second start (cache hit): 150 writes in, 150 requests out"
ok "$(! grep -q 'CO-RE BTF cached' "$TMPD/2.err"; echo $?)" "the second start makes nothing"
is "$(stat -c %Y.%i "${files[0]}")" "$before" "the cached file is kept as it was"
is "$(stat -c %Y.%i "${answers[0]}")" "$abefore" "the BTF answers are kept as they were (all found there)"
diag "answer: cache hit: $got"

# 3. a damaged file is made again, and the run is still right
head -c 512 /dev/urandom >"${files[0]}"
got=$(run_writes 120 "$TMPD/3.out" "$TMPD/3.err" IOLAYER_CACHE_DIR="$cache")
is "$got" "0:120" "damaged cache file: 120 writes in, 120 requests out"
check "-v says the damaged file was made again" grep -q 'is damaged: made again' "$TMPD/3.err"
check "the file is BTF again" eval "bpftool btf dump file '${files[0]}' >/dev/null"
# 3b. damaged BTF answers are not used: found in the BTF again and written again
printf 'iolayer-btf-answers 1 %s\ni 8 btf_trace_block_rq_issue\n\x01\xff garbage\n' \
	"$(basename "${answers[0]}")" >"${answers[0]}"
got=$(run_writes 60 "$TMPD/3b.out" "$TMPD/3b.err" IOLAYER_CACHE_DIR="$cache")
is "$got" "0:60" "damaged BTF answers: 60 writes in, 60 requests out"
is "$(awk '$1 == "i" && $3 == "btf_trace_block_rq_issue" { print $4 }' "${answers[0]}")" "$want_id" \
	"the answers are written again, with the kernel's type id"

# 4. IOLAYER_CACHE_DIR empty: no cache, the same answer
rm -rf "$cache"
got=$(run_writes 100 "$TMPD/4.out" "$TMPD/4.err" IOLAYER_CACHE_DIR=)
is "$got" "0:100" "cache off: 100 writes in, 100 requests out"
ok "$([ ! -e "$cache" ]; echo $?)" "cache off: nothing written (no CO-RE BTF, no BTF answers)"

# 5. a cache directory others may write is not used
mkdir -m 0777 "$cache"
got=$(run_writes 50 "$TMPD/5.out" "$TMPD/5.err" IOLAYER_CACHE_DIR="$cache")
ok "$([ "$got" = "0:50" ] && grep -q 'is not a directory only root may write' "$TMPD/5.err" &&
	[ -z "$(ls -A "$cache")" ]; echo $?)" "a world-writable cache directory: not used, said under -v, same answer (got $got)"

# 5b. the same with a valid cache file in it (core-btf/ root's, 0700, as a first start makes
# it): the file is not used either (the old code checked only the file, then let libbpf open
# it again by path, which a user who can write the directory could swap in between)
rm -rf "$cache"
run_writes 10 "$TMPD/5b0.out" "$TMPD/5b0.err" IOLAYER_CACHE_DIR="$cache" >/dev/null
chmod 0777 "$cache"
MORE_V=-v
got=$(run_writes 50 "$TMPD/5b.out" "$TMPD/5b.err" IOLAYER_CACHE_DIR="$cache")
ok "$([ "$got" = "0:50" ] && grep -q 'is not a directory only root may write' "$TMPD/5b.err" &&
	! grep -q 'CO-RE relocations against' "$TMPD/5b.err"; echo $?)" \
	"a world-writable cache directory holding a valid file: the file is not used (got $got)"
# 5c. core-btf/ a symlink to a directory of root's holding a valid file: not followed
mv "$cache/core-btf" "$TMPD/elsewhere"
chmod 0755 "$cache"
ln -s "$TMPD/elsewhere" "$cache/core-btf"
got=$(run_writes 40 "$TMPD/5c.out" "$TMPD/5c.err" IOLAYER_CACHE_DIR="$cache")
ok "$([ "$got" = "0:40" ] && grep -q 'is not a directory only root may write' "$TMPD/5c.err" &&
	! grep -q 'CO-RE relocations against' "$TMPD/5c.err"; echo $?)" \
	"core-btf a symlink (to a valid cache): not followed, not used (got $got)"
# 5d. a good cache: libbpf reads the file that was checked, open as /proc/PID/fd/N
rm -rf "$cache" "$TMPD/elsewhere"
run_writes 10 "$TMPD/5d0.out" "$TMPD/5d0.err" IOLAYER_CACHE_DIR="$cache" >/dev/null
got=$(run_writes 30 "$TMPD/5d.out" "$TMPD/5d.err" IOLAYER_CACHE_DIR="$cache")
MORE_V=
ok "$([ "$got" = "0:30" ] && grep -qE 'CO-RE relocations against .*/core-btf/[0-9a-f-]+\.btf, open as /proc/[0-9]+/fd/[0-9]+$' "$TMPD/5d.err"; echo $?)" \
	"a good cache: used through the fd it was checked on (got $got)"

# 6. IOLAYER_SERIAL_LOAD: libbpf verifies the programs in turn, the same answer
rm -rf "$cache"
got=$(run_writes 80 "$TMPD/6.out" "$TMPD/6.err" IOLAYER_CACHE_DIR= IOLAYER_SERIAL_LOAD=1)
is "$got" "0:80" "programs verified in turn: 80 writes in, 80 requests out"

done_testing
