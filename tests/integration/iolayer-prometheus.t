#!/usr/bin/env bash
# iolayer --serve scraped by Debian's own prometheus (1 s interval): a write+fsync workload of
# known count on a loop ext4, then Prometheus's HTTP API must give back that count exactly and
# a p99 in the log2 bucket of fsslower's p99 of the same run (fsslower -m 0 traces the same
# calls at the same time); the workload's process and file in the top series with that count
# too, and /verdict names that process and file. The dashboard (docs/grafana/iolayer.json) and
# the rules (docs/prometheus/iolayer-rules.yml, loaded by this prometheus): every panel's query
# and every rule's expression answers with data here; promtool checks and unit-tests the rules
# (iolayer-rules.test.yml). Meanwhile: malformed requests, 200 connections at once, a client
# that reads one byte a second and one that sends one byte a second; tracing stays exact.
source "$(dirname "$0")/lib.sh"
require_root
require_cmd prometheus prometheus promtool
require_cmd curl curl
require_cmd jq jq
require_cmd python3 python3
plan 41

loop_ext4_setup 256
IL=$(tool iolayer)
FS=$(tool fsslower)
N=500
DOCS=$(cd "$(dirname "$0")/../../docs" && pwd)
RULES=$DOCS/prometheus/iolayer-rules.yml

PORT=$(free_port)
PPORT=$(free_port)
while [ "$PPORT" = "$PORT" ]; do PPORT=$(free_port); done
URL=http://127.0.0.1:$PORT
API=http://127.0.0.1:$PPORT/api/v1

# q PROMQL: the value of the first sample of an instant query, "" when there is none.
q() { curl -sf --data-urlencode "query=$1" "$API/query" | jq -r '.data.result[0].value[1] // empty'; }

wl_launch "$TMPD/wl.out" "$WL/fsync_loop" -g "$TMPD/go" -n $N -s 4096 "$MNT/data"
check "iolayer --serve starts on the workload's pid" \
	tool_start "$TMPD/il.out" "$TMPD/il.err" $IL --serve "127.0.0.1:$PORT" -p "$WL_PID"
IL_PID=$TOOL_PID
check "fsslower -m 0 --json starts on the same pid" \
	tool_start "$TMPD/fs.json" "$TMPD/fs.err" $FS -m 0 --json -p "$WL_PID"
FS_PID=$TOOL_PID

cat >"$TMPD/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files: ['$RULES']
scrape_configs:
  - job_name: iolayer
    static_configs:
      - targets: ['127.0.0.1:$PORT']
EOF
prometheus --config.file="$TMPD/prometheus.yml" --storage.tsdb.path="$TMPD/prom-data" \
	--web.listen-address="127.0.0.1:$PPORT" --log.level=warn >"$TMPD/prom.log" 2>&1 &
PROM_PID=$!
at_exit "kill $PROM_PID; wait $PROM_PID"
FSYNC='iolayer_fs_op_duration_seconds_count{job="iolayer",op="fsync"}'
# the first scrape, before the first fsync: the count starts at 0 in Prometheus
first_scrape() { [ "$(q "$FSYNC")" = 0 ]; }
if ! wait_for 30 first_scrape; then
	diag "prometheus never scraped iolayer"; diag_file "$TMPD/prom.log"; diag_file "$TMPD/il.err"
fi
is "$(q 'up{job="iolayer"}')" 1 "prometheus scrapes iolayer (up == 1)"

# Hostile clients, in the background while the workload runs.
python3 - "$PORT" >"$TMPD/slow.out" 2>&1 <<'EOF' &
# slow reader: a 1 KiB receive buffer, one byte a second; slowloris: the request one byte a second
import socket, sys, threading, time
port = int(sys.argv[1])
def reader():
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
    s.connect(("127.0.0.1", port))
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
    got = 0
    for _ in range(14):
        b = s.recv(1)
        if not b:
            break
        got += 1
        time.sleep(1)
    print("reader", got)
