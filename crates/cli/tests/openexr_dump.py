"""Reads an EXR with the OpenEXR reference library and prints it as JSON.

Used by interop.rs to check that rigbake's EXRs are readable by the
reference implementation. Exit code 3 when the OpenEXR module is missing.
"""
import json
import struct
import sys

try:
    import Imath
    import OpenEXR
except ImportError:
    sys.exit(3)

f = OpenEXR.InputFile(sys.argv[1])
header = f.header()
dw = header["dataWindow"]
width, height = dw.max.x - dw.min.x + 1, dw.max.y - dw.min.y + 1
channels = {}
for name, chan in header["channels"].items():
    raw = f.channel(name, Imath.PixelType(Imath.PixelType.FLOAT))
    channels[name] = list(struct.unpack("<%df" % (width * height), raw))
print(json.dumps({
    "width": width,
    "height": height,
    "compression": str(header["compression"]),
    "line_order": str(header["lineOrder"]),
    "tiled": "tiles" in header,
    "channel_types": {n: str(c.type) for n, c in header["channels"].items()},
    "channels": channels,
}))
