#!/usr/bin/env bash
# Regenerate hack/kube/k8s/go.mod: builds kube-apiserver, kube-scheduler and
# kube-controller-manager from k8s.io/kubernetes on the Go module proxy.
# kubernetes's go.mod requires its staging modules at v0.0.0 with ./staging
# replaces that are not in the module zip, so we replace each with the
# published v0.<minor>.<patch>. Kept in its own module so k8s.io/kubernetes
# never enters Joinery's go.mod.
# Then align-gomod.sh raises the modules it shares with Joinery to Joinery's
# versions (one compile of each shared package).
set -euo pipefail
KVER=${1:-v1.37.2}
SVER=v0.${KVER#v1.}
DIR=$(cd "$(dirname "$0")" && pwd)/k8s
export GOFLAGS=-mod=mod GOTOOLCHAIN=local
mkdir -p "$DIR"; cd "$DIR"
modfile=$(go mod download -json "k8s.io/kubernetes@$KVER" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
{
  echo "module joinery/hack/kube/k8s"
  echo
  echo "go $(sed -n 's/^go \([0-9.]*\)$/\1/p' "$modfile")"
  echo
  echo "tool ("
  echo "	k8s.io/kubernetes/cmd/kube-apiserver"
  echo "	k8s.io/kubernetes/cmd/kube-scheduler"
  echo "	k8s.io/kubernetes/cmd/kube-controller-manager"
  echo ")"
  echo
  echo "require k8s.io/kubernetes $KVER"
  echo
  echo "replace ("
  grep -E '^\s+k8s\.io/[A-Za-z0-9._-]+ v0\.0\.0$' "$modfile" | awk -v v="$SVER" '{printf "\t%s => %s %s\n", $1, $1, v}'
  echo ")"
} > go.mod
g=$(grep -E '^godebug ' "$modfile" || true); [ -n "$g" ] && sed -i "3a\\
$g" go.mod
go mod tidy
"$(dirname "$DIR")/align-gomod.sh" "$DIR"
