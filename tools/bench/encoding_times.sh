#!/usr/bin/env bash
# Bake time of every compact encoding against today's form of the same
# model (issue 52's fourth target, "within 1.5x"), over several shared
# models: VAT encodings against the EXR16 pair (`--vat --normals`), PNG16
# packed also against today's PNG16 bake, bone layouts against `mat4` f32
# (the default). The bakes of one model alternate, round after round, and
# the best of N is kept: this machine's noise moves single runs by 10%.
# A bake that fails shows `failed` (qts refuses a model whose skin
# matrices have non-uniform scale).
#
# Usage: tools/bench/encoding_times.sh [--models DIR] [--rigbake BIN] [--reps N] [MODEL...]
# (MODEL paths are relative to the models folder; a default list without.)
set -euo pipefail

repo="$(cd "$(dirname "$0")/../.." && pwd)"
models="${RIGBAKE_MODELS:-$repo/../shared/models}"
rigbake="$repo/target/release/rigbake"
reps=3
picked=()
while [ $# -gt 0 ]; do
    case "$1" in
        --models) models="$2"; shift 2 ;;
        --rigbake) rigbake="$2"; shift 2 ;;
        --reps) reps="$2"; shift 2 ;;
        -*) echo "unknown argument: $1" >&2; exit 2 ;;
        *) picked+=("$1"); shift ;;
    esac
done
if [ ${#picked[@]} -eq 0 ]; then
    picked=(khronos/BrainStem.glb kaykit/Knight.glb khronos/CesiumMan.glb khronos/Fox.glb
        threejs/RobotExpressive.glb quaternius/robot.glb raylib/greenman.glb)
fi
if [ ! -x "$rigbake" ]; then
    cargo build --release --locked -p rigbake-cli --manifest-path "$repo/Cargo.toml"
fi
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

# Column names and bake flags, then each column's baseline: VAT forms to
# the EXR16 pair (today's default), except PNG16 packed with the default
# deflate, which is also shown against today's PNG16 bake (the
# octahedral pair, the same compression); bone layouts to `mat4` f32.
names=("EXR16 pair" "KTX2 half pair" "KTX2 packed" "DDS unorm8" "KTX2 unorm10" "PNG16 pair"
    "PNG16 packed" "PNG16 packed / PNG16 pair" "PNG16 packed, none" "mat4 f32" "qts f32" "qts f16"
    "qts unorm16")
flags=("--vat --normals"
    "--vat --normals --texture-container ktx2"
    "--vat --normals --texture-container ktx2 --format png16 --direction-encoding packed"
    "--vat --normals --texture-container dds --format unorm8"
    "--vat --normals --texture-container ktx2 --format unorm10"
    "--vat --normals --format png16"
    "--vat --normals --format png16 --direction-encoding packed"
    "(the PNG16 packed bake, not run again)"
    "--vat --normals --format png16 --direction-encoding packed --png-compression none"
    ""
    "--layout qts"
    "--layout qts --precision f16"
    "--layout qts --precision unorm16")
# The baseline column of each column, and the column whose time a
# column shows (a column may show another's time against a second
# baseline).
base=(0 0 0 0 0 0 0 5 0 9 9 9 9)
same=(0 1 2 3 4 5 6 6 8 9 10 11 12)

header="| model |"
rule="|---|"
for n in "${names[@]}"; do header="$header $n |"; rule="$rule---:|"; done
echo "$header"
echo "$rule"
for model in "${picked[@]}"; do
    path="$models/$model"
    [ -f "$path" ] || { echo "missing $path (set --models)" >&2; exit 2; }
    best=()
    for _ in $(seq "$reps"); do
        for i in "${!flags[@]}"; do
            [ "${same[i]}" -eq "$i" ] || continue
            rm -rf "$scratch/out"
            start=$(date +%s.%N)
            # shellcheck disable=SC2086 # flags are words
            if "$rigbake" bake "$path" --out "$scratch/out" --quiet ${flags[$i]} >/dev/null 2>&1; then
                t=$(python3 -c "print($(date +%s.%N) - $start)")
                best[i]=$(python3 -c "b='${best[i]:-}'; print(min($t, float(b)) if b and b != 'failed' else $t)")
            else
                best[i]=failed
            fi
        done
    done
    row="| $(basename "$model") |"
    for i in "${!flags[@]}"; do
        row="$row $(python3 -c "
t, b = '${best[${same[i]}]}', '${best[${base[i]}]}'
print(t if t == 'failed' else f'{float(t):.2f} s' if b == 'failed' else f'{float(t):.2f} s ({float(t) / float(b):.2f}x)')") |"
    done
    echo "$row"
done
