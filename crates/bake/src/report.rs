//! What happened to each model of a batch: outcomes, the summary, the JSON
//! report (`rigbake bake --json`, schema in docs/batch.md), and merging the
//! reports of several shards (`rigbake merge-report`). In the library so a
//! CI tool can read, merge and check reports without the binary.

use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Version of the JSON report layout (`formats/report.schema.json`). 2 added
/// `out`, each model's `warnings` and `removed`, up-to-date models'
/// outputs, and paths relative to `out`.
pub const REPORT_SCHEMA_VERSION: u32 = 2;

/// Why reports cannot be merged.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MergeError {
    /// A report has another layout.
    #[error("report schema version {0} is not {1}")]
    Schema(u32, u32),
    /// A model is in two reports.
    #[error("`{0}` appears in two reports (overlapping shards?)")]
    Overlap(String),
    /// A report's shard is not `K/N` with 1 <= K <= N <= [`MAX_SHARDS`].
    #[error("report shard `{0}` is not K/N with 1 <= K <= N <= {MAX_SHARDS}")]
    BadShard(String),
    /// Reports of different shard counts.
    #[error("reports of shard sets of different sizes (N = {0} and N = {1}) cannot be merged")]
    MixedShards(usize, usize),
    /// The same shard twice.
    #[error("shard {0} is in two reports")]
    DuplicateShard(String),
    /// Shards not given.
    #[error("shard report(s) missing: {0}")]
    MissingShards(String),
    /// A whole-run report (no shard) given with shard reports.
    #[error("a whole-run report (no shard) cannot be merged with shard reports")]
    WholeAndShards,
    /// A total does not fit.
    #[error("the merged totals overflow")]
    Overflow,
    /// A report's run time is negative or not finite.
    #[error("report seconds {0} is negative or not finite")]
    Seconds(f64),
    /// A report breaks `formats/report.schema.json` (its position among
    /// the reports, from 1, and the field and why).
    #[error("report {0}: {1}")]
    Invalid(usize, ReportError),
}

/// A field of a JSON report that `formats/report.schema.json` refuses.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {reason}")]
pub struct ReportError {
    /// The field, as a path (`models[2].key`; `.` for the document).
    pub field: String,
    /// Why it is refused.
    pub reason: String,
}

impl ReportError {
    fn new(field: impl Into<String>, reason: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            reason: reason.into(),
        }
    }
}

/// The result of one model's bake.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Outputs were written.
    Baked {
        /// Files written, with their sizes in bytes.
        files: Vec<(PathBuf, u64)>,
        /// Files of the previous bake that this one no longer writes,
        /// removed.
        removed: Vec<PathBuf>,
        /// The bake key recorded in the container.
        key: String,
        /// Why the previous bake in the folder was not kept (a file missing
        /// or changed, the source or a setting changed, `--force`); `None`
        /// for a first bake. Shown on the model's line, not in the JSON
        /// report.
        reason: Option<String>,
    },
    /// The existing outputs were made from the same inputs and settings.
    UpToDate {
        /// The files of the existing bake (container first), with sizes.
        files: Vec<(PathBuf, u64)>,
        /// The bake key.
        key: String,
    },
    /// Nothing applied to this model (for example no skinned mesh).
    Skipped {
        /// Why.
        reason: String,
    },
    /// The model could not be baked; previous outputs are untouched.
    Failed {
        /// One line naming the file, the object and the reason.
        error: String,
    },
}

impl Outcome {
    /// Whether this outcome makes the run fail.
    pub fn is_failure(&self) -> bool {
        matches!(self, Self::Failed { .. })
    }
}

/// One model of a run, as the batch saw it.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The model's id (path relative to the folder or manifest).
    pub input: String,
    /// What happened.
    pub outcome: Outcome,
    /// Seconds spent on it.
    pub seconds: f64,
    /// The warnings its bake gave, in order.
    pub warnings: Vec<String>,
    /// What `--max-error` chose, per output, and why.
    pub encodings: Vec<String>,
    /// The worst clip of each texture its bake measured.
    pub errors: Vec<TextureError>,
}

