#!/usr/bin/env bash
# Run a paper experiment as a Slurm job array, one shard per array task, then
# merge the shards into the files of a single run.
#
# On a login node, from the repository (after `CGO_ENABLED=0 go build -o wcmc ./cmd/wcmc`,
# which also starts under a job's address-space cap, deploy/README.md):
#
#   deploy/slurm-array.sh                       # Fig. 5 (probit-snr) in 8 shards
#   deploy/slurm-array.sh probit-workers 12 --trials 40 --seed 7
#   ARRAY=3,5 deploy/slurm-array.sh probit-workers 12 --trials 40 --seed 7
#                                               # rerun shards 3 and 5, then merge
#
# It first checks the experiment and ARGS (wcmc run --dry-run: parameters,
# --set values, --trials), so that a typo fails here rather than in every
# task. Then it submits (1) an array of SHARDS tasks, each `wcmc run
# EXPERIMENT ARGS --shard INDEX/SHARDS --resume` into
# RESULTS/EXPERIMENT/shard-<INDEX>, INDEX being SLURM_ARRAY_TASK_ID (the
# count is passed explicitly: an array resubmitted with fewer tasks keeps
# each task's slice), and (2) a merge job that starts when every array task
# has ended (afterany: also after a failure or a time-out, so that it never
# waits forever) and writes RESULTS/EXPERIMENT/{ID.csv,ID.summary.csv,ID.json,
# figures}, or fails naming the shards that are missing or unfinished.
#
# Every finished task is journaled at once, so a task that is preempted,
# requeued, hits its time limit or whose node dies loses nothing: requeue it
# (`scontrol requeue JOBID_INDEX`), or rerun the submitting command with
# ARRAY set to the indices (a Slurm index list: ARRAY=3 or ARRAY=3,5-6),
# which submits only those shards, each resuming its journal, and a new
# merge job. Slurm's SIGTERM at the time limit reaches wcmc (each task execs
# it) and stops it cleanly within 10 s (KillWait is 30 s by default).
#
# Environment: WCMC (the binary; default ./wcmc), RESULTS (default
# ./results), ARRAY (the indices to submit; default 0-(SHARDS-1)), and any sbatch option through SBATCH_* variables or the
# #SBATCH lines below (they apply to the array and the merge job).
#
#SBATCH --job-name=wcmc
#SBATCH --cpus-per-task=4
#SBATCH --mem=2G
#SBATCH --time=04:00:00
#SBATCH --requeue
#SBATCH --output=%x-%A_%a.out

set -euo pipefail

mode=submit
case "${1:-}" in
shard | merge) mode=$1; shift ;;
esac

if [[ $mode == submit ]]; then
	experiment=${1:-probit-snr}
	shards=${2:-8}
	shift $(($# < 2 ? $# : 2))
	wcmc=$(realpath "${WCMC:-./wcmc}")
	results=$(realpath -m "${RESULTS:-./results}")
	[[ -x $wcmc ]] || { echo "no wcmc binary at $wcmc: CGO_ENABLED=0 go build -o wcmc ./cmd/wcmc, or set WCMC" >&2; exit 1; }
	[[ $shards =~ ^[1-9][0-9]*$ ]] || { echo "SHARDS must be a positive integer, got '$shards'" >&2; exit 1; }
	indices=${ARRAY:-0-$((shards - 1))}
	[[ $indices =~ ^[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*$ ]] ||
		{ echo "ARRAY must be a list of shard indices such as 3 or 3,5-6, got '$indices'" >&2; exit 1; }
	for i in ${indices//[,-]/ }; do
		((10#$i < shards)) || { echo "ARRAY: index $i is not below SHARDS=$shards" >&2; exit 1; }
	done
	# Validate the experiment and its arguments now rather than in every task.
	if ! check=$("$wcmc" run "$experiment" "$@" --dry-run --shard 0/"$shards" --out "$results/$experiment/shard-0" 2>&1); then
		if [[ $check == *"unknown flag: --dry-run"* ]]; then
			echo "warning: this wcmc has no 'run --dry-run': only the experiment name is checked" >&2
			"$wcmc" show "$experiment" >/dev/null
		else
			echo "$check" >&2
			exit 1
		fi
	fi
	export WCMC=$wcmc RESULTS=$results
	array=$(sbatch --parsable --export=ALL --array="$indices" \
		--job-name="wcmc-$experiment" "$0" shard "$experiment" "$shards" "$@")
	array=${array%%;*}
	merge=$(sbatch --parsable --export=ALL --dependency=afterany:"$array" --kill-on-invalid-dep=yes \
		--job-name="wcmc-$experiment-merge" --cpus-per-task=1 --output=%x-%j.out "$0" merge "$experiment")
	echo "submitted: array job $array (shards $indices of $shards of $experiment), merge job ${merge%%;*}"
	echo "results:   $results/$experiment"
	exit 0
fi

experiment=$1
shift
dir=$RESULTS/$experiment

if [[ $mode == shard ]]; then
	# The count comes from the submission, not SLURM_ARRAY_TASK_COUNT, which
	# is 1 in an array resubmitted with one index.
	shards=$1
	shift
	exec "$WCMC" run "$experiment" "$@" --shard "$SLURM_ARRAY_TASK_ID/$shards" \
		--workers "${SLURM_CPUS_PER_TASK:-0}" --out "$dir/shard-$SLURM_ARRAY_TASK_ID" --resume
fi

# merge: refuses, naming them, shards that are missing, unfinished, or that
# disagree. --shard 0/1 is not needed: merge does not read the array index.
exec "$WCMC" merge "$dir"/shard-* --out "$dir"
