#!/usr/bin/env bash
# Prometheus and promtool for the tests that prove the dashboard and the
# alerts on a real Prometheus (deploy's TestPrometheusRulePassesPromtool,
# the integration test TestPrometheusAnswersTheDashboardAndTheGuide).
#
#   hack/prometheus.sh install   install Debian's prometheus package when
#                                /usr/bin/prometheus or /usr/bin/promtool is
#                                missing (as root), then print the version
#
# The package's own service is not started (the tests start their
# Prometheus on a free port with a temporary data directory); nothing is
# downloaded at test time.
set -euo pipefail

cmd=${1:?usage: hack/prometheus.sh install}

case "$cmd" in
install)
	if [ ! -x /usr/bin/prometheus ] || [ ! -x /usr/bin/promtool ]; then
		if [ "$(id -u)" != 0 ]; then
			echo "hack/prometheus.sh: Debian's prometheus package is not installed (apt-get install prometheus, as root)" >&2
			exit 1
		fi
		t0=$(date +%s)
		echo "hack/prometheus.sh: installing Debian's prometheus package" >&2
		apt-get update -qq >/dev/null
		# policy-rc.d refuses service starts in containers; where it does not,
		# stop the packaged service so it holds no port.
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null
		if command -v systemctl >/dev/null && systemctl is-active --quiet prometheus 2>/dev/null; then
			systemctl stop prometheus || true
		fi
		echo "hack/prometheus.sh: installed in $(($(date +%s) - t0))s" >&2
	fi
	/usr/bin/prometheus --version 2>&1 | head -1
	;;
*)
	echo "usage: hack/prometheus.sh install" >&2
	exit 2
	;;
esac