def loris():
    s = socket.create_connection(("127.0.0.1", port))
    sent = 0
    try:
        for c in b"GET /metrics HTTP/1.1\r\nHost: x\r\n":
            s.send(bytes([c]))
            sent += 1
            time.sleep(1)
            if sent >= 14:
                break
    except OSError:
        pass
    print("loris", sent)
ts = [threading.Thread(target=f) for f in (reader, loris)]
[t.start() for t in ts]
[t.join() for t in ts]
EOF
SLOW_BG=$!
at_exit "kill $SLOW_BG"
sleep 1

# 200 connections at once, while the workload runs: each is served whole (200 and a body of
# its Content-Length) or refused (closed before any byte); nothing else.
python3 - "$PORT" >"$TMPD/burst.out" 2>&1 <<'EOF' &
import socket, sys, threading
port, n = int(sys.argv[1]), 200
res = {}
go = threading.Barrier(n, timeout=20)
def one(i):
    data, s = b"", None
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=15)
    except ConnectionError:
        res[i] = "refused"
    try:
        go.wait()   # every connection open before the first request
    except threading.BrokenBarrierError:
        pass
    if not s:
        return
    try:
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        while True:
            b = s.recv(65536)
            if not b:
                break
            data += b
    except ConnectionError:
        res[i] = "refused" if not data else "cut"
        return
    except Exception as e:
        res[i] = "error_" + type(e).__name__
        return
    if not data:
        res[i] = "refused"
        return
    head, _, body = data.partition(b"\r\n\r\n")
    cl = [l for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")]
    ok = head.startswith(b"HTTP/1.1 200") and cl and int(cl[0].split(b":")[1]) == len(body)
    res[i] = "served" if ok else "bad " + head.split(b"\r\n")[0].decode(errors="replace")
ts = [threading.Thread(target=one, args=(i,)) for i in range(n)]
[t.start() for t in ts]
[t.join() for t in ts]
from collections import Counter
for k, v in sorted(Counter(res.values()).items()):
    print(v, k)
EOF
BURST_BG=$!
at_exit "kill $BURST_BG"

wl_go
is "$WL_RC" 0 "workload ran $N write+fsync"
wait "$BURST_BG"
diag "200 connections at once: $(tr '\n' ' ' <"$TMPD/burst.out")"
check "200 concurrent connections: each served whole or refused, nothing else" \
	awk '$2 != "served" && $2 != "refused" {bad = 1} {n += $1} END {exit bad || n != 200}' "$TMPD/burst.out"
check "... and some were served" grep -q ' served$' "$TMPD/burst.out"

# While the slow clients still hold their connections: another client is served at once.
T=$(curl -s -o /dev/null -w '%{http_code} %{time_total}' "$URL/metrics")
diag "a GET /metrics beside the slow clients: $T (status, seconds)"
check "a client is served within 1 s while the slow ones hang on" \
	awk -v t="$T" 'BEGIN {split(t, a, " "); exit !(a[1] == 200 && a[2] < 1)}'

# Prometheus has the last count once it scraped after the workload.
last_scrape() { [ "$(q "$FSYNC")" = "$N" ]; }
wait_for 10 last_scrape
is "$(q "max_over_time($FSYNC[5m]) - min_over_time($FSYNC[5m])")" "$N" \
	"Prometheus: the fsync _count went up by exactly $N"
is "$(curl -s "$URL/metrics" | awk '$1 == "iolayer_fs_op_duration_seconds_count{op=\"fsync\"}" {print $2}')" "$N" \
	"/metrics: fsync _count $N"
is "$(q 'sum(iolayer_lost_events_total{job="iolayer",kind!="missed_end"})')" 0 \
	"Prometheus: nothing lost (ring buffer, maps, starts, stacks, returns)"

# The top processes and files (--top 5): the workload's process has a series of its own, under
# its pid, and its file's syncs are the workload's count.
is "$(q "iolayer_process_fs_ops_total{job=\"iolayer\",pid=\"$WL_PID\",comm=\"fsync_loop\",op=\"fsync\"}")" "$N" \
	"Prometheus: the workload's process (pid $WL_PID, fsync_loop) has its own series: $N fsyncs"
is "$(q "iolayer_file_fsyncs_total{job=\"iolayer\",path=\"$MNT/data\"}")" "$N" \
	"Prometheus: its file $MNT/data: $N fsyncs"
curl -s "$URL/metrics" >"$TMPD/top.txt"
diag "process series: $(awk -F'"' '/^iolayer_process_fs_ops_total\{/ && /op="fsync"/ {v = $NF; sub(/^} /, "", v); printf "%s(%s)=%s ", $4, $2, v}' "$TMPD/top.txt")"
check "at most 5 processes and 5 files of their own, then \"other\" last" awk '
	/^iolayer_process_iowait_seconds_total\{/ {np++; lp = $0}
	/^iolayer_file_fsyncs_total\{/ {nf++; lf = $0}
	END {exit !(np >= 2 && np <= 6 && nf >= 2 && nf <= 6 && lp ~ /pid="other"/ && lf ~ /path="other"/)}' "$TMPD/top.txt"

# The rules: promtool's checks, and its tests on made-up series (each alert firing and not).
check "promtool check rules docs/prometheus/iolayer-rules.yml" promtool check rules "$RULES"
check "promtool test rules: iolayer-rules.test.yml passes" sh -c "cd '$DOCS/prometheus' && promtool test rules iolayer-rules.test.yml"

# qall FILE: each line "NAME<tab>PROMQL" of FILE as an instant query, printed back with
# "SAMPLES NUMBERS" after it (its samples, and those not NaN), or "error" when Prometheus
# refuses it. One curl for all the queries (URLs encoded by jq), one jq for all the answers.
qall() {
	jq -Rr --arg api "$API/query" '(split("\t")[1] | @uri) as $q | "url = \"\($api)?query=\($q)\""' \
		"$1" >"$1.curl"
	curl -s -K "$1.curl" >"$1.json"
	jq -r 'if .status == "success" then "\(.data.result | length) \([.data.result[] | select(.value[1] != "NaN")] | length)" else "error" end' \
		"$1.json" >"$1.ans" 2>/dev/null
	[ "$(wc -l <"$1.ans")" = "$(wc -l <"$1")" ] || sed 's/.*/error/' "$1" >"$1.ans"
	paste "$1" "$1.ans"
}
# Every rule of the file loaded, and evaluated (each second) without error; then each rule's
# expression, an alert's without its threshold (the file writes them "VALUE OP NUMBER": the
# value is there whether the alert fires or not), returns samples.
# rate() needs two samples of a series: the writeback series are born with the workload's first
# fsync, which may be the last scrape before these queries; wait until they have two.
two_samples() { [ "$(q 'min(count_over_time(iolayer_writeback_duration_seconds_count[5m]))')" -ge 2 ] 2>/dev/null; }
check "the writeback series have two samples in Prometheus (rate() has data)" wait_for 10 two_samples
NRULES=$(grep -cE '^ *- (record|alert):' "$RULES")
rules_ok() { [ "$(curl -s "$API/rules" | jq '[.data.groups[].rules[] | select(.health == "ok")] | length')" = "$NRULES" ]; }
wait_for 10 rules_ok ||
	curl -s "$API/rules" | jq -c '.data.groups[].rules[] | select(.health != "ok") | {name, health, lastError}' | sed 's/^/# /'
check "prometheus loaded the $NRULES rules of iolayer-rules.yml, each evaluated without error" rules_ok
curl -s "$API/rules" | jq -r '.data.groups[].rules[] | [.name, (if .type == "alerting" then
	.query | sub(" (>|<|>=|<=|==|!=) [-+0-9.e]+$"; "") else .query end)] | @tsv' >"$TMPD/rules.tsv"
bad_rules=0
while IFS=$'\t' read -r name query r; do
	case "$r" in error|"0 "*) bad_rules=$((bad_rules + 1)); diag "rule $name: no data ($r): $query" ;; esac
done < <(qall "$TMPD/rules.tsv")
is "$(wc -l <"$TMPD/rules.tsv") $bad_rules" "$NRULES 0" "every rule's expression returns data ($NRULES rules)"

# The dashboard's queries, read from its JSON: each variable at its default (All: its
# allValue), Grafana's $__rate_interval as 1m (the workload ran within the last minute); and
# each variable's label_values(SELECTOR, LABEL) as count by (LABEL) (SELECTOR).
# Data: at least one sample (Grafana draws NaN as a gap, so those are listed apart).
jq -r '[.templating.list[] | select(.type != "datasource") |
		(.current.value | if type == "array" then .[0] else . end) as $c |
		{name, value: (if $c == "$__all" then .allValue else $c end)}] as $vars |
	def subst: reduce $vars[] as $v (.; gsub("\\$" + $v.name + "\\b"; $v.value)) |
		gsub("\\$__rate_interval"; "1m");
	(.panels[] | select(.targets) | .title as $t | .targets[] | "\($t)\t\(.expr | subst)"),
	(.templating.list[] | select(.type == "query") | .name as $n | .definition |
		"variable \($n)\t" + (capture("^label_values\\((?<sel>.+), *(?<l>[A-Za-z_]+)\\)$") //
			{sel: ., l: "?"} | "count by (\(.l)) (\(.sel | subst))"))' \
	"$DOCS/grafana/iolayer.json" >"$TMPD/panels.tsv"
