"""Decodes an OpenVAT export the way OpenVAT's players do, with no rigbake
code: reads <name>-remap_info.json, <name>_vat.exr, <name>_vnrm.exr (with the
OpenEXR reference library) and <name>.glb (POSITION and TEXCOORD_1 of the
first mesh's primitives, vertices numbered across them in order), and prints
the decoded vertices as JSON.

Player math (OpenVAT's Godot add-on and three.js viewer):
  row       = startFrame - 1 + frame         (startFrame is 1-based)
  uv        = TEXCOORD_1 + (0, row / height)
  texel     = (floor(uv.x * width), floor(uv.y * height))  (point sampling,
              image row 0 first, as glTF UVs address images)
  offset    = Min + texel.rgb * (Max - Min)   (Blender axes, Z up)
  position  = POSITION + (offset.x, offset.z, -offset.y)   (to Y up)
  normal    = n = texel.rgb * 2 - 1; (n.x, n.z, -n.y)

Usage: decode.py FOLDER NAME [STRIDE]
Prints {"clips": [{"name", "frames": [{"frame", "positions", "normals"}]}]}
for frames 0, STRIDE, 2*STRIDE, ... and the last frame of every clip.
Exit code 3 when the OpenEXR module is missing.
"""
import json
import math
import os
import struct
import sys

try:
    import Imath
    import OpenEXR
except ImportError:
    sys.exit(3)


def read_exr(path):
    f = OpenEXR.InputFile(path)
    dw = f.header()["dataWindow"]
    width, height = dw.max.x - dw.min.x + 1, dw.max.y - dw.min.y + 1
    pt = Imath.PixelType(Imath.PixelType.FLOAT)
    chans = [struct.unpack("<%df" % (width * height), f.channel(c, pt)) for c in "RGB"]
    return width, height, chans


def read_glb(path):
    data = open(path, "rb").read()
    json_len = struct.unpack_from("<I", data, 12)[0]
    doc = json.loads(data[20:20 + json_len])
    bin_start = 20 + json_len + 8
    blob = data[bin_start:]

    def floats(accessor_index, n):
        acc = doc["accessors"][accessor_index]
        view = doc["bufferViews"][acc["bufferView"]]
        start = view.get("byteOffset", 0) + acc.get("byteOffset", 0)
        stride = view.get("byteStride", 4 * n)
        return [struct.unpack_from("<%df" % n, blob, start + i * stride) for i in range(acc["count"])]

    positions, lookups = [], []
    for prim in doc["meshes"][0]["primitives"]:
        attrs = prim["attributes"]
        positions += floats(attrs["POSITION"], 3)
        lookups += floats(attrs["TEXCOORD_1"], 2)
    return positions, lookups


def main():
    folder, name = sys.argv[1], sys.argv[2]
    stride = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    info = json.load(open(os.path.join(folder, name + "-remap_info.json")))
    lo, hi = info["os-remap"]["Min"], info["os-remap"]["Max"]
    w, h, pos = read_exr(os.path.join(folder, name + "_vat.exr"))
    nrm_path = os.path.join(folder, name + "_vnrm.exr")
    nrm = read_exr(nrm_path)[2] if os.path.exists(nrm_path) else None
    rest, uv1 = read_glb(os.path.join(folder, name + ".glb"))
    out = []
    for clip, a in info["animations"].items():
        count = a["endFrame"] - a["startFrame"] + 1
        frames = sorted(set(list(range(0, count, stride)) + [count - 1]))
        decoded = []
        for frame in frames:
            row = a["startFrame"] - 1 + frame
            ps, ns = [], []
            for r, (u, v) in zip(rest, uv1):
                x = math.floor(u * w)
                y = math.floor((v + row / h) * h)
                i = y * w + x
                o = [lo[c] + pos[c][i] * (hi[c] - lo[c]) for c in range(3)]
                ps.append([r[0] + o[0], r[1] + o[2], r[2] - o[1]])
                if nrm is not None:
                    n = [nrm[c][i] * 2 - 1 for c in range(3)]
                    ns.append([n[0], n[2], -n[1]])
            decoded.append({"frame": frame, "positions": ps, "normals": ns})
        out.append({"name": clip, "frames": decoded})
    print(json.dumps({"clips": out}))


main()