/// The worst clip of one texture: what its encoding costs there (from the
/// container's clip-error record, formats/metadata.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct TextureError {
    /// `bone_matrices` or `vat`.
    pub subject: rigbake_format::meta::ErrorSubject,
    /// The texture's file name (a VAT set's first positions texture).
    pub texture: String,
    /// The clip with the largest position error.
    pub clip: String,
    /// Its largest position error, model units.
    #[schemars(range(min = 0))]
    pub max: f64,
    /// The same relative to the model's size.
    #[schemars(range(min = 0))]
    pub relative: f64,
    /// Its 99th percentile, model units.
    #[schemars(range(min = 0))]
    pub p99: f64,
}

impl TextureError {
    /// The worst clip of each texture of a clip-error record, named from
    /// the bake's metadata and VAT record.
    pub fn worst_of(
        errors: &rigbake_format::meta::ClipErrorsMetadata,
        metadata: &rigbake_format::meta::Metadata,
        vat: Option<&rigbake_format::meta::VatMetadata>,
    ) -> Vec<Self> {
        use rigbake_format::meta::ErrorSubject;
        errors
            .textures
            .iter()
            .filter_map(|t| {
                let (c, worst) = t
                    .clips
                    .iter()
                    .enumerate()
                    .max_by(|a, b| a.1.positions.max.total_cmp(&b.1.positions.max))?;
                let texture = match t.subject {
                    ErrorSubject::BoneMatrices => {
                        metadata.textures.get(t.texture as usize).map(|x| &x.name)
                    }
                    ErrorSubject::Vat => vat
                        .and_then(|v| v.textures.get(t.texture as usize))
                        .map(|x| &x.name),
                };
                Some(Self {
                    subject: t.subject,
                    texture: texture.cloned().unwrap_or_default(),
                    clip: metadata
                        .clips
                        .get(c)
                        .map(|x| x.name.clone())
                        .unwrap_or_default(),
                    max: worst.positions.max,
                    relative: worst.positions.max / errors.model_size.max(f64::MIN_POSITIVE),
                    p99: worst.positions.p99,
                })
            })
            .collect()
    }
}

/// What happened to a model, as the JSON report spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// `baked`: outputs were written.
    Baked,
    /// `up_to_date`: the existing outputs were kept.
    UpToDate,
    /// `skipped`: nothing applied to the model.
    Skipped,
    /// `failed`: the model could not be baked.
    Failed,
}

impl Status {
    /// The status as the report spells it (`up_to_date`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Baked => "baked",
            Self::UpToDate => "up_to_date",
            Self::Skipped => "skipped",
            Self::Failed => "failed",
        }
    }
}

// The report types read strictly, as formats/report.schema.json says:
// every field required (`Option::deserialize` makes an optional value's
// field required), no unknown field, statuses from the enum, counts
// unsigned; [`Report::check`] adds the rules serde cannot say.

