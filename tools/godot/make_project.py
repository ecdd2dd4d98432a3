#!/usr/bin/env python3
"""Builds a Godot 3 project that plays rigbake VAT bakes.

    python3 tools/godot/make_project.py PROJECT [NAME=]MODEL.rigbake.json...

copies tools/godot/project/ (project.godot, main.tscn, run.gd) and
docs/shaders/godot3/vat.shader (as res://vat.shader) into PROJECT, and for
each sidecar the bake's playback mesh (`vat.mesh_file`) and its VAT position
and normal textures into PROJECT/bake/<model>/, each with the import preset
rigbake documents beside it (NAME, when given, names the folder instead of
<model>) (docs/engines.md, "Godot 3"):
tools/godot/vat_mesh.import for the .glb (Godot's default glTF import, mesh
compression on; materials kept inside the scene) and
tools/godot/vat_texture.import for the textures (data: no filter, mipmaps,
repeat or sRGB; detect_3d off). Godot's editor then imports them
(`godot3 --path PROJECT -e --quit`, under xvfb-run without a display).
Prints, per model, a JSON line with what run.gd needs. Standard library only.
"""
import json
import shutil
import sys
from pathlib import Path

TOOLS = Path(__file__).resolve().parent
REPO = TOOLS.parent.parent


def preset(name, dest):
    shutil.copyfile(TOOLS / name, dest.with_name(dest.name + ".import"))


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    project = Path(argv[1])
    project.mkdir(parents=True, exist_ok=True)
    for f in (TOOLS / "project").iterdir():
        shutil.copyfile(f, project / f.name)
    shutil.copyfile(REPO / "docs/shaders/godot3/vat.shader", project / "vat.shader")
    for arg in argv[2:]:
        name, _, path = arg.partition("=") if "=" in arg else ("", "", arg)
        sidecar = Path(path)
        doc = json.loads(sidecar.read_text())
        vat = doc.get("vat")
        if not vat or not vat.get("mesh_file"):
            sys.exit(f"{sidecar}: the bake has no VAT playback mesh (bake with --vat)")
        model = name or sidecar.name[: -len(".rigbake.json")]
        dest = project / "bake" / model
        dest.mkdir(parents=True, exist_ok=True)
        glb = dest / vat["mesh_file"]
        shutil.copyfile(sidecar.parent / vat["mesh_file"], glb)
        preset("vat_mesh.import", glb)
        textures = doc["textures"]
        prims = vat["primitives"]
        first = prims[0]
        for key in ("positions", "normals"):
            index = first.get(key)
            if index is None:
                continue
            t = textures[index]
            if t["storage"] != "file" or not t["file"].endswith(".exr"):
                sys.exit(f"{sidecar}: {t['file']}: Godot 3 plays EXR files beside the container only")
            if t.get("fold") and t["fold"].get("pages", 1) > 1:
                sys.exit(f"{sidecar}: {t['file']} folds into pages; vat.shader reads one page")
            shutil.copyfile(sidecar.parent / t["file"], dest / t["file"])
            preset("vat_texture.import", dest / t["file"])
        if any(p["positions"] != first["positions"] for p in prims):
            sys.exit(f"{sidecar}: one texture set per model expected (--vat-layout atlas)")
        sets = {p.get("lookup_uv_set") for p in prims}
        if len(sets) != 1 or not sets <= {0, 1}:
            sys.exit(f"{sidecar}: lookup UV sets {sorted(sets)}: Godot keeps TEXCOORD_0 and _1 only"
                     " (bake with --lookup-uv-set 1, or 0 on a model without UVs)")
        pos = textures[first["positions"]]
        fold = pos.get("fold")
        res = f"res://bake/{model}/"
        print(json.dumps({
            "model": model,
            "scene": res + vat["mesh_file"],
            "positions": res + pos["file"],
            "normals": None if first.get("normals") is None else res + textures[first["normals"]]["file"],
            "vat_width": first["width"],
            "vat_bands": first["bands"],
            "lookup_uv_set": first["lookup_uv_set"],
            "rows_per_block": fold["rows_per_block"] if fold else 1073741824,
            "lookup_uv": vat.get("lookup_uv", "texel_centre"),
        }))


if __name__ == "__main__":
    main(sys.argv)
