#!/usr/bin/env bash
# align-gomod.sh DIR: raise each module that DIR's go.mod and Joinery's both
# select to the higher of the two versions, so that hack/kube/build.sh's
# builds and Joinery's compile the packages they share once (Go's build
# cache keys a package by its sources and its dependencies' builds).
set -euo pipefail
export GOFLAGS=-mod=mod GOTOOLCHAIN=local
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
list() { (cd "$1" && go list -m -f '{{if not .Main}}{{.Path}} {{with .Replace}}{{.Version}}{{else}}{{.Version}}{{end}}{{end}}' all | sort); }
cd "$1"
reqs=$(join <(list .) <(list "$ROOT") | while read -r m mine theirs; do
  [ "$mine" != "$theirs" ] && [ "$(printf '%s\n%s\n' "$mine" "$theirs" | sort -V | tail -1)" = "$theirs" ] && echo "-require=$m@$theirs"
done || true)
if [ -n "$reqs" ]; then
  go mod edit $reqs
  go mod tidy
fi
