//! The JSON Schemas of the JSON documents rigbake writes
//! (`formats/*.schema.json`), generated from the serde types that write
//! them with `schemars`: the types' doc comments are the schemas'
//! descriptions, and the rules serde's types cannot say (ranges, patterns,
//! constants, the report's per-status rules) are `#[schemars(...)]`
//! attributes beside the fields they constrain.
//!
//! The files in `formats/` are these documents, committed; a test fails
//! when they differ from what the types generate, and `just schemas`
//! (`RIGBAKE_BLESS=1 cargo test -p rigbake --lib schemas`) rewrites them.

use schemars::generate::SchemaSettings;
use schemars::transform::RecursiveTransform;
use schemars::{JsonSchema, Schema};
use serde_json::Value;

use crate::inspect::{INSPECT_SCHEMA_VERSION, InspectReport};
use crate::inspect_source::{SOURCE_SCHEMA_VERSION, SourceReport};
use crate::report::{REPORT_SCHEMA_VERSION, Report};
use crate::sidecar::{SIDECAR_SCHEMA_VERSION, Sidecar};

/// One schema file of `formats/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaFile {
    /// Its file name in `formats/` (`sidecar.schema.json`).
    pub name: &'static str,
    /// Its text: pretty-printed JSON with a final newline.
    pub text: String,
}

/// Every schema file of `formats/`, generated from the types.
pub fn all() -> Result<Vec<SchemaFile>, serde_json::Error> {
    Ok(vec![
        file::<Sidecar>(
            "sidecar.schema.json",
            "https://rigbake.invalid/formats/sidecar.schema.json",
            format!("rigbake sidecar <stem>.rigbake.json, schema version {SIDECAR_SCHEMA_VERSION}"),
        )?,
        file::<InspectReport>(
            "inspect.schema.json",
            "https://rigbake.invalid/formats/inspect.schema.json",
            format!("rigbake inspect --json, schema version {INSPECT_SCHEMA_VERSION}"),
        )?,
        file::<SourceReport>(
            "inspect-source.schema.json",
            "https://rigbake.invalid/formats/inspect-source.schema.json",
            format!("rigbake inspect MODEL --json, schema version {SOURCE_SCHEMA_VERSION}"),
        )?,
        file::<Report>(
            "report.schema.json",
            "https://example.invalid/rigbake/formats/report.schema.json",
            format!(
                "rigbake batch report (rigbake bake --json, rigbake vat --json, rigbake merge-report --json), schema version {REPORT_SCHEMA_VERSION}"
            ),
        )?,
    ])
}

/// The schema of the documents `T` serialises to, as the file `name`
/// with its `$id` and `title`.
fn file<T: JsonSchema>(
    name: &'static str,
    id: &str,
    title: String,
) -> Result<SchemaFile, serde_json::Error> {
    let mut settings = SchemaSettings::draft2020_12().for_serialize();
    settings
        .transforms
        .push(Box::new(RecursiveTransform(prose)));
    let mut schema = settings.into_generator().into_root_schema_for::<T>();
    schema.insert("$id".into(), id.into());
    schema.insert("title".into(), title.into());
    let mut text = serde_json::to_string_pretty(&schema)?;
    text.push('\n');
    Ok(SchemaFile { name, text })
}

/// Per (sub)schema: a doc comment's lines joined into one paragraph (a
/// blank line stays a paragraph break), and an unsigned 32-bit integer
/// bounded above as well as below.
fn prose(schema: &mut Schema) {
    if let Some(Value::String(text)) = schema.get_mut("description") {
        *text = text
            .split("\n\n")
            .map(|paragraph| {
                paragraph
                    .split('\n')
                    .map(str::trim)
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect::<Vec<_>>()
            .join("\n\n");
    }
    if schema.get("format").and_then(Value::as_str) == Some("uint32")
        && schema.get("maximum").is_none()
    {
        schema.insert("maximum".into(), u32::MAX.into());
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// The committed `formats/*.schema.json` are what the types generate;
    /// with `RIGBAKE_BLESS` set, writes them first.
    #[test]
    fn committed_schemas_are_generated_from_the_types() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../formats");
        let bless = std::env::var_os("RIGBAKE_BLESS").is_some();
        for file in super::all().expect("the schemas serialise") {
            let path = dir.join(file.name);
            if bless {
                std::fs::write(&path, &file.text).expect("formats/ is writable");
            }
            let committed = std::fs::read_to_string(&path).unwrap_or_default();
            assert!(
                committed == file.text,
                "formats/{} is not what the types generate: run `just schemas` \
                 (RIGBAKE_BLESS=1 cargo test -p rigbake --lib schemas) and commit the result",
                file.name
            );
        }
    }
}
