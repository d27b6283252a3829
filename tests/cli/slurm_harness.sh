#!/usr/bin/env bash
# The Slurm test's run command: the poly example's harness, except that a
# candidate with the knob HANG=1 never answers (its Slurm job must hit its
# time limit).   slurm_harness.sh KNOBS_JSON BENCH ARGS...
knobs=$1
shift
case "$knobs" in
  *'"HANG":"1"'*) echo "hanging on purpose"; sleep 3600 ;;
esac
exec "$@"
