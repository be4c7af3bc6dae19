#!/usr/bin/env bash
# Side-by-side benchmark of squall against Apache Storm on this machine.
#
# Runs the five workloads of bench/storm (Java, Storm LocalCluster, and for
# cluster-acked a distributed Storm: Nimbus, a Supervisor and two worker
# JVMs) and bench/squall (Go), with parallelism 1 for every component, and
# three of them again with parallelism 2 (core-noack-p2, core-acked-p2,
# trident-wordcount-p2: the base workload run with --parallelism 2 on both
# sides, see bench/comparison-notes.md), alternately, Storm then squall, for
# a number of rounds, each run measuring over a fixed window after an
# in-process warm-up, and prints a table of medians (min-max) and ratios,
# the -p2 rows after the others. Beside each word count (trident-wordcount
# and trident-wordcount-p2) it runs, in the same round and with the same
# windows, its floor: bench/squall's floor-wordcount, the same work as a
# hand-written Go loop with no framework (one goroutine, or two with -p2);
# the table's floor column holds it and squall/floor. Its last nine lines
# are:
#
#   core-noack squall/storm = X
#   core-acked squall/storm = X
#   trident-wordcount squall/storm = X
#   acker-bytes storm/squall = X
#   cluster-acked squall/storm = X
#   core-noack-p2 squall/storm = X
#   trident-wordcount-p2 squall/storm = X
#   trident-wordcount squall/floor = X
#   trident-wordcount-p2 squall/floor = X
#
# A full run writes the table, Storm's version, the JVM flags, the machine
# and the notes of bench/comparison-notes.md into docs/PERFORMANCE.md,
# between <!-- storm-comparison:begin --> and <!-- storm-comparison:end -->.
#
# Usage: bench/compare.sh [--quick] [--window 30s] [--warmup 10s] [--rounds 3]
#                         [--trees 1000000] [--storm-batch N] [--workloads a,b]
#                         [--no-doc | --doc]
#
#   --quick        5 s windows, 3 s warm-up, 1 round, 200,000 pending trees,
#                  no warm-up pass and no docs update (a smoke test, about
#                  7 min with every workload; Storm's cluster takes about a
#                  minute to start)
#   --window D     measuring window of every run (Go duration syntax: 30s)
#   --warmup D     in-process warm-up before the window
#   --rounds N     Storm/squall pairs per workload (>= 1; 3 for a recorded run)
#   --trees N      pending trees of the acker-memory workload
#   --storm-batch N  Storm's topology.producer.batch.size (default: the
#                  squall batch size, 256; see bench/comparison-notes.md)
#   --workloads L  comma-separated subset of the workloads
#   --no-doc/--doc do not / do write docs/PERFORMANCE.md
#
# Needs Java 17+ (java, or $JAVA), Maven (mvn, reaching Maven Central the
# first time) and Go. Storm binds to 127.0.0.1 only, except in cluster-acked:
# Storm's Nimbus, Supervisor and worker (Netty) servers always bind every
# interface, on free ports picked per run; there the Storm run goes into a
# network namespace of its own with only loopback when `unshare -n` is
# allowed (root, or unprivileged user namespaces), and says so otherwise.
set -euo pipefail

die() { echo "compare.sh: $*" >&2; exit 1; }

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STORM_DIR=$ROOT/bench/storm
OUT=$ROOT/bench/out
DOC=$ROOT/docs/PERFORMANCE.md
NOTES=$ROOT/bench/comparison-notes.md

