//! Naming a node on the command line or in a manifest (`--root-node`,
//! `--anchor`, LOD levels): by its name when that name is unique, by its
//! path from a scene root (`Armature/hips`), or by its index (`#12`). A name
//! that several nodes share is refused, listing them with their paths and
//! indices, never resolved to the first one silently.

use std::collections::HashMap;

use crate::error::{Error, Result};
use crate::model::Node;
use crate::names;

/// At most this many nodes are listed in an ambiguity error.
const LISTED: usize = 5;

/// The nodes of a model by name, built once (one pass) for many lookups.
#[derive(Debug)]
pub struct NodeNames<'a> {
    nodes: &'a [Node],
    /// The first node of each name and how many nodes have it.
    by_name: HashMap<&'a str, (usize, usize)>,
}

impl<'a> NodeNames<'a> {
    /// Indexes every node (a model's `nodes`) by name.
    pub fn new(nodes: &'a [Node]) -> Self {
        let mut by_name: HashMap<&str, (usize, usize)> = HashMap::with_capacity(nodes.len());
        for (i, n) in nodes.iter().enumerate() {
            by_name.entry(n.name.as_str()).or_insert((i, 0)).1 += 1;
        }
        Self { nodes, by_name }
    }

    /// The node `spec` names: a unique name, else a `/`-separated path of
    /// names from a scene root, else `#N` (`nodes[N]`). `what` says what the
    /// node is for in errors (`the motion root`).
    pub fn resolve(&self, spec: &str, what: &str) -> Result<usize> {
        match self.by_name.get(spec) {
            Some(&(i, 1)) => return Ok(i),
            Some(&(_, count)) => {
                let all: Vec<usize> = self.matching(|n| self.nodes[n].name == spec);
                return Err(self.ambiguous(spec, what, count, &all));
            }
            None => {}
        }
        if let Some(index) = spec.strip_prefix('#').and_then(|d| d.parse::<usize>().ok())
            && index < self.nodes.len()
        {
            return Ok(index);
        }
        if spec.contains('/') {
            let last = spec.rsplit('/').next().unwrap_or(spec);
            let found = self.matching(|n| self.nodes[n].name == last && self.path(n) == spec);
            match found[..] {
                [one] => return Ok(one),
                [] => {}
                _ => return Err(self.ambiguous(spec, what, found.len(), &found)),
            }
        }
        Err(Error::invalid(
            "nodes",
            format!(
                "no node named `{spec}` for {what}; {}",
                names::suggestion(spec, "nodes", self.nodes.iter().map(|n| n.name.as_str()))
            ),
        ))
    }

    /// Nodes satisfying `keep`, in node order (error paths only: a scan).
    fn matching(&self, keep: impl Fn(usize) -> bool) -> Vec<usize> {
        (0..self.nodes.len()).filter(|&n| keep(n)).collect()
    }

    /// `Root/Child/node`: the names from a scene root down to `node`.
    pub fn path(&self, node: usize) -> String {
        let nodes = &self.nodes;
        let mut parts = vec![nodes[node].name.as_str()];
        let mut at = nodes[node].parent;
        // The hierarchy is a forest (checked at import); the bound only
        // guards a model built by hand.
        while let Some(p) = at.filter(|_| parts.len() <= nodes.len()) {
            parts.push(nodes[p].name.as_str());
            at = nodes[p].parent;
        }
        parts.reverse();
        parts.join("/")
    }

    fn ambiguous(&self, spec: &str, what: &str, count: usize, all: &[usize]) -> Error {
        let listed: Vec<String> = all
            .iter()
            .take(LISTED)
            .map(|&n| format!("nodes[{n}] (`{}`)", self.path(n)))
            .collect();
        let more = if all.len() > LISTED {
            format!(" and {} more", all.len() - LISTED)
        } else {
            String::new()
        };
        let first = all.first().copied().unwrap_or_default();
        let unique_path = all
            .iter()
            .filter(|&&n| self.path(n) == self.path(first))
            .count()
            == 1;
        let pick = if unique_path {
            format!(
                "by its path (`{}`) or its index (`#{first}`)",
                self.path(first)
            )
        } else {
            format!("by its index (`#{first}`)")
        };
        Error::invalid(
            "nodes",
            format!(
                "`{spec}` names {count} nodes ({}{more}), so it cannot pick {what}; name one {pick}",
                listed.join(", ")
            ),
        )
    }
}
