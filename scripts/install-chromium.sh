#!/usr/bin/env bash
# Installs Debian's headless-capable Chromium, which the monitor's browser
# test (monitor/browser_test.go) drives. Does nothing when a chromium is
# already on PATH (or $SQUALL_CHROMIUM names one). Installs with apt-get as
# root, or through sudo when not root.
#
#   scripts/install-chromium.sh        # install if missing
#   scripts/install-chromium.sh --check  # only report; exit 1 if missing
set -euo pipefail

found() {
	if [[ -n ${SQUALL_CHROMIUM:-} ]]; then
		command -v "$SQUALL_CHROMIUM" >/dev/null && return 0
		return 1
	fi
	command -v chromium >/dev/null || command -v chromium-browser >/dev/null
}

if found; then
	echo "install-chromium: $(command -v "${SQUALL_CHROMIUM:-chromium}" || command -v chromium-browser) is installed"
	exit 0
fi
if [[ ${1:-} == --check ]]; then
	echo "install-chromium: no chromium on PATH" >&2
	exit 1
fi
command -v apt-get >/dev/null || {
	echo "install-chromium: no apt-get: install Chromium yourself (the browser test needs 'chromium' on PATH or \$SQUALL_CHROMIUM)" >&2
	exit 1
}
as_root=()
if [[ $(id -u) != 0 ]]; then
	command -v sudo >/dev/null || {
		echo "install-chromium: not root and no sudo: run 'apt-get install chromium' as root" >&2
		exit 1
	}
	as_root=(sudo)
fi
echo "install-chromium: installing the Debian package chromium"
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get install -y -q --no-install-recommends chromium ||
	{ "${as_root[@]}" apt-get update -q && "${as_root[@]}" apt-get install -y -q --no-install-recommends chromium; }
found || { echo "install-chromium: chromium is still not on PATH" >&2; exit 1; }
echo "install-chromium: $(command -v chromium) installed"