window=30s warmup=10s rounds=3 trees=1000000 quick=0 doc=auto storm_batch=256
workloads="core-noack,core-acked,trident-wordcount,acker-memory,cluster-acked,core-noack-p2,core-acked-p2,trident-wordcount-p2"
while [ $# -gt 0 ]; do
	case $1 in
	--quick) quick=1; window=5s; warmup=3s; rounds=1; trees=200000 ;;
	--window) window=${2:?--window needs a value}; shift ;;
	--warmup) warmup=${2:?--warmup needs a value}; shift ;;
	--rounds) rounds=${2:?--rounds needs a value}; shift ;;
	--trees) trees=${2:?--trees needs a value}; shift ;;
	--storm-batch) storm_batch=${2:?--storm-batch needs a value}; shift ;;
	--workloads) workloads=${2:?--workloads needs a value}; shift ;;
	--no-doc) doc=no ;;
	--doc) doc=yes ;;
	-h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) die "unknown option $1 (see --help)" ;;
	esac
	shift
done
[[ $rounds =~ ^[1-9][0-9]*$ ]] || die "--rounds must be a positive integer"
[[ $trees =~ ^[1-9][0-9]*$ ]] || die "--trees must be a positive integer"
[[ $storm_batch =~ ^[1-9][0-9]*$ ]] || die "--storm-batch must be a positive integer"
[[ $window =~ ^[0-9.]+(ms|s)$ ]] || die "--window must look like 30s or 500ms"
[[ $warmup =~ ^[0-9.]+(ms|s)$ ]] || die "--warmup must look like 10s or 500ms"
# seconds D: a duration like 30s or 500ms in whole seconds, rounded up.
seconds() { awk -v d="$1" 'BEGIN { v = d + 0; if (d ~ /ms$/) v /= 1000; printf "%d", (v == int(v)) ? v : int(v) + 1 }'; }
# A run that takes longer than its window and warm-up plus three minutes
# (start-up, a million pending trees) has stalled: it is killed and counts
# as failed, so the one retry below applies.
run_limit=$(($(seconds "$window") + $(seconds "$warmup") + 180))
if [ "$doc" = auto ]; then
	if [ "$quick" = 1 ]; then doc=no; else doc=yes; fi
fi
IFS=, read -r -a WL <<<"$workloads"
for w in "${WL[@]}"; do
	case $w in core-noack | core-acked | trident-wordcount | acker-memory | cluster-acked) ;;
	core-noack-p2 | core-acked-p2 | trident-wordcount-p2) ;;
	*) die "unknown workload $w" ;;
	esac
done
# bench_workload W: the workload and flags both benches run for W: a -p2
# workload is its base workload with --parallelism 2.
bench_workload() {
	case $1 in
	*-p2) echo "${1%-p2} --parallelism 2" ;;
	*) echo "$1" ;;
	esac
}

# --- tools ------------------------------------------------------------------
JAVA=${JAVA:-java}
command -v "$JAVA" >/dev/null || die "Java 17 or newer is needed: '$JAVA' not found (install a JDK 17, e.g. apt-get install openjdk-17-jdk-headless, or set JAVA)"
command -v mvn >/dev/null || die "Maven is needed to build bench/storm: 'mvn' not found (e.g. apt-get install maven)"
command -v go >/dev/null || die "Go is needed for bench/squall: 'go' not found"
java_version=$("$JAVA" -version 2>&1 | head -n1)
java_major=$(sed -E 's/.*version "([0-9]+)(\.[0-9]+)*.*/\1/' <<<"$java_version")
if ! [[ $java_major =~ ^[0-9]+$ ]] || [ "$java_major" -lt 17 ]; then
	die "Java 17 or newer is needed, found: $java_version"
fi

mkdir -p "$OUT"
stamp=$(date -u +%Y%m%dT%H%M%SZ)
RES=$OUT/results-$stamp.txt
LOG=$OUT/runs-$stamp.log
: >"$RES"
: >"$LOG"

# --- build ------------------------------------------------------------------
need_build=0
[ -f "$STORM_DIR/target/classes/bench/storm/StormBench.class" ] || need_build=1
[ -d "$STORM_DIR/target/lib" ] && ls "$STORM_DIR"/target/lib/storm-client-*.jar >/dev/null 2>&1 || need_build=1
if [ "$need_build" = 0 ] && [ -n "$(find "$STORM_DIR/pom.xml" "$STORM_DIR/src" -newer "$STORM_DIR/target/classes/bench/storm/StormBench.class" -type f 2>/dev/null)" ]; then
	need_build=1