/// One model in the JSON report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("allOf" = [
    {
        "if": { "properties": { "status": { "enum": ["skipped", "failed"] } } },
        "then": {
            "properties": {
                "message": { "type": "string" },
                "outputs": { "maxItems": 0 },
                "key": { "type": "null" }
            }
        }
    },
    {
        "if": { "properties": { "status": { "enum": ["baked", "up_to_date"] } } },
        "then": {
            "properties": {
                "message": { "type": "null" },
                "outputs": { "minItems": 1 },
                "key": { "type": "string" }
            }
        }
    }
]))]
pub struct ModelReport {
    /// The model's id (path relative to the folder or manifest).
    pub input: String,
    /// `baked`, `up_to_date`, `skipped` or `failed`.
    pub status: Status,
    /// Why the model was skipped, or its error line (file, glTF object,
    /// reason); `null` for baked and up-to-date models.
    #[serde(deserialize_with = "Option::deserialize")]
    pub message: Option<String>,
    /// The model's outputs: every file written, in the order the bake
    /// created them (baked), or the files of the existing bake, the
    /// container first (up to date); empty otherwise.
    pub outputs: Vec<OutputFile>,
    /// Files of the previous bake that a rebake no longer writes and
    /// removed, relative to `out`.
    #[schemars(with = "Vec<RelativePath>")]
    pub removed: Vec<String>,
    /// The warnings its bake gave (none for a model that was not baked in
    /// this run).
    pub warnings: Vec<String>,
    /// What `--max-error` chose for each output of a model baked in this
    /// run, and why (the encoding, its largest clip error and the budget);
    /// empty without `--max-error`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub encodings: Vec<String>,
    /// For a model baked in this run: the worst clip of each texture, what
    /// its encoding costs there (the container's clip-error record has
    /// every clip); empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<TextureError>,
    /// The bake key, 64 lowercase hex digits (`formats/container.md`,
    /// "Key"), of baked and up-to-date models; `null` otherwise.
    #[serde(deserialize_with = "Option::deserialize")]
    #[schemars(regex(pattern = "^[0-9a-f]{64}$"))]
    pub key: Option<String>,
    /// Seconds spent on this model.
    #[schemars(range(min = 0))]
    pub seconds: f64,
}

/// One output file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OutputFile {
    /// Its path, relative to the report's `out`, `/`-separated.
    #[schemars(with = "RelativePath")]
    pub path: String,
    /// Its size in bytes.
    pub bytes: u64,
}

/// The schema of a path in a report: relative to the report's `out`,
/// `/`-separated, never empty and never starting with `/` or `./` (what
/// [`Report::check`] enforces).
struct RelativePath;

impl JsonSchema for RelativePath {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "RelativePath".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A path relative to the report's `out`, `/`-separated, never empty and never starting with `/` or `./`.",
            "type": "string",
            "minLength": 1,
            "not": { "pattern": "^(/|\\./)" }
        })
    }
}

/// `path` relative to `out` (lexically normalised first, `/`-separated);
/// a path outside `out` stays as it is, normalised.
pub fn relative_to(out: &Path, path: &Path) -> String {
    let out = crate::listed::normalised(out);
    let path = crate::listed::normalised(path);
    path.strip_prefix(&out)
        .unwrap_or(&path)
        .to_string_lossy()
        .replace('\\', "/")
}

/// Counts over a report.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Totals {
    /// Models baked.
    pub baked: usize,
    /// Models already up to date.
    pub up_to_date: usize,
    /// Models with nothing to bake.
    pub skipped: usize,
    /// Models that failed.
    pub failed: usize,
    /// Bytes written in this run: the outputs of baked models only.
    pub bytes: u64,
}

/// The batch report that `rigbake bake --json`, `rigbake vat --json` and
/// `rigbake merge-report --json` print (`formats/report.md`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Report {
    /// The report layout's version; a reader refuses other values.
    #[schemars(extend("const" = REPORT_SCHEMA_VERSION))]
    pub schema_version: u32,
    /// `rigbake <version>`.
    #[schemars(regex(pattern = "^rigbake "))]
    pub tool: String,
    /// The shards this report covers, each `K/N` (`--shard`; merged
    /// reports list all); empty for a whole run.
    #[schemars(inner(regex(pattern = "^[1-9][0-9]*/[1-9][0-9]*$")))]
    pub shards: Vec<String>,
    /// The output folder as given (`--out` or the manifest's `out`); every
    /// output path is relative to it. `null` for merged reports of
    /// different folders.
    #[serde(deserialize_with = "Option::deserialize")]
    pub out: Option<String>,
    /// Wall-clock seconds of the run(s).
    #[schemars(range(min = 0))]
    pub seconds: f64,
    /// Every model, sorted by input.
    pub models: Vec<ModelReport>,
    /// Counts.
    pub totals: Totals,
}

