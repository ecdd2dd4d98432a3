//! Small pieces every output step of a job shares: what a step produced
//! and how model objects are named in metadata and file names.

use rigbake_core::Model;

/// What one output step produced.
#[derive(Debug)]
pub(super) enum Part<T> {
    /// Files were staged; here is their metadata.
    Done(T),
    /// The output does not apply to this model (the reason says why).
    Skipped(String),
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
}