fi
if [ "$need_build" = 1 ]; then
	echo "building bench/storm with Maven (first time: downloads Storm's jars from Maven Central)..." >&2
	rm -rf "$STORM_DIR/target/lib"
	mvn -B -q -f "$STORM_DIR/pom.xml" compile dependency:copy-dependencies \
		-DincludeScope=runtime -DoutputDirectory="$STORM_DIR/target/lib" >>"$LOG" 2>&1 ||
		{ tail -n 30 "$LOG" >&2; die "mvn failed to build bench/storm (log: $LOG)"; }
fi
echo "building bench/squall..." >&2
(cd "$ROOT" && go build -o "$OUT/squall-bench" ./bench/squall) || die "go build ./bench/squall failed"

JVM_FLAGS="-Xms2g -Xmx2g -XX:+UseG1GC -Dzookeeper.forceSync=no"
mkdir -p "$STORM_DIR/target/tmp"
CLUSTER_DIR=$OUT/storm-cluster
# Storm's cluster-acked run goes into a network namespace with only
# loopback when one can be made (netns_prefix), else into this host's.
netns_prefix=()
storm_netns="this host's network namespace (Storm's servers bind every interface)"
if unshare -n sh -c 'ip link set lo up' >/dev/null 2>&1; then
	netns_prefix=(unshare -n sh -c 'ip link set lo up && exec "$@"' sh)
	storm_netns="a network namespace of its own with only loopback (unshare -n)"
elif unshare -rn sh -c 'ip link set lo up' >/dev/null 2>&1; then
	netns_prefix=(unshare -rn sh -c 'ip link set lo up && exec "$@"' sh)
	storm_netns="a network namespace of its own with only loopback (unshare -rn)"
fi
storm_run() { # workload args...
	local w=$1 rc=0 bw
	shift
	read -r -a bw <<<"$(bench_workload "$w")"
	rm -rf "$STORM_DIR/target/tmp"/*
	if [ "$w" = cluster-acked ]; then
		# shellcheck disable=SC2086 # JVM_FLAGS is a list of flags
		(cd "$STORM_DIR" && timeout -k 10 "$run_limit" "${netns_prefix[@]}" "$JAVA" $JVM_FLAGS \
			-Djava.io.tmpdir="$STORM_DIR/target/tmp" \
			-Dlog4j2.configurationFile="$STORM_DIR/target/classes/log4j2.xml" \
			-cp "$STORM_DIR/target/classes:$STORM_DIR/target/lib/*" bench.storm.StormBench "$w" "$@" \
			--batch "$storm_batch" --cluster-dir "$CLUSTER_DIR" --lib "$STORM_DIR/target/lib") || rc=$?
		storm_cluster_cleanup
		return "$rc"
	fi
	# shellcheck disable=SC2086 # JVM_FLAGS is a list of flags
	(cd "$STORM_DIR" && timeout -k 10 "$run_limit" "$JAVA" $JVM_FLAGS -Djava.io.tmpdir="$STORM_DIR/target/tmp" \
		-Dlog4j2.configurationFile="$STORM_DIR/target/classes/log4j2.xml" \
		-cp "$STORM_DIR/target/classes:$STORM_DIR/target/lib/*" bench.storm.StormBench "${bw[@]}" "$@" --batch "$storm_batch")
}
# storm_cluster_cleanup: the driver kills Storm's daemons and workers when
# it ends, even on SIGTERM; after a SIGKILL (timeout -k) they would be left,
# so the processes whose pids the run recorded (Nimbus, Supervisor, workers)
# are killed here if they are still running from this run's directory.
storm_cluster_cleanup() {
	local f pid
	for f in "$CLUSTER_DIR"/pids/* "$CLUSTER_DIR"/local/workers/*/pids/*; do
		[ -e "$f" ] || continue
		pid=${f##*/}
		[ "${f#"$CLUSTER_DIR"/pids/}" = "$f" ] || pid=$(cat "$f" 2>/dev/null || true)
		[[ $pid =~ ^[0-9]+$ ]] || continue
		if grep -qsF "$CLUSTER_DIR" "/proc/$pid/cmdline"; then
			kill -9 "$pid" 2>/dev/null || true
		fi
	done
}
squall_run() { # workload args...
	if [ "$1" = cluster-acked ]; then # in a namespace like Storm's, if it had one
		timeout -k 10 "$run_limit" "${netns_prefix[@]}" "$OUT/squall-bench" "$@"
		return
	fi
	local bw
	read -r -a bw <<<"$(bench_workload "$1")"
	shift
	timeout -k 10 "$run_limit" "$OUT/squall-bench" "${bw[@]}" "$@"
}
# floor_run WORKLOAD args...: the floor of a word count: floor-wordcount
# with the word count's parallelism.
floor_run() {
	local p=1
	[ "${1%-p2}" = "$1" ] || p=2
	shift
	timeout -k 10 "$run_limit" "$OUT/squall-bench" floor-wordcount --parallelism "$p" "$@"
}