bad_panels=0 npanels=0
while IFS=$'\t' read -r title query r; do
	npanels=$((npanels + 1))
	case "$query" in *'$'*) r="a variable left: $r" ;; esac
	case "$r" in
	a*|error|"0 "*) bad_panels=$((bad_panels + 1)); diag "panel \"$title\": no data ($r): $query" ;;
	# NaN: a ratio or quantile of what did not change in the last minute (the writeback series
	# are born with the first call, which rate() does not count): Grafana draws a gap
	*" 0") diag "panel \"$title\": NaN only ($r): $query" ;;
	esac
done < <(qall "$TMPD/panels.tsv")
diag "dashboard: $npanels queries, $bad_panels without data"
check "the dashboard has its panels' queries (more than 20)" test "$npanels" -gt 20
is "$bad_panels" 0 "every dashboard query returns data ($npanels: panels' and variables')"

kill -INT "$FS_PID"; wait "$FS_PID"
FS_RC=$?
is "$FS_RC" 0 "fsslower exits 0"
is "$(jq -s '[.[] | select(.summary) | .summary.fsync.count] | add' "$TMPD/fs.json")" "$N" "fsslower counted $N fsyncs too"
LO=$(jq -s '[.[] | select(.summary)][0].summary.fsync.latency_ns.percentiles.p99.low' "$TMPD/fs.json")
HI=$(jq -s '[.[] | select(.summary)][0].summary.fsync.latency_ns.percentiles.p99.high' "$TMPD/fs.json")
P99=$(q "histogram_quantile(0.99, iolayer_fs_op_duration_seconds_bucket{job=\"iolayer\",op=\"fsync\"})")
diag "answer: fsync count $N; p99: Prometheus ${P99} s, fsslower bucket ${LO}-${HI} ns"
# The bucket of slot [LO, HI] ns is (LO - 1, HI] ns under Prometheus' le (le is HI ns).
check "histogram_quantile(0.99) lands in fsslower's p99 log2 bucket" \
	awk -v p="$P99" -v lo="$LO" -v hi="$HI" 'BEGIN {ns = p * 1e9; exit !(ns > lo - 1 - 1e-3 && ns <= hi + 1e-3)}'

