#!/usr/bin/env bash
# Build the local world's control plane into a versioned cache folder, once:
# kube-apiserver, kube-scheduler, kube-controller-manager (k8s.io/kubernetes),
# etcd (go.etcd.io/etcd/server/v3) and kwok (sigs.k8s.io/kwok, stands in for
# kubelets). Prints the folder. Cold: ~14 CPU-minutes; warm: instant.
#   KUBE_BIN_CACHE overrides the folder.
# The k8s, kwok and etcd modules require the versions Joinery's go.mod selects of
# the modules they share (client-go, apimachinery, grpc, x/net...), and
# every build here runs as hack/test.sh's (CGO_ENABLED=0, no -trimpath):
# Go's build cache then compiles each shared package once for both
# (gen-k8s-gomod.sh keeps the versions aligned).
#   --download only downloads the modules the builds need (hack/test.sh
#   runs it beside its first compile).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=mod
if [ "${1:-}" = --download ]; then
  (cd "$HERE/k8s" && go list -deps k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kube-controller-manager >/dev/null)
  (cd "$HERE/etcd" && go list -deps go.etcd.io/etcd/server/v3 >/dev/null)
  (cd "$HERE/kwok" && go list -deps sigs.k8s.io/kwok/cmd/kwok >/dev/null)
  exit 0
fi
KVER=$(cd "$HERE/k8s" && GOFLAGS=-mod=mod go list -m -f "{{.Version}}" k8s.io/kubernetes)
EVER=v3.7.3
KWOKVER=$(cd "$HERE/kwok" && go list -m -f "{{.Version}}" sigs.k8s.io/kwok)
BIN=${KUBE_BIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/joinery/kube-$KVER-etcd-$EVER-kwok-$KWOKVER}
mkdir -p "$BIN"
say() { echo "joinery: $*" >&2; }
MIN=$(echo "$KVER" | cut -d. -f2)
LD="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  LD="$LD -X $p.gitVersion=$KVER -X $p.gitMajor=1 -X $p.gitMinor=$MIN -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
done
# The three commands build in one go build: the packages they share compile
# once, and each links while the others still compile.
missing=()
for c in kube-apiserver kube-scheduler kube-controller-manager; do
  [ -x "$BIN/$c" ] || missing+=("k8s.io/kubernetes/cmd/$c")
done
if [ ${#missing[@]} -gt 0 ]; then
  say "building ${missing[*]##*/} $KVER from the Go module proxy (first run only, several minutes)..."
  tmp=$(mktemp -d "$BIN/build.XXXXXX")
  (cd "$HERE/k8s" && go build -ldflags "$LD" -o "$tmp/" "${missing[@]}")
  mv "$tmp"/* "$BIN/" && rmdir "$tmp"
fi
if [ ! -x "$BIN/etcd" ]; then
  say "building etcd $EVER (first run only)..."
  (cd "$HERE/etcd" && go build -ldflags "-s -w" -o "$BIN/etcd.tmp" go.etcd.io/etcd/server/v3 && mv "$BIN/etcd.tmp" "$BIN/etcd")
fi
if [ ! -x "$BIN/kwok" ]; then
  say "building kwok $KWOKVER (first run only)..."
  (cd "$HERE/kwok" && go build -ldflags "-s -w" -o "$BIN/kwok.tmp" sigs.k8s.io/kwok/cmd/kwok && mv "$BIN/kwok.tmp" "$BIN/kwok")
fi
echo "$BIN"
