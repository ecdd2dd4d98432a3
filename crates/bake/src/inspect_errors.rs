//! The clip-error section of `inspect`'s text: per texture and clip, what
//! its encoding costs (the clip-error record, format 1.14).

use std::fmt::Write as _;

use rigbake_format::meta::{
    ClipErrorsMetadata, ErrorFigure, ErrorSubject, Metadata, TextureClipErrors, VatMetadata,
};

/// What the section reads besides the record: the metadata, the VAT
/// record, how inspect shows a name, and the width of its clip-name column.
pub(crate) struct Context<'a> {
    /// The bake metadata (texture and clip names).
    pub metadata: &'a Metadata,
    /// The VAT record (its texture names), when the bake has one.
    pub vat: Option<&'a VatMetadata>,
    /// How a name is shown (control characters escaped).
    pub shown: fn(&str) -> String,
    /// The clip-name column's width.
    pub width: usize,
}

/// The name of the texture an entry measures.
fn texture_name(c: &Context<'_>, t: &TextureClipErrors) -> String {
    let name = match t.subject {
        ErrorSubject::BoneMatrices => c
            .metadata
            .textures
            .get(t.texture as usize)
            .map(|x| x.name.clone()),
        ErrorSubject::Vat => c
            .vat
            .and_then(|v| v.textures.get(t.texture as usize))
            .map(|x| x.name.clone()),
    };
    (c.shown)(&name.unwrap_or_else(|| format!("texture {}", t.texture)))
}

/// `max / p99`, in the figure's unit.
fn pair(f: &ErrorFigure) -> String {
    format!("{:.2e} / {:.2e}", f.max, f.p99)
}

/// Writes the section of the record `e`.
pub(crate) fn render(s: &mut String, e: &ClipErrorsMetadata, c: &Context<'_>) {
    let _ = writeln!(
        s,
        "\nclip errors (max / p99 over every vertex and frame; model size {:.4}, virtual vertices {} from their joint)",
        e.model_size, e.virtual_vertex_distance
    );
    let width = c.width;
    let size = e.model_size.max(f64::MIN_POSITIVE);
    for t in &e.textures {
        let kind = match t.subject {
            ErrorSubject::BoneMatrices => "bone matrices",
            ErrorSubject::Vat => "VAT",
        };
        let _ = writeln!(s, "  {} ({kind})", texture_name(c, t));
        let _ = writeln!(
            s,
            "    {:>3}  {:<width$}  {:>19}  {:>8}  {:>19}  {:>19}",
            "#", "name", "position", "of size", "normal (degrees)", "virtual vertex"
        );
        for (i, clip) in t.clips.iter().enumerate() {
            let name = c
                .metadata
                .clips
                .get(i)
                .map_or(String::new(), |x| (c.shown)(&x.name));
            let _ = writeln!(
                s,
                "    {:>3}  {:<width$}  {:>19}  {:>8.1e}  {:>19}  {:>19}",
                i,
                name,
                pair(&clip.positions),
                clip.positions.max / size,
                clip.normals_degrees.as_ref().map_or("-".to_owned(), pair),
                clip.virtual_vertices.as_ref().map_or("-".to_owned(), pair),
            );
        }
    }
}
