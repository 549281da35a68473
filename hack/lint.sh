#!/usr/bin/env bash
# Joinery's lint step (run by hack/test.sh, or alone): the docs check
# (README.md at most 250 lines; every relative link in every Markdown file
# names a file that exists), gofmt -l must be empty (no file here is
# generated), no non-test function over 100 lines (hack/funclen), go vet
# -tags integration (no file is built only without the tag, so one pass
# sees every file), staticcheck (its default checks, U1000 unused code
# included) over the module and the chart's test module. `hack/lint.sh
# docs` runs the docs check alone; `hack/lint.sh vet` the docs check,
# gofmt, function length and vet; `hack/lint.sh staticcheck` staticcheck
# alone (hack/test.sh runs it beside the integration tests).
# staticcheck is pinned and installed from the Go module proxy into a
# cache folder on first use (JOINERY_TOOLS, default ~/.cache/joinery/tools),
# then reused. Its analysis cache (STATICCHECK_CACHE, default
# ~/.cache/staticcheck) turns a cold run of minutes (it analyses every
# dependency, the Temporal server's included) into seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOTOOLCHAIN=local
# As hack/kube/build.sh builds: the build cache shares what both compile.
export CGO_ENABLED=0
t0=$(date +%s)

# check_docs fails when README.md grows past README_MAX_LINES (the detail
# belongs in docs/), or when a Markdown file outside .git and testdata links
# [text](path) or [text](path#anchor) to a path that does not exist,
# relative to the file (a leading / is the repository root). Links with a
# scheme (http:, https:, mailto:...) and pure #anchors are not checked, nor
# anything in fenced code blocks or `code spans`.
README_MAX_LINES=250
check_docs() {
	echo "== docs: README length, relative links"
	local fail=0 n file line target dir path
	n=$(wc -l <README.md)
	if [ "$n" -gt "$README_MAX_LINES" ]; then
		echo "README.md has $n lines, more than $README_MAX_LINES: move the detail into a page under docs/ and link it" >&2
		fail=1
	fi
	while IFS=$'\t' read -r file line target; do
		dir=${file%/*}
		case "$target" in
		/*) path=".$target" ;;
		*) path="$dir/$target" ;;
		esac
		if [ ! -e "$path" ]; then
			echo "$file:$line: broken link: $target (no such file: $path)" >&2
			fail=1
		fi
	done < <(find . \( -name .git -o -name testdata -o -name .joinery \) -prune -o -name '*.md' -print0 | sort -z |
		xargs -0 awk '
			FNR == 1 { fence = "" }
			fence == "" && match($0, /^[ \t]*(```|~~~)/) { fence = substr($0, RSTART + RLENGTH - 3, 3); next }
			fence != "" { if (index($0, fence)) fence = ""; next }
			{
				s = $0
				gsub(/`[^`]*`/, "", s)
				while (match(s, /\]\([^) \t]+/)) {
					t = substr(s, RSTART + 2, RLENGTH - 2)
					s = substr(s, RSTART + RLENGTH)
					sub(/^</, "", t); sub(/>$/, "", t)
					if (t ~ /^#/ || t ~ /^[A-Za-z][A-Za-z0-9+.-]*:/) continue
					sub(/[#?].*$/, "", t)
					if (t != "") printf "%s\t%d\t%s\n", FILENAME, FNR, t
				}
			}')
	if [ "$fail" != 0 ]; then
		echo "docs check failed" >&2
		return 1
	fi
}
mode=${1:-all}
case "$mode" in
all | docs | vet | staticcheck) ;;
*) echo "usage: hack/lint.sh [docs|vet|staticcheck]" >&2; exit 2 ;;
esac
if [ "$mode" != staticcheck ]; then
	check_docs
fi
if [ "$mode" = docs ]; then
	exit 0
fi

# honnef.co/go/tools v0.8.2 is staticcheck 2026.2.2, built for Go 1.26.
STATICCHECK_VERSION=v0.8.2
tools="${JOINERY_TOOLS:-$HOME/.cache/joinery/tools}"
staticcheck="$tools/staticcheck-$STATICCHECK_VERSION/staticcheck"
# A cold install (download and build, ~2 minutes) runs beside gofmt and vet.
install_pid=
if [ "$mode" != vet ] && [ ! -x "$staticcheck" ]; then
	echo "installing staticcheck $STATICCHECK_VERSION into $(dirname "$staticcheck")"
	GOBIN="$(dirname "$staticcheck")" go install "honnef.co/go/tools/cmd/staticcheck@$STATICCHECK_VERSION" &
	install_pid=$!
fi

if [ "$mode" != staticcheck ]; then
	echo "== gofmt"
	unformatted=$(gofmt -l .)
	if [ -n "$unformatted" ]; then
		echo "gofmt -l: these files need gofmt -w:" >&2
		echo "$unformatted" >&2
		exit 1
	fi
	echo "== function length (hack/funclen: none over 100 lines outside tests)"
	go run ./hack/funclen -max 100 .
	echo "== go vet"
	go vet -tags integration ./...
fi
if [ "$mode" = vet ]; then
	echo "== docs, gofmt and vet passed in $(( $(date +%s) - t0 ))s"
	exit 0
fi
if [ -n "$install_pid" ] && ! wait "$install_pid"; then
	echo "installing staticcheck $STATICCHECK_VERSION failed" >&2
	exit 1
fi
echo "== staticcheck $STATICCHECK_VERSION"
# One run with the tag sees every file (no file is built only without it);
# a run without it would call code used only by integration tests unused.
"$staticcheck" -tags integration ./...
(cd deploy/chart/test && GOFLAGS=-mod=mod "$staticcheck" ./...)
echo "== lint passed in $(( $(date +%s) - t0 ))s"
