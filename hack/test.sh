#!/usr/bin/env bash
# Joinery's test command (README, CI): lint (gofmt, vet, staticcheck; see
# hack/lint.sh), unit tests, then the integration tests on the local world
# (real kube-apiserver/etcd/kube-scheduler/kwok, embedded Temporal server,
# EC2 endpoint over HTTP).
# The control-plane binaries are built once into a versioned cache folder
# (~/.cache/joinery/...; first run takes several minutes).
#
#   hack/test.sh          the short form (CI): two local worlds at a time
#                         (JOINERY_IT_WORLDS, default 2)
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
t0=$(date +%s)
# The control-plane build (cold: ~14 CPU-minutes) runs beside lint, the
# unit tests and the chart tests, which need none of it: their test runs
# and links leave a core idle that the build takes.
kube_log=$(mktemp /tmp/joinery-kube-build.XXXXXX)
hack/kube/build.sh >"$kube_log" 2>&1 &
kube_pid=$!
echo "== lint"
hack/lint.sh
echo "== unit tests"
go test -count=1 ./...
echo "== Helm chart (rendered by Helm's engine; separate module deploy/chart/test)"
(cd deploy/chart/test && GOFLAGS=-mod=mod go vet ./... && GOFLAGS=-mod=mod go test -count=1 ./...)
echo "== control-plane binaries (built beside the steps above)"
kb=0
wait "$kube_pid" || kb=$?
cat "$kube_log"
rm -f "$kube_log"
if [ "$kb" != 0 ]; then
	echo "== FAILED: hack/kube/build.sh exit $kb"
	exit 1
fi
# The bench smoke test and the chaos run start their own worlds on their
# own ports (30xxx, 29xxx), one after the other, beside the integration
# tests; their output follows the integration tests'.
echo "== bench smoke test (200 pods) and short chaos run (20 sagas), in the background"
side=$(mktemp /tmp/joinery-bench-chaos.XXXXXX)
go test -count=1 -tags integration -timeout 15m -p 1 ./sim/bench/ ./sim/chaos/ >"$side" 2>&1 &
side_pid=$!
echo "== integration tests (local world; ${JOINERY_IT_WORLDS:-2} at a time${JOINERY_LONG:+, long form})"
it=0
go test -count=1 -tags integration -timeout "$timeout" -parallel "${JOINERY_IT_WORLDS:-2}" ./sim/kube/ ./test/integration/ || it=$?
bc=0
wait "$side_pid" || bc=$?
echo "== bench smoke test and chaos run (ran beside the integration tests)"
cat "$side"
rm -f "$side"
if [ "$it" != 0 ] || [ "$bc" != 0 ]; then
	echo "== FAILED: integration tests exit $it, bench/chaos exit $bc"
	exit 1
fi
echo "== all tests passed in $(( $(date +%s) - t0 ))s"
