#!/usr/bin/env bash
# The OpenVAT export's cost against the plain VAT bake (issue 50.2):
# `rigbake vat MODEL` and `rigbake vat MODEL --compat openvat`, interleaved,
# each repeated; prints per model the median wall seconds, CPU seconds and
# peak memory of both, and the ratio of the medians (target: within 3x).
#
# Usage: tools/bench/openvat.sh [--models DIR] [--rigbake BIN] [--reps N]
# Models: RobotExpressive, CesiumMan and Fox (the shared models OpenVAT's
# 8,192-vertex limit lets export), and BrainStem (refused before any bake).
set -euo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
models="$here/../shared/models"
rigbake="$here/target/release/rigbake"
reps=3
while [ $# -gt 0 ]; do
  case "$1" in
    --models) models="$2"; shift 2 ;;
    --rigbake) rigbake="$2"; shift 2 ;;
    --reps) reps="$2"; shift 2 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
# One run: prints "wall cpu peak_kib" (GNU time).
run() {
  rm -rf "$scratch/out"
  /usr/bin/time -f "%e %U %S %M" -o "$scratch/t" "$rigbake" vat "$@" --out "$scratch/out" -q >/dev/null 2>&1 || true
  tail -n 1 "$scratch/t" | awk '{printf "%s %.2f %s\n", $1, $2 + $3, $4}'
}
median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
printf '%-16s %9s %9s %9s %9s %9s %9s %7s\n' model plain_s plain_cpu plain_MiB openvat_s ov_cpu ov_MiB ratio
for m in ${ONLY:-threejs/RobotExpressive khronos/CesiumMan khronos/Fox khronos/BrainStem}; do
  file="$models/$m.glb"
  [ -f "$file" ] || { echo "$m: skipped (no $file)"; continue; }
  : > "$scratch/plain"; : > "$scratch/ov"
  for _ in $(seq "$reps"); do
    run "$file" >> "$scratch/plain"
    run "$file" --compat openvat >> "$scratch/ov"
  done
  col() { awk -v c="$2" '{print $c}' "$1" | median; }
  pw=$(col "$scratch/plain" 1); pc=$(col "$scratch/plain" 2); pm=$(col "$scratch/plain" 3)
  ow=$(col "$scratch/ov" 1); oc=$(col "$scratch/ov" 2); om=$(col "$scratch/ov" 3)
  printf '%-16s %9s %9s %9d %9s %9s %9d %6.2fx\n' "$(basename "$m")" "$pw" "$pc" $((pm / 1024)) "$ow" "$oc" $((om / 1024)) \
    "$(awk -v a="$ow" -v b="$pw" 'BEGIN {print (b > 0 ? a / b : 0)}')"
done
