#!/usr/bin/env bash
# compare-quick.sh: show that a refactor leaves results byte-identical.
#
# Builds cmd/wcmc at two source trees, runs
#   wcmc run ID --quick --trials TRIALS --out DIR/ID
# with each for every experiment ID, then compares the outputs: every CSV
# file byte for byte, and every JSON file after deleting the fields that
# carry wall times and versions (start, end, version; wall_seconds and began
# at every depth).
# A tool for refactors, not part of CI (.ci/run).
#
# Usage: .ci/compare-quick.sh [-a OLD] [-b NEW] [-t TRIALS] [-k] [ID...]
#   -a OLD     a git revision, "worktree" (the checkout as it is on disk)
#              or a directory holding a wcmc source tree; default HEAD
#   -b NEW     the same choices; default worktree
#   -t TRIALS  trials per sweep point; default 2
#   -k         keep the temporary directory (sources, binaries, outputs)
#   ID...      experiments; default gauss-snr gauss-blocks
# Revisions are extracted with git archive, so the checkout and its git
# state are never touched. Exit status: 0 identical, 1 a difference or a
# failed run, 2 a usage or build error. Needs go, git, tar and jq.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
old=HEAD
new=worktree
trials=2
keep=false

usage() {
	sed -n '/^# Usage:/,/^# failed run/s/^# \{0,1\}//p' "$0" >&2
	exit 2
}

while getopts 'a:b:t:kh' opt; do
	case $opt in
	a) old=$OPTARG ;;
	b) new=$OPTARG ;;
	t) trials=$OPTARG ;;
	k) keep=true ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
ids=("$@")
if [ ${#ids[@]} -eq 0 ]; then
	ids=(gauss-snr gauss-blocks)
fi
for tool in go git tar jq; do
	if ! command -v "$tool" >/dev/null; then
		echo "compare-quick: $tool not found" >&2
		exit 2
	fi
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/compare-quick.XXXXXX")
if $keep; then
	echo "compare-quick: keeping $tmp"
else
	trap 'rm -rf "$tmp"' EXIT
fi

# build SIDE SOURCE: compile cmd/wcmc of SOURCE into $tmp/SIDE/wcmc.
build() {
	local side=$1 source=$2 dir
	mkdir -p "$tmp/$side"
	if [ "$source" = worktree ]; then
		dir=$repo
	elif [ -f "$source/go.mod" ]; then
		dir=$(cd "$source" && pwd)
	else
		dir=$tmp/$side/src
		mkdir -p "$dir"
		if ! git -C "$repo" archive --format=tar "$source" | tar -x -C "$dir"; then
			echo "compare-quick: cannot extract revision $source" >&2
			exit 2
		fi
	fi
	echo "compare-quick: building $side from $source ($dir)"
	if ! (cd "$dir" && go build -o "$tmp/$side/wcmc" ./cmd/wcmc); then
		echo "compare-quick: build of $source failed" >&2
		exit 2
	fi
}

build old "$old"
build new "$new"

status=0
for id in "${ids[@]}"; do
	for side in old new; do
		out=$tmp/$side/out/$id
		if ! "$tmp/$side/wcmc" run "$id" --quick --trials "$trials" --out "$out" >"$tmp/$side/$id.log" 2>&1; then
			echo "FAIL  $id: the $side build's run failed (see $tmp/$side/$id.log)"
			status=1
		fi
	done
	files=$(cd "$tmp" && find old/out/"$id" new/out/"$id" -maxdepth 1 \( -name '*.csv' -o -name '*.json' \) \
		-printf '%f\n' 2>/dev/null | sort -u)
	if [ -z "$files" ]; then
		echo "FAIL  $id: no CSV or JSON output"
		status=1
		continue
	fi
	for f in $files; do
		a=$tmp/old/out/$id/$f
		b=$tmp/new/out/$id/$f
		if [ ! -f "$a" ] || [ ! -f "$b" ]; then
			echo "DIFF  $id/$f: written by one build only"
			status=1
			continue
		fi
		case $f in
		*.json)
			# Timing, machine and version fields, at every depth (the sessions'
			# too): they say when and where, not what was computed.
			filter='del(.start, .end, .version) | del(.. | .wall_seconds?, .began?)'
			if diff <(jq -S "$filter" "$a") <(jq -S "$filter" "$b") >"$tmp/$id.$f.diff"; then
				echo "same  $id/$f (without start, end, wall_seconds, version)"
			else
				echo "DIFF  $id/$f:"
				head -n 20 "$tmp/$id.$f.diff"
				status=1
			fi
			;;
		*)
			if cmp -s "$a" "$b"; then
				echo "same  $id/$f"
			else
				echo "DIFF  $id/$f:"
				diff "$a" "$b" | head -n 20 || true
				status=1
			fi
			;;
		esac
	done
done
if [ $status -eq 0 ]; then
	echo "compare-quick: $old and $new give identical results for ${ids[*]}"
else
	echo "compare-quick: $old and $new differ (details above)"
fi
exit $status
