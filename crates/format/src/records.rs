//! The section kinds of a container and its records as one owned bundle,
//! from one table: per section kind its code and report name, and per
//! record type its kind, its name in messages, its field in the bundle and
//! its check against the rest of the container.
//!
//! A bake fills a [`Records`] (each record written as it is made, so the
//! section order is the order of the steps), the reader returns one
//! ([`crate::container::Container::records`]), and inspect, the sidecar,
//! playback and verify read it. Adding a record means one row in the
//! `sections!` table below (and [`FORMAT_MINOR`] one up) and its type in
//! [`crate::meta`]; its check is a call into [`crate::check`] or, when
//! new, a function beside the table (formats/container.md lists the
//! section kinds).

use crate::check;
use crate::codec::{self, Named};
use crate::error::Result;
use crate::meta::{
    BoneRangesMetadata, BoundsMetadata, ClipErrorsMetadata, FoldMeta, LayoutMetadata,
    LodDetailsMetadata, LodsMetadata, LookupUv, Metadata, MorphsMetadata, OutputsMetadata,
    PlacementMetadata, RigMetadata, RootMotionMetadata, SourceLocation, TextureContainerMetadata,
    UvSetsMetadata, VatCompressionMetadata, VatMetadata, WeightsMetadata,
};
use crate::texture::gpu::TextureContainer;

/// A record a container may hold or not: every record but the metadata.
/// It has a field in [`Records`] and a check against the other records.
pub trait OptionalRecord: Record + Sized {
    /// The record in `records`, when there.
    fn get(records: &Records) -> Option<&Self>;
    /// Its field in `records`.
    fn slot(records: &mut Records) -> &mut Option<Self>;
    /// Checks the record against the rest of the container (`context`):
    /// the semantic rules of [`crate::check`] for its type.
    fn check(&self, context: &Context<'_>) -> Result<()>;
}

/// What a record's check sees of the rest of the container.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// The bake metadata.
    pub metadata: &'a Metadata,
    /// Every optional record.
    pub records: &'a Records,
    /// The folds of the layout record (empty without one).
    pub folds: &'a [FoldMeta],
    /// Timeline rows of the clip table ([`check::metadata_folded`]).
    pub rows: u64,
}

/// A record of the container: a serde type stored, bincode-encoded
/// ([`codec::encode`], [`codec::decode`]), as the payload of one section of
/// kind [`Record::KIND`] (at most one per container, except the metadata,
/// which is exactly one). Implemented in the table below.
pub trait Record: Named {
    /// The section kind that holds it.
    const KIND: SectionKind;
}

impl Named for Metadata {
    const NAME: &'static str = "metadata";
}

impl Record for Metadata {
    const KIND: SectionKind = SectionKind::Metadata;
}

/// Minor version this code writes: one up with every row added to the
/// table below (and with every field appended to a record). Minor versions
/// only add section kinds and append fields at the end of records; older
/// readers skip the former and ignore the latter.
pub const FORMAT_MINOR: u16 = 15;

