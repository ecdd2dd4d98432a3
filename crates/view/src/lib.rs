//! `rigbake view`: plays bakes in the browser.
//!
//! - [`catalog`] finds the bakes under a folder (or takes one container),
//!   reads their records, and lists the only files the server may hand out:
//!   each container, and the texture and mesh files its records name;
//! - [`assets`] is the page (HTML, JavaScript, WebGL2 shaders), embedded in
//!   the binary so the viewer works offline;
//! - [`server`] answers HTTP requests on 127.0.0.1 only: the page, one JSON
//!   document describing the bakes, and the catalog's files, read-only;
//! - [`http`] is the connection layer under it, with every resource a
//!   client controls bounded (head size, time, connections, stalled
//!   readers).
//!
//! Data flows one way: folder -> catalog -> server -> page. The page reads
//! a bake exactly as an engine does (docs/viewer.md): the `inspect --json`
//! report for the numbers, then the textures and meshes it names.

pub mod assets;
pub mod catalog;
pub mod http;
pub mod server;

pub use catalog::{Bake, Catalog, CatalogError};
pub use server::{ServeError, Server};
