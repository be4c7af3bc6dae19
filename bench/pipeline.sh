#!/usr/bin/env bash
# Room presence (examples/roompresence) at the speed of its services: in
# one run, against the real Kafka and Cassandra named by
# $SQUALL_KAFKA_BROKERS and $SQUALL_CASSANDRA_HOSTS (scripts/services.sh
# env), it
#
#   1. writes a generated day of --events events into a fresh topic (gen),
#   2. runs the pipeline on it end to end into a fresh keyspace
#      (run --until-caught-up, the default settings: 8 partitions, 2,000
#      records of each partition a batch, --presence-batch 16),
#   3. measures the two services alone on the same topic (bench/pipeline,
#      pipeline-bench): raw-kafka, a plain kafka-go Reader per partition;
#      raw-cassandra, the statements room presence sends for the same
#      batches, on the same tables, with the same grouping and concurrency,
#      written directly through the same gocql session settings
#      (statements/s turned into events/s at the pipeline's measured
#      statements per event),
#   4. checks the pipeline's results (verify; --no-verify skips it),
#
# --rounds N repeats steps 2 and 3 N times, alternately, each round into
# fresh keyspaces and dead-letter topics, on the same topic; the figures
# are the medians over the rounds (with the range), and verify checks the
# last round's keyspace. It prints, last:
#
#   roompresence events/s = A, limit = min(raw-kafka, raw-cassandra) = B, ratio = A/B
#
# A is the events (well-formed records) committed over the run's own time
# (start of the topology to caught up and committed, as `run` prints it).
# The pipeline's keyspaces and topics are left for inspection (names
# printed); the raw keyspaces are dropped.
#
# Usage: bench/pipeline.sh [--events 200000] [--rounds 1] [--no-verify]
set -euo pipefail

die() { echo "pipeline.sh: $*" >&2; exit 1; }

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=$ROOT/bench/out
events=200000 verify=1 rounds=1
while [ $# -gt 0 ]; do
	case $1 in
	--events) events=${2:?--events needs a value}; shift ;;
	--rounds) rounds=${2:?--rounds needs a value}; shift ;;
	--no-verify) verify=0 ;;
	-h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) die "unknown option $1 (see --help)" ;;
	esac
	shift
done
[[ $events =~ ^[1-9][0-9]*$ ]] || die "--events must be a positive integer"
[[ $rounds =~ ^[1-9][0-9]*$ ]] || die "--rounds must be a positive integer"
[ -n "${SQUALL_KAFKA_BROKERS:-}" ] && [ -n "${SQUALL_CASSANDRA_HOSTS:-}" ] ||
	die 'needs $SQUALL_KAFKA_BROKERS and $SQUALL_CASSANDRA_HOSTS: set -a; eval "$(scripts/services.sh env)"; set +a'
export SQUALL_KAFKA_BROKERS SQUALL_CASSANDRA_HOSTS

mkdir -p "$OUT"
echo "building..." >&2
(cd "$ROOT" && go build -o "$OUT/roompresence" ./examples/roompresence && go build -o "$OUT/pipeline-bench" ./bench/pipeline) ||
	die "go build failed"

run_id=bp$(date -u +%Y%m%d%H%M%S)
topic=${run_id}_ev
LOG=$OUT/pipeline-$run_id.log
: >"$LOG"
rp="$OUT/roompresence"
echo "topic $topic, log $LOG" >&2

echo "gen --events $events..." >&2
"$rp" gen --events "$events" --topic "$topic" --dlq "${run_id}_dlq" --keyspace "${run_id}_gen" >>"$LOG" 2>&1 || die "gen failed (log: $LOG)"

# seconds of a Go duration (1h2m3.5s, 2m3.456s, 12.3s, 850ms).
duration_s() {
	awk -v d="$1" 'BEGIN { s = 0
		while (match(d, /^[0-9.]+(h|ms|µs|us|ns|m|s)/)) {
			t = substr(d, 1, RLENGTH); d = substr(d, RLENGTH + 1)
			match(t, /[a-zµ]+$/); u = substr(t, RSTART); v = substr(t, 1, RSTART - 1) + 0
			if (u == "h") s += v * 3600; else if (u == "m") s += v * 60; else if (u == "s") s += v
			else if (u == "ms") s += v / 1000; else if (u == "µs" || u == "us") s += v / 1e6; else s += v / 1e9 }
		printf "%.3f", s }'
}
# field KEY LINE: the value of KEY=value in a RESULT line.
field() { awk -v k="$1" '{ for (i = 1; i <= NF; i++) if (index($i, k "=") == 1) { print substr($i, length(k) + 2); exit } }' <<<"$2"; }
# stats: reads numbers, prints "median min max".
stats() {
	sort -g | awk '{ a[NR] = $1 } END {
		m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
		printf "%.0f %.0f %.0f\n", m, a[1], a[NR] }'
}

