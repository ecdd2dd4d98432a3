#!/usr/bin/env python3
"""Would per-clip bounds pay for 8 and 10-bit VATs? (issue 52)

Bakes each shared model's VAT (`rigbake vat --fps 10`, exr16 positions),
then, per clip, compares the clip's own box of positions with the set's
box that the normalised formats quantise over: a clip whose box is half
the set's on every axis would gain one bit of precision from bounds of its
own. Prints, per model, the bits gained on the axis that gains least
(the error's largest term stays on that axis): min, median, max over clips
and the mean weighted by frames. Unfolded atlases only (folded ones are
skipped); needs the OpenEXR Python binding (pip install OpenEXR).

Usage: tools/bench/per_clip_bounds.py [--rigbake BIN] [--models DIR]
"""
import argparse
import glob
import json
import math
import os
import subprocess
import tempfile

import OpenEXR

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS = ["kaykit/Knight", "khronos/BrainStem", "khronos/CesiumMan", "khronos/Fox",
          "khronos/RiggedFigure", "quaternius/robot", "reexports/Xbot", "raylib/girl"]


def gains(rigbake, container):
    info = json.loads(subprocess.run([rigbake, "inspect", container, "--json"],
                                     capture_output=True, check=True).stdout)
    vat, clips = info["vat"], info["metadata"]["clips"]
    if (info.get("texture_layout") or {}).get("folds"):
        return None
    first = vat["primitives"][0]
    width, bands = first["width"], first["bands"]
    vertices = sum(p["vertices"] for p in vat["primitives"])
    texture = vat["textures"][first["positions"]]
    exr = OpenEXR.File(os.path.join(os.path.dirname(container), texture["name"]))
    pixels = next(iter(exr.channels().values())).pixels  # (height, width, 3)
    boxes = []
    for clip in clips:
        lo, hi = [math.inf] * 3, [-math.inf] * 3
        for row in range(clip["start_row"], clip["start_row"] + clip["frames"]):
            band_rows = pixels[row * bands:(row + 1) * bands].reshape(-1, 3)[:vertices]
            lo = [min(lo[k], float(band_rows[:, k].min())) for k in range(3)]
            hi = [max(hi[k], float(band_rows[:, k].max())) for k in range(3)]
        boxes.append((lo, hi, clip["frames"]))
    set_lo = [min(b[0][k] for b in boxes) for k in range(3)]
    set_hi = [max(b[1][k] for b in boxes) for k in range(3)]
    out = []
    for lo, hi, frames in boxes:
        bits = min(math.log2((set_hi[k] - set_lo[k]) / (hi[k] - lo[k]))
                   for k in range(3) if hi[k] > lo[k])
        out.append((bits, frames))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rigbake", default=os.path.join(REPO, "target/release/rigbake"))
    ap.add_argument("--models", default=os.environ.get("RIGBAKE_MODELS",
                                                       os.path.join(REPO, "../shared/models")))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as out:
        for model in MODELS:
            src = os.path.join(args.models, model + ".glb")
            subprocess.run([args.rigbake, "vat", src, "--out", out, "--fps", "10"],
                           capture_output=True, check=True)
            container = glob.glob(os.path.join(out, os.path.basename(model), "*.rigbake"))[0]
            g = gains(args.rigbake, container)
            if g is None:
                print(f"{model:22s} folded: skipped")
                continue
            bits = sorted(b for b, _ in g)
            mean = sum(b * f for b, f in g) / sum(f for _, f in g)
            print(f"{model:22s} {len(g):3d} clips  bits gained: min {bits[0]:.2f} "
                  f"median {bits[len(bits) // 2]:.2f} max {bits[-1]:.2f} frame-weighted {mean:.2f}")


if __name__ == "__main__":
    main()
