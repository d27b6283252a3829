#!/usr/bin/env bash
# The command protocol example's build command (docs/COMMAND_PROTOCOL.md):
#   build.sh SOURCE BUILD_DIR [-DKNOB=value ...]
# compiles the candidate (its entry renamed candidate_poly), the reference
# and the harness into BUILD_DIR/bench. A compile error exits nonzero: Kestrel
# records build_failed with this output.
set -euo pipefail
source=$1 build_dir=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
cc=${CC:-cc}
$cc -std=c11 -O2 "$@" -Dpoly=candidate_poly -c "$source" -o "$build_dir/kernel.o"
$cc -std=c11 -O2 -Dpoly=reference_poly -c "$here/reference.c" -o "$build_dir/reference.o"
$cc -std=c11 -O2 -c "$here/harness.c" -o "$build_dir/harness.o"
$cc -o "$build_dir/bench" "$build_dir/harness.o" "$build_dir/kernel.o" "$build_dir/reference.o" -lm
