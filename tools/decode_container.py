#!/usr/bin/env python3
"""Reference decoder for `.rigbake` containers, written from formats/ alone.

Usage: python3 tools/decode_container.py MODEL.rigbake

Prints one JSON object on stdout:

    {"format_version": "1.4",
     "sections": [{"kind": 1, "offset": ..., "length": ..., "crc32": ...}],
     "bake_key": "<hex>" | null,
     "metadata": {...}, "vat": {...} | null,
     "weights": {...} | null, "rig": {...} | null,
     "bounds": {...} | null}

Records are printed in the JSON form of `rigbake inspect --json` (serde
names: unit enum variants as snake_case strings, `{"section": n}` for
`Storage`, `{"blend": {...}}` for `ClipOrigin`). Floats are exact: a
binary32 or binary64 value printed with Python's shortest round-trip repr.

It checks what formats/container.md asks of a reader's structure (magic,
major version, header and table checksums, contiguous sections, section
checksums), not the meaning of the records (formats/container.md, "What a
reader checks"). Standard library only; exit status 1 and a message on
stderr for a file it cannot read.

Every record layout below is a transcription of the tables in
formats/metadata.md, formats/vat.md, formats/weights.md and
formats/container.md; the wire encoding is formats/encoding.md.
"""

import json
import struct
import sys
import zlib

MAGIC = b"\x89RIGBAKE\r\n\x1a\n"
KIND_METADATA, KIND_VAT, KIND_WEIGHTS, KIND_RIG, KIND_KEY = 1, 3, 4, 6, 8
KIND_BOUNDS = 12
KIND_VAT_COMPRESSION = 10
KIND_TEXTURE_CONTAINER = 19
KIND_PLACEMENT = 20
KIND_BONE_RANGES = 21
KIND_CLIP_ERRORS = 22


class DecodeError(Exception):
    """The file is not a container this decoder can read."""


class Reader:
    """bincode 2, standard configuration (formats/encoding.md)."""

    def __init__(self, data):
        self.data = data
        self.at = 0

    def take(self, n):
        if self.at + n > len(self.data):
            raise DecodeError("record ends early")
        out = self.data[self.at : self.at + n]
        self.at += n
        return out

    def u8(self):
        return self.take(1)[0]

    def varint(self, max_bytes):
        """Unsigned varint; `max_bytes` is the width of the Rust type."""
        first = self.u8()
        if first <= 250:
            return first
        width = {251: 2, 252: 4, 253: 8, 254: 16}.get(first)
        if width is None or width > max_bytes:
            raise DecodeError(f"varint marker {first} for a {max_bytes}-byte integer")
        return int.from_bytes(self.take(width), "little")

    def u32(self):
        return self.varint(4)

    def u64(self):
        return self.varint(8)

    def i32(self):
        z = self.varint(4)
        return (z >> 1) ^ -(z & 1)

    def f32(self):
        return struct.unpack("<f", self.take(4))[0]

    def f64(self):
        return struct.unpack("<d", self.take(8))[0]

    def bool(self):
        b = self.u8()
        if b > 1:
            raise DecodeError(f"bool byte {b}")
        return b == 1

    def string(self):
        n = self.u64()
        try:
            return self.take(n).decode("utf-8")
        except UnicodeDecodeError as e:
            raise DecodeError(f"string is not UTF-8: {e}") from None

    def option(self, read):
        tag = self.u8()
        if tag > 1:
            raise DecodeError(f"option tag {tag}")
        return read() if tag == 1 else None

    def vec(self, read):
        return [read() for _ in range(self.u64())]

    def unit_enum(self, names):
        i = self.u32()
        if i >= len(names):
            raise DecodeError(f"variant {i} of an enum with {len(names)} variants")
        return names[i]

    def struct(self, fields):
        return {name: read(self) for name, read in fields}


