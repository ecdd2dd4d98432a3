#!/usr/bin/env bash
# The compact encodings against the forms they replace (issue 52): GPU
# bytes, the largest error `rigbake verify` measures against the source,
# and bake time (best of N), for
#   - Knight's bone texture: `mat4` f32 (today's default) against `qts` at
#     `unorm16` (target: at least 4x smaller, error at most 1e-4 of the
#     bounding-box diagonal on every clip, bake within 1.5x);
#   - BrainStem's VAT with normals: the EXR16 pair (today's default),
#     the PNG16 pair (octahedral normals) and PNG16 positions with packed
#     normals (target: at most half the EXR16 pair, positions within 1e-4
#     of the diagonal, normals within 1 degree, bake within 1.5x), and
#     the half-float pair and packed normals again in KTX2 (no deflate).
# GPU bytes are what the textures take once uploaded: 16 bytes a texel for
# 32-bit floats, 8 for half floats and 16-bit unorm (three channels upload
# as four: no 48-bit format is common).
#
# Usage: tools/bench/compact.sh [--models DIR] [--rigbake BIN] [--reps N]
set -euo pipefail

repo="$(cd "$(dirname "$0")/../.." && pwd)"
models="${RIGBAKE_MODELS:-$repo/../shared/models}"
rigbake="$repo/target/release/rigbake"
reps=3
while [ $# -gt 0 ]; do
    case "$1" in
        --models) models="$2"; shift 2 ;;
        --rigbake) rigbake="$2"; shift 2 ;;
        --reps) reps="$2"; shift 2 ;;
        *) echo "unknown argument: $1" >&2; exit 2 ;;
    esac
done
if [ ! -x "$rigbake" ]; then
    cargo build --release --locked -p rigbake-cli --manifest-path "$repo/Cargo.toml"
fi
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

# run NAME MODEL ARGS...: bakes `reps` times (best wall time kept), then
# writes NAME.inspect.json and NAME.verify.json beside the bake.
run() {
    local name="$1" model="$2"
    shift 2
    local best=""
    for _ in $(seq "$reps"); do
        rm -rf "$scratch/$name"
        local start end
        start=$(date +%s.%N)
        "$rigbake" bake "$model" --out "$scratch/$name" --quiet "$@" >/dev/null
        end=$(date +%s.%N)
        best=$(python3 -c "import sys; t=$end-$start; b='$best'; print(min(t, float(b)) if b else t)")
    done
    local container
    container=$(find "$scratch/$name" -name '*.rigbake' | head -n 1)
    "$rigbake" inspect "$container" --json >"$scratch/$name.inspect.json"
    "$rigbake" verify "$container" --json >"$scratch/$name.verify.json" || true
    echo "$best" >"$scratch/$name.time"
}

knight="$models/kaykit/Knight.glb"
brainstem="$models/khronos/BrainStem.glb"
for m in "$knight" "$brainstem"; do
    [ -f "$m" ] || { echo "missing $m (set --models)" >&2; exit 2; }
done
run knight_mat4_f32 "$knight"
run knight_qts_unorm16 "$knight" --layout qts --precision unorm16
run brainstem_exr16 "$brainstem" --vat --normals
run brainstem_png16 "$brainstem" --vat --normals --format png16
run brainstem_packed "$brainstem" --vat --normals --format png16 --direction-encoding packed
# The same encodings in KTX2, which stores samples as GPUs upload them: no
# deflate, so the time is the encoding's own (PNG adds its compression to
# every PNG16 bake, the pair's as much as the packed form's).
run brainstem_half_ktx2 "$brainstem" --vat --normals --texture-container ktx2
run brainstem_packed_ktx2 "$brainstem" --vat --normals --texture-container ktx2 --format png16 --direction-encoding packed

python3 - "$scratch" <<'EOF'
import json, sys
d = sys.argv[1]
def load(name, kind):
    with open(f"{d}/{name}.{kind}.json") as f:
        return json.load(f)
def seconds(name):
    return float(open(f"{d}/{name}.time").read())
def bone_bytes(i):
    per = {"f32": 16, "f16": 8, "unorm16": 8}[i["metadata"]["options"]["precision"]]
    return sum(t["width"] * t["height"] * per for t in i["metadata"]["textures"])
def vat_bytes(i):
    per = {"exr32": 16, "exr16": 8, "png16": 8}
    files = {t["name"]: t["width"] * t["height"] * per[t["encoding"]] for t in i["vat"]["textures"]}
    return sum(files.values())
def worst(name, output, key):
    v = load(name, "verify")
    out = [o for o in v["outputs"] if o["output"] == output][0]
    values = [c["frames"][key] for c in out["clips"] if c["frames"][key] is not None]
    return max(values) if values else float("nan"), v["pass"]

print(f"| bake | GPU bytes | x smaller | largest position error / diagonal | largest normal error | verify | bake time | x time |")
print(f"|---|---:|---:|---:|---:|---|---:|---:|")
rows = [
    ("knight_mat4_f32", "bones", bone_bytes, "knight_mat4_f32"),
    ("knight_qts_unorm16", "bones", bone_bytes, "knight_mat4_f32"),
    ("brainstem_exr16", "vat", vat_bytes, "brainstem_exr16"),
    ("brainstem_png16", "vat", vat_bytes, "brainstem_exr16"),
    ("brainstem_packed", "vat", vat_bytes, "brainstem_exr16"),
    ("brainstem_half_ktx2", "vat", vat_bytes, "brainstem_exr16"),
    ("brainstem_packed_ktx2", "vat", vat_bytes, "brainstem_exr16"),
]
for name, output, size, base in rows:
    i, b = load(name, "inspect"), load(base, "inspect")
    nbytes, base_bytes = size(i), size(b)
    pos, ok = worst(name, output, "position_max_relative")
    nrm, _ = worst(name, output, "normal_max_degrees")
    t, tb = seconds(name), seconds(base)
    print(f"| {name} | {nbytes / 1e6:.1f} MB | {base_bytes / nbytes:.2f} | {pos:.2e} | {nrm:.3f} deg | {'pass' if ok else 'FAIL'} | {t:.2f} s | {t / tb:.2f} |")
EOF