impl Report {
    /// Builds a report from the entries of a run into `out` (in job
    /// order).
    pub fn new(
        entries: Vec<Entry>,
        out: &Path,
        shard: Option<(usize, usize)>,
        seconds: f64,
    ) -> Self {
        let files = |files: Vec<(PathBuf, u64)>| -> Vec<OutputFile> {
            files
                .into_iter()
                .map(|(p, bytes)| OutputFile {
                    path: relative_to(out, &p),
                    bytes,
                })
                .collect()
        };
        let mut models: Vec<ModelReport> = entries
            .into_iter()
            .map(|entry| {
                let (status, message, outputs, removed, key) = match entry.outcome {
                    Outcome::Baked {
                        files: f,
                        removed,
                        key,
                        ..
                    } => (
                        Status::Baked,
                        None,
                        files(f),
                        removed.iter().map(|p| relative_to(out, p)).collect(),
                        Some(key),
                    ),
                    Outcome::UpToDate { files: f, key } => {
                        (Status::UpToDate, None, files(f), Vec::new(), Some(key))
                    }
                    Outcome::Skipped { reason } => {
                        (Status::Skipped, Some(reason), Vec::new(), Vec::new(), None)
                    }
                    Outcome::Failed { error } => {
                        (Status::Failed, Some(error), Vec::new(), Vec::new(), None)
                    }
                };
                ModelReport {
                    input: entry.input,
                    status,
                    message,
                    outputs,
                    removed,
                    warnings: entry.warnings,
                    encodings: entry.encodings,
                    errors: entry.errors,
                    key,
                    seconds: entry.seconds,
                }
            })
            .collect();
        models.sort_by(|a, b| a.input.cmp(&b.input));
        let mut report = Self {
            schema_version: REPORT_SCHEMA_VERSION,
            tool: format!("rigbake {}", env!("CARGO_PKG_VERSION")),
            shards: shard
                .map(|(k, n)| vec![format!("{k}/{n}")])
                .unwrap_or_default(),
            out: Some(out.to_string_lossy().into_owned()),
            seconds,
            models,
            totals: Totals::default(),
        };
        report.count();
        report
    }

    /// Recounts the totals; `None` when a sum does not fit.
    fn totals(models: &[ModelReport]) -> Option<Totals> {
        let mut t = Totals::default();
        for m in models {
            let n = match m.status {
                Status::Baked => &mut t.baked,
                Status::UpToDate => &mut t.up_to_date,
                Status::Skipped => &mut t.skipped,
                Status::Failed => &mut t.failed,
            };
            *n = n.checked_add(1)?;
            // Bytes written: an up-to-date model lists its outputs but
            // wrote none of them.
            if m.status == Status::Baked {
                for o in &m.outputs {
                    t.bytes = t.bytes.checked_add(o.bytes)?;
                }
            }
        }
        Some(t)
    }

    fn count(&mut self) {
        self.totals = Self::totals(&self.models).unwrap_or_else(|| {
            let mut t = Self::totals(&[]).unwrap_or_default();
            t.bytes = u64::MAX;
            t
        });
    }