# Enums: variant names in variant-number order (formats/metadata.md, "Enums").
SAMPLING_RULE = ["fixed_rate", "even_spread"]
MATRIX_LAYOUT = ["mat4", "mat3x4", "qts"]
PRECISION = ["f32", "f16", "unorm16"]
TEXTURE_KIND = ["bone_matrices"]
ENCODING = ["exr_zip", "png16"]
VAT_ENCODING = ["exr32", "exr16", "png16", "unorm8", "unorm10"]
DIRECTION_ENCODING = ["float", "bounds", "octahedral", "packed"]
NORMAL_CONVENTION = ["inverse_transpose", "blended_matrix"]
VAT_STREAM = ["positions", "normals", "tangents"]
TEXTURE_COMPRESSION = ["none", "zip", "piz", "pxr24", "deflate"]
TEXTURE_CONTAINER = ["exr", "ktx2", "ktx2_zstd", "dds"]
DEFORMATION = ["skinned", "rigid"]
ANCHOR_REASON = ["requested", "auto", "prop"]
PROP_MODE = ["bound", "anchor"]


def enum(names):
    return lambda r: r.unit_enum(names)


def u32(r):
    return r.u32()


def u64(r):
    return r.u64()


def f64(r):
    return r.f64()


def string(r):
    return r.string()


def boolean(r):
    return r.bool()


def option(read):
    return lambda r: r.option(lambda: read(r))


def vec(read):
    return lambda r: r.vec(lambda: read(r))


def struct_of(fields):
    return lambda r: r.struct(fields)


def storage(r):
    # Storage: 0 = File (no fields), 1 = Section(u32).
    i = r.u32()
    if i == 0:
        return "file"
    if i == 1:
        return {"section": r.u32()}
    raise DecodeError(f"Storage variant {i}")


def bounds(r):
    # [[f32; 4]; 2]: 8 f32, no length prefixes.
    return [[r.f32() for _ in range(4)] for _ in range(2)]


def vec3(r):
    # [f32; 3]: 3 f32, no length prefix.
    return [r.f32() for _ in range(3)]


def clip_origin(r):
    # ClipOrigin: 0 = Range {clip, source, start, end}, 1 = Blend {clip, first, second, weight}.
    i = r.u32()
    if i == 0:
        return {"range": r.struct(RANGE)}
    if i == 1:
        return {"blend": r.struct(BLEND)}
    raise DecodeError(f"ClipOrigin variant {i}")


TOOL = [("name", string), ("version", string)]
BOUNDS = [
    ("reference_node", option(string)),
    ("clips", vec(struct_of([("min", vec3), ("max", vec3)]))),
]
SOURCE = [("file_name", string), ("sha256", string), ("bytes", u64)]
OPTIONS = [
    ("fps", f64),
    ("sampling", enum(SAMPLING_RULE)),
    ("layout", enum(MATRIX_LAYOUT)),
    ("precision", enum(PRECISION)),
    ("max_texture_size", u32),
]
CLIP = [
    ("name", string),
    ("start_row", u32),
    ("frames", u32),
    ("fps", f64),
    ("duration", f64),
    ("looping", boolean),
]
SKIN = [
    ("name", string),
    ("joints", vec(string)),
    ("parents", vec(lambda r: r.i32())),
    ("mesh_nodes", vec(string)),
    ("texture", u32),
]
TEXTURE = [
    ("kind", enum(TEXTURE_KIND)),
    ("name", string),
    ("width", u32),
    ("height", u32),
    ("layout", enum(MATRIX_LAYOUT)),
    ("precision", enum(PRECISION)),
    ("encoding", enum(ENCODING)),
    ("bytes", u64),
    ("crc32", u32),
    ("storage", storage),
    ("max_error", f64),
]
METADATA = [
    ("tool", struct_of(TOOL)),
    ("source", struct_of(SOURCE)),
    ("options", struct_of(OPTIONS)),
    ("clips", vec(struct_of(CLIP))),
    ("skins", vec(struct_of(SKIN))),
    ("textures", vec(struct_of(TEXTURE))),
]

