// WebGL2 (GLSL ES 3.00) shaders of the viewer. The skinning and VAT
// functions follow docs/shaders/rigbake.wgsl function for function (kept by
// hand: the page binds its own attributes and uniforms, see
// docs/shaders/README.md); the animation state comes per instance as four vec4 rows
// (blend weight, fraction, frame row, 0), written by state.js.

const COMMON = `#version 300 es
precision highp float;
precision highp int;
precision highp sampler2D;

struct Affine { vec4 r0; vec4 r1; vec4 r2; };

Affine affine_zero() { return Affine(vec4(0.0), vec4(0.0), vec4(0.0)); }
Affine add_weighted(Affine acc, Affine m, float w) {
  return Affine(acc.r0 + m.r0 * w, acc.r1 + m.r1 * w, acc.r2 + m.r2 * w);
}
vec3 transform_point(Affine m, vec3 p) {
  vec4 p4 = vec4(p, 1.0);
  return vec3(dot(m.r0, p4), dot(m.r1, p4), dot(m.r2, p4));
}
vec3 cofactor_normal(Affine m, vec3 n) {
  vec3 c0 = vec3(m.r0.x, m.r1.x, m.r2.x);
  vec3 c1 = vec3(m.r0.y, m.r1.y, m.r2.y);
  vec3 c2 = vec3(m.r0.z, m.r1.z, m.r2.z);
  vec3 k0 = cross(c1, c2);
  vec3 k1 = cross(c2, c0);
  vec3 k2 = cross(c0, c1);
  float s = dot(c0, k0) >= 0.0 ? 1.0 : -1.0;
  return (k0 * n.x + k1 * n.y + k2 * n.z) * s;
}
vec3 safe_normalize(vec3 v) { float l = length(v); return l > 0.0 ? v / l : v; }
vec3 lerp3(vec3 a, vec3 b, float t) { return a + (b - a) * t; }

layout(location = 0) in vec3 in_position;
layout(location = 1) in vec3 in_normal;
layout(location = 2) in vec2 in_uv;
layout(location = 7) in vec4 in_instance; // x, z, yaw (radians), scale
layout(location = 8) in vec4 in_state0;
layout(location = 9) in vec4 in_state1;
layout(location = 10) in vec4 in_state2;
layout(location = 11) in vec4 in_state3;

uniform mat4 u_view_projection;
uniform mat4 u_placement; // the space node's rest-pose global matrix

out vec3 v_normal;
out vec3 v_world;
out vec2 v_uv;

void place(vec3 p, vec3 n) {
  vec4 placed = u_placement * vec4(p, 1.0);
  mat3 nm = transpose(inverse(mat3(u_placement)));
  float c = cos(in_instance.z), s = sin(in_instance.z);
  mat3 yaw = mat3(c, 0.0, -s, 0.0, 1.0, 0.0, s, 0.0, c);
  vec3 world = yaw * (placed.xyz * in_instance.w) + vec3(in_instance.x, 0.0, in_instance.y);
  v_world = world;
  v_normal = yaw * safe_normalize(nm * n);
  v_uv = in_uv;
  gl_Position = u_view_projection * vec4(world, 1.0);
}
`;

