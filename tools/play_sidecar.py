#!/usr/bin/env python3
"""Plays a bake the way an engine would, from its JSON sidecar alone.

Usage: python3 tools/play_sidecar.py SIDECAR.rigbake.json PATH CLIP FRAME

PATH is `bones` (bone-matrix texture + weights mesh) or `vat` (vertex
animation textures + playback mesh). Prints one JSON object on stdout:

    {"space": "scene" | "node",
     "primitives": [{"node": ..., "mesh": ..., "primitive": k,
                     "positions": [[x, y, z], ...]}, ...]}

with every vertex of every primitive of that path at frame FRAME of clip
CLIP (bones: in the weights mesh's vertex order; VAT: in the playback
mesh's, each vertex addressing its texels through its lookup UV). `space`
is `scene` when the sidecar records the placements (format 1.11: top-level
`placement` for the VAT path, each skin's `placement` for its weights
primitives): the positions are stood in the source scene by them, as an
engine stands the meshes (their glTF node matrix). Older sidecars have no
placement: the positions stay in the space the sidecar names (`node`),
and the source model would be needed to place them (formats/sidecar.md).

Written from formats/sidecar.md, formats/bone-matrix-texture.md,
formats/weights.md, formats/vat.md and formats/textures.md alone: it reads
JSON, EXR (the OpenEXR reference library's Python binding) and GLB (json and
struct from the standard library), and nothing of rigbake. Textures must be
EXR (`exr_f32` or `exr_f16`) files beside the container.
"""

import math
import json
import os
import struct
import sys
import zlib

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


