//! Small pieces every output pass of a job shares: what a pass produced
//! and how model objects are named in metadata and file names.

use rigbake_core::Model;

/// What one output pass produced.
#[derive(Debug)]
pub(super) enum Part<T> {
    /// Files were staged; here is their metadata.
    Done(T),
    /// The output does not apply to this model (the reason says why).
    Skipped(String),
}

impl<T> Part<T> {
    /// What was made, unless the output was skipped.
    pub fn done(&self) -> Option<&T> {
        match self {
            Self::Done(t) => Some(t),
            Self::Skipped(_) => None,
        }
    }

    /// What was made, unless the output was skipped.
    pub fn into_done(self) -> Option<T> {
        match self {
            Self::Done(t) => Some(t),
            Self::Skipped(_) => None,
        }
    }

    /// Why the output was skipped, if it was.
    pub fn skipped(&self) -> Option<&str> {
        match self {
            Self::Done(_) => None,
            Self::Skipped(reason) => Some(reason),
        }
    }
}

/// A file-name-safe version of a glTF name.
pub(super) fn file_safe(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() || s.starts_with('.') {
        format!("_{s}")
    } else {
        s
    }
}

/// The longest stem a generated output file name may start with, in bytes;
/// with the suffixes added to it (`.positions.exr`, `.n<node>`, ...) every
/// name stays well below the 255-byte limit of common file systems.
pub(super) const MAX_STEM_BYTES: usize = 160;

/// `stem` if it is at most [`MAX_STEM_BYTES`] long; else its first bytes
/// (at a character boundary) plus `~` and 16 hex digits of its SHA-256, so
/// long names stay distinct and the same on every run.
pub(super) fn bounded_stem(stem: &str) -> String {
    use sha2::{Digest, Sha256};
    if stem.len() <= MAX_STEM_BYTES {
        return stem.to_owned();
    }
    let digest = Sha256::digest(stem.as_bytes());
    let hash: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    let mut cut = MAX_STEM_BYTES - 1 - hash.len();
    while !stem.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}~{hash}", &stem[..cut])
}

/// Names of nodes as used in metadata.
pub(super) fn node_name(model: &Model, node: usize) -> String {
    model.nodes[node].name.clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_are_made_safe() {
        assert_eq!(file_safe("Knight_Body"), "Knight_Body");
        assert_eq!(file_safe("Armature|Idle 2/x"), "Armature_Idle_2_x");
        assert_eq!(file_safe(""), "_");
        assert_eq!(file_safe(".hidden"), "_.hidden");
    }

    #[test]
    fn long_stems_are_cut_with_a_stable_distinct_hash() {
        assert_eq!(bounded_stem("short"), "short");
        let a = format!("{}a", "x".repeat(300));
        let b = format!("{}b", "x".repeat(300));
        let (ba, bb) = (bounded_stem(&a), bounded_stem(&b));
        assert_eq!(ba.len(), MAX_STEM_BYTES);
        assert_ne!(ba, bb);
        assert_eq!(ba, bounded_stem(&a));
        let wide = "é".repeat(200);
        assert!(bounded_stem(&wide).len() <= MAX_STEM_BYTES);
    }
}
