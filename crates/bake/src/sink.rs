//! Where a bake's bytes go. The output passes hand finished textures,
//! meshes and records to a [`Sink`]; the sink decides whether a texture
//! becomes a file in the output folder, a copy in the [`SharedStore`], or a
//! section embedded in the container. [`OutputSink`] is the sink of a
//! normal bake: every file staged (see [`crate::staging`]) and renamed into
//! place only when the whole model is done.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use rigbake_format::codec;
use rigbake_format::container::ContainerWriter;
use rigbake_format::meta::{Metadata, OutputFileMeta, OutputsMetadata, Storage};
use rigbake_format::records::SectionKind;
use sha2::{Digest, Sha256};

use crate::error::StepError;
use crate::staging::Staging;

/// Where the bytes of one model's bake go.
pub trait Sink {
    /// Places a finished bone texture called `name`; returns the name the
    /// metadata records (a path to a shared copy, when shared) and where it
    /// lives.
    fn place_texture(&mut self, name: &str, bytes: &[u8]) -> Result<(String, Storage), StepError>;

    /// Writes a file that always lives beside the container (meshes,
    /// `anchors.exr`).
    fn write_file(&mut self, name: &str, bytes: &[u8]) -> Result<(), StepError>;

    /// Writes a file that always lives beside the container by streaming
    /// it: `write` gets a buffered writer, and the size and CRC-32 are
    /// measured as the bytes pass, so the file is never held whole in
    /// memory (the meshes).
    fn write_file_streamed(
        &mut self,
        name: &str,
        write: &mut dyn FnMut(&mut dyn Write) -> Result<(), StepError>,
    ) -> Result<(), StepError>;

    /// Adds a section to the container; returns its index.
    fn add_section(&mut self, kind: SectionKind, bytes: &[u8]) -> Result<usize, StepError>;

    /// The staged path (created empty) of a file called `name` that always
    /// lives beside the container and is written there by an encoder that
    /// seeks (the OpenVAT EXRs, streamed row batch by row batch); once it
    /// is written, [`Sink::list_file`] lists it.
    fn file_target(&mut self, name: &str) -> Result<PathBuf, StepError>;

    /// Lists a file written at [`Sink::file_target`]'s path in the outputs
    /// record, with the size and CRC-32 its writer measured as it wrote.
    fn list_file(&mut self, name: &str, bytes: u64, crc32: u32);

    /// The path a streamed texture called `name` is written to while it is
    /// encoded (a staged file, or scratch space when it will be embedded);
    /// the file already exists, created empty and exclusively.
    fn stream_target(&mut self, name: &str) -> Result<PathBuf, StepError>;

    /// Places a streamed texture once its writer has finished with `path`
    /// (the path [`Sink::stream_target`] gave), whose size and CRC-32 the
    /// writer measured as it wrote.
    fn place_stream(&mut self, path: &Path, bytes: u64, crc32: u32) -> Result<Storage, StepError>;
}

/// Where identical bone textures of different models are written once.
#[derive(Debug, Clone)]
pub struct SharedStore {
    root: PathBuf,
    dir: PathBuf,
}

impl SharedStore {
    /// A store in `root/_shared/bones`.
    pub fn new(root: &Path) -> Self {
        Self {
            root: root.to_path_buf(),
            dir: root.join("_shared").join("bones"),
        }
    }

    /// Stages `bytes` for the store under their SHA-256 (an exclusive
    /// temporary with an unpredictable name in the store's folder, so a
    /// planted link is never written through) and returns the path
    /// relative to `out_dir` (a folder below the store's root), with the
    /// staged file: `None` when an intact copy is already stored. The
    /// staged file lands under its final name only when the model commits
    /// ([`StagedShare::publish`], a rename, so concurrent models never see
    /// a partial file); dropped unpublished (a failed model), it is
    /// removed, and the store holds nothing new. A stored copy whose bytes
    /// no longer match its name (damaged) is replaced. The stored file
    /// keeps the extension `ext` (`exr`, `ktx2`, `dds`).
    pub fn stage(
        &self,
        out_dir: &Path,
        bytes: &[u8],
        ext: &str,
    ) -> std::io::Result<(String, Option<StagedShare>)> {
        let name = format!("{:x}.{ext}", Sha256::digest(bytes));
        let file = self.dir.join(&name);
        let intact = rigbake_format::fsread::read_regular(&file, bytes.len() as u64)
            .is_ok_and(|stored| stored == bytes);
        let staged = if intact {
            None
        } else {
            crate::staging::prepare_dir(&self.root, &self.dir)?;
            let mut temp = crate::staging::output_temporary(&self.dir)?;
            std::io::Write::write_all(&mut temp, bytes)?;
            Some(StagedShare { temp, file })
        };
        let depth = out_dir
            .strip_prefix(&self.root)
            .map_or(0, |p| p.components().count());
        Ok((
            format!("{}_shared/bones/{name}", "../".repeat(depth)),
            staged,
        ))
    }
}

