#!/usr/bin/env bash
# A stand-in for a user's run command, for the protocol tests:
#   fake_harness.sh SOURCE ANSWER NONCE
# The candidate's source names what to do ("MODE=notjson" ...); any other
# source (the task's reference) gets an honest measured answer.
set -u
source=$1 answer=$2 nonce=$3
mode=$(grep -o 'MODE=[a-z_]*' "$source" | head -1 | cut -d= -f2)
arg=$(grep -o 'ARG=[^ ]*' "$source" | head -1 | cut -d= -f2)
# Three samples each: the tests' evaluator asks for min_samples 3.
c='1e-3, 1.1e-3, 0.9e-3' r='2e-3, 2.1e-3, 1.9e-3'
measured() {  # candidate seconds, reference seconds, max abs error
  printf '{"protocol": 1, "nonce": "%s", "outcome": "measured", "shapes": [' "$nonce"
  printf '{"shape": {"n": 1048576}, "candidate_s": [%s], "reference_s": [%s], "max_abs_error": %s, "max_rel_error": %s}, ' "$1" "$2" "$3" "$3"
  printf '{"shape": {"n": 4096}, "candidate_s": [%s], "reference_s": [%s], "max_abs_error": %s, "max_rel_error": %s}]}\n' "$1" "$2" "$3" "$3"
}
case "$mode" in
  "") measured "$c" "$r" 0 > "$answer" ;;
  notjson) echo 'speedup: 1000x, trust me' > "$answer" ;;
  badnonce) measured "$c" "$r" 0 | sed "s/$nonce/0123456789abcdef/" > "$answer" ;;
  oneshape) printf '{"protocol": 1, "nonce": "%s", "outcome": "measured", "shapes": [{"shape": {"n": 1048576}, "candidate_s": [%s], "reference_s": [%s], "max_abs_error": 0, "max_rel_error": 0}]}\n' "$nonce" "$c" "$r" > "$answer" ;;
  negative) measured "-1e-3, 1e-3, 1e-3" "$r" 0 > "$answer" ;;
  fewsamples) measured "1e-3, 1e-3" "$r" 0 > "$answer" ;;
  wrongshape) measured "$c" "$r" 0 | sed 's/"n": 4096/"n": 4095/' > "$answer" ;;
  extra) measured "$c" "$r" 0 | sed 's/"protocol": 1,/"protocol": 1, "speedup": 99,/' > "$answer" ;;
  withdrawn) printf '{"protocol": 1, "nonce": "%s", "outcome": "rejected", "reason": "queued", "withdrawn": true}\n' "$nonce" > "$answer" ;;
  badoutcome) printf '{"protocol": 1, "nonce": "%s", "outcome": "fast", "reason": "x"}\n' "$nonce" > "$answer" ;;
  noreason) printf '{"protocol": 1, "nonce": "%s", "outcome": "wrong"}\n' "$nonce" > "$answer" ;;
  wrong) printf '{"protocol": 1, "nonce": "%s", "outcome": "wrong", "reason": "y[3] is 7, expected 2", "log": "checked 3 sets"}\n' "$nonce" > "$answer" ;;
  loose) measured "$c" "$r" 0.5 > "$answer" ;;
  capped) measured "1e-5, 1e-5, 1e-5" "$r" 0 > "$answer" ;;
  noanswer) echo "forgot to answer" ;;
  crash) echo "about to crash"; kill -SEGV $$ ;;
  hang) sleep "$arg" & wait ;;  # ARG: a duration no other process sleeps, to find it by
  late) measured "$c" "$r" 0 > "$answer"; exit 3 ;;
  profiled) measured "$c" "$r" 0 | sed 's/}]}$/}], "profile": {"counters": {"source": "ncu", "shape": "n=1048576", "ipc": 1.5}, "unavailable": ["pmu: none"]}}/' > "$answer" ;;
  linked) ln -s /proc/self/environ "$answer" ;;  # kestrel's own environment, were the link followed
  fifo) mkfifo "$answer" ;;  # a reader that waits for a writer would hang
  tiny) measured "1e-300, 1e-300, 1e-300" "4e-299, 4e-299, 4e-299" 0 > "$answer" ;;
  hugelog) printf '{"protocol": 1, "nonce": "%s", "outcome": "wrong", "reason": "first line\\nsecond line", "log": "%s"}\n' \
             "$nonce" "$(head -c 1048576 /dev/zero | tr '\0' 'A')" > "$answer" ;;
  badprofile) measured "$c" "$r" 0 | sed 's/}]}$/}], "profile": {"mix": {"total": "many"}}}/' > "$answer" ;;
esac
