#!/usr/bin/env bash
# services.sh: the real Apache Kafka, Apache Cassandra and etcd (a cluster of
# three members) that squall's integration tests run against, on 127.0.0.1
# (or $SQUALL_SERVICES_HOST), without Docker.
#
#   scripts/services.sh up       resolve jars (first run only), start all, wait until ready
#   scripts/services.sh down     stop all (by recorded pid) and wait for them to exit
#   scripts/services.sh status   say what runs; exit 0 only if all run
#   scripts/services.sh env      print SQUALL_KAFKA_BROKERS=..., SQUALL_CASSANDRA_HOSTS=...
#                                and SQUALL_ETCD_ENDPOINTS=... (and the SASL_SSL
#                                listener's variables)
#   up, down, status and env take an optional service name (kafka,
#   cassandra or etcd) to act on that one only.
#   scripts/services.sh pin-jars [kafka|cassandra]
#                                resolve the jars and write their sha256 sums
#                                to scripts/jvm/NAME/jars.sha256
#   scripts/services.sh stop|start|restart kafka|cassandra|etcd
#                                stop one service, or start it again on the same
#                                ports with the same data (fault-injection tests)
#
# etcd is three members of one cluster, each a process of cmd/squall-etcd
# (etcd's server as a Go module, the version in go.mod) that `up` builds
# with `go build`; "etcd running" means all three run. Members listen on
# client ports SQUALL_ETCD_PORT, +100, +200 and peer ports one above each.
#
# Jars come from Maven Central through `mvn dependency:copy-dependencies` on
# scripts/jvm/{kafka,cassandra}/pom.xml, into Maven's local repository and a
# copy under the services directory; later runs reuse both. Every jar copied
# must match the sha256 sum pinned in scripts/jvm/NAME/jars.sha256 (regenerate
# that list with `scripts/services.sh pin-jars NAME` after changing a pom.xml);
# `up` fails on a mismatch or a jar missing from the list. Every start by
# `up` begins with empty data directories; `start` and `restart` keep the data
# (topics, offsets, keyspaces, rows), the ports and the jars of the last `up`.
# See docs/testing.md.
#
# Settings (environment):
#   SQUALL_SERVICES_DIR            everything the script writes (default: <repo>/.services)
#   SQUALL_JAVA                    a Java 17 `java` binary (default: found automatically)
#   SQUALL_KAFKA_PORT              Kafka client port            (default 19092)
#   SQUALL_KAFKA_CONTROLLER_PORT   Kafka KRaft controller port  (default 19093)
#   SQUALL_KAFKA_SASL_PORT         Kafka SASL_SSL client port   (default 19094)
#   SQUALL_CASSANDRA_PORT          Cassandra CQL port           (default 19042)
#   SQUALL_CASSANDRA_STORAGE_PORT  Cassandra internode port     (default 17000)
#   SQUALL_ETCD_PORT               first etcd member's client port (default 12379;
#                                  members use it, +100 and +200; peers one above)
#   SQUALL_KAFKA_HEAP              Kafka maximum heap           (default 512m)
#   SQUALL_CASSANDRA_HEAP          Cassandra heap               (default 1g)
#   SQUALL_SERVICES_TIMEOUT        seconds to wait for each service to be ready (default 180)
#   SQUALL_SERVICES_HOST           the IPv4 address every service listens on and advertises
#                                  (default 127.0.0.1; the partition harness runs them on an
#                                  address of a network namespace, see docs/partitions.md)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DIR=${SQUALL_SERVICES_DIR:-$ROOT/.services}
KAFKA_PORT=${SQUALL_KAFKA_PORT:-19092}
KAFKA_CONTROLLER_PORT=${SQUALL_KAFKA_CONTROLLER_PORT:-19093}
KAFKA_SASL_PORT=${SQUALL_KAFKA_SASL_PORT:-19094}
CASSANDRA_PORT=${SQUALL_CASSANDRA_PORT:-19042}
CASSANDRA_STORAGE_PORT=${SQUALL_CASSANDRA_STORAGE_PORT:-17000}
ETCD_PORT=${SQUALL_ETCD_PORT:-12379}
HOST=${SQUALL_SERVICES_HOST:-127.0.0.1}
ETCD_MEMBERS=(m1 m2 m3)
KAFKA_HEAP=${SQUALL_KAFKA_HEAP:-512m}
CASSANDRA_HEAP=${SQUALL_CASSANDRA_HEAP:-1g}
TIMEOUT=${SQUALL_SERVICES_TIMEOUT:-180}
SERVICES=(cassandra kafka etcd) # start order: the slow one first

# The SASL_SSL listener's test user: the same name and password for PLAIN,
# SCRAM-SHA-256 and SCRAM-SHA-512. Test credentials only; the TLS key store
# password protects a throw-away self-signed key.
KAFKA_SASL_USER=squall
KAFKA_SASL_PASSWORD=squall-test-secret
KAFKA_KEYSTORE_PASSWORD=squall-test-keystore

# A fixed KRaft cluster id (22 characters of URL-safe base64): `up` wipes the
# data, and `start` reuses data formatted with this same id.
KAFKA_CLUSTER_ID=c3F1YWxsLXRlc3Qta2Fma2E