/// A shared bone texture written under a temporary name, renamed to its
/// final name when its model commits (removed if it never does).
#[derive(Debug)]
pub struct StagedShare {
    temp: tempfile::NamedTempFile,
    file: PathBuf,
}

impl StagedShare {
    /// Renames the staged texture to its final name in the store.
    pub fn publish(self) -> std::io::Result<()> {
        self.temp.persist(&self.file).map(drop).map_err(|e| e.error)
    }
}

/// The extension of a texture's file name (`exr` when it has none).
fn extension_of(name: &str) -> &str {
    Path::new(name)
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("exr")
}

/// The container a bake of `input` writes into `out_dir`.
pub fn container_path(input: &Path, out_dir: &Path) -> PathBuf {
    let stem = input
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    out_dir.join(format!("{stem}.rigbake"))
}

/// The sink of a bake into an output folder: files staged under temporary
/// names, the container written alongside, textures embedded or shared as
/// asked.
pub struct OutputSink<'a> {
    staging: Staging,
    container: ContainerWriter<BufWriter<File>>,
    /// Where the container is staged, to read it back before committing.
    container_path: PathBuf,
    /// The container's final name in `out_dir`.
    container_name: String,
    embed: bool,
    shared: Option<&'a SharedStore>,
    out_dir: PathBuf,
    /// Files written beside the container that no other record checksums.
    outputs: Vec<OutputFileMeta>,
    /// Shared bone textures this model adds to the store, published at
    /// its commit.
    shares: Vec<StagedShare>,
}

impl<'a> OutputSink<'a> {
    /// Starts the outputs of one model in `out_dir` (created if needed),
    /// with the container `container_name`. `embed` puts textures inside the
    /// container; `shared`, when given and not embedding, keeps one copy of
    /// identical bone textures.
    pub fn create(
        out_dir: &Path,
        container_name: &str,
        embed: bool,
        shared: Option<&'a SharedStore>,
    ) -> Result<Self, StepError> {
        let mut staging = Staging::new(out_dir).map_err(|e| {
            StepError::io(format!("cannot create `{}`", out_dir.display()), out_dir, e)
        })?;
        let (file, container_path) = staging
            .create(container_name)
            .map_err(|e| StepError::io(format!("cannot write {container_name}"), out_dir, e))?;
        let container = ContainerWriter::new(BufWriter::new(file)).map_err(StepError::bare)?;
        Ok(Self {
            staging,
            container,
            container_path,
            container_name: container_name.to_owned(),
            embed,
            shared,
            out_dir: out_dir.to_path_buf(),
            outputs: Vec::new(),
            shares: Vec::new(),
        })
    }

    /// Refuses every output that would replace one of `inputs`
    /// ([`crate::staging::Protected`]).
    pub fn protect(&mut self, inputs: crate::staging::Protected) {
        self.staging.protect(inputs);
    }

    /// Writes the container's metadata and section table (the last write to
    /// the container); the files are still staged until
    /// [`Finished::commit`]. The container is then opened as a reader opens
    /// it, every record checked: a bake never commits a container that
    /// rigbake itself would refuse to read (a value that slipped past the
    /// bake's own checks fails the model here, and nothing is written).
    pub fn finish(mut self, metadata: &Metadata) -> Result<Finished, StepError> {
        let outputs = OutputsMetadata {
            files: std::mem::take(&mut self.outputs),
        };
        let record = codec::encode(&outputs).map_err(StepError::bare)?;
        self.container
            .add_section(SectionKind::Outputs, &record)
            .map_err(StepError::bare)?;
        self.container
            .finish(metadata)
            .map_err(|e| StepError::during("cannot write the container", e))?;
        rigbake_format::container::Container::open(&self.container_path).map_err(|e| {
            StepError::during("the container written does not read back (a rigbake bug: please report it with the model)", e)
        })?;
        Ok(Finished {
            staging: self.staging,
            out_dir: self.out_dir,
            container_name: self.container_name,
            shares: self.shares,
        })
    }
}