pipe_all=() kafka_all=() cass_all=() ratio_all=()
for round in $(seq 1 "$rounds"); do
	ks=${run_id}_pipe$round
	common=(--topic "$topic" --dlq "${run_id}_dlq$round" --keyspace "$ks")
	echo "round $round: run --until-caught-up into $ks..." >&2
	load_before=$(cut -d' ' -f1-3 /proc/loadavg)
	echo "== round $round pipeline" >>"$LOG"
	"$rp" run --until-caught-up --http "" --drpc "" "${common[@]}" >>"$LOG" 2>&1 || die "run failed (log: $LOG)"
	load_after=$(cut -d' ' -f1-3 /proc/loadavg)
	done_line=$(grep '^run: committed txid' "$LOG" | tail -n1)
	stmt_line=$(grep '^run: Cassandra ' "$LOG" | tail -n1)
	[ -n "$done_line" ] && [ -n "$stmt_line" ] || die "run printed no summary (log: $LOG)"
	# run: committed txid N; E records read (replays included), D dead letters, in 1m2.345s
	# (E counts the well-formed records: the events.)
	read -r pevents took < <(sed -E 's/.*; ([0-9]+) records read.*, in ([0-9.hmµns]+)$/\1 \2/' <<<"$done_line")
	took_s=$(duration_s "$took")
	per_event=$(sed -E 's/.*statements \(([0-9.]+) per event.*/\1/' <<<"$stmt_line")
	[[ $per_event =~ ^[0-9.]+$ ]] || die "no statements per event in: $stmt_line"
	pipe_eps=$(awk -v e="$pevents" -v t="$took_s" 'BEGIN { printf "%.0f", e / t }')
	echo "  pipeline: $pevents events in $took_s s = $pipe_eps events/s, $per_event statements per event (load $load_before -> $load_after)" >&2
	echo "  ${stmt_line#run: }" >&2

	echo "round $round: raw-kafka and raw-cassandra..." >&2
	echo "== round $round raw" >>"$LOG"
	raw=$("$OUT/pipeline-bench" --topic "$topic" --keyspace "${run_id}_raw$round" --statements-per-event "$per_event" 2>>"$LOG") ||
		die "pipeline-bench failed (log: $LOG)"
	echo "$raw" >>"$LOG"
	sed 's/^/  /' <<<"$raw" >&2
	kafka_eps=$(field events_per_s "$(grep 'impl=raw-kafka' <<<"$raw")")
	cass_eps=$(field events_per_s "$(grep 'impl=raw-cassandra' <<<"$raw")")
	[ -n "$kafka_eps" ] && [ -n "$cass_eps" ] || die "pipeline-bench printed no RESULT lines (log: $LOG)"
	pipe_all+=("$pipe_eps") kafka_all+=("$kafka_eps") cass_all+=("$cass_eps")
	ratio_all+=("$(awk -v a="$pipe_eps" -v k="$kafka_eps" -v c="$cass_eps" 'BEGIN { printf "%.3f", a / ((k < c) ? k : c) }')")
done

if [ "$verify" = 1 ]; then
	echo "verify of round $rounds..." >&2
	"$rp" verify "${common[@]}" >>"$LOG" 2>&1 || die "verify found mismatches (log: $LOG)"
	grep -E '^verify' "$LOG" | tail -n2 >&2 || true
fi

read -r pipe pipe_min pipe_max < <(printf '%s\n' "${pipe_all[@]}" | stats)
read -r kafka kafka_min kafka_max < <(printf '%s\n' "${kafka_all[@]}" | stats)
read -r cass cass_min cass_max < <(printf '%s\n' "${cass_all[@]}" | stats)
limit=$(awk -v k="$kafka" -v c="$cass" 'BEGIN { printf "%.0f", (k < c) ? k : c }')
which=raw-cassandra
awk -v k="$kafka" -v c="$cass" 'BEGIN { exit !(k < c) }' && which=raw-kafka
ratio=$(awk -v a="$pipe" -v b="$limit" 'BEGIN { printf "%.2f", a / b }')
echo "machine: $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -n1), $(nproc) CPUs; load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "rounds: $rounds; ratio per round (pipeline / that round's limit): ${ratio_all[*]}"
echo "raw-kafka events/s = $kafka ($kafka_min-$kafka_max), raw-cassandra events/s = $cass ($cass_min-$cass_max), pipeline $pipe ($pipe_min-$pipe_max); the limit: $which"
echo "roompresence events/s = $pipe, limit = min(raw-kafka, raw-cassandra) = $limit, ratio = $ratio"
