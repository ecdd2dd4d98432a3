#!/usr/bin/env bash
# Seed corpora for the fuzz targets in fuzz/ (docs/fuzzing.md), written
# under fuzz/seeds/<target>/ (ignored by git).
#
# Usage: tools/fuzz/seeds.sh [--shared]
#   --shared  also seed `import` and `bake` with the small models (under
#             200 KiB) of ../shared/models (or $RIGBAKE_MODELS). Those are
#             third-party files: fine on your machine, but never commit a
#             seed, corpus entry or crash input made from them.
#
# `import` and `bake` start from fixtures/ (our own models); `container`
# from the golden containers in formats/golden and fresh bakes of the
# fixtures (bones, weights, VAT, anchors, embedded textures; root motion);
# `texture` from the EXR and PNG files of fresh bakes.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
shared=0
[ "${1:-}" = "--shared" ] && shared=1
seeds="$repo/fuzz/seeds"
rm -rf "$seeds"
mkdir -p "$seeds/import" "$seeds/container"

cp "$repo"/fixtures/*.glb "$repo"/fixtures/*.gltf "$repo"/fixtures/degenerate/*.gltf "$seeds/import/"
if [ "$shared" = 1 ]; then
    models="${RIGBAKE_MODELS:-$repo/../shared/models}"
    find "$models" -name '*.glb' -size -200k -exec cp {} "$seeds/import/" \;
fi
# A bake seed starts with the target's three option bytes
# (fuzz/fuzz_targets/bake.rs): each model is seeded under several option
# sets (EXR16, EXR32 + ZIP with root motion, PNG16, small folded textures
# in mat3x4 f16, OpenVAT and embedding, per-primitive layout, tangents;
# then the compact forms: packed normals, DDS unorm8, KTX2 unorm10 with
# qts unorm16, qts in KTX2, qts with a mat4 fallback and a budget, and a
# budget over small folded textures).
mkdir -p "$seeds/bake"
for f in "$seeds"/import/*; do
    for options in '\020\000\000' '\025\004\000' '\022\000\000' '\025\123\000' '\360\010\000' \
        '\026\200\000' '\064\140\000' '\020\000\060' '\020\000\023' '\020\000\055' '\020\000\005' \
        '\020\000\304' '\020\020\100'; do
        { printf "$options"; cat "$f"; } > "$seeds/bake/$(printf '%s' "$options" | tr -d '\\')_$(basename "$f")"
    done
done

# A container seed starts with the target's mode byte: 1 = repair the
# checksums after mutating (fuzz/fuzz_targets/container.rs).
seed_container() {
    { printf '\001'; cat "$1"; } > "$seeds/container/$2"
}
find "$repo/formats/golden" -name '*.rigbake' | while read -r f; do
    seed_container "$f" "golden_$(basename "$(dirname "$f")")_$(basename "$f")"
done
rigbake="$repo/target/release/rigbake"
[ -x "$rigbake" ] || (cd "$repo" && cargo build --release -p rigbake-cli)
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
for model in tentacle walker two_skins tentacle_lods; do
    "$rigbake" bake "$repo/fixtures/$model.glb" --vat --anchors auto --embed-textures --out "$scratch/a" -q
done
# (two_skins has weighted joints beside its motion root: extraction refuses it.)
for model in tentacle walker tentacle_lods; do
    "$rigbake" bake "$repo/fixtures/$model.glb" --vat --root-motion extract --out "$scratch/b" -q
done
# The compact forms' records (qts ranges, clip errors, the budget's
# choice, packed normals, KTX2 and DDS textures), embedded so the
# container holds them.
for model in tentacle two_skins; do
    "$rigbake" bake "$repo/fixtures/$model.glb" --vat --normals --layout qts --precision unorm16 \
        --format png16 --direction-encoding packed --texture-container ktx2 --embed-textures --out "$scratch/c" -q
    "$rigbake" bake "$repo/fixtures/$model.glb" --vat --normals --max-error 0.01% \
        --texture-container dds --embed-textures --out "$scratch/d" -q
done
for set in a b c d; do
    find "$scratch/$set" -name '*.rigbake' | while read -r f; do
        seed_container "$f" "${set}_$(basename "$f")"
    done
done
# A texture seed starts with the target's kind byte (fuzz/fuzz_targets/texture.rs:
# 0 EXR, 1 PNG, 2 KTX2, 3 Zstandard KTX2, 4 DDS): the EXRs of the bakes
# above (bone textures, anchors, VAT at every compression), the PNGs of
# PNG16 bakes, and KTX2 and DDS files of every sample type, each after
# the four shape bytes the target reads (width - 1, height - 1, layers - 1,
# sample type), taken from the file's own header.
mkdir -p "$seeds/texture"
for model in tentacle two_skins; do
    "$rigbake" vat "$repo/fixtures/$model.glb" --format png16 --normals --out "$scratch/png" -q
    "$rigbake" vat "$repo/fixtures/$model.glb" --format exr32 --compression zip --out "$scratch/zip" -q
    "$rigbake" vat "$repo/fixtures/$model.glb" --format exr16 --compression piz --out "$scratch/piz" -q
    "$rigbake" bake "$repo/fixtures/$model.glb" --vat --normals --texture-container ktx2 --format unorm8 --out "$scratch/gpu/k8" -q
    "$rigbake" bake "$repo/fixtures/$model.glb" --vat --normals --texture-container dds --format unorm10 --out "$scratch/gpu/d10" -q
    "$rigbake" bake "$repo/fixtures/$model.glb" --vat --normals --texture-container ktx2-zstd --out "$scratch/gpu/kz" -q
    "$rigbake" bake "$repo/fixtures/$model.glb" --vat --normals --texture-container dds --format png16 \
        --direction-encoding packed --layout qts --precision unorm16 --out "$scratch/gpu/d16" -q
done
python3 - "$scratch/gpu" "$seeds/texture" <<'PY'
import pathlib, struct, sys
src, out = map(pathlib.Path, sys.argv[1:])
# vkFormat (KTX2) and DXGI format (DDS) to the target's sample index:
# F32, F16, Unorm16, Unorm8, Unorm10.
vk = {109: 0, 97: 1, 91: 2, 37: 3, 64: 4}
dxgi = {2: 0, 10: 1, 11: 2, 28: 3, 24: 4}
for f in sorted(src.rglob("*")):
    data = f.read_bytes() if f.is_file() else b""
    if data[:12] == b"\xabKTX 20\xbb\r\n\x1a\n":
        fmt, w, h, _, layers, _, _, zstd = struct.unpack_from("<I4xIIIIIII", data, 12)
        kind, sample = (3 if zstd == 2 else 2), vk.get(fmt)
        layers = max(layers, 1)
    elif data[:4] == b"DDS ":
        h, w = struct.unpack_from("<II", data, 12)
        fmt, _, _, layers = struct.unpack_from("<IIII", data, 128)
        kind, sample = 4, dxgi.get(fmt)
    else:
        continue
    if sample is None or not (1 <= w <= 256 and 1 <= h <= 256 and 1 <= layers <= 8):
        continue
    name = "_".join(f.relative_to(src).parts)
    (out / name).write_bytes(bytes([kind, w - 1, h - 1, layers - 1, sample]) + data)
PY
find "$scratch" -name '*.exr' | while read -r f; do
    { printf '\000'; cat "$f"; } > "$seeds/texture/$(printf '%s' "${f#"$scratch"/}" | tr / _)"
done
find "$scratch" -name '*.png' | while read -r f; do
    { printf '\001'; cat "$f"; } > "$seeds/texture/$(printf '%s' "${f#"$scratch"/}" | tr / _)"
done
# `manifest` starts from fixtures/rigbake.toml and every TOML example in
# docs/.
mkdir -p "$seeds/manifest"
cp "$repo/fixtures/rigbake.toml" "$seeds/manifest/"
python3 - "$repo/docs" "$seeds/manifest" <<'PY'
import pathlib, re, sys
docs, out = map(pathlib.Path, sys.argv[1:])
blocks = (m.group(1) for p in sorted(docs.glob("*.md"))
          for m in re.finditer(r"```toml\n(.*?)```", p.read_text(), re.S))
for i, block in enumerate(blocks):
    (out / f"docs_{i}.toml").write_text(block)
PY
echo "seeds: $(ls "$seeds/import" | wc -l) models, $(ls "$seeds/container" | wc -l) containers, $(ls "$seeds/texture" | wc -l) textures, $(ls "$seeds/manifest" | wc -l) manifests in $seeds"