/// A model's outputs, complete under temporary names.
#[derive(Debug)]
pub struct Finished {
    staging: Staging,
    out_dir: PathBuf,
    container_name: String,
    shares: Vec<StagedShare>,
}

/// What a commit did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Committed {
    /// The files renamed into place, with their sizes, in creation order.
    pub files: Vec<(PathBuf, u64)>,
    /// Files of the previous bake in the same folder that the new container
    /// no longer lists, removed ([`crate::listed::stale_files`]).
    pub removed: Vec<PathBuf>,
    /// Files of the previous bake that the new container no longer lists
    /// but that are not provably rigbake's own, kept: one warning each.
    pub kept: Vec<String>,
}

impl Finished {
    /// Publishes the shared bone textures this model added to the store,
    /// renames every output into place (the container last), then removes the files the previous
    /// container in the folder listed and the new bake no longer writes
    /// (only those: a file rigbake did not list is never touched; a
    /// previous container that does not read leaves everything as it is),
    /// and of those only the provably own ones: never an input of the run,
    /// never a file whose size or CRC-32 is not the recorded one
    /// ([`crate::listed::stale_files`]); the others are kept with a warning.
    pub fn commit(self) -> Result<Committed, StepError> {
        let dir = self.out_dir;
        let protected = self.staging.protected().clone();
        let previous = rigbake_format::container::Container::open(&dir.join(&self.container_name))
            .map(|c| crate::listed::listed_files(&c))
            .unwrap_or_default();
        for share in self.shares {
            share
                .publish()
                .map_err(|e| StepError::io("cannot write a shared bone texture", &dir, e))?;
        }
        let files = self.staging.commit().map_err(|e| {
            StepError::io(
                format!("cannot write outputs to `{}`", dir.display()),
                &dir,
                e,
            )
        })?;
        let kept: Vec<String> = files
            .iter()
            .filter_map(|(p, _)| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .collect();
        let stale = crate::listed::stale_files(&previous, &kept, &dir, &protected);
        let removed = stale
            .remove
            .into_iter()
            .filter(|p| std::fs::remove_file(p).is_ok())
            .collect();
        let kept = stale
            .keep
            .into_iter()
            .map(|(path, why)| {
                format!(
                    "kept `{}`: the previous bake listed it and this one does not write it, but {why}; remove it by hand if it is stale",
                    path.display()
                )
            })
            .collect();
        Ok(Committed {
            files,
            removed,
            kept,
        })
    }
}

impl Sink for OutputSink<'_> {
    fn place_texture(&mut self, name: &str, bytes: &[u8]) -> Result<(String, Storage), StepError> {
        if let (Some(store), false) = (self.shared, self.embed) {
            let (shared, staged) = store
                .stage(&self.out_dir, bytes, extension_of(name))
                .map_err(|e| StepError::io("cannot write a shared bone texture", &store.dir, e))?;
            self.shares.extend(staged);
            Ok((shared, Storage::File))
        } else if self.embed {
            let index = self
                .container
                .add_section(SectionKind::Texture, bytes)
                .map_err(StepError::bare)?;
            Ok((name.to_owned(), Storage::Section(index as u32)))
        } else {
            self.write_file(name, bytes)?;
            Ok((name.to_owned(), Storage::File))
        }
    }

    fn write_file(&mut self, name: &str, bytes: &[u8]) -> Result<(), StepError> {
        self.staging.add_bytes(name, bytes).map_err(|e| {
            StepError::io(format!("cannot write {name}"), &self.out_dir.join(name), e)
        })?;
        self.outputs.push(OutputFileMeta {
            name: name.to_owned(),
            bytes: bytes.len() as u64,
            crc32: crc32fast::hash(bytes),
        });
        Ok(())
    }

    fn write_file_streamed(
        &mut self,
        name: &str,
        write: &mut dyn FnMut(&mut dyn Write) -> Result<(), StepError>,
    ) -> Result<(), StepError> {
        let path = self.out_dir.join(name);
        let (file, _) = self
            .staging
            .create(name)
            .map_err(|e| StepError::io(format!("cannot write {name}"), &path, e))?;
        let mut out = Measured {
            inner: BufWriter::new(file),
            bytes: 0,
            crc: crc32fast::Hasher::new(),
        };
        write(&mut out)?;
        out.inner
            .flush()
            .map_err(|e| StepError::io(format!("cannot write {name}"), &path, e))?;
        self.outputs.push(OutputFileMeta {
            name: name.to_owned(),
            bytes: out.bytes,
            crc32: out.crc.finalize(),
        });
        Ok(())
    }

