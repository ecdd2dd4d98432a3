//! `--exclude NAME` (manifest `exclude`): meshes left out of a bake, such
//! as props a character holds (Knight's five shields on one hand). A
//! pattern is an exact name or a glob (`*_Shield`, `Knight_Helmet`); it
//! matches a node by its name or by the name of the mesh it instances. A
//! matched node's mesh, and the mesh of every node below it, is not baked;
//! the nodes themselves stay, so the skeleton and sockets are unchanged.

use globset::{Glob, GlobMatcher};
use rigbake_core::{Error, Model, names};

/// Longest exclusion pattern, in bytes.
pub const MAX_PATTERN_BYTES: usize = 1024;

/// Most exclusion patterns per model.
pub const MAX_PATTERNS: usize = 256;

/// Drops the meshes `patterns` name from `model` (see the module docs).
/// Every pattern must match at least one node or mesh: an unknown name is
/// an error naming it and suggesting close node and mesh names.
pub fn apply(model: &mut Model, patterns: &[String]) -> rigbake_core::Result<()> {
    if patterns.is_empty() {
        return Ok(());
    }
    if patterns.len() > MAX_PATTERNS {
        return Err(Error::invalid(
            "exclude",
            format!(
                "{} exclusion patterns, more than the limit of {MAX_PATTERNS}",
                patterns.len()
            ),
        ));
    }
    let mut excluded = vec![false; model.nodes.len()];
    for pattern in patterns {
        let matcher = matcher(pattern)?;
        let mut matched = false;
        for (i, node) in model.nodes.iter().enumerate() {
            let mesh_name = node.mesh.map(|m| model.meshes[m].name.as_str());
            if matcher.is_match(&node.name) || mesh_name.is_some_and(|m| matcher.is_match(m)) {
                excluded[i] = true;
                matched = true;
            }
        }
        if !matched {
            let candidates = model
                .nodes
                .iter()
                .map(|n| n.name.as_str())
                .chain(model.meshes.iter().map(|m| m.name.as_str()));
            return Err(Error::invalid(
                "exclude",
                format!(
                    "`{pattern}` matches no node or mesh; {}",
                    names::suggestion(pattern, "node and mesh names", candidates)
                ),
            ));
        }
    }
    // Parents come first in topological order, so one pass carries an
    // exclusion down to every descendant.
    for &i in &model.topological_order {
        if let Some(parent) = model.nodes[i].parent
            && excluded[parent]
        {
            excluded[i] = true;
        }
    }
    for (node, gone) in model.nodes.iter_mut().zip(excluded) {
        if gone {
            node.mesh = None;
            node.skin = None;
            node.morph_weights = None;
        }
    }
    Ok(())
}

/// The matcher for one pattern: a glob (`*`, `?`, `[...]`), which an exact
/// name is too; a clear error for a malformed or overlong one.
fn matcher(pattern: &str) -> rigbake_core::Result<GlobMatcher> {
    if pattern.is_empty() || pattern.len() > MAX_PATTERN_BYTES {
        return Err(Error::invalid(
            "exclude",
            format!("an exclusion pattern must be 1 to {MAX_PATTERN_BYTES} bytes"),
        ));
    }
    Glob::new(pattern)
        .map(|g| g.compile_matcher())
        .map_err(|e| {
            Error::invalid(
                "exclude",
                format!("`{pattern}` is not a valid pattern: {e}"),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rigbake_core::import::{ImportOptions, import_file};

    fn hierarchy() -> Model {
        // world -> (armature -> hip -> spine), body (mesh `box`, skinned)
        import_file(
            &rigbake_fixtures::fixture("hierarchy.gltf"),
            &ImportOptions::default(),
        )
        .unwrap()
    }

    fn meshes(model: &Model) -> Vec<Option<usize>> {
        model.nodes.iter().map(|n| n.mesh).collect()
    }

    #[test]
    fn names_globs_and_mesh_names_drop_meshes_below_them() {
        let original = hierarchy();
        let body = original
            .nodes
            .iter()
            .position(|n| n.name == "body")
            .unwrap();
        assert!(original.nodes[body].mesh.is_some());
        for pattern in ["body", "box", "b?dy", "*", "world"] {
            let mut model = hierarchy();
            apply(&mut model, &[pattern.to_owned()]).unwrap();
            assert_eq!(model.nodes[body].mesh, None, "{pattern}");
            assert_eq!(model.nodes[body].skin, None, "{pattern}");
            // Nodes, the skeleton and clips stay.
            assert_eq!(model.nodes.len(), original.nodes.len());
            assert_eq!(model.skins, original.skins);
        }
        // A pattern that matches only the skeleton leaves the mesh.
        let mut model = hierarchy();
        apply(&mut model, &["armature".to_owned()]).unwrap();
        assert_eq!(meshes(&model), meshes(&original));
        // None: nothing changes.
        let mut model = hierarchy();
        apply(&mut model, &[]).unwrap();
        assert_eq!(model, original);
    }

    #[test]
    fn an_unknown_name_is_an_error_with_close_names() {
        let mut model = hierarchy();
        let e = apply(&mut model, &["body".to_owned(), "bdoy".to_owned()]).unwrap_err();
        let text = e.to_string();
        assert!(text.contains("`bdoy` matches no node or mesh"), "{text}");
        assert!(text.contains("did you mean `body`"), "{text}");
        let e = apply(&mut model, &["[".to_owned()]).unwrap_err();
        assert!(e.to_string().contains("not a valid pattern"), "{e}");
        let e = apply(&mut model, &[String::new()]).unwrap_err();
        assert!(e.to_string().contains("1 to 1024 bytes"), "{e}");
    }
}