# run IMPL WORKLOAD ROUND: one measured run, its RESULT line appended to $RES.
run() {
	local impl=$1 w=$2 round=$3 line out
	local args=(--window "$window" --warmup "$warmup" --trees "$trees")
	echo "== $(date -u +%H:%M:%S) round $round $impl $w" >>"$LOG"
	if ! out=$("${impl}_run" "$w" "${args[@]}" 2>>"$LOG"); then
		echo "$out" >>"$LOG"
		# One retry, said out loud: a LocalCluster run on a busy shared
		# machine can stall; a second failure stops the comparison.
		echo "compare.sh: WARNING: $impl $w failed in round $round; retrying once (log: $LOG)" >&2
		echo "== $(date -u +%H:%M:%S) round $round $impl $w (retry)" >>"$LOG"
		out=$("${impl}_run" "$w" "${args[@]}" 2>>"$LOG") || {
			echo "$out" >>"$LOG"
			die "$impl $w failed twice in round $round (log: $LOG)"
		}
		echo "retried $impl $w in round $round" >>"$OUT/retries-$stamp.txt"
	fi
	line=$(grep '^RESULT ' <<<"$out" | tail -n1) || true
	[ -n "$line" ] || die "$impl $w printed no RESULT line in round $round (log: $LOG)"
	if [ "$impl" = floor ]; then # recorded as impl=floor under the word count's name
		local p=1
		[ "${w%-p2}" = "$w" ] || p=2
		[[ " $line " == *" impl=squall workload=floor-wordcount "*" parallelism=$p "* ]] ||
			die "floor $w: expected workload=floor-wordcount and parallelism=$p in: $line"
		line=${line/" impl=squall workload=floor-wordcount "/" impl=floor workload=$w "}
	elif [ "${w%-p2}" != "$w" ]; then # recorded under compare.sh's name
		[[ " $line " == *" workload=${w%-p2} "*" parallelism=2 "* ]] ||
			die "$impl $w: expected workload=${w%-p2} and parallelism=2 in: $line"
		line=${line/" workload=${w%-p2} "/" workload=$w "}
	fi
	echo "$line" >>"$LOG"
	echo "round=$round $line" >>"$RES"
	echo "  round $round $(printf '%-6s' "$impl") ${line#RESULT }" >&2
}

# --- warm-up pass and rounds ---------------------------------------------------
if [ "$quick" = 0 ]; then
	echo "warm-up pass (not recorded)..." >&2
	for w in "${WL[@]}"; do
		[ "$w" = acker-memory ] && continue
		storm_run "$w" --window 3s --warmup 2s >>"$LOG" 2>&1 || die "storm $w warm-up failed (log: $LOG)"
		squall_run "$w" --window 3s --warmup 2s >>"$LOG" 2>&1 || die "squall $w warm-up failed (log: $LOG)"
	done
