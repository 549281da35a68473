#!/usr/bin/env bash
# Build the local world's control plane into a versioned cache folder, once:
# kube-apiserver, kube-scheduler, kube-controller-manager (k8s.io/kubernetes),
# etcd (go.etcd.io/etcd/server/v3) and kwok (sigs.k8s.io/kwok, stands in for
# kubelets). Prints the folder. Cold: ~14 CPU-minutes; warm: instant.
#   KUBE_BIN_CACHE overrides the folder.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=mod
KVER=$(cd "$HERE/k8s" && GOFLAGS=-mod=mod go list -m -f "{{.Version}}" k8s.io/kubernetes)
EVER=v3.7.3
KWOKVER=v0.8.0
BIN=${KUBE_BIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/joinery/kube-$KVER-etcd-$EVER-kwok-$KWOKVER}
mkdir -p "$BIN"
say() { echo "joinery: $*" >&2; }
MIN=$(echo "$KVER" | cut -d. -f2)
LD="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  LD="$LD -X $p.gitVersion=$KVER -X $p.gitMajor=1 -X $p.gitMinor=$MIN -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
done
for c in kube-apiserver kube-scheduler kube-controller-manager; do
  if [ ! -x "$BIN/$c" ]; then
    say "building $c $KVER from the Go module proxy (first run only, several minutes)..."
    (cd "$HERE/k8s" && go build -trimpath -ldflags "$LD" -o "$BIN/$c.tmp" "k8s.io/kubernetes/cmd/$c" && mv "$BIN/$c.tmp" "$BIN/$c")
  fi
done
if [ ! -x "$BIN/etcd" ]; then
  say "building etcd $EVER (first run only)..."
  (cd "$HERE/etcd" && go build -trimpath -ldflags "-s -w" -o "$BIN/etcd.tmp" go.etcd.io/etcd/server/v3 && mv "$BIN/etcd.tmp" "$BIN/etcd")
fi
if [ ! -x "$BIN/kwok" ]; then
  say "building kwok $KWOKVER (first run only)..."
  T=$(mktemp -d); (cd "$T" && GOBIN="$T" go install -trimpath -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@$KWOKVER") && mv "$T/kwok" "$BIN/kwok"; rm -rf "$T"
fi
echo "$BIN"