    /// Joins shard reports: every model once (a model in two reports is an
    /// error), sorted, recounted with checked sums; seconds are the longest
    /// shard's.
    ///
    /// The shards must add up: every report's `K/N` well formed with
    /// 1 <= K <= N, one N for all, no shard twice, and none of 1..=N
    /// missing. Reports without shards (whole runs) merge only with each
    /// other.
    pub fn merge(reports: Vec<Report>) -> Result<Report, MergeError> {
        let mut merged = Report {
            schema_version: REPORT_SCHEMA_VERSION,
            tool: format!("rigbake {}", env!("CARGO_PKG_VERSION")),
            shards: Vec::new(),
            out: None,
            seconds: 0.0,
            models: Vec::new(),
            totals: Totals::default(),
        };
        let mut outs: Vec<Option<String>> = Vec::new();
        let mut whole = 0usize;
        let mut n_seen: Option<usize> = None;
        let mut ks: Vec<usize> = Vec::new();
        for (i, r) in reports.into_iter().enumerate() {
            r.check().map_err(|e| MergeError::Invalid(i + 1, e))?;
            if r.schema_version != REPORT_SCHEMA_VERSION {
                return Err(MergeError::Schema(r.schema_version, REPORT_SCHEMA_VERSION));
            }
            if r.shards.is_empty() {
                whole += 1;
            }
            for text in &r.shards {
                let (k, n) = parse_shard(text).ok_or_else(|| MergeError::BadShard(text.clone()))?;
                match n_seen {
                    Some(m) if m != n => return Err(MergeError::MixedShards(m, n)),
                    _ => n_seen = Some(n),
                }
                ks.push(k);
            }
            if !(r.seconds.is_finite() && r.seconds >= 0.0) {
                return Err(MergeError::Seconds(r.seconds));
            }
            merged.seconds = merged.seconds.max(r.seconds);
            if !outs.contains(&r.out) {
                outs.push(r.out);
            }
            merged.models.extend(r.models);
        }
        if let Some(n) = n_seen {
            if whole > 0 {
                return Err(MergeError::WholeAndShards);
            }
            // N is at most MAX_SHARDS (parse_shard): sorting finds
            // duplicates, and the gaps are named, the first few in full.
            ks.sort_unstable();
            if let Some(w) = ks.windows(2).find(|w| w[0] == w[1]) {
                return Err(MergeError::DuplicateShard(format!("{}/{n}", w[0])));
            }
            let missing = n - ks.len();
            if missing > 0 {
                const SHOWN: usize = 10;
                let mut names: Vec<String> = (1..=n)
                    .filter(|k| ks.binary_search(k).is_err())
                    .take(SHOWN)
                    .map(|k| format!("{k}/{n}"))
                    .collect();
                if missing > SHOWN {
                    names.push(format!("and {} more", missing - SHOWN));
                }
                return Err(MergeError::MissingShards(names.join(", ")));
            }
            merged.shards = ks.iter().map(|k| format!("{k}/{n}")).collect();
        }
        // One folder for every shard: its name; several: none.
        if let [one] = &outs[..] {
            merged.out.clone_from(one);
        }
        merged.models.sort_by(|a, b| a.input.cmp(&b.input));
        if let Some(w) = merged.models.windows(2).find(|w| w[0].input == w[1].input) {
            return Err(MergeError::Overlap(w[0].input.clone()));
        }
        merged.totals = Self::totals(&merged.models).ok_or(MergeError::Overflow)?;
        Ok(merged)
    }

    /// Reads a JSON report as `formats/report.schema.json` describes it,
    /// refusing anything the schema refuses: an unknown or missing field,
    /// a value of the wrong type, an unknown status, a negative count, and
    /// the rules of [`Report::check`]. The error names the field.
    pub fn from_json(bytes: &[u8]) -> Result<Self, ReportError> {
        let mut de = serde_json::Deserializer::from_slice(bytes);
        let report: Self = serde_path_to_error::deserialize(&mut de)
            .map_err(|e| ReportError::new(e.path().to_string(), e.inner().to_string()))?;
        de.end()
            .map_err(|e| ReportError::new(".", format!("after the report: {e}")))?;
        report.check()?;
        Ok(report)
    }