usage() {
	cat >&2 <<EOF
usage: scripts/services.sh up | down | status | env [kafka|cassandra|etcd]
       scripts/services.sh stop | start | restart kafka|cassandra|etcd
       scripts/services.sh pin-jars [kafka|cassandra]

  up       resolve Kafka and Cassandra jars with Maven (first run only), build
           cmd/squall-etcd, start all on 127.0.0.1 with empty data and wait until
           they answer; does nothing for a service that already runs
  down     stop all and wait for them to exit
  status   say whether each runs; exit 0 if all run, 3 otherwise
  env      print the variables the integration tests read, e.g.
             eval "\$(scripts/services.sh env)"; go test ./...
  stop     stop one service and wait for it to exit (nothing if it is not running)
  start    start one service again after 'up' set it up: same ports, same data
           (topics, offsets, keyspaces, rows), and wait until it answers; only
           waits for it to answer if it already runs
  restart  stop, then start
  pin-jars resolve the jars and write their sha256 sums to
           scripts/jvm/NAME/jars.sha256 (after changing a pom.xml)

  up, down, status and env act on every service, or on the one named.
  etcd is a cluster of three member processes, acted on together.
EOF
}

say() { printf 'services: %s\n' "$*" >&2; }
die() {
	printf 'services: error: %s\n' "$*" >&2
	exit 1
}

# ---------------------------------------------------------------- processes