fi
echo "measuring: $rounds round(s), window $window, warm-up $warmup, Storm batch $storm_batch" >&2
for round in $(seq 1 "$rounds"); do
	for w in "${WL[@]}"; do
		run storm "$w" "$round"
		run squall "$w" "$round"
		# The same counts with squall's words pre-aggregated by hand before
		# the groupBy, as Storm's planner does for a combiner: a reference
		# row, not one of the ratios below.
		if [ "$w" = trident-wordcount ]; then
			run squall trident-wordcount-preagg "$round"
		fi
		# The floor: the same work with no framework, after squall's run.
		case $w in trident-wordcount | trident-wordcount-p2) run floor "$w" "$round" ;; esac
	done
done

# --- table -------------------------------------------------------------------
# values IMPL WORKLOAD KEY: the key's values over the rounds, one a line.
values() {
	awk -v impl="$1" -v w="$2" -v key="$3" '
		{ ok = 0; v = ""
		  for (i = 1; i <= NF; i++) { split($i, kv, "=")
		    if (kv[1] == "impl" && kv[2] == impl) ok++
		    if (kv[1] == "workload" && kv[2] == w) ok++
		    if (kv[1] == key) v = kv[2] }
		  if (ok == 2 && v != "") print v }' "$RES"
}
# stats: reads numbers, prints "median min max" (median of an even count:
# the mean of the middle two).
stats() {
	sort -g | awk '{ a[NR] = $1 } END {
		if (NR == 0) { print "nan nan nan"; exit }
		m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
		printf "%.12g %.12g %.12g\n", m, a[1], a[NR] }'
}
fmt_num() { # a number with thousands separators, or with one decimal below 1000
	awk -v x="$1" 'BEGIN { if (x != x + 0) { print x; exit }
		if (x < 1000) { printf "%.1f", x; exit }
		s = sprintf("%.0f", x); out = ""
		while (length(s) > 3) { out = "," substr(s, length(s) - 2) out; s = substr(s, 1, length(s) - 3) }
		print s out }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 == 0 || a != a + 0) print "n/a"; else printf "%.2f", a / b }'; }

declare -A MED
table=$(mktemp)
trap 'rm -f "$table"' EXIT
{
	echo "| workload | figure | Storm median (min–max) | squall median (min–max) | ratio | floor median (min–max), squall/floor |"
	echo "|---|---|---|---|---|---|"
	row() { # workload key label direction(sq/st or st/sq) [squall workload]
		local w=$1 key=$2 label=$3 dir=$4 sqw=${5:-$1} st sq r fl=—
		read -r st_med st_min st_max < <(values storm "$w" "$key" | stats)
		read -r sq_med sq_min sq_max < <(values squall "$sqw" "$key" | stats)
		read -r fl_med fl_min fl_max < <(values floor "$w" "$key" | stats)
		if [ "$dir" = st/sq ]; then r=$(ratio "$st_med" "$sq_med"); else r=$(ratio "$sq_med" "$st_med"); fi
		MED[$w.$key.storm]=$st_med
		MED[$sqw.$key.squall]=$sq_med
		MED[$w.$key.floor]=$fl_med
		st="$(fmt_num "$st_med") ($(fmt_num "$st_min")–$(fmt_num "$st_max"))"
		sq="$(fmt_num "$sq_med") ($(fmt_num "$sq_min")–$(fmt_num "$sq_max"))"
		if [ "$fl_med" != nan ]; then
			fl="$(fmt_num "$fl_med") ($(fmt_num "$fl_min")–$(fmt_num "$fl_max")); squall/floor = **$(ratio "$sq_med" "$fl_med")**"
		fi
		[ "$sqw" = "$w" ] || { r="$r (reference)"; w="$sqw"; }
		echo "| $w | $label | $st | $sq | $dir = **$r** | $fl |"
	}
	for w in "${WL[@]}"; do
		case $w in
		core-noack) row core-noack tuples_per_s "tuples/s" sq/st ;;
		core-acked)
			row core-acked tuples_per_s "acked trees/s" sq/st
			row core-acked p50_us "complete latency p50 (µs)" st/sq
			row core-acked p99_us "complete latency p99 (µs)" st/sq
			;;
		trident-wordcount)
			row trident-wordcount words_per_s "words/s" sq/st
			row trident-wordcount words_per_s "words/s; squall pre-aggregated by hand, Storm as above" sq/st trident-wordcount-preagg
			;;
		acker-memory) row acker-memory bytes_per_tree "heap bytes per pending tree" st/sq ;;
		cluster-acked)
			row cluster-acked tuples_per_s "acked trees/s, 2 worker processes" sq/st
			row cluster-acked p50_us "complete latency p50 (µs)" st/sq
			row cluster-acked p99_us "complete latency p99 (µs)" st/sq
			;;
		esac
	done
	# The parallelism 2 rows come after the others, whatever the order of
	# --workloads.
	for w in "${WL[@]}"; do
		case $w in
		core-noack-p2) row core-noack-p2 tuples_per_s "tuples/s, 2 executors per component" sq/st ;;
		core-acked-p2)
			row core-acked-p2 tuples_per_s "acked trees/s, 2 executors per component" sq/st
			row core-acked-p2 p50_us "complete latency p50 (µs)" st/sq
			row core-acked-p2 p99_us "complete latency p99 (µs)" st/sq
			;;
		trident-wordcount-p2) row trident-wordcount-p2 words_per_s "words/s, 2 spout and 2 aggregation tasks" sq/st ;;
		esac
	done
} >"$table"

