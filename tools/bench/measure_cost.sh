#!/usr/bin/env bash
# What measuring every clip's encoding error costs (issue 52): bake time,
# best of N, of this build against a baseline build without the
# measurement (for example the commit before it, built with
# `cargo build --release --target-dir /tmp/base-target` in a worktree), on
# the shared models' bone and VAT bakes.
#
# Usage: tools/bench/measure_cost.sh --baseline BIN [--rigbake BIN] [--models DIR] [--reps N]
set -euo pipefail

repo="$(cd "$(dirname "$0")/../.." && pwd)"
models="${RIGBAKE_MODELS:-$repo/../shared/models}"
rigbake="$repo/target/release/rigbake"
baseline=""
reps=3
while [ $# -gt 0 ]; do
    case "$1" in
        --baseline) baseline="$2"; shift 2 ;;
        --rigbake) rigbake="$2"; shift 2 ;;
        --models) models="$2"; shift 2 ;;
        --reps) reps="$2"; shift 2 ;;
        *) echo "unknown argument: $1" >&2; exit 2 ;;
    esac
done
if [ -z "$baseline" ]; then
    echo "give --baseline BIN: a rigbake built without the measurement" >&2
    exit 2
fi
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

# best BIN MODEL ARGS...: the best wall time of `reps` bakes, seconds.
best() {
    local bin="$1" model="$2"
    shift 2
    local b=""
    for _ in $(seq "$reps"); do
        rm -rf "$scratch/out"
        local s e
        s=$(date +%s.%N)
        "$bin" bake "$model" --out "$scratch/out" --quiet "$@" >/dev/null
        e=$(date +%s.%N)
        b=$(python3 -c "t=$e-$s; b='$b'; print(min(t, float(b)) if b else t)")
    done
    echo "$b"
}

echo "| bake | baseline | with the measurement | ratio |"
echo "|---|---:|---:|---:|"
while IFS='|' read -r model args; do
    # shellcheck disable=SC2086
    old=$(best "$baseline" "$models/$model" $args)
    # shellcheck disable=SC2086
    new=$(best "$rigbake" "$models/$model" $args)
    python3 -c "print(f'| {\"$model\".split(\"/\")[-1]} {\"$args\".strip() or \"(defaults)\"} | {$old:.2f} s | {$new:.2f} s | {$new/$old:.2f} |')"
done <<'LIST'
kaykit/Knight.glb|
kaykit/Knight.glb|--layout qts --precision unorm16
kaykit/Knight.glb|--vat --normals
khronos/BrainStem.glb|
khronos/BrainStem.glb|--vat --normals
khronos/BrainStem.glb|--vat --normals --format png16 --direction-encoding packed
LIST
