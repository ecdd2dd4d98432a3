//! The OpenVAT-compatible export's bytes: Blender axes, the 0..1 remap of
//! position offsets, packed normals, and `<name>-remap_info.json` as
//! OpenVAT's players read it. Normative description: `docs/openvat.md`.
//!
//! OpenVAT comes from Blender (Z up); its players turn a texel `(x, y, z)`
//! into their Y-up space as `(x, z, -y)`. So a glTF (Y-up) vector
//! `(x, y, z)` is stored as `(x, -z, y)` ([`to_blender`]).

use std::fmt::Write as _;

/// A glTF (Y-up) vector in Blender's (Z-up) axes: `(x, -z, y)`.
pub fn to_blender(v: [f32; 3]) -> [f32; 3] {
    [v[0], -v[2], v[1]]
}

/// A unit normal packed into 0..1 per component: `n * 0.5 + 0.5`.
pub fn pack_normal(n: [f32; 3]) -> [f32; 3] {
    n.map(|c| c * 0.5 + 0.5)
}

/// Per-component bounds of the position offsets (`os-remap` `Min`, `Max`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Remap {
    /// Smallest value of each component.
    pub min: [f32; 3],
    /// Largest value of each component.
    pub max: [f32; 3],
}

impl Remap {
    /// The bounds of `values` (all finite); `None` when there are none.
    pub fn of(values: &[[f32; 3]]) -> Option<Self> {
        let first = *values.first()?;
        let mut r = Self {
            min: first,
            max: first,
        };
        for v in values {
            for (c, &x) in v.iter().enumerate() {
                r.min[c] = r.min[c].min(x);
                r.max[c] = r.max[c].max(x);
            }
        }
        Some(r)
    }

    /// `v` mapped into 0..1: `(v - min) / (max - min)`, 0 where a component
    /// does not vary. Players decode `min + t * (max - min)`.
    pub fn encode(&self, v: [f32; 3]) -> [f32; 3] {
        std::array::from_fn(|c| {
            let span = self.max[c] - self.min[c];
            if span > 0.0 {
                ((v[c] - self.min[c]) / span).clamp(0.0, 1.0)
            } else {
                0.0
            }
        })
    }
}

/// One clip in `remap_info.json`.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenVatClip {
    /// Clip name (the key under `animations`).
    pub name: String,
    /// First texture row of the clip (0-based); written 1-based as
    /// `startFrame`.
    pub start_row: u32,
    /// Rows (frames) of the clip; `endFrame` is `start_row + frames`.
    pub frames: u32,
    /// Frames per second (`framerate`).
    pub fps: f64,
    /// Whether the clip loops (`looping`).
    pub looping: bool,
}

/// The text of `<name>-remap_info.json`: `os-remap` (`Min`, `Max` in
/// Blender axes, `Frames` = rows per band) and `animations` in clip order
/// (the players keep the JSON order), frames numbered from 1 as in
/// Blender, `endFrame` inclusive.
pub fn remap_info(remap: &Remap, frames: u32, clips: &[OpenVatClip]) -> String {
    let num = |x: f32| serde_json::Value::from(f64::from(x)).to_string();
    let vec3 = |v: [f32; 3]| format!("[{}, {}, {}]", num(v[0]), num(v[1]), num(v[2]));
    let mut s = String::from("{\n  \"os-remap\": {\n");
    let _ = writeln!(s, "    \"Min\": {},", vec3(remap.min));
    let _ = writeln!(s, "    \"Max\": {},", vec3(remap.max));
    let _ = writeln!(s, "    \"Frames\": {frames}");
    s.push_str("  },\n  \"animations\": {");
    for (i, clip) in clips.iter().enumerate() {
        let sep = if i == 0 { "\n" } else { ",\n" };
        let _ = write!(
            s,
            "{sep}    {}: {{\"startFrame\": {}, \"endFrame\": {}, \"framerate\": {}, \"looping\": {}}}",
            serde_json::Value::from(clip.name.as_str()),
            clip.start_row + 1,
            clip.start_row + clip.frames,
            fps_text(clip.fps),
            clip.looping
        );
    }
    s.push_str(if clips.is_empty() {
        "}\n}\n"
    } else {
        "\n  }\n}\n"
    });
    s
}

/// A frame rate as JSON: a whole number without a fraction (`30`), as
/// players that parse it as an integer expect, else the float.
fn fps_text(fps: f64) -> String {
    if fps.fract() == 0.0 && (0.0..1e9).contains(&fps) {
        format!("{}", fps as u64)
    } else {
        serde_json::Value::from(fps).to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remap_info_parses_with_clips_in_order() {
        let r = Remap {
            min: [-1.0, -2.5, 0.0],
            max: [1.0, 0.5, 2.0],
        };
        let clips = [
            OpenVatClip {
                name: "Walk \"fast\"".into(),
                start_row: 0,
                frames: 40,
                fps: 30.0,
                looping: true,
            },
            OpenVatClip {
                name: "Die".into(),
                start_row: 40,
                frames: 5,
                fps: 30.0,
                looping: false,
            },
        ];
        let text = remap_info(&r, 45, &clips);
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["os-remap"]["Min"], serde_json::json!([-1.0, -2.5, 0.0]));
        assert_eq!(v["os-remap"]["Frames"], 45);
        assert_eq!(v["animations"]["Walk \"fast\""]["startFrame"], 1);
        assert_eq!(v["animations"]["Walk \"fast\""]["endFrame"], 40);
        assert_eq!(v["animations"]["Die"]["startFrame"], 41);
        assert_eq!(v["animations"]["Die"]["endFrame"], 45);
        assert_eq!(v["animations"]["Die"]["looping"], false);
        assert!(text.find("Walk").unwrap() < text.find("Die").unwrap());
    }

    #[test]
    fn axes_and_remap() {
        assert_eq!(to_blender([1.0, 2.0, 3.0]), [1.0, -3.0, 2.0]);
        let r = Remap::of(&[[0.0, 1.0, 5.0], [2.0, 1.0, -5.0]]).unwrap();
        assert_eq!(r.encode([1.0, 1.0, 0.0]), [0.5, 0.0, 0.5]);
        assert_eq!(pack_normal([0.0, -1.0, 1.0]), [0.5, 0.0, 1.0]);
    }
}