VAT_TEXTURE = [
    ("stream", enum(VAT_STREAM)),
    ("name", string),
    ("width", u32),
    ("height", u32),
    ("channels", lambda r: r.u8()),
    ("encoding", enum(VAT_ENCODING)),
    ("direction_encoding", enum(DIRECTION_ENCODING)),
    ("bounds", option(bounds)),
    ("bytes", u64),
    ("crc32", u32),
    ("storage", storage),
    ("max_error", f64),
]
VAT_PRIMITIVE = [
    ("node", string),
    ("mesh", string),
    ("primitive", u32),
    ("deformation", enum(DEFORMATION)),
    ("morphed", boolean),
    ("vertices", u32),
    ("frames", u32),
    ("width", u32),
    ("bands", u32),
    ("height", u32),
    ("positions", u32),
    ("normals", option(u32)),
    ("tangents", option(u32)),
    ("playback_mesh", u32),
]
STATIC_PRIMITIVE = [("node", string), ("mesh", string), ("primitive", u32)]
VAT = [
    ("reference_node", option(string)),
    ("normal_convention", enum(NORMAL_CONVENTION)),
    ("encoding", enum(VAT_ENCODING)),
    ("direction_encoding", enum(DIRECTION_ENCODING)),
    ("max_texture_size", u32),
    ("power_of_two", boolean),
    ("playback_file", option(string)),
    ("primitives", vec(struct_of(VAT_PRIMITIVE))),
    ("static_primitives", vec(struct_of(STATIC_PRIMITIVE))),
    ("textures", vec(struct_of(VAT_TEXTURE))),
]

TEXTURE_CONTAINER_RECORD = [("container", enum(TEXTURE_CONTAINER))]


def matrix16(r):
    # [f64; 16]: 16 f64, no length prefix, column-major.
    return [r.f64() for _ in range(16)]


PLACEMENT = [("node", option(string)), ("matrix", matrix16)]
PLACEMENT_RECORD = [
    ("reference", struct_of(PLACEMENT)),
    ("skins", vec(struct_of(PLACEMENT))),
    ("lookup_uv", enum(["texel_centre", "split_index"])),
]

VAT_COMPRESSION = [
    ("requested", enum(TEXTURE_COMPRESSION)),
    ("textures", vec(enum(TEXTURE_COMPRESSION))),
]

WEIGHTS_PRIMITIVE = [
    ("node", string),
    ("mesh", string),
    ("primitive", u32),
    ("skin", u32),
    ("vertices", u32),
    ("section", u32),
    ("dropped_max", f64),
    ("dropped_mean", f64),
    ("position_error", f64),
    ("bound_to", option(string)),
    ("mesh_index", u32),
    ("mesh_primitive", u32),
]
WEIGHTS = [
    ("max_influences", u32),
    ("channels", u32),
    ("mesh_file", option(string)),
    ("primitives", vec(struct_of(WEIGHTS_PRIMITIVE))),
]

ANCHOR = [("node", string), ("reason", enum(ANCHOR_REASON)), ("mesh", option(string))]
PROP = [
    ("node", string),
    ("mesh", string),
    ("joint", string),
    ("skin", u32),
    ("mode", enum(PROP_MODE)),
]
RANGE = [("clip", u32), ("source", string), ("start", f64), ("end", f64)]
BLEND = [("clip", u32), ("first", string), ("second", string), ("weight", f64)]
RIG = [
    ("reference_node", option(string)),
    ("anchors", vec(struct_of(ANCHOR))),
    ("anchor_section", option(u32)),
    ("anchor_texture", option(string)),
    ("props", vec(struct_of(PROP))),
    ("clip_origins", vec(clip_origin)),
]


def le(data, at, size):
    return int.from_bytes(data[at : at + size], "little")