export const BONE_VERTEX = COMMON + `
layout(location = 3) in vec4 in_uv1;
layout(location = 4) in vec4 in_uv2;
layout(location = 5) in vec4 in_uv3;
layout(location = 6) in vec4 in_uv4;

uniform sampler2D u_bones;
uniform int u_layout;   // 0: mat4 (columns), 1: mat3x4 (rows)
uniform int u_height;   // timeline rows
uniform int u_channels; // UV channels per vertex (1 to 4)
// A bone texture taller than the maximum size folds into column blocks of
// one page (formats/vat.md, "Folding"): rows_per_block (0: unfolded),
// blocks_per_page, block_width, row_height.
uniform ivec4 u_bone_fold;

ivec2 bone_texel(int x, int row) {
  if (u_bone_fold.x > 0) {
    int block = row / u_bone_fold.x;
    return ivec2((block % u_bone_fold.y) * u_bone_fold.z + x, (row % u_bone_fold.x) * u_bone_fold.w);
  }
  return ivec2(x, row);
}

Affine bone_matrix(int joint, int row) {
  if (u_layout == 0) {
    int x = joint * 4;
    vec4 c0 = texelFetch(u_bones, bone_texel(x, row), 0);
    vec4 c1 = texelFetch(u_bones, bone_texel(x + 1, row), 0);
    vec4 c2 = texelFetch(u_bones, bone_texel(x + 2, row), 0);
    vec4 c3 = texelFetch(u_bones, bone_texel(x + 3, row), 0);
    return Affine(vec4(c0.x, c1.x, c2.x, c3.x), vec4(c0.y, c1.y, c2.y, c3.y), vec4(c0.z, c1.z, c2.z, c3.z));
  }
  int x = joint * 3;
  return Affine(texelFetch(u_bones, bone_texel(x, row), 0), texelFetch(u_bones, bone_texel(x + 1, row), 0), texelFetch(u_bones, bone_texel(x + 2, row), 0));
}

Affine blend_bones(vec4 uv[4], int row) {
  Affine acc = affine_zero();
  for (int c = 0; c < 4; c++) {
    if (c >= u_channels) break;
    vec4 pair = uv[c];
    if (pair.y != 0.0) acc = add_weighted(acc, bone_matrix(int(pair.x), row), pair.y);
    if (pair.w != 0.0) acc = add_weighted(acc, bone_matrix(int(pair.z), row), pair.w);
  }
  return acc;
}

void main() {
  vec4 uv[4] = vec4[4](in_uv1, in_uv2, in_uv3, in_uv4);
  vec4 rows[4] = vec4[4](in_state0, in_state1, in_state2, in_state3);
  int last_row = max(u_height, 1) - 1;
  vec3 pos = vec3(0.0);
  vec3 nrm = vec3(0.0);
  float total = 0.0;
  for (int k = 0; k < 4; k++) {
    vec4 s = rows[k];
    if (!(s.x > 0.0)) continue;
    int row = int(s.z);
    Affine m0 = blend_bones(uv, row);
    vec3 p = transform_point(m0, in_position);
    vec3 n = safe_normalize(cofactor_normal(m0, in_normal));
    if (s.y > 0.0) {
      Affine m1 = blend_bones(uv, min(row + 1, last_row));
      p = lerp3(p, transform_point(m1, in_position), s.y);
      n = lerp3(n, safe_normalize(cofactor_normal(m1, in_normal)), s.y);
    }
    pos += p * s.x;
    nrm += n * s.x;
    total += s.x;
  }
  if (total > 0.0) place(pos, safe_normalize(nrm));
  else place(in_position, in_normal);
}
`;