def read_png16(path):
    """(width, height, {channel: [sample / 65535, ...]}) of a 16-bit RGB or
    RGBA PNG without interlacing (the PNG specification's filters undone
    byte by byte: slow, for small textures)."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("%s: not a PNG" % path)
    at, idat, header = 8, [], None
    while at < len(data):
        length, kind = struct.unpack_from(">I4s", data, at)
        body = data[at + 8 : at + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
        at += 12 + length
    if header is None:
        raise ValueError("%s: no IHDR chunk" % path)
    width, height, depth, color, _, _, interlace = header
    if depth != 16 or color not in (2, 6) or interlace:
        raise ValueError("%s: not a 16-bit RGB or RGBA PNG without interlacing" % path)
    names = "RGBA"[: 3 if color == 2 else 4]
    bpp, stride = 2 * len(names), 2 * len(names) * width
    raw = zlib.decompress(b"".join(idat))
    prev, samples = bytearray(stride), []
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        samples.extend(struct.unpack(">%dH" % (width * len(names)), bytes(line)))
        prev = line
    n = len(names)
    return width, height, {name: [samples[i * n + k] / 65535.0 for i in range(width * height)]
                           for k, name in enumerate(names)}


def read_texture(folder, tex):
    """A texture's values as floats: EXR as stored; PNG16 samples mapped
    by the sidecar's `bounds` (`min + u * (max - min)`), except a `qts`
    bone texture's quaternion texels (even x), which are `u * 2 - 1`
    (formats/sidecar.md, formats/bone-matrix-texture.md)."""
    path = os.path.join(folder, tex["file"])
    if tex["encoding"] != "png16":
        return read_exr(path)
    width, height, channels = read_png16(path)
    lo, hi = tex["bounds"]
    qts = tex.get("layout") == "qts"
    decoded = {}
    for k, name in enumerate(channels):
        decoded[name] = [
            u * 2.0 - 1.0 if qts and (i % width) % 2 == 0 else lo[k] + u * (hi[k] - lo[k])
            for i, u in enumerate(channels[name])
        ]
    return width, height, decoded


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
    if tex["layout"] == "qts":
        return qts_matrix(texel(image, *at(2 * joint), "RGBA"), texel(image, *at(2 * joint + 1), "RGBA"))
    rows = [texel(image, *at(3 * joint + r), "RGBA") for r in range(3)]
    return rows + [[0.0, 0.0, 0.0, 1.0]]


def qts_matrix(q, ts):
    """[s R(q / |q|) | t] from a qts joint's two texels
    (formats/bone-matrix-texture.md)."""
    d = sum(v * v for v in q)
    x, y, z, w = [v / math.sqrt(d) for v in q] if d > 0 else (0.0, 0.0, 0.0, 0.0)
    s = ts[3]
    r = [
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
    ]
    return [[r[i][0] * s, r[i][1] * s, r[i][2] * s, ts[i]] for i in range(3)] + [[0.0, 0.0, 0.0, 1.0]]


def apply(m, p):
    return [m[r][0] * p[0] + m[r][1] * p[1] + m[r][2] * p[2] + m[r][3] for r in range(3)]


def placement_matrix(placement):
    """The 4x4 m[r][c] of a sidecar placement ({node, matrix}: 16 numbers,
    column-major, element 4 * c + r), or None without one."""
    if placement is None:
        return None
    m = placement["matrix"]
    if len(m) != 16:
        raise ValueError("placement of %s: %d numbers, not 16" % (placement.get("node"), len(m)))
    return [[m[4 * c + r] for c in range(4)] for r in range(4)]


def stand(placement, positions):
    """`positions` stood in the scene by `placement` (a matrix or None)."""
    if placement is None:
        return positions
    return [apply(placement, p) for p in positions]


def lookup_texel(uv, encoding, width, page_width, height):
    """(x, band) of a vertex from its lookup UV (formats/vat.md, "Playback
    mesh"): `split_index` holds the set vertex s = x + band * width as
    (s mod 2048, s div 2048); `texel_centre` (sidecars without
    `vat.lookup_uv`) the texel centre at row 0, normalised by the page."""
    if encoding == "split_index":
        s = int(round(uv[0])) + 2048 * int(round(uv[1]))
        return s % width, s // width
    if encoding == "texel_centre":
        return int(uv[0] * page_width), int(uv[1] * height)
    raise ValueError("unknown vat.lookup_uv %r" % encoding)


def play_bones(sidecar, folder, row):
    weights = sidecar["weights"]
    placed = "placement" in sidecar
    mesh = Glb(os.path.join(folder, weights["mesh_file"]))
    images = {}
    out = []
    for p in weights["primitives"]:
        skin = sidecar["skins"][p["skin"]]
        tex = sidecar["textures"][skin["texture"]]
        if tex["file"] not in images:
            images[tex["file"]] = read_texture(folder, tex)
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
        placement = placement_matrix(skin.get("placement")) if placed else None
        if placed and placement is None:
            raise ValueError("skin %s records no placement" % skin["name"])
        out.append({"node": p["node"], "mesh": p["mesh"], "primitive": p["primitive"],
                    "positions": stand(placement, result)})
    return out


def play_vat(sidecar, folder, row):
    vat = sidecar["vat"]
    mesh = Glb(os.path.join(folder, vat["mesh_file"]))
    encoding = vat.get("lookup_uv", "texel_centre")
    placement = placement_matrix(sidecar.get("placement"))
    images = {}
    out = []
    for p in vat["primitives"]:
        first = sidecar["textures"][p["positions"]]
        fold = first.get("fold")
        width, bands, start = p["width"], p["bands"], p["first_vertex"]
        prim = mesh.json["meshes"][p["playback_mesh"]]["primitives"][0]
        attrs = prim["attributes"]
        uv_set = p.get("lookup_uv_set")
        if uv_set is None:
            uv_set = max(int(k[9:]) for k in attrs if k.startswith("TEXCOORD_"))
        uvs = mesh.accessor(attrs["TEXCOORD_%d" % uv_set])
        result = []
        for uv in uvs:
            x, band = lookup_texel(uv, encoding, width, first["width"], first["height"])
            a = x + band * width
            if not start <= a < start + p["vertices"]:
                raise ValueError("%s: a lookup UV addresses set vertex %d, outside the primitive's %d .. %d"
                                 % (vat["mesh_file"], a, start, start + p["vertices"] - 1))
            page, x, y = folded(fold, x, band, row, bands)
            # Page k of the stream is the k-th texture after its first page.
            tex = sidecar["textures"][p["positions"] + page]
            if page and tex.get("page") != page:
                raise ValueError("%s is not page %d of %s" % (tex["file"], page, first["file"]))
            if tex["file"] not in images:
                images[tex["file"]] = read_texture(folder, tex)
            result.append(texel(images[tex["file"]], x, y, "RGB"))
        out.append({"node": p["node"], "mesh": p["mesh"], "primitive": p["primitive"],
                    "positions": stand(placement, result)})
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
        if t["encoding"] not in ("exr_f32", "exr_f16", "png16") or t["storage"] != "file":
            raise ValueError("%s: only EXR and PNG16 files beside the container are read" % t["file"])
    prims = play_bones(sidecar, folder, row) if path == "bones" else play_vat(sidecar, folder, row)
    space = "scene" if "placement" in sidecar else "node"
    json.dump({"space": space, "primitives": prims}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