/// The `sections!` table: the section kinds that hold no record of their
/// own (code, report name), then per optional record its field, type,
/// section kind (code, report name), name in messages and check.
/// Generates [`SectionKind`] and its code table, the [`Record`] and
/// [`OptionalRecord`] impls, the [`Records`] struct (fields in table
/// order) and its generic steps. Checks run in table order, so the order
/// is the order of the checks.
macro_rules! sections {
    (
        plain {$(
            $(#[$plain_doc:meta])*
            $plain:ident = $plain_code:literal, $plain_name:literal;
        )*}
        records {$(
            $(#[$doc:meta])*
            $field:ident: $record:ty => $kind:ident = $code:literal, $kind_name:literal, $name:literal,
                check |$r:ident, $c:ident| $check:expr;
        )*}
    ) => {
        /// What a section holds.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum SectionKind {
            $($(#[$plain_doc])* $plain,)*
            $($(#[$doc])* $kind,)*
            /// A kind this version does not know; skipped by readers.
            Unknown(u32),
        }

        /// Every known section kind with its on-disk code and report name:
        /// the one table [`SectionKind::code`], [`SectionKind::from_code`]
        /// and [`SectionKind::name`] read.
        const KINDS: &[(SectionKind, u32, &str)] = &[
            $((SectionKind::$plain, $plain_code, $plain_name),)*
            $((SectionKind::$kind, $code, $kind_name),)*
        ];

        $(impl Named for $record {
            const NAME: &'static str = $name;
        }

        impl Record for $record {
            const KIND: SectionKind = SectionKind::$kind;
        }

        impl OptionalRecord for $record {
            fn get(records: &Records) -> Option<&Self> {
                records.$field.as_ref()
            }
            fn slot(records: &mut Records) -> &mut Option<Self> {
                &mut records.$field
            }
            #[allow(unused_variables)]
            fn check(&self, context: &Context<'_>) -> Result<()> {
                let ($r, $c) = (self, context);
                $check
            }
        })*

        /// Every optional record of a container, each at most once.
        #[derive(Debug, Clone, Default, PartialEq)]
        pub struct Records {
            $($(#[$doc])* pub $field: Option<$record>,)*
        }

        impl Records {
            /// Reads every record whose section is present: `section(kind)`
            /// gives the checked payload of the only section of `kind`, or
            /// `None` when there is none.
            pub fn read(
                mut section: impl FnMut(SectionKind) -> Result<Option<Vec<u8>>>,
            ) -> Result<Self> {
                Ok(Self {
                    $($field: match section(SectionKind::$kind)? {
                        Some(bytes) => Some(codec::decode::<$record>(&bytes)?),
                        None => None,
                    },)*
                })
            }

            /// Checks each record present against the others, in table order.
            pub fn check_each(&self, context: &Context<'_>) -> Result<()> {
                $(if let Some(r) = &self.$field {
                    r.check(context)?;
                })*
                Ok(())
            }
        }
    };
}

sections! {
    plain {
        /// The bake metadata (bincode, see `crate::codec`). Exactly one.
        Metadata = 1, "metadata";
        /// An encoded texture file (EXR or PNG bytes), referred to by the
        /// metadata's texture table.
        Texture = 2, "texture";
        /// Raw per-vertex data (little-endian f32), referred to by a record.
        VertexData = 5, "vertex_data";
        /// Anchor tracks (little-endian f32), referred to by the rig record.
        TrackData = 7, "track_data";
        /// The bake key (UTF-8): a digest of every input byte and setting,
        /// used to skip up-to-date bakes, since 1.4.
        Key = 8, "key";
    }
    records {
        /// The VAT record ([`VatMetadata`]), since 1.1.
        vat: VatMetadata => Vat = 3, "vat", "VAT metadata",
            check |v, c| check::vat(v, c.rows, c.folds, c.records.texture_container());
        /// The bone-weight record ([`WeightsMetadata`]), since 1.2.
        weights: WeightsMetadata => Weights = 4, "weights", "weight metadata",
            check |w, c| check::weights(w, c.metadata.skins.len());
        /// The outputs record ([`OutputsMetadata`]): size and CRC-32 of
        /// every file beside the container that no other record checksums
        /// (meshes, `anchors.exr`), since 1.5.
        outputs: OutputsMetadata => Outputs = 9, "outputs", "the outputs record",
            check |o, c| check::outputs(o);
        /// The animated-bounds record ([`BoundsMetadata`]): per clip, a box
        /// holding every vertex at every frame, since 1.6.
        bounds: BoundsMetadata => Bounds = 12, "bounds", "the bounds record",
            check |b, c| check::bounds(b, c.metadata.clips.len());
        /// The source record ([`SourceLocation`]): where the source model
        /// was, relative to the container, since 1.7.
        source: SourceLocation => Source = 13, "source", "the source record",
            check |s, c| check::source(s);
        /// The VAT compression record ([`VatCompressionMetadata`]): each VAT
        /// texture's compression, since 1.6 (older VAT bakes wrote
        /// uncompressed EXRs unless `--zip`, and PNG).
        vat_compression: VatCompressionMetadata => VatCompression = 10, "vat_compression", "the VAT compression record",
            check |x, c| check::vat_compression(x, c.records.vat.as_ref(), c.records.texture_container());
        /// The UV-set record ([`UvSetsMetadata`]): which TEXCOORD sets of
        /// the mesh files hold the VAT lookup UV and the weight pairs,
        /// since 1.7.
        uv_sets: UvSetsMetadata => UvSets = 15, "uv_sets", "the UV-set record",
            check |u, c| check::uv_sets(u);
        /// The root-motion record ([`RootMotionMetadata`]): the track of
        /// clips baked in place, since 1.8.
        root_motion: RootMotionMetadata => RootMotion = 16, "root_motion", "the root-motion record",
            check |r, c| check::root_motion(r, c.metadata);
        /// The LOD record ([`LodsMetadata`]): the model's LOD groups and
        /// each level's outputs, since 1.8.
        lods: LodsMetadata => Lods = 17, "lods", "the LOD record",
            check |l, c| check::lods(
                l,
                c.records.weights.as_ref().map_or(0, |w| w.primitives.len()),
                c.records.vat.as_ref().map_or(0, |v| v.primitives.len()),
            );
        /// The LOD detail record ([`LodDetailsMetadata`]): per LOD level,
        /// the file it came from and the influences it keeps, since 1.9.
        lod_details: LodDetailsMetadata => LodDetails = 18, "lod_details", "the LOD detail record",
            check |d, c| check::lod_details(d, c.records.lods.as_ref());
        /// The texture-container record ([`TextureContainerMetadata`]): the
        /// KTX2 or DDS container every texture is in, since 1.10.
        texture_container: TextureContainerMetadata => TextureContainer = 19, "texture_container", "the texture-container record",
            check |t, c| check::texture_container(t, c.records.vat.as_ref(), c.records.layout.as_ref());
        /// The placement record ([`PlacementMetadata`]): the rest-pose
        /// matrices of the bake's spaces and the lookup UV's encoding,
        /// since 1.11.
        placement: PlacementMetadata => Placement = 20, "placement", "the placement record",
            check |p, c| check::placement(p, c.metadata.skins.len());
        /// The rig record ([`RigMetadata`]): anchors, props and clip
        /// origins, since 1.3.
        rig: RigMetadata => Rig = 6, "rig", "rig metadata",
            check |r, c| check::rig(r, c.metadata.clips.len(), c.metadata.skins.len());
        /// The morphs record ([`MorphsMetadata`]): the morph targets a
        /// bone-matrix bake drops, since 1.7.
        morphs: MorphsMetadata => Morphs = 14, "morphs", "the morphs record",
            check |m, c| Ok(());
        /// The layout record ([`LayoutMetadata`]): the VAT atlas placement
        /// and folded textures' addressing, since 1.7; checked with the
        /// whole container ([`Records::check`]), since its absence is
        /// checked too.
        layout: LayoutMetadata => Layout = 11, "layout", "the layout record",
            check |l, c| Ok(());
        /// The bone-range record ([`BoneRangesMetadata`]): the ranges of
        /// the 16-bit normalised (`unorm16`) bone textures, since 1.13;
        /// checked with the whole container ([`Records::check`]), since
        /// its absence is checked too.
        bone_ranges: BoneRangesMetadata => BoneRanges = 21, "bone_ranges", "the bone-range record",
            check |r, c| Ok(());
        /// The clip-error record ([`ClipErrorsMetadata`]): per texture and
        /// clip, the error its encoding costs, since 1.14.
        clip_errors: ClipErrorsMetadata => ClipErrors = 22, "clip_errors", "the clip-error record",
            check |e, c| check::clip_errors(
                e,
                c.metadata,
                c.records.vat.as_ref().map_or(0, |v| v.textures.len()),
            );
    }
}

impl SectionKind {
    /// The on-disk code.
    pub fn code(self) -> u32 {
        match self {
            Self::Unknown(c) => c,
            known => KINDS
                .iter()
                .find(|(k, _, _)| *k == known)
                .map_or(0, |(_, code, _)| *code),
        }
    }

    /// The kind for an on-disk code.
    pub fn from_code(code: u32) -> Self {
        KINDS
            .iter()
            .find(|(_, c, _)| *c == code)
            .map_or(Self::Unknown(code), |(k, _, _)| *k)
    }

    /// A short name for reports.
    pub fn name(self) -> String {
        match self {
            Self::Unknown(c) => format!("unknown({c})"),
            known => KINDS
                .iter()
                .find(|(k, _, _)| *k == known)
                .map_or_else(String::new, |(_, _, name)| (*name).to_owned()),
        }
    }
}

impl Records {
    /// The record of type `R`, when present.
    pub fn get<R: OptionalRecord>(&self) -> Option<&R> {
        R::get(self)
    }

    /// Puts `record` in its field (replacing any before) and returns it.
    pub fn set<R: OptionalRecord>(&mut self, record: R) -> &R {
        R::slot(self).insert(record)
    }

    /// The semantic checks of [`crate::check`] over every record of a
    /// container whose metadata is `metadata`: each record against the
    /// others, then the layout against everything it places.
    pub fn check(&self, metadata: &Metadata) -> Result<()> {
        let folds = self.layout.as_ref().map_or(&[][..], |l| &l.folds[..]);
        let rows = check::metadata_folded(metadata, folds)?;
        let context = Context {
            metadata,
            records: self,
            folds,
            rows,
        };
        self.check_each(&context)?;
        check::bone_ranges(self.bone_ranges.as_ref(), metadata)?;
        check::layout(
            self.layout.as_ref(),
            metadata,
            self.vat.as_ref(),
            self.rig.as_ref(),
            rows,
        )
    }

    /// The container every texture of the bake is in: KTX2 or DDS when the
    /// texture-container record says so (format 1.10 and later), else EXR
    /// (and PNG for `png16` VAT textures).
    pub fn texture_container(&self) -> TextureContainer {
        self.texture_container
            .as_ref()
            .map_or(TextureContainer::Exr, |t| t.container)
    }

    /// How the VAT playback mesh's lookup UV is encoded: as the placement
    /// record says, else (bakes before 1.11) the normalised texel centre.
    pub fn lookup_uv(&self) -> LookupUv {
        self.placement
            .as_ref()
            .map_or(LookupUv::TexelCentre, |p| p.lookup_uv)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_is_in_the_table_once_and_codes_round_trip() {
        let mut codes: Vec<u32> = KINDS.iter().map(|(_, code, _)| *code).collect();
        codes.sort_unstable();
        let expected: Vec<u32> = (1..=KINDS.len() as u32).collect();
        assert_eq!(codes, expected, "codes 1..=n, each once");
        for (kind, code, name) in KINDS {
            assert_eq!(SectionKind::from_code(*code), *kind);
            assert_eq!(kind.code(), *code);
            assert_eq!(kind.name(), *name);
        }
        let next = KINDS.len() as u32 + 1;
        assert_eq!(SectionKind::from_code(next), SectionKind::Unknown(next));
        assert_eq!(SectionKind::Unknown(next).code(), next);
        assert_eq!(SectionKind::Unknown(0).name(), "unknown(0)");
    }

    /// Every optional record has its own section kind, and the table's
    /// kinds are the kinds [`Records::read`] asks for.
    #[test]
    fn each_record_has_its_own_section_kind() {
        let mut asked = Vec::new();
        let records = Records::read(|kind| {
            asked.push(kind);
            Ok(None)
        })
        .unwrap();
        assert_eq!(records, Records::default());
        let mut distinct = asked.clone();
        distinct.sort_by_key(|k| k.code());
        distinct.dedup();
        assert_eq!(distinct.len(), asked.len(), "{asked:?}");
        assert!(!asked.contains(&SectionKind::Metadata));
        assert!(!asked.contains(&SectionKind::Texture));
    }

    /// A record set through the generic step reads back through the
    /// generic getter and its field.
    #[test]
    fn set_and_get_use_the_records_own_field() {
        let mut records = Records::default();
        let source = SourceLocation {
            relative_path: "a.glb".into(),
        };
        records.set(source.clone());
        assert_eq!(records.get::<SourceLocation>(), Some(&source));
        assert_eq!(records.source.as_ref(), Some(&source));
    }

    /// Records encoded section by section read back equal.
    #[test]
    fn records_read_back_what_was_encoded() {
        let mut records = Records::default();
        records.set(SourceLocation {
            relative_path: "models/a.glb".into(),
        });
        records.set(TextureContainerMetadata {
            container: TextureContainer::Ktx2,
        });
        let encoded: Vec<(SectionKind, Vec<u8>)> = vec![
            (
                SectionKind::Source,
                codec::encode(records.source.as_ref().unwrap()).unwrap(),
            ),
            (
                SectionKind::TextureContainer,
                codec::encode(records.texture_container.as_ref().unwrap()).unwrap(),
            ),
        ];
        let read = Records::read(|kind| {
            Ok(encoded
                .iter()
                .find(|(k, _)| *k == kind)
                .map(|(_, b)| b.clone()))
        })
        .unwrap();
        assert_eq!(read, records);
        assert_eq!(read.texture_container(), TextureContainer::Ktx2);
    }
}