storm_version=$(awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^version=/) { sub(/^version=/, "", $i); print $i; exit } }' "$RES")
cpu=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -n1)
mem=$(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo 2>/dev/null || true)
go_version=$(go version)
load=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || true)

echo
cat "$table"
echo
echo "Storm $storm_version, $java_version, JVM flags: $JVM_FLAGS; Storm producer batch $storm_batch"
echo "$go_version; GOGC unset; CPU: ${cpu:-unknown}, $(nproc) CPUs, $mem; load average at the end: $load"
echo "RESULT lines: $RES"

if [ "$doc" = yes ]; then
	[ -f "$NOTES" ] || die "missing $NOTES"
	section=$(mktemp)
	trap 'rm -f "$table" "$section"' EXIT
	{
		echo "<!-- storm-comparison:begin -->"
		echo "## Side by side with Apache Storm"
		echo
		echo "Written by \`bench/compare.sh\` on $(date -u +%Y-%m-%d) (UTC): $rounds rounds, Storm then squall for"
		echo "each workload in each round, a $window measuring window after a $warmup in-process"
		echo "warm-up, acker-memory with $(fmt_num "$trees") pending trees. Medians, with the range over"
		echo "the rounds; ratios are of the medians. How to run it and what each workload"
		echo "measures: [storm-comparison.md](storm-comparison.md)."
		echo
		cat "$table"
		echo
		echo "- Storm: \`org.apache.storm:storm-client\`/\`storm-server\` **$storm_version** from Maven Central, LocalCluster, one worker, ZooKeeper on 127.0.0.1."
		if [[ ,$workloads, == *,cluster-acked,* ]]; then
			echo "- cluster-acked: a distributed Storm from the same jars, on this machine: ZooKeeper in the driver JVM, Nimbus and a Supervisor with two slots as JVMs of their own, \`topology.workers\` = 2, each worker JVM started by the Supervisor through a LogWriter JVM with the flags below; Storm's side ran in $storm_netns. squall: two processes, \`topology.RunWorker\` over loopback TCP, the same placement of components."
		fi
		if [[ ,$workloads, == *,trident-wordcount,* || ,$workloads, == *,trident-wordcount-p2,* ]]; then
			echo "- Floor column: \`bench/squall\`'s \`floor-wordcount\`, run after squall in every round with the same windows: the word count's work (the same sentences split with \`strings.SplitSeq\`, each batch of the same size counted in a map and merged into a total map) as a hand-written Go loop, one goroutine (two for \`-p2\`, each its own batches and total, merged at the end), no tuples, no state store, no fault tolerance."
		fi
		if [[ ,$workloads, == *-p2,* ]]; then
			echo "- \`-p2\` rows: the workload of the same name without \`-p2\`, with 2 executors (one task each) for every component but the acker (one, as above) and Trident's coordinators, on both sides; each of the Trident spout's 2 tasks emits a whole batch of sentences per txid, so a txid holds twice the words of the parallelism 1 run. What each side runs: *Parallelism 2* below."
		fi
		echo "- JVM: $java_version; flags \`$JVM_FLAGS\`; Storm \`topology.producer.batch.size\` = $storm_batch."
		echo "- Go: $go_version; \`GOGC\` unset (100)."
		echo "- Machine: ${cpu:-unknown}, $(nproc) CPUs, $mem RAM, shared with other work (load average $load when the run ended)."
		if [ -s "$OUT/retries-$stamp.txt" ]; then
			echo "- Runs that failed once and were retried: $(paste -sd, "$OUT/retries-$stamp.txt" | sed 's/,/; /g')."
		fi
		echo
		cat "$NOTES"
		echo "<!-- storm-comparison:end -->"
	} >"$section"
	tmpdoc=$(mktemp)
	if grep -q '^<!-- storm-comparison:begin -->$' "$DOC" && grep -q '^<!-- storm-comparison:end -->$' "$DOC"; then
		awk -v sec="$section" '
			/^<!-- storm-comparison:begin -->$/ { while ((getline l < sec) > 0) print l; skip = 1; next }
			/^<!-- storm-comparison:end -->$/ { skip = 0; next }
			!skip { print }' "$DOC" >"$tmpdoc"
	else
		{ cat "$DOC"; echo; cat "$section"; } >"$tmpdoc"
	fi
	cat "$tmpdoc" >"$DOC"
	rm -f "$tmpdoc"
	echo "wrote the comparison into docs/PERFORMANCE.md" >&2
