#!/usr/bin/env bash
# Run a paper experiment as a Slurm job array, one shard per array task, then
# merge the shards into the files of a single run.
#
# On a login node, from the repository (after `go build -o wcmc ./cmd/wcmc`):
#
#   deploy/slurm-array.sh                       # Fig. 5 (probit-snr) in 8 shards
#   deploy/slurm-array.sh probit-workers 12 --trials 40 --seed 7
#
# It first checks the experiment and ARGS (wcmc run --dry-run: parameters,
# --set values, --trials), so that a typo fails here rather than in every
# task. Then it submits (1) an array of SHARDS tasks, each `wcmc run
# EXPERIMENT ARGS --resume` into RESULTS/EXPERIMENT/shard-<index> (wcmc takes
# its slice from SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_COUNT and
# SLURM_ARRAY_TASK_MIN), and (2) a merge job that starts when every array task
# has ended (afterany: also after a failure or a time-out, so that it never
# waits forever) and writes RESULTS/EXPERIMENT/{ID.csv,ID.summary.csv,ID.json,
# figures}, or fails naming the shards that are missing or unfinished.
#
# Every finished task is journaled at once, so a task that is preempted,
# requeued, hits its time limit or whose node dies loses nothing: requeue or
# resubmit it (`scontrol requeue JOBID_INDEX`, or sbatch --array=INDEX with
# the same arguments) and it resumes; then resubmit the merge
# (`deploy/slurm-array.sh merge EXPERIMENT` through sbatch, or run it on the
# login node). Slurm's SIGTERM at the time limit reaches wcmc (each task execs
# it) and stops it cleanly within 10 s (KillWait is 30 s by default).
#
# Environment: WCMC (the binary; default ./wcmc), RESULTS (default
# ./results), and any sbatch option through SBATCH_* variables or the
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
	[[ -x $wcmc ]] || { echo "no wcmc binary at $wcmc: go build -o wcmc ./cmd/wcmc, or set WCMC" >&2; exit 1; }
	[[ $shards =~ ^[1-9][0-9]*$ ]] || { echo "SHARDS must be a positive integer, got '$shards'" >&2; exit 1; }
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
	array=$(sbatch --parsable --export=ALL --array=0-$((shards - 1)) \
		--job-name="wcmc-$experiment" "$0" shard "$experiment" "$@")
	array=${array%%;*}
	merge=$(sbatch --parsable --export=ALL --dependency=afterany:"$array" --kill-on-invalid-dep=yes \
		--job-name="wcmc-$experiment-merge" --cpus-per-task=1 --output=%x-%j.out "$0" merge "$experiment")
	echo "submitted: array job $array ($shards shards of $experiment), merge job ${merge%%;*}"
	echo "results:   $results/$experiment"
	exit 0
fi

experiment=$1
shift
dir=$RESULTS/$experiment

if [[ $mode == shard ]]; then
	# wcmc reads SLURM_ARRAY_TASK_ID/_COUNT/_MIN and says which shard it runs.
	exec "$WCMC" run "$experiment" "$@" --workers "${SLURM_CPUS_PER_TASK:-0}" \
		--out "$dir/shard-$SLURM_ARRAY_TASK_ID" --resume
fi

# merge: refuses, naming them, shards that are missing, unfinished, or that
# disagree. --shard 0/1 is not needed: merge does not read the array index.
exec "$WCMC" merge "$dir"/shard-* --out "$dir"
