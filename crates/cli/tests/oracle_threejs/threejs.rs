//! The three.js side: runs `tools/node/oracle.mjs` (three.js's GLTFLoader,
//! AnimationMixer and CPU skinning, pinned in `tools/node/package.json`)
//! and reads what it writes back.

use std::path::Path;
use std::process::Command;

use glam::{DMat4, DVec3};
use serde::Deserialize;

/// One evaluation request: the pose at `time` seconds into the animation
/// named `clip` (rest pose when `None`).
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// glTF animation name (`clip<i>` for unnamed animation `i`), or `None`
    /// for the rest pose.
    pub clip: Option<String>,
    /// Seconds from the animation's time 0.
    pub time: f64,
}

/// An animation as three.js loaded it.
#[derive(Debug, Clone, Deserialize)]
pub struct Animation {
    /// glTF name, if any.
    pub name: Option<String>,
    /// three.js's clip duration (largest key time).
    pub duration: f64,
}

/// A glTF node.
#[derive(Debug, Clone, Deserialize)]
pub struct Node {
    /// glTF name, if any.
    pub name: Option<String>,
    /// glTF mesh index, if any.
    pub mesh: Option<usize>,
    /// Whether the node is in the default scene (others have no matrix).
    pub in_scene: bool,
}

/// A primitive three.js built an object for.
#[derive(Debug, Clone, Deserialize)]
pub struct Primitive {
    /// glTF node index.
    pub node: usize,
    /// glTF mesh index.
    pub mesh: usize,
    /// Primitive index in the mesh.
    pub primitive: usize,
    /// Vertex count (the POSITION accessor's).
    pub vertices: usize,
    /// Whether three.js made a `SkinnedMesh` of it.
    pub skinned: bool,
}

/// The header of the oracle's output.
#[derive(Debug, Clone, Deserialize)]
pub struct Header {
    /// three.js revision.
    pub three: String,
    /// Animations in glTF order.
    pub animations: Vec<Animation>,
    /// Mesh names in glTF order.
    pub meshes: Vec<Option<String>>,
    /// Nodes in glTF order.
    pub nodes: Vec<Node>,
    /// Primitives the scene holds.
    pub primitives: Vec<Primitive>,
    /// Samples evaluated.
    pub samples: usize,
}

/// What three.js computed for a list of samples.
#[derive(Debug, Clone)]
pub struct Evaluation {
    /// Model structure and names.
    pub header: Header,
    data: Vec<f64>,
    per_sample: usize,
    offsets: Vec<usize>,
}

impl Evaluation {
    /// World matrix of glTF node `node` at sample `s`.
    pub fn node_world(&self, s: usize, node: usize) -> DMat4 {
        let at = s * self.per_sample + node * 16;
        DMat4::from_cols_slice(&self.data[at..at + 16])
    }

    /// World position of vertex `v` of primitive `p` (index into
    /// `header.primitives`) at sample `s`.
    pub fn position(&self, s: usize, p: usize, v: usize) -> DVec3 {
        let at = s * self.per_sample + self.offsets[p] + v * 3;
        DVec3::from_slice(&self.data[at..at + 3])
    }

    /// Animation names as rigbake names clips (`clip<i>` when unnamed).
    pub fn clip_names(&self) -> Vec<String> {
        self.header
            .animations
            .iter()
            .enumerate()
            .map(|(i, a)| a.name.clone().unwrap_or_else(|| format!("clip{i}")))
            .collect()
    }

    /// Node name as rigbake names nodes (`node<i>` when unnamed).
    pub fn node_name(&self, node: usize) -> String {
        self.header.nodes[node]
            .name
            .clone()
            .unwrap_or_else(|| format!("node{node}"))
    }

    /// Mesh name as rigbake names meshes (`mesh<i>` when unnamed).
    pub fn mesh_name(&self, mesh: usize) -> String {
        self.header.meshes[mesh]
            .clone()
            .unwrap_or_else(|| format!("mesh{mesh}"))
    }
}

/// Why three.js could not be run.
#[derive(Debug)]
pub enum Unavailable {
    /// node or the npm package is missing (a skip unless CI requires it).
    Missing(String),
}

/// The oracle script beside the validator in `tools/node`.
fn script() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tools/node/oracle.mjs")
}

/// Evaluates `samples` of `model` with three.js, using `work` for the
/// request and output files. Panics (the test fails) when the script fails
/// on a model; returns `Unavailable` when node or three.js is missing.
pub fn evaluate(model: &Path, samples: &[Sample], work: &Path) -> Result<Evaluation, Unavailable> {
    let request = serde_json::json!({
        "model": model,
        "samples": samples
            .iter()
            .map(|s| serde_json::json!({"clip": s.clip, "time": s.time}))
            .collect::<Vec<_>>(),
    });
    let request_path = work.join("oracle-request.json");
    let out_path = work.join("oracle-out.bin");
    std::fs::write(&request_path, request.to_string()).expect("write the oracle request");
    let out = Command::new("node")
        .arg(script())
        .arg(&request_path)
        .arg(&out_path)
        .output();
    let out = match out {
        Ok(o) => o,
        Err(e) => return Err(Unavailable::Missing(format!("cannot run node: {e}"))),
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    if out.status.code() == Some(3) {
        return Err(Unavailable::Missing(stderr.trim().to_owned()));
    }
    assert!(
        out.status.success(),
        "three.js oracle failed on {}: {stderr}",
        model.display()
    );
    let bytes = std::fs::read(&out_path).expect("read the oracle output");
    Ok(parse(&bytes, model))
}

fn parse(bytes: &[u8], model: &Path) -> Evaluation {
    assert!(
        bytes.len() >= 12 && &bytes[..8] == b"RBORACL1",
        "{}: not an oracle output",
        model.display()
    );
    let len = u32::from_le_bytes(bytes[8..12].try_into().unwrap()) as usize;
    let header: Header =
        serde_json::from_slice(&bytes[12..12 + len]).expect("oracle header is JSON");
    let start = (12 + len).div_ceil(8) * 8;
    let data: Vec<f64> = bytes[start..]
        .chunks_exact(8)
        .map(|b| f64::from_le_bytes(b.try_into().unwrap()))
        .collect();
    let mut offsets = Vec::with_capacity(header.primitives.len());
    let mut per_sample = header.nodes.len() * 16;
    for p in &header.primitives {
        offsets.push(per_sample);
        per_sample += p.vertices * 3;
    }
    assert_eq!(
        data.len(),
        per_sample * header.samples,
        "{}: oracle output size",
        model.display()
    );
    Evaluation {
        header,
        data,
        per_sample,
        offsets,
    }
}