def read_container(data):
    """Structure of formats/container.md: header, table, sections."""
    if len(data) < 48 or data[:12] != MAGIC:
        raise DecodeError("not a .rigbake container (bad magic)")
    major, minor = le(data, 12, 2), le(data, 14, 2)
    if major != 1:
        raise DecodeError(f"container format {major}.{minor}; this decoder reads 1.x")
    header_len, count = le(data, 20, 4), le(data, 24, 4)
    table_at, file_len = le(data, 28, 8), le(data, 36, 8)
    if data[16] != 1 or not 48 <= header_len <= min(4096, len(data)):
        raise DecodeError("bad byte order marker or header length")
    if zlib.crc32(data[: header_len - 4]) != le(data, header_len - 4, 4):
        raise DecodeError("header checksum mismatch")
    if file_len != len(data) or table_at + count * 32 + 4 != file_len:
        raise DecodeError("file length or table position does not match the file")
    table = data[table_at : file_len - 4]
    if zlib.crc32(table) != le(data, file_len - 4, 4):
        raise DecodeError("section table checksum mismatch")
    sections, expected = [], header_len
    for i in range(count):
        e = table[32 * i : 32 * i + 32]
        kind, offset, length, crc = le(e, 0, 4), le(e, 8, 8), le(e, 16, 8), le(e, 24, 4)
        if offset != expected:
            raise DecodeError(f"section {i} is not where the previous one ends")
        expected = offset + length + (-length % 8)
        sections.append({"kind": kind, "offset": offset, "length": length, "crc32": crc})
    if expected != table_at:
        raise DecodeError("bytes between the last section and the table")
    return f"{major}.{minor}", sections


# Bone-range record (formats/metadata.md, kind 21, since 1.13): per texture
# of the metadata, the [min, max] of a unorm16 qts texture's second texel.
BONE_RANGES_RECORD = [
    ("textures", vec(option(bounds))),
]

# Clip-error record (formats/metadata.md, kind 22, since 1.14): per texture
# and clip, the maximum and 99th percentile of what its encoding costs.
ERROR_FIGURE = [("max", f64), ("p99", f64)]
CLIP_ERROR = [
    ("positions", struct_of(ERROR_FIGURE)),
    ("normals_degrees", option(struct_of(ERROR_FIGURE))),
    ("virtual_vertices", option(struct_of(ERROR_FIGURE))),
]
CLIP_ERRORS_RECORD = [
    ("model_size", f64),
    ("virtual_vertex_distance", f64),
    (
        "textures",
        vec(
            struct_of(
                [
                    ("subject", enum(["bone_matrices", "vat"])),
                    ("texture", u32),
                    ("clips", vec(struct_of(CLIP_ERROR))),
                ]
            )
        ),
    ),
]


def payload(data, sections, kind):
    found = [s for s in sections if s["kind"] == kind]
    if len(found) > 1:
        raise DecodeError(f"more than one section of kind {kind}")
    if not found:
        return None
    s = found[0]
    body = data[s["offset"] : s["offset"] + s["length"]]
    if zlib.crc32(body) != s["crc32"]:
        raise DecodeError(f"section of kind {kind}: checksum mismatch")
    return body


def decode(data):
    version, sections = read_container(data)

    def record(kind, fields):
        body = payload(data, sections, kind)
        # Bytes after the record are ignored (fields appended by later minor versions).
        return None if body is None else Reader(body).struct(fields)

    metadata = record(KIND_METADATA, METADATA)
    if metadata is None:
        raise DecodeError("no metadata section")
    key = payload(data, sections, KIND_KEY)
    return {
        "format_version": version,
        "sections": sections,
        "bake_key": None if key is None else key.decode("utf-8"),
        "metadata": metadata,
        "vat": record(KIND_VAT, VAT),
        "weights": record(KIND_WEIGHTS, WEIGHTS),
        "rig": record(KIND_RIG, RIG),
        "bounds": record(KIND_BOUNDS, BOUNDS),
        "vat_compression": record(KIND_VAT_COMPRESSION, VAT_COMPRESSION),
        "texture_container": record(KIND_TEXTURE_CONTAINER, TEXTURE_CONTAINER_RECORD),
        "placement": record(KIND_PLACEMENT, PLACEMENT_RECORD),
        "bone_ranges": record(KIND_BONE_RANGES, BONE_RANGES_RECORD),
        "clip_errors": record(KIND_CLIP_ERRORS, CLIP_ERRORS_RECORD),
    }


def main(argv):
    if len(argv) != 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    try:
        with open(argv[1], "rb") as f:
            data = f.read()
        out = decode(data)
    except (OSError, DecodeError) as e:
        print(f"{argv[1]}: {e}", file=sys.stderr)
        return 1
    json.dump(out, sys.stdout, indent=2, allow_nan=False)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
