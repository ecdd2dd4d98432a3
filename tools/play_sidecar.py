#!/usr/bin/env python3
"""Plays a bake the way an engine would, from its JSON sidecar alone.

Usage: python3 tools/play_sidecar.py SIDECAR.rigbake.json PATH CLIP FRAME

PATH is `bones` (bone-matrix texture + weights mesh) or `vat` (vertex
animation textures + playback mesh). Prints one JSON object on stdout:

    {"primitives": [{"node": ..., "mesh": ..., "primitive": k,
                     "positions": [[x, y, z], ...]}, ...]}

with every vertex of every primitive of that path at frame FRAME of clip
CLIP, in the space the sidecar names (formats/sidecar.md).

Written from formats/sidecar.md, formats/bone-matrix-texture.md,
formats/weights.md, formats/vat.md and formats/textures.md alone: it reads
JSON, EXR (the OpenEXR reference library's Python binding) and GLB (json and
struct from the standard library), and nothing of rigbake. Textures must be
EXR (`exr_f32` or `exr_f16`) files beside the container.
"""

import json
import os
import struct
import sys

import Imath
import OpenEXR


def read_exr(path):
    """(width, height, {channel: [floats, row-major, row 0 first]})."""
    f = OpenEXR.InputFile(path)
    header = f.header()
    dw = header["dataWindow"]
    width, height = dw.max.x - dw.min.x + 1, dw.max.y - dw.min.y + 1
    channels = {}
    for name in header["channels"]:
        raw = f.channel(name, Imath.PixelType(Imath.PixelType.FLOAT))
        channels[name] = struct.unpack("<%df" % (width * height), raw)
    return width, height, channels


def texel(image, x, y, names):
    width, _, channels = image
    i = y * width + x
    return [channels[n][i] for n in names]


class Glb:
    """A GLB's JSON and binary chunk, with float accessor reads."""

    def __init__(self, path):
        data = open(path, "rb").read()
        if data[:4] != b"glTF":
            raise ValueError("%s: not a GLB" % path)
        at, self.bin = 12, b""
        while at < len(data):
            length, kind = struct.unpack_from("<I4s", data, at)
            chunk = data[at + 8 : at + 8 + length]
            if kind == b"JSON":
                self.json = json.loads(chunk)
            elif kind == b"BIN\0":
                self.bin = chunk
            at += 8 + length

    def accessor(self, index):
        """The accessor's elements as lists of floats."""
        a = self.json["accessors"][index]
        view = self.json["bufferViews"][a["bufferView"]]
        width = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4}[a["type"]]
        fmt, size = {5126: ("f", 4), 5123: ("H", 2), 5121: ("B", 1)}[a["componentType"]]
        stride = view.get("byteStride", width * size)
        base = view.get("byteOffset", 0) + a.get("byteOffset", 0)
        out = []
        for k in range(a["count"]):
            at = base + k * stride
            out.append(list(struct.unpack_from("<%d%s" % (width, fmt), self.bin, at)))
        return out


def row_of(sidecar, clip_name, frame):
    for clip in sidecar["clips"]:
        if clip["name"] == clip_name:
            if not 0 <= frame < clip["frames"]:
                raise ValueError("frame %d outside clip %s" % (frame, clip_name))
            return clip["start_row"] + frame
    raise ValueError("no clip %s" % clip_name)


def folded(fold, x, y, row, row_height):
    """(page, x', y') of texel (x, y) of timeline row `row`, `y` counted
    within the row (0 .. row_height). Without a fold, row r's texel rows
    start at r * row_height on the only page; with one, rows continue in
    column blocks and pages (formats/sidecar.md, `fold`)."""
    if fold is None:
        return 0, x, row * row_height + y
    block = row // fold["rows_per_block"]
    return (block // fold["blocks_per_page"],
            (block % fold["blocks_per_page"]) * fold["block_width"] + x,
            (row % fold["rows_per_block"]) * fold["row_height"] + y)


