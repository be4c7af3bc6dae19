#!/usr/bin/env bash
# with-services.sh [--keep] CMD [ARG...]: run CMD with the real Kafka,
# Cassandra and etcd of scripts/services.sh up and SQUALL_KAFKA_BROKERS /
# SQUALL_CASSANDRA_HOSTS / SQUALL_ETCD_ENDPOINTS set. Services that were not running before are
# stopped afterwards, whether CMD passed, failed or was interrupted, unless
# --keep is given; the exit status is CMD's.
#
# Runs that share a services directory take turns (a lock file in it), so
# one run's clean-up never stops the services under another run's tests.
set -euo pipefail

keep=no
if [[ ${1:-} == --keep ]]; then
	keep=yes
	shift
fi
if (($# == 0)); then
	echo "usage: scripts/with-services.sh [--keep] CMD [ARG...]" >&2
	exit 2
fi

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SERVICES=$ROOT/scripts/services.sh
DIR=${SQUALL_SERVICES_DIR:-$ROOT/.services}
mkdir -p "$DIR"

exec 8>"$DIR/.run.lock"
if ! flock -n 8; then
	echo "with-services: another run is using the services in $DIR; waiting for it to finish" >&2
	flock 8
fi

started=no
if [[ $keep == no ]]; then
	"$SERVICES" status >/dev/null 2>&1 8>&- || started=yes
fi

# shellcheck disable=SC2317 # invoked by the EXIT trap
cleanup() {
	if [[ $started == yes ]]; then
		"$SERVICES" down 8>&- || echo "with-services: stopping the services failed; run 'scripts/services.sh down'" >&2
	fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

t0=$SECONDS
"$SERVICES" up 8>&- >/dev/null
set -a
eval "$("$SERVICES" env 8>&-)"
set +a
echo "with-services: services ready in $((SECONDS - t0))s: SQUALL_KAFKA_BROKERS=$SQUALL_KAFKA_BROKERS SQUALL_CASSANDRA_HOSTS=$SQUALL_CASSANDRA_HOSTS SQUALL_ETCD_ENDPOINTS=$SQUALL_ETCD_ENDPOINTS" >&2

rc=0
"$@" 8>&- || rc=$?
exit "$rc"
