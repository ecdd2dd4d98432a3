#!/usr/bin/env bash
# The read side against the bake (issue 34, item 4), in one run: for
# BrainStem and Knight, `rigbake bake --vat --normals`, then `rigbake
# verify` (both paths, every frame and mid-frame), and `rigbake preview`
# of the VAT path (the default contact sheet), each repeated; prints the
# median wall time and the peak memory of every step and each step's
# ratio to the bake's wall time, with the issue's targets (verify at most
# 3x the bake, verify under 256 MiB). Then the view page's time to ready:
# `rigbake view` serves the bake and headless Chromium (SwiftShader, driven
# by crates/cli/tests/browser_shoot.mjs) opens it on the VAT path; the
# time from the navigation's commit to the first frame drawn, once per
# repetition, for the default half-float VAT and, on BrainStem, a 32-bit
# one (`--format exr32`; the issue's target: ready within 60 s). Skipped
# with a note when chromium or tools/node/node_modules is missing.
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

# Serves OUT with `rigbake view` and times headless Chromium's page on
# the VAT path to its first frame; appends: model, step, seconds, 0.
view_ready() {
    local model="$1" step="$2" out="$3" url="" pid
    "$rigbake" view "$out" --port 0 > "$scratch/view.out" 2> "$scratch/view.err" &
    pid=$!
    for _ in $(seq 100); do
        url="$(grep -o 'http://[^ ]*' "$scratch/view.out" | head -n 1 || true)"
        [ -n "$url" ] && break
        sleep 0.1
    done
    cat > "$scratch/jobs.json" <<JOBS
{"chromium": "$(command -v chromium)", "node_modules": "$repo/tools/node/node_modules",
 "jobs": [{"url": "${url}?path=vat&hud=0", "width": 256, "height": 256,
           "out": "$scratch/view.png", "timeout_ms": 180000,
           "state_out": "$scratch/view_state.json"}]}
JOBS
    if ! node "$repo/crates/cli/tests/browser_shoot.mjs" "$scratch/jobs.json" > /dev/null 2> "$scratch/view_shoot.err"; then
        echo "$model $step: the page did not get ready:" >&2
        cat "$scratch/view_shoot.err" "$scratch/view.err" >&2
    fi
    kill "$pid" 2> /dev/null || true
    wait "$pid" 2> /dev/null || true
    python3 - "$scratch/view_state.json" "$model" "$step" >> "$results" <<'PY'
import json, sys
ms = json.load(open(sys.argv[1])).get("ready_ms")
if ms is not None:
    print(f"{sys.argv[2]}\t{sys.argv[3]}\t{ms / 1000:.2f}\t0")
PY
}

browser=0
if command -v chromium > /dev/null && [ -d "$repo/tools/node/node_modules/playwright-core" ]; then
    browser=1
else
    echo "note: chromium or tools/node/node_modules missing: the view page is not timed" >&2
fi

for entry in khronos/BrainStem kaykit/Knight; do
    name="$(basename "$entry")"
    out="$scratch/out"
    container="$out/$name/$name.rigbake"
    for _ in $(seq "$reps"); do
        rm -rf "$out"
        measure "$name" bake "$rigbake" bake "$models/$entry.glb" --vat --normals --out "$out" --quiet
        measure "$name" verify "$rigbake" verify "$container" --quiet
        measure "$name" preview "$rigbake" preview "$container" --path vat --out "$scratch/sheet.png"
        [ "$browser" = 1 ] && view_ready "$name" "view" "$out"
    done
    if [ "$browser" = 1 ] && [ "$name" = BrainStem ]; then
        rm -rf "$out"
        "$rigbake" bake "$models/$entry.glb" --vat --normals --format exr32 --out "$out" --quiet
        for _ in $(seq "$reps"); do
            view_ready "$name" "view-exr32" "$out"
        done
    fi
done

python3 - "$results" <<'EOF'
import statistics, sys
rows = [line.split("\t") for line in open(sys.argv[1]).read().splitlines()]
by = {}
for model, step, wall, peak in rows:
    by.setdefault((model, step), []).append((float(wall), int(peak)))
print(f"{'model':<10} {'step':<10} {'median s':>9} {'peak MiB':>9} {'x bake':>7}  target")
for model in dict.fromkeys(r[0] for r in rows):
    bake = statistics.median(w for w, _ in by[(model, "bake")])
    for step in ("bake", "verify", "preview", "view", "view-exr32"):
        if (model, step) not in by:
            continue
        walls = [w for w, _ in by[(model, step)]]
        peak = max(p for _, p in by[(model, step)]) / 1024
        wall = statistics.median(walls)
        target = ""
        if step == "verify":
            ratio_ok = wall <= 3 * bake
            mem_ok = peak < 256
            target = f"<= 3x: {'met' if ratio_ok else 'not met'}; < 256 MiB: {'met' if mem_ok else 'not met'}"
        if step.startswith("view"):
            target = f"ready <= 60 s: {'met' if max(walls) <= 60 else 'not met'} (page memory not measured)"
            print(f"{model:<10} {step:<10} {wall:9.2f} {'-':>9} {wall / bake:7.1f}  {target}")
            continue
        print(f"{model:<10} {step:<10} {wall:9.2f} {peak:9.0f} {wall / bake:7.1f}  {target}")
EOF
