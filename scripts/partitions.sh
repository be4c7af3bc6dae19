#!/usr/bin/env bash
# partitions.sh: the partition harness (docs/partitions.md). Builds
# cmd/squall-partitions and runs it; `make partitions` calls it.
#
#   scripts/partitions.sh [FLAG...]        flags go to squall-partitions
#   scripts/partitions.sh --install-only   only install what the harness needs
#
# Environment: PARTITION_SCHEDULES (how many seeded schedules, default 2),
# PARTITION_SEED (the first seed; with PARTITION_SCHEDULES=1 it reruns one),
# PARTITION_DIR (where each schedule's logs go), CI.
#
# The harness needs root, network namespaces and iptables. As root, a
# missing iptables (Debian's package) is installed with apt-get. Without
# root or namespaces squall-partitions prints a SKIP line and exits 0,
# except under CI=true, where it fails.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
say() { printf 'partitions: %s\n' "$*" >&2; }

# install_iptables: iptables (the nft variant Debian installs by default,
# with the legacy one beside it) filters packets inside each namespace.
install_iptables() {
	command -v iptables >/dev/null && return 0
	if [[ $(id -u) != 0 ]] || ! command -v apt-get >/dev/null; then
		return 0 # squall-partitions says what is missing
	fi
	say "installing the Debian package iptables"
	local log
	log=$(mktemp)
	if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q iptables >"$log" 2>&1; then
		apt-get update -q >>"$log" 2>&1 || true
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q iptables >>"$log" 2>&1 ||
			{ tail -n 5 "$log" >&2; say "could not install iptables (log above)"; }
	fi
	rm -f "$log"
}

install_iptables
if [[ ${1:-} == --install-only ]]; then
	exit 0
fi

bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
(cd "$ROOT" && go build -o "$bin/squall-partitions" ./cmd/squall-partitions)
rc=0
"$bin/squall-partitions" -repo "$ROOT" "$@" || rc=$?
exit "$rc"
