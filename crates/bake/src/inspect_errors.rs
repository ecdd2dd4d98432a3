//! The clip-error section of `inspect`'s text: per texture and clip, what
//! its encoding costs (the clip-error record, format 1.14).

use std::fmt::Write as _;

use rigbake_format::meta::{ErrorFigure, ErrorSubject, TextureClipErrors};

use crate::inspect::{InspectReport, clip_name_width, shown};

/// The name of the texture an entry measures.
fn texture_name(r: &InspectReport, t: &TextureClipErrors) -> String {
    let name = match t.subject {
        ErrorSubject::BoneMatrices => r
            .metadata
            .textures
            .get(t.texture as usize)
            .map(|x| x.name.clone()),
        ErrorSubject::Vat => r
            .vat
            .as_ref()
            .and_then(|v| v.textures.get(t.texture as usize))
            .map(|x| x.name.clone()),
    };
    shown(&name.unwrap_or_else(|| format!("texture {}", t.texture)))
}

/// `max / p99`, in the figure's unit.
fn pair(f: &ErrorFigure) -> String {
    format!("{:.2e} / {:.2e}", f.max, f.p99)
}

/// Writes the section, when the container has the record.
pub(crate) fn render(s: &mut String, r: &InspectReport) {
    let Some(e) = &r.clip_errors else { return };
    let _ = writeln!(
        s,
        "\nclip errors (max / p99 over every vertex and frame; model size {:.4}, virtual vertices {} from their joint)",
        e.model_size, e.virtual_vertex_distance
    );
    let width = clip_name_width(&r.metadata);
    let size = e.model_size.max(f64::MIN_POSITIVE);
    for t in &e.textures {
        let kind = match t.subject {
            ErrorSubject::BoneMatrices => "bone matrices",
            ErrorSubject::Vat => "VAT",
        };
        let _ = writeln!(s, "  {} ({kind})", texture_name(r, t));
        let _ = writeln!(
            s,
            "    {:>3}  {:<width$}  {:>19}  {:>8}  {:>19}  {:>19}",
            "#", "name", "position", "of size", "normal (degrees)", "virtual vertex"
        );
        for (i, c) in t.clips.iter().enumerate() {
            let name = r
                .metadata
                .clips
                .get(i)
                .map_or(String::new(), |c| shown(&c.name));
            let _ = writeln!(
                s,
                "    {:>3}  {:<width$}  {:>19}  {:>8.1e}  {:>19}  {:>19}",
                i,
                name,
                pair(&c.positions),
                c.positions.max / size,
                c.normals_degrees.as_ref().map_or("-".to_owned(), pair),
                c.virtual_vertices.as_ref().map_or("-".to_owned(), pair),
            );
        }
    }
}
