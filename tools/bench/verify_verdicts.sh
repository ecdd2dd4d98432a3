#!/usr/bin/env bash
# Compares `verify --json` verdicts of two rigbake binaries (issue 51.3):
# every shared model that bakes is baked once (with OLD_BIN) under a few
# settings (bone + `--vat --normals`; `--max-influences 2`; `--format
# exr16`; a root-motion model with `--root-motion extract`), then both
# binaries verify every container. Prints, per container, any clip whose
# pass/fail or failure kinds differ, and the largest relative change of
# each figure; exits 1 when a verdict differs.
#
# Usage: tools/bench/verify_verdicts.sh OLD_BIN NEW_BIN [--models DIR] [--scratch DIR]
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
old="$1"; new="$2"; shift 2
models="${RIGBAKE_MODELS:-$repo/../shared/models}"
scratch=""
while [ $# -gt 0 ]; do
    case "$1" in
        --models) models="$2"; shift 2 ;;
        --scratch) scratch="$2"; shift 2 ;;
        *) echo "unknown argument: $1" >&2; exit 2 ;;
    esac
done
[ -n "$scratch" ] || scratch="$(mktemp -d "${TMPDIR:-/tmp}/verdicts.XXXXXX")"
bake() { # label, flags...
    local label="$1"; shift
    for dir in "$models"/*/; do
        [ "$(basename "$dir")" = unsupported ] && continue
        "$old" bake "$dir" --out "$scratch/$label" --quiet "$@" > /dev/null 2>&1 || true
    done
}
bake default --vat --normals
bake influences2 --vat --normals --max-influences 2
bake exr16 --vat --normals --format exr16
"$old" bake "$repo/fixtures/walker.glb" --vat --normals --root-motion extract \
    --out "$scratch/rootmotion" --quiet > /dev/null 2>&1 || true
find "$scratch" -name '*.rigbake' | sort > "$scratch/containers.txt"
while read -r c; do
    "$old" verify --json "$c" > "$c.old.json" 2> /dev/null || true
    "$new" verify --json "$c" > "$c.new.json" 2> /dev/null || true
done < "$scratch/containers.txt"
python3 - "$scratch" <<'PY'
import json, re, sys
root = sys.argv[1]
paths = open(f"{root}/containers.txt").read().split()
kinds = lambda fs: sorted(re.sub(r"[-+0-9.e]+", "#", f) for f in fs)
worst, verdicts, differ = {}, 0, 0
for c in paths:
    try:
        a, b = (json.load(open(f"{c}.{w}.json")) for w in ("old", "new"))
    except Exception as e:
        print(f"{c}: no document ({e})"); differ += 1; continue
    for oa, ob in zip(a["outputs"], b["outputs"]):
        for ca, cb in zip(oa["clips"], ob["clips"]):
            verdicts += 1
            if ca["pass"] != cb["pass"] or kinds(ca["failures"]) != kinds(cb["failures"]):
                differ += 1
                print(f"DIFF {c} {oa['output']}/{ca['clip']}: {ca['pass']} -> {cb['pass']}")
            for part in ("frames", "mid"):
                for k, x in ca[part].items():
                    y = cb[part][k]
                    if isinstance(x, (int, float)) and isinstance(y, (int, float)) and x != y:
                        rel = abs(x - y) / max(abs(x), abs(y))
                        key = f"{part}.{k}"
                        worst[key] = max(worst.get(key, 0.0), rel)
    if a["pass"] != b["pass"]:
        differ += 1; print(f"DIFF {c}: pass {a['pass']} -> {b['pass']}")
print(f"{len(paths)} containers, {verdicts} clip verdicts, {differ} differences")
for k in sorted(worst):
    print(f"  largest relative change of {k}: {worst[k]:.3e}")
sys.exit(1 if differ else 0)
PY
