#!/usr/bin/env bash
# Joinery's lint step (run by hack/test.sh, or alone): gofmt -l must be
# empty (no file here is generated), go vet with and without -tags
# integration, staticcheck (its default checks, U1000 unused code
# included) over the module and the chart's test module.
# staticcheck is pinned and installed from the Go module proxy into a
# cache folder on first use (JOINERY_TOOLS, default ~/.cache/joinery/tools),
# then reused. Its analysis cache (STATICCHECK_CACHE, default
# ~/.cache/staticcheck) turns a cold run of minutes (it analyses every
# dependency, the Temporal server's included) into seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOTOOLCHAIN=local
t0=$(date +%s)

# honnef.co/go/tools v0.8.2 is staticcheck 2026.2.2, built for Go 1.26.
STATICCHECK_VERSION=v0.8.2
tools="${JOINERY_TOOLS:-$HOME/.cache/joinery/tools}"
staticcheck="$tools/staticcheck-$STATICCHECK_VERSION/staticcheck"
if [ ! -x "$staticcheck" ]; then
	echo "installing staticcheck $STATICCHECK_VERSION into $(dirname "$staticcheck")"
	GOBIN="$(dirname "$staticcheck")" go install "honnef.co/go/tools/cmd/staticcheck@$STATICCHECK_VERSION"
fi

echo "== gofmt"
unformatted=$(gofmt -l .)
if [ -n "$unformatted" ]; then
	echo "gofmt -l: these files need gofmt -w:" >&2
	echo "$unformatted" >&2
	exit 1
fi
echo "== go vet"
go vet ./...
go vet -tags integration ./...
echo "== staticcheck $STATICCHECK_VERSION"
# One run with the tag sees every file (no file is built only without it);
# a run without it would call code used only by integration tests unused.
"$staticcheck" -tags integration ./...
(cd deploy/chart/test && GOFLAGS=-mod=mod "$staticcheck" ./...)
echo "== lint passed in $(( $(date +%s) - t0 ))s"
