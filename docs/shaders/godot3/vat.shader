// rigbake VAT playback for Godot 3 (GLES3): docs/engines.md, "Godot 3".
// Tested with Debian's Godot 3.2.3 by crates/cli/tests/godot.rs.
//
// Put it on every MeshInstance of the imported <model>.vat.glb (default
// glTF import) as material_override. The lookup UV (the sidecar's
// vat.primitives[].lookup_uv_set) holds the vertex's split index
// (s mod 2048, floor(s / 2048)) as two integers, exact even in the half
// floats of a compressed mesh. Godot keeps glTF TEXCOORD_0 and TEXCOORD_1
// only, as UV and UV2: the lookup set must be 0 or 1.
shader_type spatial;
// Back faces are culled (Godot's default, glTF's for single-sided
// materials; the importer keeps the winding): add render_mode
// cull_disabled for double-sided ones.

// <model>.vat.positions.exr (and .normals.exr), imported as data: filter,
// mipmaps, repeat and sRGB off, detect_3d off (tools/godot/vat_texture.import).
uniform sampler2D positions;
uniform sampler2D normals;
uniform bool has_normals = false;
// true: the lookup UV is TEXCOORD_1 (UV2; models with one UV set of their
// own); false: TEXCOORD_0 (UV; models without UVs).
uniform bool lookup_in_uv2 = true;
// From the sidecar's vat.primitives[] (the same for every primitive of an
// atlas): width and bands. rows_per_block: the positions texture's
// fold.rows_per_block when it folds into column blocks, else any value at
// least the frame count (one page only: folds into pages are not read here).
uniform int vat_width = 1;
uniform int vat_bands = 1;
uniform int rows_per_block = 1073741824;
// Timeline rows (clip.start_row + frame) to blend, and the blend fraction:
// docs/engines.md, "Rules that apply everywhere".
uniform int row0 = 0;
uniform int row1 = 0;
uniform float fraction = 0.0;
// The look: albedo colour times an optional albedo texture (white when
// unset); emission 1 draws a flat silhouette of that colour.
uniform vec4 albedo : hint_color = vec4(1.0, 1.0, 1.0, 1.0);
uniform sampler2D albedo_texture : hint_albedo;
uniform float emission = 0.0;

// Texel of set vertex s at timeline row r.
ivec2 vat_texel(int s, int r) {
	int x = s % vat_width;
	int band = s / vat_width;
	int block = r / rows_per_block;
	return ivec2(block * vat_width + x, (r % rows_per_block) * vat_bands + band);
}

void vertex() {
	vec2 lookup = lookup_in_uv2 ? UV2 : UV;
	int s = int(round(lookup.x)) + 2048 * int(round(lookup.y));
	ivec2 t0 = vat_texel(s, row0);
	ivec2 t1 = vat_texel(s, row1);
	VERTEX = mix(texelFetch(positions, t0, 0).xyz, texelFetch(positions, t1, 0).xyz, fraction);
	if (has_normals) {
		NORMAL = normalize(mix(texelFetch(normals, t0, 0).xyz, texelFetch(normals, t1, 0).xyz, fraction));
	}
}

void fragment() {
	vec3 colour = albedo.rgb * texture(albedo_texture, UV).rgb;
	ALBEDO = colour;
	EMISSION = colour * emission;
}
