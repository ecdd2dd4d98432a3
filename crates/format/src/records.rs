//! The records of a container as one owned bundle, and the one table that
//! says, per record type, its section kind, its name in messages, its
//! field in the bundle and its check against the rest of the container.
//!
//! A bake fills a [`Records`] (each record written as it is made, so the
//! section order is the order of the steps), the reader returns one
//! ([`crate::container::Container::records`]), and inspect, the sidecar,
//! playback and verify read it. Adding a record means one line in
//! the `records!` table below, its type in [`crate::meta`] and its check in
//! [`crate::check`] (formats/container.md lists the section kinds).

use crate::check;
use crate::codec::{self, Record};
use crate::container::SectionKind;
use crate::error::Result;
use crate::meta::{
    BoundsMetadata, FoldMeta, LayoutMetadata, LodDetailsMetadata, LodsMetadata, LookupUv, Metadata,
    MorphsMetadata, OutputsMetadata, PlacementMetadata, RigMetadata, RootMotionMetadata,
    SourceLocation, TextureContainerMetadata, UvSetsMetadata, VatCompressionMetadata, VatMetadata,
    WeightsMetadata,
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

impl Record for Metadata {
    const KIND: SectionKind = SectionKind::Metadata;
    const NAME: &'static str = "metadata";
}

/// The `records!` table: per optional record, its field, type, section
/// kind, name and check. Generates the [`Record`] and [`OptionalRecord`]
/// impls, the [`Records`] struct (fields in table order) and its generic
/// steps. Checks run in table order, so the order is the order of the
/// checks.
macro_rules! records {
    ($(
        $(#[$doc:meta])*
        $field:ident: $record:ty => $kind:ident, $name:literal,
            check |$r:ident, $c:ident| $check:expr;
    )*) => {
        $(impl Record for $record {
            const KIND: SectionKind = SectionKind::$kind;
            const NAME: &'static str = $name;
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

records! {
    /// The VAT record (format 1.1 and later).
    vat: VatMetadata => Vat, "VAT metadata",
        check |v, c| check::vat(v, c.rows, c.folds);
    /// The bone-weight record (1.2).
    weights: WeightsMetadata => Weights, "weight metadata",
        check |w, c| check::weights(w, c.metadata.skins.len());
    /// The outputs record: files beside the container and their checksums
    /// (1.5).
    outputs: OutputsMetadata => Outputs, "the outputs record",
        check |o, c| check::outputs(o);
    /// The animated-bounds record, one box per clip (1.6).
    bounds: BoundsMetadata => Bounds, "the bounds record",
        check |b, c| check::bounds(b, c.metadata.clips.len());
    /// Where the source model was, relative to the container (1.7).
    source: SourceLocation => Source, "the source record",
        check |s, c| check::source(s);
    /// How each VAT texture is compressed (1.6; older VAT bakes wrote
    /// uncompressed EXRs unless `--zip`, and PNG).
    vat_compression: VatCompressionMetadata => VatCompression, "the VAT compression record",
        check |x, c| check::vat_compression(x, c.records.vat.as_ref(), c.records.texture_container());
    /// Which TEXCOORD sets of the mesh files hold the lookup UV and the
    /// weight pairs (1.7).
    uv_sets: UvSetsMetadata => UvSets, "the UV-set record",
        check |u, c| check::uv_sets(u);
    /// The root-motion track of clips baked in place (1.8).
    root_motion: RootMotionMetadata => RootMotion, "the root-motion record",
        check |r, c| check::root_motion(r, c.metadata);
    /// The model's LOD groups and each level's outputs (1.8).
    lods: LodsMetadata => Lods, "the LOD record",
        check |l, c| check::lods(
            l,
            c.records.weights.as_ref().map_or(0, |w| w.primitives.len()),
            c.records.vat.as_ref().map_or(0, |v| v.primitives.len()),
        );
    /// Per LOD level, the file it came from and the influences it keeps
    /// (1.9).
    lod_details: LodDetailsMetadata => LodDetails, "the LOD detail record",
        check |d, c| check::lod_details(d, c.records.lods.as_ref());
    /// The container of every texture when it is KTX2 or DDS (1.10).
    texture_container: TextureContainerMetadata => TextureContainer, "the texture-container record",
        check |t, c| check::texture_container(t, c.records.vat.as_ref(), c.records.layout.as_ref());
    /// The rest-pose matrices of the bake's spaces and the lookup UV's
    /// encoding (1.11).
    placement: PlacementMetadata => Placement, "the placement record",
        check |p, c| check::placement(p, c.metadata.skins.len());
    /// Anchors, props and clip origins (1.3).
    rig: RigMetadata => Rig, "rig metadata",
        check |r, c| check::rig(r, c.metadata.clips.len(), c.metadata.skins.len());
    /// The dropped morph targets of the bone-matrix bake (1.7).
    morphs: MorphsMetadata => Morphs, "the morphs record",
        check |m, c| Ok(());
    /// VAT atlas placement and folded textures (1.7); checked with the
    /// whole container ([`Records::check`]), since its absence is checked too.
    layout: LayoutMetadata => Layout, "the layout record",
        check |l, c| Ok(());
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