    /// The rules of `formats/report.schema.json` beyond the fields' types:
    /// the schema version, `tool`, the shards' spelling, non-negative
    /// seconds, output paths relative to `out`, keys of 64 hex digits, and
    /// per status which of `message`, `outputs` and `key` are set.
    pub fn check(&self) -> Result<(), ReportError> {
        if self.schema_version != REPORT_SCHEMA_VERSION {
            return Err(ReportError::new(
                "schema_version",
                format!("{} is not {REPORT_SCHEMA_VERSION}", self.schema_version),
            ));
        }
        if !self.tool.starts_with("rigbake ") {
            return Err(ReportError::new("tool", "does not start with `rigbake `"));
        }
        for (i, shard) in self.shards.iter().enumerate() {
            if !shard_spelling(shard) {
                return Err(ReportError::new(
                    format!("shards[{i}]"),
                    format!("`{shard}` is not K/N (digits, no leading zero, no blanks)"),
                ));
            }
        }
        check_seconds("seconds", self.seconds)?;
        for (i, m) in self.models.iter().enumerate() {
            m.check(&format!("models[{i}]"))?;
        }
        Ok(())
    }

    /// The human summary: one line per failed model and a totals line.
    pub fn summary(&self) -> String {
        let t = &self.totals;
        let mut s = String::new();
        for m in self.models.iter().filter(|m| m.status == Status::Failed) {
            s.push_str(&format!(
                "failed: {}\n",
                m.message.as_deref().unwrap_or(&m.input)
            ));
        }
        s.push_str(&format!(
            "{} baked, {} up to date, {} skipped, {} failed; {} written in {:.1} s{}",
            t.baked,
            t.up_to_date,
            t.skipped,
            t.failed,
            human_bytes(t.bytes),
            self.seconds,
            if self.shards.is_empty() {
                String::new()
            } else {
                format!(" (shards {})", self.shards.join(", "))
            }
        ));
        s
    }
}