# The formats.
curl -s "$URL/metrics" >"$TMPD/m.txt"
check "text format 0.0.4 passes promtool check metrics" promtool check metrics <"$TMPD/m.txt"
curl -s -D "$TMPD/om.head" -H 'Accept: application/openmetrics-text; version=1.0.0' "$URL/metrics" >"$TMPD/m.om"
check "OpenMetrics on Accept: application/openmetrics-text" grep -qi '^content-type: application/openmetrics-text' "$TMPD/om.head"
is "$(tail -1 "$TMPD/m.om")" "# EOF" "OpenMetrics ends with # EOF"
check "iolayer_info names the version, kernel and each layer's method" \
	grep -qE '^iolayer_info\{version="[^"]+",kernel="'"$(uname -r)"'",pid="'"$WL_PID"'",block="[a-z_/]+",fs="ext4:[a-z_/]+.*",writeback="[a-z_/]+",iowait="[a-z_/]+"\} 1$' "$TMPD/m.txt"
is "$(curl -s "$URL/verdict" | jq -r '.layers.syscall.fsync.count')" "$N" "/verdict: $N fsyncs in its window"
check "/verdict names a layer" sh -c "curl -s '$URL/verdict' | jq -e '.verdict.layer | test(\"^(syscall/VFS|filesystem|writeback|block queue|device|block layer|CPU|none)$\")' >/dev/null"
V=$(curl -s "$URL/verdict" | jq -r '"\(.verdict.process.pid) \(.verdict.process.comm) \(.verdict.file)"')
diag "/verdict: $(curl -s "$URL/verdict" | jq -c '.verdict | del(.reason)')"
is "$V" "$WL_PID fsync_loop $MNT/data" "/verdict names the workload's process (pid $WL_PID) and its file"

