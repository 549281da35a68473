#!/usr/bin/env bash
# Joinery's test command (README, CI): lint (gofmt, vet, staticcheck; see
# hack/lint.sh), unit tests, then the integration tests on the local world
# (real kube-apiserver/etcd/kube-scheduler/kwok, embedded Temporal server,
# EC2 endpoint over HTTP).
# The control-plane binaries are built once into a versioned cache folder
# (~/.cache/joinery/...; first run takes several minutes).
#
#   hack/test.sh          the short form (CI): three local worlds at a time
#                         (JOINERY_IT_WORLDS, default 3)
#   hack/test.sh --long   also the long integration tests the short form
#                         skips (JOINERY_LONG=1; each skip names the short
#                         tests that cover its behaviour)
set -euo pipefail
cd "$(dirname "$0")/.."
export GOTOOLCHAIN=local
timeout=40m
case "${1:-}" in
--long) export JOINERY_LONG=1 timeout=60m ;;
"") ;;
*) echo "usage: hack/test.sh [--long]" >&2; exit 2 ;;
esac
# The control-plane binaries build with CGO_ENABLED=0 and the shared
# modules at Joinery's versions (hack/kube/build.sh): so does everything
# here, and Go's build cache compiles what both use once.
export CGO_ENABLED=0
export JOINERY_IT_WORLDS=${JOINERY_IT_WORLDS:-3}
# Test binaries without DWARF (stack traces keep their file:line): a
# quarter less link time for each of the hundred-odd test binaries.
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-ldflags=-w"
t0=$(date +%s)
# The integration tests are the long pole (mostly waiting on the local
# world's clocks, a core idle), so they start as soon as they can: first
# their test binaries compile, then the control-plane binaries build (one
# after the other, each on both cores, so that the packages both use
# (client-go, grpc, otel...) compile once rather than twice at the same
# moment); then everything else that uses the CPU (gofmt, go vet,
# staticcheck, the unit tests, the chart tests, the bench smoke test and
# the chaos run) runs beside them.
hack/lint.sh docs
# A cold run first waits on the module proxy, a core idle: the
# control-plane modules download meanwhile.
prefetch=$(mktemp /tmp/joinery-prefetch.XXXXXX)
hack/kube/build.sh --download >"$prefetch" 2>&1 &
prefetch_pid=$!
itbin=$(mktemp -d /tmp/joinery-it.XXXXXX)
echo "== integration test binaries"
go test -c -tags integration -o "$itbin/" ./sim/kube/ ./test/integration/
wait "$prefetch_pid" || { cat "$prefetch"; exit 1; }
rm -f "$prefetch"
echo "== control-plane binaries"
hack/kube/build.sh
echo "== built in $(( $(date +%s) - t0 ))s"
# The bench smoke test and the chaos run start their own worlds on their
# own ports (30xxx, 29xxx), one after the other.
side=$(mktemp /tmp/joinery-bench-chaos.XXXXXX)
go test -count=1 -tags integration -timeout 15m -p 1 ./sim/bench/ ./sim/chaos/ >"$side" 2>&1 &
side_pid=$!
checks=$(mktemp /tmp/joinery-checks.XXXXXX)
# The unit tests wait on clocks at times, which the integration tests
# fill; staticcheck keeps both cores busy, so it goes last. go test's own
# vet pass is off: go vet has just run every analyzer on every package.
(
	set -e
	hack/lint.sh vet
	echo "== unit tests"
	go test -count=1 -vet=off ./...
	echo "== Helm chart (rendered by Helm's engine; separate module deploy/chart/test)"
	(cd deploy/chart/test && GOFLAGS=-mod=mod go vet ./... && GOFLAGS=-mod=mod go test -count=1 ./...)
	hack/lint.sh staticcheck
) >"$checks" 2>&1 &
checks_pid=$!
echo "== integration tests (local world; $JOINERY_IT_WORLDS at a time${JOINERY_LONG:+, long form}), beside gofmt, vet, staticcheck, the unit tests, the chart tests, the bench smoke test (200 pods) and a short chaos run (20 sagas)"
# runtest DIR BIN PARALLEL runs a compiled test binary in its package's folder, as
# go test does, and prints what go test prints (the failed tests' output)
# and its slowest tests (hack/testreport).
report="$itbin/testreport"
go build -o "$report" ./hack/testreport
runtest() {
	local s=$(date +%s) rc=0
	(cd "$1" && "$2" -test.v=test2json -test.count=1 -test.timeout "$timeout" -test.parallel "$3" 2>&1 |
		go tool test2json -t -p "$1" | "$report") || rc=$?
	if [ "$rc" = 0 ]; then echo "ok  	$1	$(( $(date +%s) - s ))s"; else echo "FAIL	$1	$(( $(date +%s) - s ))s"; fi
	return "$rc"
}
kube_it_log=$(mktemp /tmp/joinery-kube-it.XXXXXX)
runtest sim/kube "$itbin/kube.test" "$JOINERY_IT_WORLDS" >"$kube_it_log" 2>&1 &
kube_it_pid=$!
it=0
# Every test of test/integration starts at once and waits for one of the
# JOINERY_IT_WORLDS slots, which go to the longest tests first.
runtest test/integration "$itbin/integration.test" 100 || it=$?
wait "$kube_it_pid" || it=$?
cat "$kube_it_log"
rm -rf "$kube_it_log" "$itbin"
ck=0
wait "$checks_pid" || ck=$?
echo "== gofmt, vet, staticcheck, unit tests and chart tests (ran beside the integration tests)"
cat "$checks"
rm -f "$checks"
bc=0
wait "$side_pid" || bc=$?
echo "== bench smoke test and chaos run (ran beside the integration tests)"
cat "$side"
rm -f "$side"
if [ "$it" != 0 ] || [ "$ck" != 0 ] || [ "$bc" != 0 ]; then
	echo "== FAILED: integration tests exit $it, vet/staticcheck/unit/chart exit $ck, bench/chaos exit $bc"
	exit 1
fi
echo "== all tests passed in $(( $(date +%s) - t0 ))s"