export const VAT_VERTEX = COMMON + `
layout(location = 3) in vec2 in_vat_uv; // the playback mesh's lookup UV set

// One layer per page (a set that does not fold, or folds into column
// blocks of one page, has one layer). Float textures (RGBA32F, RGBA16F) are
// read through the float samplers; 16-bit UNORM samples (KTX2 and DDS
// unorm16, uploaded as RGBA16UI as they are) through the unsigned ones and
// divided by 65535, the value a UNORM fetch returns. u_vat_uint: bit 0
// positions, bit 1 normals are unsigned.
uniform highp sampler2DArray u_vat_positions;
uniform highp sampler2DArray u_vat_normals;
uniform highp usampler2DArray u_vat_positions_u;
uniform highp usampler2DArray u_vat_normals_u;
uniform int u_vat_uint;
uniform int u_has_normals;
uniform ivec4 u_vat; // width, bands, frames, height
uniform ivec4 u_vat_fold; // rows_per_block (0: unfolded), blocks_per_page, page width, 0
// The lookup UV's encoding (sidecar vat.lookup_uv): 1 split_index (format
// 1.11: the set vertex s as (s mod 2048, s div 2048), integers exact in
// half floats), 0 the normalised texel centre of older bakes.
uniform int u_vat_lookup;
uniform int u_position_encoding; // 0 float, 1 bounds
uniform vec4 u_position_min;
uniform vec4 u_position_max;
uniform int u_normal_encoding; // 0 float, 1 bounds, 2 octahedral
uniform vec4 u_normal_min;
uniform vec4 u_normal_max;

float sign_not_zero(float a) { return a >= 0.0 ? 1.0 : -1.0; }
vec3 octahedral_decode(vec2 e) {
  vec3 n = vec3(e.x, e.y, 1.0 - abs(e.x) - abs(e.y));
  if (n.z < 0.0) {
    float x = n.x, y = n.y;
    n.x = (1.0 - abs(y)) * sign_not_zero(x);
    n.y = (1.0 - abs(x)) * sign_not_zero(y);
  }
  return safe_normalize(n);
}
vec4 fetch_positions(ivec3 t) {
  if ((u_vat_uint & 1) != 0) return vec4(texelFetch(u_vat_positions_u, t, 0)) / 65535.0;
  return texelFetch(u_vat_positions, t, 0);
}
vec4 fetch_normals(ivec3 t) {
  if ((u_vat_uint & 2) != 0) return vec4(texelFetch(u_vat_normals_u, t, 0)) / 65535.0;
  return texelFetch(u_vat_normals, t, 0);
}
vec4 vat_decode(vec4 raw, int encoding, vec4 lo, vec4 hi) {
  if (encoding == 1) return lo + raw * (hi - lo);
  if (encoding == 2) return vec4(octahedral_decode(raw.xy * 2.0 - 1.0), raw.w * 2.0 - 1.0);
  return raw;
}
// The lookup UV gives the vertex's column x and band: split_index holds the
// set vertex s = x + band * width as (s mod 2048, s div 2048); older bakes
// hold the texel centre at row 0 (block 0) of the first page, normalised.
// A folded set's row r is in column block r / rows_per_block, on page
// block / blocks_per_page (formats/vat.md, "Folding"). Returns (x, y,
// page).
ivec3 vat_texel_from_uv(vec2 uv, int row) {
  int x, band;
  if (u_vat_lookup == 1) {
    int s = int(round(uv.x)) + 2048 * int(round(uv.y));
    x = s % u_vat.x;
    band = s / u_vat.x;
  } else {
    x = int(floor(uv.x * float(u_vat_fold.z)));
    band = int(floor(uv.y * float(u_vat.w)));
  }
  if (u_vat_fold.x > 0) {
    int block = row / u_vat_fold.x;
    return ivec3((block % u_vat_fold.y) * u_vat.x + x, (row % u_vat_fold.x) * u_vat.y + band, block / u_vat_fold.y);
  }
  return ivec3(x, band + row * u_vat.y, 0);
}

void main() {
  vec4 rows[4] = vec4[4](in_state0, in_state1, in_state2, in_state3);
  int last_row = max(u_vat.z, 1) - 1;
  vec3 pos = vec3(0.0);
  vec3 nrm = vec3(0.0);
  float total = 0.0;
  for (int k = 0; k < 4; k++) {
    vec4 s = rows[k];
    if (!(s.x > 0.0)) continue;
    int row = int(s.z);
    ivec3 t0 = vat_texel_from_uv(in_vat_uv, row);
    ivec3 t1 = vat_texel_from_uv(in_vat_uv, min(row + 1, last_row));
    vec3 p = vat_decode(fetch_positions(t0), u_position_encoding, u_position_min, u_position_max).xyz;
    vec3 n = in_normal;
    if (u_has_normals == 1) n = vat_decode(fetch_normals(t0), u_normal_encoding, u_normal_min, u_normal_max).xyz;
    if (s.y > 0.0) {
      p = lerp3(p, vat_decode(fetch_positions(t1), u_position_encoding, u_position_min, u_position_max).xyz, s.y);
      if (u_has_normals == 1) n = lerp3(n, vat_decode(fetch_normals(t1), u_normal_encoding, u_normal_min, u_normal_max).xyz, s.y);
    }
    pos += p * s.x;
    nrm += n * s.x;
    total += s.x;
  }
  if (total > 0.0) place(pos, safe_normalize(nrm));
  else place(in_position, in_normal);
}
`;

export const MESH_FRAGMENT = `#version 300 es
precision highp float;
in vec3 v_normal;
in vec3 v_world;
in vec2 v_uv;
uniform sampler2D u_base;     // sRGB base-colour texture (1x1 white without one)
uniform vec4 u_base_factor;   // linear base-colour factor
uniform int u_mesh_normals;   // 0: use the face normal
uniform int u_mask;           // 1: plain white silhouette
out vec4 colour;
void main() {
  if (u_mask == 1) { colour = vec4(1.0); return; }
  vec3 n = u_mesh_normals == 1 ? normalize(v_normal) : normalize(cross(dFdx(v_world), dFdy(v_world)));
  if (!gl_FrontFacing && u_mesh_normals == 1) n = -n;
  vec3 albedo = (texture(u_base, v_uv) * u_base_factor).rgb;
  vec3 light = normalize(vec3(0.4, 0.9, 0.5));
  float lit = 0.35 + 0.65 * max(dot(n, light), 0.0);
  colour = vec4(pow(albedo * lit, vec3(1.0 / 2.2)), 1.0);
}
`;

export const GROUND_VERTEX = `#version 300 es
precision highp float;
layout(location = 0) in vec2 in_corner;
uniform mat4 u_view_projection;
uniform float u_extent;
out vec2 v_ground;
void main() {
  v_ground = in_corner * u_extent;
  gl_Position = u_view_projection * vec4(v_ground.x, 0.0, v_ground.y, 1.0);
}
`;

export const GROUND_FRAGMENT = `#version 300 es
precision highp float;
in vec2 v_ground;
uniform float u_cell;
out vec4 colour;
void main() {
  vec2 g = abs(fract(v_ground / u_cell - 0.5) - 0.5) / fwidth(v_ground / u_cell);
  float line = 1.0 - min(min(g.x, g.y), 1.0);
  colour = vec4(mix(vec3(0.20, 0.21, 0.24), vec3(0.36, 0.38, 0.43), line), 1.0);
}
`;