    fn add_section(&mut self, kind: SectionKind, bytes: &[u8]) -> Result<usize, StepError> {
        self.container
            .add_section(kind, bytes)
            .map_err(StepError::bare)
    }

    fn file_target(&mut self, name: &str) -> Result<PathBuf, StepError> {
        self.staging
            .path_for(name)
            .map_err(|e| StepError::io(format!("cannot write {name}"), &self.out_dir.join(name), e))
    }

    fn list_file(&mut self, name: &str, bytes: u64, crc32: u32) {
        self.outputs.push(OutputFileMeta {
            name: name.to_owned(),
            bytes,
            crc32,
        });
    }

    fn stream_target(&mut self, name: &str) -> Result<PathBuf, StepError> {
        let target = if self.embed {
            self.staging.scratch()
        } else {
            self.staging.path_for(name)
        };
        target.map_err(|e| StepError::io(format!("cannot write {name}"), &self.out_dir, e))
    }

    fn place_stream(&mut self, path: &Path, bytes: u64, crc32: u32) -> Result<Storage, StepError> {
        if !self.embed {
            return Ok(Storage::File);
        }
        // Copied file to file without passing through this process (the
        // writer's digest stands for the bytes: it saw every one written).
        let mut reader = File::open(path).map_err(|e| StepError::io_bare(path, e))?;
        let section = self
            .container
            .add_section_known(SectionKind::Texture, &mut reader, bytes, crc32)
            .map_err(StepError::bare)?;
        Ok(Storage::Section(section as u32))
    }
}

/// A writer that counts and checksums the bytes it passes on.
struct Measured<W> {
    inner: W,
    bytes: u64,
    crc: crc32fast::Hasher,
}

impl<W: Write> Write for Measured<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.crc.update(&buf[..n]);
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn placed(embed: bool, shared: Option<&SharedStore>, out: &Path) -> (String, Storage) {
        let mut sink = OutputSink::create(out, "m.rigbake", embed, shared).unwrap();
        sink.place_texture("bones.skin0.exr", b"texels").unwrap()
    }

    #[test]
    fn textures_go_to_a_file_a_section_or_the_shared_store() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("chars").join("knight");
        assert_eq!(
            placed(false, None, &out),
            ("bones.skin0.exr".to_owned(), Storage::File)
        );
        assert_eq!(
            placed(true, None, &out),
            ("bones.skin0.exr".to_owned(), Storage::Section(0))
        );
        let store = SharedStore::new(dir.path());
        let (name, storage) = placed(false, Some(&store), &out);
        assert_eq!(storage, Storage::File);
        assert!(
            name.starts_with("../../_shared/bones/") && name.ends_with(".exr"),
            "{name}"
        );
        // The sink was dropped uncommitted: nothing landed in the store.
        let stored = dir.path().join(name.trim_start_matches("../"));
        let shared_dir = dir.path().join("_shared/bones");
        assert_eq!(std::fs::read_dir(&shared_dir).unwrap().count(), 0);
        let (again, staged) = store.stage(&out, b"texels", "exr").unwrap();
        assert_eq!(again, name);
        assert!(!stored.exists());
        staged.unwrap().publish().unwrap();
        assert_eq!(std::fs::read(&stored).unwrap(), b"texels");
        // Stored intact: nothing more to stage.
        assert!(store.stage(&out, b"texels", "exr").unwrap().1.is_none());
        // Embedding wins over sharing.
        assert_eq!(placed(true, Some(&store), &out).1, Storage::Section(0));
    }

    #[test]
    fn unfinished_outputs_leave_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("m");
        let mut sink = OutputSink::create(&out, "m.rigbake", false, None).unwrap();
        sink.write_file("m.weights.glb", b"glb").unwrap();
        let streamed = sink.stream_target("a.positions.exr").unwrap();
        std::fs::write(&streamed, b"rows").unwrap();
        assert_eq!(sink.place_stream(&streamed, 4, 0).unwrap(), Storage::File);
        drop(sink);
        assert!(
            !out.exists(),
            "a failed bake removes its temporaries and folder"
        );
    }

    #[test]
    fn container_paths_follow_the_model_file_name() {
        assert_eq!(
            container_path(Path::new("in/knight.glb"), Path::new("out/knight")),
            Path::new("out/knight/knight.rigbake")
        );
    }
}
