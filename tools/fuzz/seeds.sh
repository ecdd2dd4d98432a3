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
# A bake seed starts with the target's two option bytes
# (fuzz/fuzz_targets/bake.rs): each model is seeded under several option
# sets (EXR16, EXR32 + ZIP with root motion, PNG16, small folded textures
# in mat3x4 f16, OpenVAT and embedding, per-primitive layout, tangents).
mkdir -p "$seeds/bake"
for f in "$seeds"/import/*; do
    for options in '\020\000' '\025\004' '\022\000' '\025\123' '\360\010' '\026\200' '\064\140'; do
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
    "$rigbake" bake "$repo/fixtures/$model.glb" --vat --root-motion extract --out "$scratch/b" -q
done
for set in a b; do
    find "$scratch/$set" -name '*.rigbake' | while read -r f; do
        seed_container "$f" "${set}_$(basename "$f")"
    done
done
# A texture seed starts with the target's kind byte: even = EXR, odd = PNG
# (fuzz/fuzz_targets/texture.rs): the EXRs of the bakes above (bone
# textures, anchors, VAT at every compression) and the PNGs of PNG16 bakes.
mkdir -p "$seeds/texture"
for model in tentacle two_skins; do
    "$rigbake" vat "$repo/fixtures/$model.glb" --format png16 --normals --out "$scratch/png" -q
    "$rigbake" vat "$repo/fixtures/$model.glb" --format exr32 --compression zip --out "$scratch/zip" -q
    "$rigbake" vat "$repo/fixtures/$model.glb" --format exr16 --compression piz --out "$scratch/piz" -q
done
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
