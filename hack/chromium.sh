#!/usr/bin/env bash
# Chromium for the headless-browser test that loads the Temporal Web UI's
# workflow list and a Prometheus graph of a local world and checks they
# show its data (the integration test TestBrowserShowsTheWorld).
#
#   hack/chromium.sh install   install Debian's chromium package when
#                              /usr/bin/chromium is missing (as root), then
#                              print the version
#
# The test runs it with --headless --dump-dom; nothing is downloaded at
# test time.
set -euo pipefail

cmd=${1:?usage: hack/chromium.sh install}

case "$cmd" in
install)
	if [ ! -x /usr/bin/chromium ]; then
		if [ "$(id -u)" != 0 ]; then
			echo "hack/chromium.sh: Debian's chromium package is not installed (apt-get install chromium, as root)" >&2
			exit 1
		fi
		t0=$(date +%s)
		echo "hack/chromium.sh: installing Debian's chromium package" >&2
		apt-get update -qq >/dev/null
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
		echo "hack/chromium.sh: installed in $(($(date +%s) - t0))s" >&2
	fi
	/usr/bin/chromium --version 2>/dev/null # its launcher warns about /dev/shm on stderr
	;;
*)
	echo "usage: hack/chromium.sh install" >&2
	exit 2
	;;
esac