fi

echo
echo "core-noack squall/storm = $(ratio "${MED[core-noack.tuples_per_s.squall]:-}" "${MED[core-noack.tuples_per_s.storm]:-}")"
echo "core-acked squall/storm = $(ratio "${MED[core-acked.tuples_per_s.squall]:-}" "${MED[core-acked.tuples_per_s.storm]:-}")"
echo "trident-wordcount squall/storm = $(ratio "${MED[trident-wordcount.words_per_s.squall]:-}" "${MED[trident-wordcount.words_per_s.storm]:-}")"
echo "acker-bytes storm/squall = $(ratio "${MED[acker-memory.bytes_per_tree.storm]:-}" "${MED[acker-memory.bytes_per_tree.squall]:-}")"
echo "cluster-acked squall/storm = $(ratio "${MED[cluster-acked.tuples_per_s.squall]:-}" "${MED[cluster-acked.tuples_per_s.storm]:-}")"
echo "core-noack-p2 squall/storm = $(ratio "${MED[core-noack-p2.tuples_per_s.squall]:-}" "${MED[core-noack-p2.tuples_per_s.storm]:-}")"
echo "trident-wordcount-p2 squall/storm = $(ratio "${MED[trident-wordcount-p2.words_per_s.squall]:-}" "${MED[trident-wordcount-p2.words_per_s.storm]:-}")"
echo "trident-wordcount squall/floor = $(ratio "${MED[trident-wordcount.words_per_s.squall]:-}" "${MED[trident-wordcount.words_per_s.floor]:-}")"
echo "trident-wordcount-p2 squall/floor = $(ratio "${MED[trident-wordcount-p2.words_per_s.squall]:-}" "${MED[trident-wordcount-p2.words_per_s.floor]:-}")"
