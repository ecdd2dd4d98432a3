#!/usr/bin/env bash
# The read side against the bake (issue 34, item 4), in one run: for
# BrainStem and Knight, `rigbake bake --vat --normals`, then `rigbake
# verify` (both paths, every frame and mid-frame), and `rigbake preview`
# of the VAT path (the default contact sheet), each repeated; prints the
# median wall time and the peak memory of every step and each step's
# ratio to the bake's wall time, with the issue's targets (verify at most
# 3x the bake, verify under 256 MiB). The view page's time to ready is
# measured by crates/cli/tests/view.rs (docs/viewer.md), not here.
#
# Usage: tools/bench/read_side.sh [--models DIR] [--rigbake BIN] [--reps N]
#                                 [--scratch DIR]
#   --models DIR    the shared models folder (default: $RIGBAKE_MODELS, else
#                   ../shared/models beside the repository)
#   --rigbake BIN   the release binary (default: target/release/rigbake,
#                   built when missing)
#   --reps N        repetitions of every step (default 3)
#   --scratch DIR   where the bakes go (default: a new folder under /tmp)
#
# Needs GNU time (/usr/bin/time) and python3 (the summary).
set -euo pipefail

repo="$(cd "$(dirname "$0")/../.." && pwd)"
models="${RIGBAKE_MODELS:-$repo/../shared/models}"
rigbake="$repo/target/release/rigbake"
reps=3
scratch=""
while [ $# -gt 0 ]; do
    case "$1" in
        --models) models="$2"; shift 2 ;;
        --rigbake) rigbake="$2"; shift 2 ;;
        --reps) reps="$2"; shift 2 ;;
        --scratch) scratch="$2"; shift 2 ;;
        *) echo "unknown argument: $1" >&2; exit 2 ;;
    esac
done
if [ ! -x "$rigbake" ]; then
    (cd "$repo" && cargo build --release -p rigbake-cli)
fi
[ -n "$scratch" ] || scratch="$(mktemp -d "${TMPDIR:-/tmp}/read_side.XXXXXX")"
results="$scratch/results.tsv"
: > "$results"

# Runs "$@" under GNU time, appending: model, step, wall seconds, peak KiB.
measure() {
    local model="$1" step="$2"
    shift 2
    /usr/bin/time -f "%e %M" -o "$scratch/time.txt" "$@" > /dev/null 2> "$scratch/stderr.txt" || {
        echo "$model $step failed:" >&2
        cat "$scratch/stderr.txt" >&2
        exit 1
    }
    read -r wall peak < "$scratch/time.txt"
    printf '%s\t%s\t%s\t%s\n' "$model" "$step" "$wall" "$peak" >> "$results"
}

for entry in khronos/BrainStem kaykit/Knight; do
    name="$(basename "$entry")"
    out="$scratch/out"
    container="$out/$name/$name.rigbake"
    for _ in $(seq "$reps"); do
        rm -rf "$out"
        measure "$name" bake "$rigbake" bake "$models/$entry.glb" --vat --normals --out "$out" --quiet
        measure "$name" verify "$rigbake" verify "$container" --quiet
        measure "$name" preview "$rigbake" preview "$container" --path vat --out "$scratch/sheet.png"
    done
done

python3 - "$results" <<'EOF'
import statistics, sys
rows = [line.split("\t") for line in open(sys.argv[1]).read().splitlines()]
by = {}
for model, step, wall, peak in rows:
    by.setdefault((model, step), []).append((float(wall), int(peak)))
print(f"{'model':<10} {'step':<8} {'median s':>9} {'peak MiB':>9} {'x bake':>7}  target")
for model in dict.fromkeys(r[0] for r in rows):
    bake = statistics.median(w for w, _ in by[(model, "bake")])
    for step in ("bake", "verify", "preview"):
        walls = [w for w, _ in by[(model, step)]]
        peak = max(p for _, p in by[(model, step)]) / 1024
        wall = statistics.median(walls)
        target = ""
        if step == "verify":
            ratio_ok = wall <= 3 * bake
            mem_ok = peak < 256
            target = f"<= 3x: {'met' if ratio_ok else 'not met'}; < 256 MiB: {'met' if mem_ok else 'not met'}"
        print(f"{model:<10} {step:<8} {wall:9.2f} {peak:9.0f} {wall / bake:7.1f}  {target}")
EOF