impl ModelReport {
    /// [`Report::check`] for one model, `at` its place (`models[2]`).
    fn check(&self, at: &str) -> Result<(), ReportError> {
        let field = |name: &str| format!("{at}.{name}");
        check_seconds(&field("seconds"), self.seconds)?;
        for (i, o) in self.outputs.iter().enumerate() {
            check_path(&field(&format!("outputs[{i}].path")), &o.path)?;
        }
        for (i, p) in self.removed.iter().enumerate() {
            check_path(&field(&format!("removed[{i}]")), p)?;
        }
        if let Some(key) = &self.key
            && !(key.len() == 64 && key.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
        {
            return Err(ReportError::new(
                field("key"),
                "is not 64 lowercase hex digits",
            ));
        }
        let wrote = matches!(self.status, Status::Baked | Status::UpToDate);
        let refuse = |name: &str, what: &str| {
            Err(ReportError::new(
                field(name),
                format!("must be {what} for status `{}`", self.status.as_str()),
            ))
        };
        match (wrote, &self.message, self.outputs.is_empty(), &self.key) {
            (true, Some(_), _, _) => refuse("message", "null"),
            (true, _, true, _) => refuse("outputs", "at least one file"),
            (true, _, _, None) => refuse("key", "a string"),
            (false, None, _, _) => refuse("message", "a string"),
            (false, _, false, _) => refuse("outputs", "empty"),
            (false, _, _, Some(_)) => refuse("key", "null"),
            _ => Ok(()),
        }
    }
}

/// Refuses seconds that are negative or not finite.
fn check_seconds(field: &str, seconds: f64) -> Result<(), ReportError> {
    if seconds.is_finite() && seconds >= 0.0 {
        Ok(())
    } else {
        Err(ReportError::new(
            field,
            format!("{seconds} is negative or not finite"),
        ))
    }
}

/// Refuses a path that is not relative to `out`: empty, or starting with
/// `/` or `./`.
fn check_path(field: &str, path: &str) -> Result<(), ReportError> {
    if path.is_empty() || path.starts_with('/') || path.starts_with("./") {
        Err(ReportError::new(
            field,
            format!("`{path}` is not a path relative to out (empty, or starting with / or ./)"),
        ))
    } else {
        Ok(())
    }
}

/// Whether `shard` is spelled `K/N` as the schema says: two numbers of
/// digits without a leading zero, no blanks (the range is
/// [`parse_shard`]'s).
fn shard_spelling(shard: &str) -> bool {
    let number =
        |s: &str| !s.is_empty() && !s.starts_with('0') && s.bytes().all(|b| b.is_ascii_digit());
    shard
        .split_once('/')
        .is_some_and(|(k, n)| number(k) && number(n))
}

/// The largest shard count N of `--shard K/N` and of a report's shards: a
/// CI matrix is far smaller, and a report never lists more missing shards
/// than this.
pub const MAX_SHARDS: usize = 4096;

/// Parses `K/N` (1 <= K <= N <= [`MAX_SHARDS`], surrounding blanks allowed),
/// for `--shard` and for reports' shard lists.
pub fn parse_shard(text: &str) -> Option<(usize, usize)> {
    let (k, n) = text.split_once('/')?;
    let (k, n): (usize, usize) = (k.trim().parse().ok()?, n.trim().parse().ok()?);
    (k >= 1 && k <= n && n <= MAX_SHARDS).then_some((k, n))
}

/// `1 clip`, `2 clips`: a count with its noun in good English. `many` is
/// the plural (`vertices`); `None` adds an `s`.
pub fn count(n: impl Into<u64>, one: &str, many: Option<&str>) -> String {
    let n = n.into();
    match (n, many) {
        (1, _) => format!("1 {one}"),
        (_, Some(many)) => format!("{n} {many}"),
        (_, None) => format!("{n} {one}s"),
    }
}

/// `123.4 MiB`-style sizes.
pub fn human_bytes(b: u64) -> String {
    let b = b as f64;
    if b >= f64::from(1u32 << 30) {
        format!("{:.1} GiB", b / f64::from(1u32 << 30))
    } else if b >= f64::from(1u32 << 20) {
        format!("{:.1} MiB", b / f64::from(1u32 << 20))
    } else {
        format!("{:.1} KiB", b / 1024.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(names: &[&str], shard: (usize, usize), failed: bool) -> Report {
        let entries = names
            .iter()
            .map(|n| {
                let outcome = if failed {
                    Outcome::Failed {
                        error: format!("{n}: bad"),
                    }
                } else {
                    Outcome::Baked {
                        files: vec![(PathBuf::from(format!("out/{n}/{n}.rigbake")), 10)],
                        removed: Vec::new(),
                        key: "0123456789abcdef".repeat(4),
                        reason: None,
                    }
                };
                Entry {
                    input: (*n).to_owned(),
                    outcome,
                    seconds: 0.5,
                    warnings: Vec::new(),
                    encodings: Vec::new(),
                    errors: Vec::new(),
                }
            })
            .collect();
        Report::new(entries, Path::new("out"), Some(shard), 1.0)
    }

    #[test]
    fn merging_joins_sorts_and_recounts() {
        let m = Report::merge(vec![
            report(&["b", "d"], (2, 2), false),
            report(&["a", "c"], (1, 2), true),
        ])
        .unwrap();
        let names: Vec<&str> = m.models.iter().map(|m| m.input.as_str()).collect();
        assert_eq!(names, ["a", "b", "c", "d"]);
        assert_eq!(
            (m.totals.baked, m.totals.failed, m.totals.bytes),
            (2, 2, 20)
        );
        assert_eq!(m.shards, ["1/2", "2/2"]);
        assert_eq!(m.out.as_deref(), Some("out"));
        assert_eq!(m.models[1].outputs[0].path, "b/b.rigbake");
        assert!(m.summary().contains("failed: a: bad"));
        let dup = Report::merge(vec![
            report(&["a"], (1, 2), false),
            report(&["a"], (2, 2), false),
        ]);
        assert!(dup.unwrap_err().to_string().contains("two reports"));
    }

    #[test]
    fn paths_are_relative_to_out_and_up_to_date_models_list_their_files() {
        let out = Path::new("./../out");
        let entries = vec![
            Entry {
                input: "a".into(),
                outcome: Outcome::Baked {
                    files: vec![(PathBuf::from("./../out/a/a.rigbake"), 7)],
                    removed: vec![PathBuf::from("./../out/a/a.vat.glb")],
                    key: "k".into(),
                    reason: None,
                },
                seconds: 0.1,
                warnings: vec!["dropped something".into()],
                encodings: Vec::new(),
                errors: Vec::new(),
            },
            Entry {
                input: "b".into(),
                outcome: Outcome::UpToDate {
                    files: vec![
                        (PathBuf::from("./../out/b/b.rigbake"), 5),
                        (PathBuf::from("./../out/b/../_shared/bones/x.exr"), 3),
                    ],
                    key: "k".into(),
                },
                seconds: 0.0,
                warnings: Vec::new(),
                encodings: Vec::new(),
                errors: Vec::new(),
            },
        ];
        let r = Report::new(entries, out, None, 1.0);
        let paths =
            |m: &ModelReport| -> Vec<String> { m.outputs.iter().map(|o| o.path.clone()).collect() };
        assert_eq!(paths(&r.models[0]), ["a/a.rigbake"]);
        assert_eq!(r.models[0].removed, ["a/a.vat.glb"]);
        assert_eq!(r.models[0].warnings, ["dropped something"]);
        assert_eq!(paths(&r.models[1]), ["b/b.rigbake", "_shared/bones/x.exr"]);
        // Only what was written counts as written.
        assert_eq!(r.totals.bytes, 7);
        assert_eq!((r.totals.baked, r.totals.up_to_date), (1, 1));
    }

    #[test]
    fn shard_sets_that_do_not_add_up_are_refused() {
        let err = |rs: Vec<Report>| Report::merge(rs).unwrap_err().to_string();
        // Mixed N.
        let e = err(vec![
            report(&["a"], (1, 2), false),
            report(&["b"], (2, 3), false),
        ]);
        assert!(e.contains("2") && e.contains("3"), "{e}");
        // Duplicate shard.
        let e = err(vec![
            report(&["a"], (1, 2), false),
            report(&["b"], (1, 2), false),
        ]);
        assert!(e.contains("1/2"), "{e}");
        // Missing shard.
        let e = err(vec![
            report(&["a"], (1, 3), false),
            report(&["b"], (3, 3), false),
        ]);
        assert!(e.contains("2/3"), "{e}");
        // Impossible K/N.
        for bad in ["0/2", "3/2", "x/2", "1/0", "", "1/2/3"] {
            let mut r = report(&["a"], (1, 1), false);
            r.shards = vec![bad.to_owned()];
            assert!(err(vec![r]).contains("shard"), "{bad}");
        }
        // A whole run with shards.
        let mut whole = report(&["c"], (1, 1), false);
        whole.shards.clear();
        let e = err(vec![report(&["a"], (1, 1), false), whole]);
        assert!(e.contains("whole"), "{e}");
        // Byte totals that overflow.
        let mut a = report(&["a"], (1, 2), false);
        let mut b = report(&["b"], (2, 2), false);
        a.models[0].outputs[0].bytes = u64::MAX;
        b.models[0].outputs[0].bytes = 1;
        assert!(err(vec![a, b]).contains("overflow"));
        // A 1/N report with N past the bound is refused as it is parsed,
        // never by listing N - 1 missing shards; at the bound, the missing
        // ones are named in a bounded message.
        let mut huge = report(&["a"], (1, 1), false);
        huge.shards = vec!["1/18446744073709551615".to_owned()];
        assert!(err(vec![huge]).contains("4096"));
        let mut wide = report(&["a"], (1, 1), false);
        wide.shards = vec![format!("1/{MAX_SHARDS}")];
        let e = err(vec![wide]);
        assert!(e.contains("2/4096") && e.contains("and 4085 more"), "{e}");
        assert!(e.len() < 200, "{e}");
        // Non-finite or negative seconds.
        let mut a = report(&["a"], (1, 1), false);
        a.seconds = -1.0;
        assert!(err(vec![a]).contains("seconds"));
    }
}