# alive PID: the process exists and is not a zombie.
alive() {
	local pid=$1 stat
	[[ -n $pid ]] || return 1
	stat=$(cat "/proc/$pid/stat" 2>/dev/null) || return 1
	stat=${stat##*) }
	[[ ${stat%% *} != Z ]]
}

# pid_of NAME: the recorded pid of a service if that process is still ours
# (its command line names our services directory), else nothing.
pid_of() {
	local f=$DIR/$1/pid pid
	[[ -f $f ]] || return 0
	pid=$(<"$f")
	if alive "$pid" && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$DIR/"; then
		echo "$pid"
	fi
}

# members NAME...: the processes of each service, as names under $DIR: the
# service itself, or etcd/m1 etcd/m2 etcd/m3 for etcd's members.
members() {
	local name m
	for name in "$@"; do
		if [[ $name == etcd ]]; then
			for m in "${ETCD_MEMBERS[@]}"; do echo "etcd/$m"; done
		else
			echo "$name"
		fi
	done
}

# running NAME: every process of the service runs.
running() {
	local m
	for m in $(members "$1"); do
		[[ -n $(pid_of "$m") ]] || return 1
	done
}

# pids_of NAME: the pids of the service's running processes, space-separated.
pids_of() {
	local m pid out=()
	for m in $(members "$1"); do
		pid=$(pid_of "$m")
		[[ -z $pid ]] || out+=("$pid")
	done
	echo "${out[*]}"
}

# port_in_use PORT: something accepts connections on $HOST:PORT (SQUALL_SERVICES_HOST).
port_in_use() {
	(exec 3<>"/dev/tcp/$HOST/$1") 2>/dev/null
}

# stop NAME...: SIGTERM to each, wait up to 60 s for all, then SIGKILL the
# rest and wait for them too. Returns 1 if a process survived SIGKILL.
stop() {
	local name pid i j names=() pids=() left t0 took=() rc=0
	t0=$(now_ms)
	for name in "$@"; do
		pid=$(pid_of "$name")
		if [[ -n $pid ]]; then
			kill -TERM "$pid" 2>/dev/null || true
			names+=("$name")
			pids+=("$pid")
		else
			rm -f "$DIR/$name/pid"
		fi
	done
	for ((i = 0; i < 700; i++)); do
		left=0
		for j in "${!pids[@]}"; do
			[[ -z ${took[j]:-} ]] || continue
			if alive "${pids[j]}"; then
				left=1
				if ((i == 600)); then
					say "pid ${pids[j]} did not stop within 60s after SIGTERM; sending SIGKILL"
					kill -KILL "${pids[j]}" 2>/dev/null || true
				fi
			else
				took[j]=$(secs_since "$t0")
			fi
		done
		((left)) || break
		sleep 0.1
	done
	for i in "${!names[@]}"; do
		rm -f "$DIR/${names[i]}/pid"
		if alive "${pids[i]}"; then
			say "${names[i]} (pid ${pids[i]}) is still running after SIGKILL"
			rc=1
		else
			say "${names[i]} stopped (pid ${pids[i]}) in ${took[i]:-$(secs_since "$t0")}s"
		fi
	done
	return $rc
}

# ---------------------------------------------------------------- tools

# Under CI the script may install a missing Debian package itself.
apt_install() {
	if [[ ${CI:-} == true && $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
		say "installing Debian package(s) $* (CI)"
		if DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >"$DIR/logs/apt.log" 2>&1 ||
			{ apt-get update -q >>"$DIR/logs/apt.log" 2>&1 &&
				DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >>"$DIR/logs/apt.log" 2>&1; }; then
			return 0
		fi
		tail -n 5 "$DIR/logs/apt.log" >&2
	fi
	return 1
}

java_major() { # java_major JAVA -> 17, 21, ...
	"$1" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java\.specification\.version = \([0-9.]*\).*/\1/p' | head -n 1
}

find_java() {
	local c
	if [[ -n ${SQUALL_JAVA:-} ]]; then
		[[ -x $SQUALL_JAVA && $(java_major "$SQUALL_JAVA") == 17 ]] ||
			die "SQUALL_JAVA=$SQUALL_JAVA is not a Java 17 'java' binary; point it at one (e.g. /usr/lib/jvm/java-17-openjdk-amd64/bin/java)"
		JAVA=$SQUALL_JAVA
		return
	fi
	for c in ${JAVA_HOME:+"$JAVA_HOME/bin/java"} /usr/lib/jvm/java-17-openjdk-*/bin/java /usr/lib/jvm/*17*/bin/java "$(command -v java || true)"; do
		if [[ -x $c && $(java_major "$c") == 17 ]]; then
			JAVA=$c
			return
		fi
	done
	if apt_install openjdk-17-jre-headless; then
		find_java
		return
	fi
	die "no Java 17 found (Cassandra 5.0 needs 11 or 17, Kafka 4 needs 17+): install one, e.g. 'apt-get install openjdk-17-jre-headless', or set SQUALL_JAVA=/path/to/java17/bin/java"
}

find_mvn() {
	command -v mvn >/dev/null && return 0
	apt_install maven && command -v mvn >/dev/null && return 0
	die "Maven ('mvn') is not installed and the $1 jars are not cached yet: install it, e.g. 'apt-get install maven', then run 'scripts/services.sh up' again"
}

# resolve NAME: copy the runtime jars of scripts/jvm/NAME/pom.xml into
# $DIR/lib/NAME, unless a copy made from the same pom is already there.
resolve() {
	local name=$1 pom=$ROOT/scripts/jvm/$1/pom.xml lib=$DIR/lib/$1 log=$DIR/logs/maven-$1.log want attempt t0
	want=$(sha256sum "$pom" | cut -d' ' -f1)
	if [[ -f $lib/.pom.sha256 && $(<"$lib/.pom.sha256") == "$want" ]]; then
		return 0
	fi
	find_mvn "$name"
	say "resolving $name jars with Maven (first run only; log: $log)"
	t0=$SECONDS
	rm -rf "$lib.tmp"
	: >"$log"
	local flags=(-B -q)
	for attempt in 1 2 3; do
		if mvn "${flags[@]}" -f "$pom" \
			org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies -DincludeScope=runtime \
			-DoutputDirectory="$lib.tmp" >>"$log" 2>&1; then
			rm -rf "$lib"
			mv "$lib.tmp" "$lib"
			echo "$want" >"$lib/.pom.sha256"
			say "resolved $name: $(find "$lib" -name '*.jar' | wc -l) jars in $((SECONDS - t0))s"
			return 0
		fi
		say "Maven resolution of $name failed (attempt $attempt of 3)"
		# Maven caches a failed download in ~/.m2 and would not try that
		# artifact again for a day; -U makes the retries really retry.
		flags=(-B -q -U)
		((attempt == 3)) || sleep $((attempt * 5))
	done
	sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -E '^\[ERROR\] .*[a-z]' | grep -v -i -E 're-run|help 1|for more information' | head -n 2 | cut -c1-400 >&2 || true
	die "Maven could not resolve the $name jars (full log: $log): check that Maven Central is reachable (or your ~/.m2/settings.xml mirror), then run 'scripts/services.sh up' again"
}

# verify_jars NAME: every jar in $DIR/lib/NAME has the sha256 sum pinned in
# scripts/jvm/NAME/jars.sha256, and every pinned jar is there. On a mismatch
# the copy is marked stale (the next `up` resolves it again) and the script
# fails. `up` checks every copy it starts from; `pin-jars` writes the list.
verify_jars() {
	local name=$1 lib=$DIR/lib/$1 list=$ROOT/scripts/jvm/$1/jars.sha256 sum file bad=()
	[[ -f $list ]] || die "no pinned jar sums for $name ($list is missing): run 'scripts/services.sh pin-jars $name' and review the list"
	local -A pinned=() got=()
	while read -r sum file; do
		[[ -n $sum && $sum != \#* ]] || continue
		pinned[$file]=$sum
	done <"$list"
	while read -r sum file; do
		got[${file##*/}]=$sum
	done < <(sha256sum "$lib"/*.jar)
	for file in "${!got[@]}"; do
		if [[ -z ${pinned[$file]:-} ]]; then
			bad+=("$file: not in the pinned list")
		elif [[ ${pinned[$file]} != "${got[$file]}" ]]; then
			bad+=("$file: sha256 ${got[$file]}, pinned ${pinned[$file]}")
		fi
	done
	for file in "${!pinned[@]}"; do
		[[ -n ${got[$file]:-} ]] || bad+=("$file: pinned but not resolved")
	done
	((${#bad[@]} == 0)) && return 0
	rm -f "$lib/.pom.sha256"
	printf '  %s\n' "${bad[@]}" | sort >&2
	die "the $name jars in $lib do not match the sha256 sums pinned in $list (above). If you changed scripts/jvm/$name/pom.xml, regenerate the list with 'scripts/services.sh pin-jars $name' and review the diff; otherwise a download is not what was pinned: delete it from ~/.m2/repository and run 'scripts/services.sh up' again"
}

# cmd_pin_jars: resolve the jars of each service in SERVICES and write
# their sums to scripts/jvm/NAME/jars.sha256.
cmd_pin_jars() {
	local name list
	for name in "${SERVICES[@]}"; do
		[[ $name != etcd ]] || continue
		resolve "$name"
		list=$ROOT/scripts/jvm/$name/jars.sha256
		{
			echo "# sha256 sums of the $name jars scripts/jvm/$name/pom.xml resolves;"
			echo "# written by 'scripts/services.sh pin-jars $name', checked by 'up'."
			(cd "$DIR/lib/$name" && sha256sum -- *.jar)
		} >"$list"
		say "pinned $(grep -c '\.jar$' "$list") $name jars in $list"
	done
}

# probe KIND ADDR: one readiness check (a Kafka metadata request, a CQL
# query on system.local, or a linearizable etcd read) by the small Go
# program in internal/testenv/probe.
probe() {
	"$DIR/bin/probe" -timeout 5s "$1" "$2" >>"$DIR/$1/probe.log" 2>&1
}

build_probe() {
	command -v go >/dev/null || die "Go is not installed; it builds the readiness probe (internal/testenv/probe)"
	(cd "$ROOT" && go build -o "$DIR/bin/probe" ./internal/testenv/probe) >"$DIR/logs/probe-build.log" 2>&1 ||
		{ tail -n 20 "$DIR/logs/probe-build.log" >&2; die "could not build the readiness probe (go build ./internal/testenv/probe failed; log above)"; }
}

# build_etcd: the etcd member program (cmd/squall-etcd), built from this
# checkout with the etcd version pinned in go.mod.
build_etcd() {
	command -v go >/dev/null || die "Go is not installed; it builds the etcd members (cmd/squall-etcd)"
	(cd "$ROOT" && go build -o "$DIR/bin/squall-etcd" ./cmd/squall-etcd) >"$DIR/logs/etcd-build.log" 2>&1 ||
		{ tail -n 20 "$DIR/logs/etcd-build.log" >&2; abort_up "could not build the etcd member program (go build ./cmd/squall-etcd failed; log above)"; }
}

# etcd_client_port I / etcd_peer_port I: the ports of member I (0, 1, 2).
etcd_client_port() { echo $((ETCD_PORT + 100 * $1)); }
etcd_peer_port() { echo $((ETCD_PORT + 100 * $1 + 1)); }

# ---------------------------------------------------------------- configs

write_etcd_config() {
	local i cluster=()
	for i in "${!ETCD_MEMBERS[@]}"; do
		cluster+=("${ETCD_MEMBERS[i]}=http://$HOST:$(etcd_peer_port "$i")")
	done
	{
		echo "# Written by scripts/services.sh: name client-port peer-port initial-cluster, one member a line."
		for i in "${!ETCD_MEMBERS[@]}"; do
			echo "${ETCD_MEMBERS[i]} $(etcd_client_port "$i") $(etcd_peer_port "$i") $(
				IFS=,
				echo "${cluster[*]}"
			)"
		done
	} >"$DIR/etcd/conf/members"
}

write_kafka_config() {
	local d=$DIR/kafka
	cat >"$d/conf/server.properties" <<EOF
# Written by scripts/services.sh: one combined KRaft broker+controller for tests.
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@$HOST:$KAFKA_CONTROLLER_PORT
listeners=PLAINTEXT://$HOST:$KAFKA_PORT,CONTROLLER://$HOST:$KAFKA_CONTROLLER_PORT,SASL_SSL://$HOST:$KAFKA_SASL_PORT
advertised.listeners=PLAINTEXT://$HOST:$KAFKA_PORT,SASL_SSL://$HOST:$KAFKA_SASL_PORT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SASL_SSL:SASL_SSL
# The SASL_SSL listener: TLS with the self-signed key in tls/broker.p12 and
# SASL with PLAIN (users in the JAAS line) or SCRAM (credentials stored in
# the metadata log when the storage is formatted).
listener.name.sasl_ssl.sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512
listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_$KAFKA_SASL_USER="$KAFKA_SASL_PASSWORD";
listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_ssl.ssl.keystore.type=PKCS12
listener.name.sasl_ssl.ssl.keystore.location=$d/tls/broker.p12
listener.name.sasl_ssl.ssl.keystore.password=$KAFKA_KEYSTORE_PASSWORD
listener.name.sasl_ssl.ssl.key.password=$KAFKA_KEYSTORE_PASSWORD
log.dirs=$d/data
num.partitions=1
default.replication.factor=1
min.insync.replicas=1
auto.create.topics.enable=true
delete.topic.enable=true
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
share.coordinator.state.topic.num.partitions=1
group.initial.rebalance.delay.ms=0
num.network.threads=2
num.io.threads=2
num.recovery.threads.per.data.dir=1
log.segment.bytes=16777216
EOF
	cat >"$d/conf/log4j2.properties" <<'EOF'
status = warn
appender.console.type = Console
appender.console.name = STDOUT
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.stdout.ref = STDOUT
logger.kafka.name = kafka
logger.kafka.level = INFO
logger.apache.name = org.apache.kafka
logger.apache.level = INFO
EOF
}

# kafka_san: the subject alternative names of the SASL_SSL listener's
# certificate: $HOST (127.0.0.1 by default), 127.0.0.1 and localhost.
kafka_san() {
	if [[ $HOST == 127.0.0.1 ]]; then
		echo "IP:127.0.0.1,DNS:localhost"
	else
		echo "IP:$HOST,IP:127.0.0.1,DNS:localhost"
	fi
}

# write_kafka_tls: a self-signed key for the SASL_SSL listener, valid for
# the names of kafka_san, in a PKCS12 key store for the broker, and its
# certificate in PEM (tls/ca.pem) for clients to trust. Made afresh by `up`.
write_kafka_tls() {
	local d=$DIR/kafka/tls keytool
	keytool=$(dirname "$(readlink -f "$JAVA")")/keytool
	[[ -x $keytool ]] || die "no keytool beside $JAVA: the Kafka SASL_SSL listener needs it to make a test certificate (it ships with every JDK and JRE package)"
	rm -rf "$d"
	mkdir -p "$d"
	"$keytool" -genkeypair -alias squall-kafka -keyalg RSA -keysize 2048 -validity 3650 \
		-dname "CN=squall-test-kafka" -ext "SAN=$(kafka_san)" \
		-storetype PKCS12 -keystore "$d/broker.p12" \
		-storepass "$KAFKA_KEYSTORE_PASSWORD" -keypass "$KAFKA_KEYSTORE_PASSWORD" >"$DIR/kafka/logs/keytool.log" 2>&1 &&
		"$keytool" -exportcert -rfc -alias squall-kafka -keystore "$d/broker.p12" \
			-storepass "$KAFKA_KEYSTORE_PASSWORD" -file "$d/ca.pem" >>"$DIR/kafka/logs/keytool.log" 2>&1 ||
		{ tail -n 5 "$DIR/kafka/logs/keytool.log" >&2; abort_up "could not make the Kafka test certificate with $keytool (log above)"; }
}

write_cassandra_config() {
	local d=$DIR/cassandra
	cat >"$d/conf/cassandra.yaml" <<EOF
# Written by scripts/services.sh: a single Cassandra node for tests.
cluster_name: squall-test
partitioner: org.apache.cassandra.dht.Murmur3Partitioner
endpoint_snitch: SimpleSnitch
num_tokens: 1
initial_token: 0
seed_provider:
  - class_name: org.apache.cassandra.locator.SimpleSeedProvider
    parameters:
      - seeds: "$HOST:$CASSANDRA_STORAGE_PORT"
listen_address: $HOST
rpc_address: $HOST
storage_port: $CASSANDRA_STORAGE_PORT
native_transport_port: $CASSANDRA_PORT
start_native_transport: true
data_file_directories:
  - $d/data/data
commitlog_directory: $d/data/commitlog
hints_directory: $d/data/hints
saved_caches_directory: $d/data/saved_caches
cdc_raw_directory: $d/data/cdc_raw
commitlog_sync: periodic
commitlog_sync_period: 10000ms
commitlog_segment_size: 8MiB
cdc_enabled: false
auto_snapshot: false
incremental_backups: false
snapshot_before_compaction: false
memtable_allocation_type: heap_buffers
disk_access_mode: standard
# Generous timeouts: the race detector and two cores make tests slow clients.
read_request_timeout: 10000ms
range_request_timeout: 20000ms
write_request_timeout: 10000ms
counter_write_request_timeout: 10000ms
cas_contention_timeout: 5000ms
truncate_request_timeout: 60000ms
request_timeout: 20000ms
EOF
	cat >"$d/conf/logback.xml" <<'EOF'
<configuration>
  <appender name="STDOUT" class="ch.qos.logback.core.ConsoleAppender">
    <encoder><pattern>%-5level %date{HH:mm:ss.SSS} [%thread] %logger{0} - %msg%n</pattern></encoder>
  </appender>
  <root level="INFO"><appender-ref ref="STDOUT"/></root>
</configuration>
EOF
}

# The module flags of Cassandra 5.0's conf/jvm17-server.options.
cassandra_jpms_flags() {
	local m
	for m in \
		java.base/jdk.internal.misc java.base/jdk.internal.ref java.base/sun.nio.ch \
		java.management.rmi/com.sun.jmx.remote.internal.rmi java.rmi/sun.rmi.registry \
		java.rmi/sun.rmi.server java.sql/java.sql java.base/java.lang.ref \
		jdk.unsupported/sun.misc java.management/com.sun.jmx.remote.security; do
		printf -- '--add-exports=%s=ALL-UNNAMED\n' "$m"
	done
	for m in \
		java.base/java.lang.module java.base/jdk.internal.loader java.base/jdk.internal.ref \
		java.base/jdk.internal.reflect java.base/jdk.internal.math java.base/jdk.internal.module \
		java.base/jdk.internal.util.jar jdk.management/com.sun.management.internal \
		java.base/sun.nio.ch java.base/java.io java.base/java.lang.reflect java.base/java.lang \
		java.base/java.util java.base/java.nio; do
		printf -- '--add-opens=%s=ALL-UNNAMED\n' "$m"
	done
}

# ---------------------------------------------------------------- start

# close_fds: close every file descriptor above 2 of the current (sub)shell,
# so that a long-running service holds no lock or pipe of its caller (make's
# jobserver, a caller's flock, a CI log pipe).
close_fds() {
	local p fd
	for p in "/proc/$BASHPID/fd"/*; do
		fd=${p##*/}
		if ((fd > 2)); then
			eval "exec $fd>&-" 2>/dev/null || true
		fi
	done
}

# spawn LOG CMD...: start CMD in the background, in its own session, with
# stdin from /dev/null and stdout and stderr appended to LOG; its pid goes to
# SPAWNED. The background subshell execs CMD (setsid does not fork here: the
# subshell is no process group leader), so the pid is CMD's own.
spawn() {
	local log=$1
	shift
	local pre=()
	command -v setsid >/dev/null && pre=(setsid)
	{
		close_fds
		exec "${pre[@]}" "$@" >>"$log" 2>&1 </dev/null
	} &
	SPAWNED=$!
}

start_kafka() {
	local d=$DIR/kafka opts
	opts=(-Xms128m "-Xmx$KAFKA_HEAP" -XX:+ExitOnOutOfMemoryError -XX:+UseG1GC -XX:MaxGCPauseMillis=20
		-XX:+ExplicitGCInvokesConcurrent -Djava.awt.headless=true
		-Djava.io.tmpdir="$d/tmp" -Dkafka.logs.dir="$d/logs"
		-Dlog4j2.configurationFile="$d/conf/log4j2.properties")
	# Format empty storage only: a restart keeps its topics and offsets.
	if [[ ! -f $d/data/meta.properties ]]; then
		(
			close_fds
			exec "$JAVA" "${opts[@]}" -cp "$DIR/lib/kafka/*" kafka.tools.StorageTool format \
				-t "$KAFKA_CLUSTER_ID" -c "$d/conf/server.properties" --ignore-formatted \
				--add-scram "SCRAM-SHA-256=[name=$KAFKA_SASL_USER,password=$KAFKA_SASL_PASSWORD]" \
				--add-scram "SCRAM-SHA-512=[name=$KAFKA_SASL_USER,password=$KAFKA_SASL_PASSWORD]" \
				>"$d/logs/format.log" 2>&1 </dev/null
		) || { tail -n 20 "$d/logs/format.log" >&2; abort_up "formatting Kafka's storage failed (log above: $d/logs/format.log)"; }
	fi
	spawn "$d/logs/server.log" "$JAVA" "${opts[@]}" -cp "$DIR/lib/kafka/*" kafka.Kafka "$d/conf/server.properties"
	echo "$SPAWNED" >"$d/pid"
}

start_cassandra() {
	local d=$DIR/cassandra opts pre=() jpms
	mapfile -t jpms < <(cassandra_jpms_flags)
	# Cassandra calls mlockall() at start-up. As root that succeeds and pins
	# (and first faults in) the whole heap: slow and large for a test node.
	# Without CAP_IPC_LOCK the call fails against RLIMIT_MEMLOCK and
	# Cassandra only logs a warning.
	if [[ $(id -u) == 0 ]] && command -v setpriv >/dev/null; then
		pre=(setpriv --bounding-set -ipc_lock --inh-caps -ipc_lock)
	fi
	opts=(-Xms256m "-Xmx$CASSANDRA_HEAP" -Xss256k -XX:+ExitOnOutOfMemoryError -XX:+UseG1GC
		-XX:+ParallelRefProcEnabled -XX:MaxTenuringThreshold=1 -XX:+PerfDisableSharedMem
		-XX:+UseThreadPriorities -XX:+UseTLAB -XX:+ResizeTLAB
		-ea -da:net.openhft... -Djava.net.preferIPv4Stack=true
		-Dio.netty.tryReflectionSetAccessible=true -Dio.netty.allocator.useCacheForAllThreads=true
		-Dio.netty.allocator.maxOrder=11
		"${jpms[@]}"
		-javaagent:"$(echo "$DIR"/lib/cassandra/jamm-*.jar)"
		-Djava.io.tmpdir="$d/tmp" -Djna.tmpdir="$d/tmp"
		-Dcassandra.config="file://$d/conf/cassandra.yaml"
		-Dcassandra.storagedir="$d/data" -Dcassandra.logdir="$d/logs"
		-Dlogback.configurationFile=logback.xml -Dcassandra-foreground=yes
		-Dcassandra.skip_wait_for_gossip_to_settle=0 -Dcassandra.unsafesystem=true
		-Dcassandra.test.flush_local_schema_changes=false
		-Dcassandra.superuser_setup_delay_ms=0 -Dcassandra.shutdown_announce_in_ms=0)
	spawn "$d/logs/system.log" "${pre[@]}" "$JAVA" "${opts[@]}" -cp "$d/conf:$DIR/lib/cassandra/*" \
		org.apache.cassandra.service.CassandraDaemon
	echo "$SPAWNED" >"$d/pid"
}

# start_etcd: start each member that does not run, with the ports `up`
# wrote to etcd/conf/members; a member with data keeps it (etcd then ignores
# the initial cluster).
start_etcd() {
	local name cport pport cluster d
	[[ -x $DIR/bin/squall-etcd ]] || build_etcd
	while read -r name cport pport cluster; do
		[[ -n $name && $name != \#* ]] || continue
		d=$DIR/etcd/$name
		[[ -z $(pid_of "etcd/$name") ]] || continue
		mkdir -p "$d/data" "$d/logs"
		spawn "$d/logs/etcd.log" "$DIR/bin/squall-etcd" -name "$name" -data-dir "$d/data" \
			-client-url "http://$HOST:$cport" -peer-url "http://$HOST:$pport" \
			-initial-cluster "$cluster" -cluster-token squall-test-etcd -log-level warn
		echo "$SPAWNED" >"$d/pid"
	done <"$DIR/etcd/conf/members"
}

# etcd_addrs: the client addresses of the members, one a line.
etcd_addrs() {
	local name cport rest
	while read -r name cport rest; do
		[[ -n $name && $name != \#* ]] || continue
		echo "$HOST:$cport"
	done <"$DIR/etcd/conf/members"
}

port_of() { # port_of NAME -> client port
	case $1 in
	kafka) echo "$KAFKA_PORT" ;;
	cassandra) echo "$CASSANDRA_PORT" ;;
	etcd) etcd_client_port 0 ;;
	esac
}

ports_of() { # ports_of NAME -> PORT:VARIABLE for every port the service binds
	case $1 in
	kafka) echo "$KAFKA_PORT:SQUALL_KAFKA_PORT $KAFKA_CONTROLLER_PORT:SQUALL_KAFKA_CONTROLLER_PORT $KAFKA_SASL_PORT:SQUALL_KAFKA_SASL_PORT" ;;
	cassandra) echo "$CASSANDRA_PORT:SQUALL_CASSANDRA_PORT $CASSANDRA_STORAGE_PORT:SQUALL_CASSANDRA_STORAGE_PORT" ;;
	etcd)
		local i
		for i in "${!ETCD_MEMBERS[@]}"; do
			echo "$(etcd_client_port "$i"):SQUALL_ETCD_PORT $(etcd_peer_port "$i"):SQUALL_ETCD_PORT"
		done
		;;
	esac
}

log_of() { # log_of NAME -> its log files, one a line
	local m
	case $1 in
	kafka) echo "$DIR/kafka/logs/server.log" ;;
	cassandra) echo "$DIR/cassandra/logs/system.log" ;;
	etcd) for m in "${ETCD_MEMBERS[@]}"; do echo "$DIR/etcd/$m/logs/etcd.log"; done ;;
	esac
}

# abort_up REASON: stop what this invocation started, then exit 1.
STARTED=()
declare -A STARTED_AT=()
abort_up() {
	# shellcheck disable=SC2046 # members prints plain names
	((${#STARTED[@]} == 0)) || stop $(members "${STARTED[@]}") 2>/dev/null
	die "$1"
}

# fail_start NAME REASON: show the tail of the service's log (what this
# start wrote; `start` appends to the log of earlier runs), then abort_up.
declare -A LOG_FROM=()
fail_start() {
	local log
	for log in $(log_of "$1"); do
		printf -- '---- last lines of %s\n' "$log" >&2
		tail -c +$((${LOG_FROM[$log]:-0} + 1)) "$log" 2>/dev/null | tail -n 25 >&2 || true
	done
	printf -- '----\n' >&2
	abort_up "$2"
}

# now_ms: wall-clock milliseconds.
now_ms() {
	local t=${EPOCHREALTIME/[.,]/}
	echo $((t / 1000))
}

# secs_since MS: seconds since now_ms said MS, to a tenth: 5.2
secs_since() {
	local d=$(($(now_ms) - $1))
	echo "$((d / 1000)).$(((d % 1000) / 100))"
}

# wait_ready NAME...: poll each service's probe until it answers; fail when a
# process dies or the timeout passes.
wait_ready() {
	local pending=("$@") left name a addr addrs pid pids m status t0 ok
	t0=$(now_ms)
	for name in "${pending[@]}"; do : >"$DIR/$name/probe.log"; done
	while ((${#pending[@]} > 0)); do
		left=()
		for name in "${pending[@]}"; do
			if [[ $name == etcd ]]; then
				addrs=$(etcd_addrs)
			else
				addrs=$HOST:$(recorded_port "$name")
			fi
			addr=${addrs//$'\n'/,}
			pids=()
			for m in $(members "$name"); do
				pid=$(<"$DIR/$m/pid")
				pids+=("$pid")
				if ! alive "$pid"; then
					status=unknown
					wait "$pid" 2>/dev/null && status=0 || status=$?
					fail_start "$name" "$m exited during start-up (exit status $status); read the log lines above (full log: $(log_of "$name" | paste -sd' ' -))"
				fi
			done
			ok=1
			for a in $addrs; do
				probe "$name" "$a" || {
					ok=0
					break
				}
			done
			if ((ok)); then
				if [[ -n ${STARTED_AT[$name]:-} ]]; then
					say "$name ready on $addr, $(secs_since "${STARTED_AT[$name]}")s after its start (pid ${pids[*]})"
				else
					say "$name already running and ready on $addr (pid ${pids[*]})"
				fi
				continue
			fi
			if (($(now_ms) - t0 >= TIMEOUT * 1000)); then
				tail -n 3 "$DIR/$name/probe.log" >&2 || true
				fail_start "$name" "$name did not answer on $addr within ${TIMEOUT}s (raise SQUALL_SERVICES_TIMEOUT if the machine is slow; full log: $(log_of "$name" | paste -sd' ' -))"
			fi
			left+=("$name")
		done
		pending=("${left[@]}")
		((${#pending[@]} == 0)) || sleep 0.5
	done
}

cmd_up() {
	local name port pid t0=$SECONDS to_start=()
	trap 'trap - INT TERM; abort_up "interrupted; stopped what this run had started"' INT TERM
	for name in "${SERVICES[@]}"; do
		if running "$name"; then
			continue
		fi
		# Some but not all of etcd's members run: stop them, start afresh.
		# shellcheck disable=SC2046 # members prints plain names
		[[ -z $(pids_of "$name") ]] || stop $(members "$name")
		for port in $(ports_of "$name"); do
			if port_in_use "${port%%:*}"; then
				die "port $HOST:${port%%:*} (for $name) is already in use by another process: stop that process, or set ${port#*:} to a free port"
			fi
		done
		to_start+=("$name")
	done

	if ((${#to_start[@]} > 0)); then
		for name in "${to_start[@]}"; do
			[[ $name != etcd ]] || continue
			[[ -n ${JAVA:-} ]] || find_java
			resolve "$name"
			verify_jars "$name"
		done
		for name in "${to_start[@]}"; do
			if [[ $name == etcd ]]; then
				rm -rf "${DIR:?}/etcd"
				mkdir -p "$DIR/etcd/conf"
				build_etcd
			else
				rm -rf "${DIR:?}/$name/data" "${DIR:?}/$name/tmp" "${DIR:?}/$name/logs"
				mkdir -p "$DIR/$name/conf" "$DIR/$name/data" "$DIR/$name/tmp" "$DIR/$name/logs"
			fi
			"write_${name}_config"
			[[ $name != kafka ]] || write_kafka_tls
			STARTED+=("$name")
			STARTED_AT[$name]=$(now_ms)
			port_of "$name" >"$DIR/$name/port"
			ports_of "$name" >"$DIR/$name/ports"
			"start_${name}"
			say "started $name (pid $(pids_of "$name"), log: $(log_of "$name" | paste -sd' ' -))"
		done
	fi
	build_probe # also while the JVMs boot
	wait_ready "${SERVICES[@]}"
	say "up in $((SECONDS - t0))s"
	cmd_env
}

cmd_down() {
	# shellcheck disable=SC2046 # members prints plain names
	stop $(members "${SERVICES[@]}")
}

cmd_status() {
	local name pid rc=0
	for name in "${SERVICES[@]}"; do
		pid=$(pids_of "$name")
		if running "$name"; then
			if [[ $name == etcd ]]; then
				echo "$name: running (pids $pid) on $(etcd_addrs | paste -sd, -)"
			else
				echo "$name: running (pid $pid) on $HOST:$(recorded_port "$name")"
			fi
		elif [[ -n $pid ]]; then
			echo "$name: partly running (pids $pid of ${#ETCD_MEMBERS[@]} members)"
			rc=3
		else
			echo "$name: not running"
			rc=3
		fi
	done
	return $rc
}

# recorded_port NAME: the client port the service was last started with.
recorded_port() {
	if [[ -s $DIR/$1/port ]]; then
		cat "$DIR/$1/port"
	else
		port_of "$1"
	fi
}

# recorded_sasl_port: the SASL_SSL port Kafka was last started with (from
# the ports `up` recorded), or nothing if that start had no such listener.
recorded_sasl_port() {
	local port
	for port in $(cat "$DIR/kafka/ports" 2>/dev/null); do
		[[ ${port#*:} != SQUALL_KAFKA_SASL_PORT ]] || echo "${port%%:*}"
	done
}

cmd_env() {
	local name sasl_port
	for name in "${SERVICES[@]}"; do
		running "$name" || die "$name is not running: run 'scripts/services.sh up' first"
	done
	for name in "${SERVICES[@]}"; do
		case $name in
		kafka)
			echo "SQUALL_KAFKA_BROKERS=$HOST:$(recorded_port kafka)"
			# The SASL_SSL listener, when the running broker has one (an
			# older services directory may not).
			sasl_port=$(recorded_sasl_port)
			if [[ -n $sasl_port && -f $DIR/kafka/tls/ca.pem ]]; then
				echo "SQUALL_KAFKA_SASL_BROKERS=$HOST:$sasl_port"
				printf 'SQUALL_KAFKA_CA_FILE=%q\n' "$DIR/kafka/tls/ca.pem"
				echo "SQUALL_KAFKA_SASL_TEST_USER=$KAFKA_SASL_USER"
				echo "SQUALL_KAFKA_SASL_TEST_PASSWORD=$KAFKA_SASL_PASSWORD"
			fi
			;;
		cassandra) echo "SQUALL_CASSANDRA_HOSTS=$HOST:$(recorded_port cassandra)" ;;
		etcd) echo "SQUALL_ETCD_ENDPOINTS=$(etcd_addrs | paste -sd, -)" ;;
		esac
	done
}

# ---------------------------------------------------------------- one service

# require_setup NAME: `up` has run in this services directory, so NAME has its
# jars, configs and data directory.
require_setup() {
	local conf
	case $1 in
	kafka) conf=$DIR/kafka/conf/server.properties ;;
	cassandra) conf=$DIR/cassandra/conf/cassandra.yaml ;;
	etcd)
		[[ -f $DIR/etcd/conf/members && -x $DIR/bin/squall-etcd ]] ||
			die "etcd is not set up in $DIR yet: run 'scripts/services.sh up' first"
		return 0
		;;
	esac
	[[ -f $conf && -d $DIR/$1/data && -f $DIR/lib/$1/.pom.sha256 ]] ||
		die "$1 is not set up in $DIR yet: run 'scripts/services.sh up' first"
}

cmd_stop() {
	local name=$1
	require_setup "$name"
	if [[ -z $(pids_of "$name") ]]; then
		say "$name is not running"
		return 0
	fi
	# shellcheck disable=SC2046 # members prints plain names
	stop $(members "$name") || die "could not stop $name; see the line above"
}

# cmd_start NAME: start NAME with the configs, ports, jars and data that `up`
# left in the services directory (nothing is wiped or rewritten).
cmd_start() {
	local name=$1 port ports log
	require_setup "$name"
	if [[ $name == etcd && -n $(pids_of etcd) ]] && ! running etcd; then
		# Some members run: start the others (their ports are theirs).
		STARTED_AT[$name]=$(now_ms)
		start_etcd
		say "started the stopped etcd members (pids now $(pids_of etcd))"
	elif [[ -z $(pids_of "$name") ]]; then
		trap 'trap - INT TERM; abort_up "interrupted; stopped what this run had started"' INT TERM
		ports=$(cat "$DIR/$name/ports" 2>/dev/null || ports_of "$name")
		for port in $ports; do
			if port_in_use "${port%%:*}"; then
				die "port $HOST:${port%%:*} (for $name) is already in use by another process: stop that process, then run 'scripts/services.sh start $name' again"
			fi
		done
		if [[ $name != etcd ]]; then
			find_java
			mkdir -p "$DIR/$name/tmp" "$DIR/$name/logs"
		fi
		for log in $(log_of "$name"); do
			mkdir -p "$(dirname "$log")"
			LOG_FROM[$log]=$(stat -c %s "$log" 2>/dev/null || echo 0)
			printf '\n==== services.sh start %s at %s: same data, same ports\n' "$name" "$(date -u +%FT%TZ)" >>"$log"
		done
		STARTED+=("$name")
		STARTED_AT[$name]=$(now_ms)
		"start_${name}"
		say "started $name (pid $(pids_of "$name"), log: $(log_of "$name" | paste -sd' ' -))"
	fi
	[[ -x $DIR/bin/probe ]] || build_probe
	wait_ready "$name"
}

cmd_restart() {
	cmd_stop "$1"
	cmd_start "$1"
}

check_service() { # check_service NAME: exit 2 unless NAME is kafka, cassandra or etcd
	case $1 in
	kafka | cassandra | etcd) ;;
	*)
		printf 'services: error: unknown service %q: expected kafka, cassandra or etcd\n' "$1" >&2
		exit 2
		;;
	esac
}

main() {
	case ${1:-} in
	up | down | status | env | pin-jars)
		if (($# > 2)); then
			printf 'services: error: %s takes at most one service name (kafka, cassandra or etcd)\n' "$1" >&2
			exit 2
		fi
		if (($# == 2)); then
			check_service "$2"
			if [[ $1 == pin-jars && $2 == etcd ]]; then
				echo "services: error: etcd has no jars to pin" >&2
				exit 2
			fi
			SERVICES=("$2")
		fi
		set -- "$1"
		;;
	stop | start | restart)
		if (($# != 2)); then
			printf 'services: error: %s needs one service name: scripts/services.sh %s kafka|cassandra|etcd\n' "$1" "$1" >&2
			exit 2
		fi
		check_service "$2"
		;;
	-h | --help | help)
		usage
		exit 0
		;;
	'')
		usage
		exit 2
		;;
	*)
		printf 'services: unknown command %q\n' "$1" >&2
		usage
		exit 2
		;;
	esac
	mkdir -p "$DIR/logs" "$DIR/bin"
	# One invocation at a time per services directory.
	exec 9>"$DIR/.lock"
	flock 9
	"cmd_${1//-/_}" "${@:2}"
}

main "$@"