def skin_matrix(image, tex, joint, row):
    """The 4x4 skin matrix m[r][c] of `joint` at `row`."""
    fold = tex.get("fold")

    def at(x):
        page, tx, ty = folded(fold, x, 0, row, 1)
        if page != 0:
            raise ValueError("%s: bone textures have one page" % tex["file"])
        return tx, ty

    if tex["layout"] == "mat4":
        cols = [texel(image, *at(4 * joint + c), "RGBA") for c in range(4)]
        return [[cols[c][r] for c in range(4)] for r in range(4)]
    rows = [texel(image, *at(3 * joint + r), "RGBA") for r in range(3)]
    return rows + [[0.0, 0.0, 0.0, 1.0]]


def apply(m, p):
    return [m[r][0] * p[0] + m[r][1] * p[1] + m[r][2] * p[2] + m[r][3] for r in range(3)]


def play_bones(sidecar, folder, row):
    weights = sidecar["weights"]
    mesh = Glb(os.path.join(folder, weights["mesh_file"]))
    images = {}
    out = []
    for p in weights["primitives"]:
        skin = sidecar["skins"][p["skin"]]
        tex = sidecar["textures"][skin["texture"]]
        if tex["file"] not in images:
            images[tex["file"]] = read_exr(os.path.join(folder, tex["file"]))
        image = images[tex["file"]]
        prim = mesh.json["meshes"][p["mesh_index"]]["primitives"][p["mesh_primitive"]]
        attrs = prim["attributes"]
        positions = mesh.accessor(attrs["POSITION"])
        channels = [mesh.accessor(attrs[name]) for name in weights["attributes"]]
        cache = {}
        result = []
        for v, pos in enumerate(positions):
            acc = [0.0, 0.0, 0.0]
            for ch in channels:
                b0, w0, b1, w1 = ch[v]
                for bone, w in ((b0, w0), (b1, w1)):
                    if w == 0.0:
                        continue
                    j = int(round(bone))
                    if j not in cache:
                        cache[j] = skin_matrix(image, tex, j, row)
                    q = apply(cache[j], pos)
                    acc = [acc[k] + w * q[k] for k in range(3)]
            result.append(acc)
        out.append({"node": p["node"], "mesh": p["mesh"], "primitive": p["primitive"],
                    "positions": result})
    return out


def play_vat(sidecar, folder, row):
    vat = sidecar["vat"]
    images = {}
    out = []
    for p in vat["primitives"]:
        first = sidecar["textures"][p["positions"]]
        fold = first.get("fold")
        width, bands, start = p["width"], p["bands"], p["first_vertex"]
        result = []
        for v in range(p["vertices"]):
            a = start + v
            page, x, y = folded(fold, a % width, a // width, row, bands)
            # Page k of the stream is the k-th texture after its first page.
            tex = sidecar["textures"][p["positions"] + page]
            if page and tex.get("page") != page:
                raise ValueError("%s is not page %d of %s" % (tex["file"], page, first["file"]))
            if tex["file"] not in images:
                images[tex["file"]] = read_exr(os.path.join(folder, tex["file"]))
            result.append(texel(images[tex["file"]], x, y, "RGB"))
        out.append({"node": p["node"], "mesh": p["mesh"], "primitive": p["primitive"],
                    "positions": result})
    return out


def main(argv):
    if len(argv) != 5 or argv[2] not in ("bones", "vat"):
        sys.stderr.write(__doc__)
        return 2
    sidecar_path, path, clip, frame = argv[1], argv[2], argv[3], int(argv[4])
    sidecar = json.load(open(sidecar_path))
    folder = os.path.dirname(os.path.abspath(sidecar_path))
    row = row_of(sidecar, clip, frame)
    for t in sidecar["textures"]:
        if t["encoding"] not in ("exr_f32", "exr_f16") or t["storage"] != "file":
            raise ValueError("%s: only EXR files beside the container are read" % t["file"])
    prims = play_bones(sidecar, folder, row) if path == "bones" else play_vat(sidecar, folder, row)
    json.dump({"primitives": prims}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
