#!/usr/bin/env bash
# Joinery's test command (README, CI): lint (gofmt, vet, staticcheck; see
# hack/lint.sh), unit tests, then the integration tests on the local world
# (real kube-apiserver/etcd/kube-scheduler/kwok, embedded Temporal server,
# EC2 endpoint over HTTP).
# The control-plane binaries are built once into a versioned cache folder
# (~/.cache/joinery/...; first run takes several minutes).
set -euo pipefail
cd "$(dirname "$0")/.."
export GOTOOLCHAIN=local
t0=$(date +%s)
echo "== lint"
hack/lint.sh
echo "== control-plane binaries"
hack/kube/build.sh
echo "== unit tests"
go test -count=1 ./...
echo "== Helm chart (rendered by Helm's engine; separate module deploy/chart/test)"
(cd deploy/chart/test && GOFLAGS=-mod=mod go vet ./... && GOFLAGS=-mod=mod go test -count=1 ./...)
echo "== integration tests (local world)"
go test -count=1 -tags integration -timeout 40m ./sim/kube/ ./test/integration/
echo "== bench smoke test (200 pods) and short chaos run (20 sagas)"
go test -count=1 -tags integration -timeout 15m ./sim/bench/ ./sim/chaos/
echo "== all tests passed in $(( $(date +%s) - t0 ))s"