# Bad --serve arguments, and an address already taken (prometheus's): one line, exit 1.
bad "--serve with port 70000: one line, exit 1" "port must be a number from 1 to 65535" $IL --serve 70000
bad "--serve with a host name: one line, exit 1" "is not an IPv4 or IPv6 address" $IL --serve example.com:80
bad "--serve with --top 0: one line, exit 1" "serve takes --top from 1 to 100, got 0" $IL --serve 19435 --top 0
bad "--serve on a port in use: one line, exit 1" "cannot listen on 127.0.0.1:$PPORT: Address already in use" \
	$IL --serve "127.0.0.1:$PPORT"

# Methods, paths, malformed requests.
is "$(curl -s -o /dev/null -w '%{http_code}' -X POST -d x=1 "$URL/metrics") $(curl -s -o /dev/null -w '%{http_code}' -X PUT "$URL/metrics")" \
	"405 405" "POST and PUT: 405"
is "$(curl -s -o /dev/null -w '%{http_code}' "$URL/nope")" 404 "unknown path: 404"
python3 - "$PORT" >"$TMPD/bad.out" <<'EOF'
import socket, sys
port = int(sys.argv[1])
for req in (b"GET /metrics HTTP/1.1\r\n\r\n",                        # no Host
            b"GET /metrics FOO/1.1\r\nHost: x\r\n\r\n",               # no HTTP version
            b"GET /metrics HTTP/1.1\r\nHost: x\r\nno colon\r\n\r\n",  # a header without a colon
            b"GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc"):  # a GET with a body
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(req)
    print(s.recv(64).split(b"\r\n")[0].decode())
    s.close()
EOF
is "$(sort -u "$TMPD/bad.out")" "HTTP/1.1 400 Bad Request" "malformed requests (no Host, bad version, bad header, GET with a body): 400"
is "$(curl -s -o /dev/null -w '%{http_code}' "$URL/metrics")" 200 "... and the next request is served"

wait "$SLOW_BG"
diag "slow clients: $(tr '\n' ' ' <"$TMPD/slow.out")"
is "$(q "$FSYNC")" "$N" "after the slow clients: the fsync count is still exactly $N"

# Its own programs, by id (other tests may load programs of the same names meanwhile).
IDS=$(cat /proc/"$IL_PID"/fdinfo/* 2>/dev/null | awk '$1 == "prog_id:" {print $2}' | sort -u)
kill -INT "$IL_PID"; wait "$IL_PID"
is "$?" 0 "iolayer --serve exits 0 on Ctrl-C"
left=0
for id in $IDS; do bpftool prog show id "$id" >/dev/null 2>&1 && left=$((left + 1)); done
is "$left" 0 "none of its $(echo $IDS | wc -w) BPF programs is left after exit"

done_testing
