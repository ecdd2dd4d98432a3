//! The HTTP side of `rigbake view`: bound to 127.0.0.1 only, GET and HEAD
//! only, read-only.
//!
//! | path | answer |
//! |---|---|
//! | `/` | the page ([`crate::assets`]) |
//! | `/app/<name>` | an embedded script |
//! | `/bakes.json` | every bake: its `inspect --json` report, its file names, placements |
//! | `/bake/<i>/<name>` | file `<name>` of bake `i`, when the catalog lists it |
//!
//! Everything else is refused: a path whose decoded form (decoded exactly
//! once) has a `..` or `.` segment, a backslash or a NUL (400), a file the catalog does not list or
//! that is no longer a regular file (404), another method (405), and a
//! `Host` header naming anything but the loopback address or `localhost`
//! (403, so that a web page cannot reach the viewer through DNS rebinding;
//! a `Host` that cannot be read, missing on HTTP/1.1, sent twice or not
//! UTF-8, is refused with 400 by [`crate::http`] before this check).
//! Every response closes its connection. The connection limits are
//! [`crate::http`]'s; files are opened relative to each bake's folder
//! handle, held from start ([`crate::catalog::Bake::open_file`]).

use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::path::Path;
use std::sync::Arc;

use percent_encoding::percent_decode_str;
use serde_json::{Value, json};

use crate::assets;
use crate::catalog::{Catalog, plain_name};
use crate::http::{Body, Limits, Request, Response as Answer, text};

/// Why the server could not start.
#[derive(Debug)]
pub struct ServeError(pub String);

impl std::fmt::Display for ServeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ServeError {}

/// A bound viewer server; [`Server::run`] answers requests until the
/// process ends.
pub struct Server {
    listener: TcpListener,
    limits: Limits,
    addr: SocketAddr,
    catalog: Arc<Catalog>,
    index: Arc<Vec<u8>>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server").field("addr", &self.addr).finish()
    }
}

fn content_type(name: &str) -> &'static str {
    match Path::new(name).extension().and_then(|e| e.to_str()) {
        Some("html") => "text/html; charset=utf-8",
        Some("js" | "mjs") => "text/javascript; charset=utf-8",
        Some("json") => "application/json",
        Some("glb") => "model/gltf-binary",
        Some("png") => "image/png",
        Some("ktx2") => "image/ktx2",
        _ => "application/octet-stream",
    }
}

/// One bake in the page's index (`/bakes.json`).
#[derive(serde::Serialize)]
struct IndexEntry<'a> {
    id: usize,
    name: &'a str,
    base: String,
    container: Option<String>,
    files: Vec<&'a String>,
    /// Written from its JSON text as it is, never parsed again.
    report: &'a serde_json::value::RawValue,
    placements: serde_json::Map<String, Value>,
    placement_note: &'a Option<String>,
}

/// The page's index: every bake, with its report.
#[derive(serde::Serialize)]
struct Index<'a> {
    viewer_version: u32,
    bakes: Vec<IndexEntry<'a>>,
}

/// The JSON document the page starts from, as bytes.
pub fn bakes_json(catalog: &Catalog) -> serde_json::Result<Vec<u8>> {
    let bakes = catalog
        .bakes
        .iter()
        .enumerate()
        .map(|(i, b)| IndexEntry {
            id: i,
            name: &b.name,
            base: format!("/bake/{i}/"),
            container: b.file.file_name().map(|n| n.to_string_lossy().into_owned()),
            files: b.files.keys().collect(),
            report: &b.report,
            placements: b
                .placements
                .iter()
                .map(|(k, m)| (k.clone(), json!(m.to_cols_array())))
                .collect(),
            placement_note: &b.placement_note,
        })
        .collect();
    serde_json::to_vec(&Index {
        viewer_version: 1,
        bakes,
    })
}

impl Server {
    /// Binds 127.0.0.1:`port` (0: any free port) for `catalog`, with the
    /// default [`Limits`].
    pub fn bind(catalog: Catalog, port: u16) -> Result<Self, ServeError> {
        Self::bind_with(catalog, port, Limits::default())
    }

    /// [`Server::bind`] with other connection limits (tests use short
    /// timeouts).
    pub fn bind_with(catalog: Catalog, port: u16, limits: Limits) -> Result<Self, ServeError> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, port))
            .map_err(|e| ServeError(format!("cannot listen on 127.0.0.1:{port}: {e}")))?;
        let addr = listener
            .local_addr()
            .map_err(|e| ServeError(format!("the server has no address: {e}")))?;
        let index = bakes_json(&catalog)
            .map_err(|e| ServeError(format!("cannot describe the bakes: {e}")))?;
        Ok(Self {
            listener,
            limits,
            addr,
            catalog: Arc::new(catalog),
            index: Arc::new(index),
        })
    }

    /// The address the server listens on (always 127.0.0.1).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The page's URL.
    pub fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    /// Answers requests until the process ends, each connection on its own
    /// thread within the [`Limits`].
    pub fn run(self) {
        let (catalog, index, port) = (self.catalog, self.index, self.addr.port());
        let handler =
            Arc::new(move |request: &Request<'_>| answer(request, &catalog, &index, port));
        crate::http::serve(&self.listener, self.limits, handler);
    }
}

/// Whether a `Host` header names this server on the loopback interface.
fn host_allowed(host: &str, port: u16) -> bool {
    let host = host.trim();
    [
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        "127.0.0.1".to_owned(),
        "localhost".to_owned(),
    ]
    .iter()
    .any(|h| h.eq_ignore_ascii_case(host))
}

/// The decoded path of a request URL, or why it is refused.
pub fn decoded_path(url: &str) -> Result<String, &'static str> {
    let raw = url.split(['?', '#']).next().unwrap_or("");
    if !raw.starts_with('/') {
        return Err("the path must start with /");
    }
    let path = percent_decode_str(raw)
        .decode_utf8()
        .map_err(|_| "the path is not UTF-8")?
        .into_owned();
    if path.contains(['\\', '\0']) {
        return Err("backslashes and NUL are refused");
    }
    if path.split('/').any(|s| s == ".." || s == ".") {
        return Err("`.` and `..` segments are refused");
    }
    // Decoded exactly once: a `%` left after decoding is part of the name
    // (a bake named `t%41` is requested as `t%2541`), and no later step
    // decodes again, so `%252e%252e` stays the literal name `%2e%2e`,
    // never a `..`; a name is then only served when the catalog lists it.
    Ok(path)
}

fn answer(request: &Request<'_>, catalog: &Catalog, index: &[u8], port: u16) -> Answer {
    if !matches!(request.method, "GET" | "HEAD") {
        return text(405, "only GET and HEAD");
    }
    if request.host.is_some_and(|h| !host_allowed(h, port)) {
        return text(
            403,
            "refused: the Host header does not name 127.0.0.1 or localhost",
        );
    }
    let path = match decoded_path(request.target) {
        Ok(p) => p,
        Err(why) => return text(400, &format!("refused: {why}")),
    };
    if path == "/" || path == "/index.html" {
        return Answer {
            status: 200,
            content_type: "text/html; charset=utf-8",
            body: Body::Bytes(assets::INDEX_HTML.as_bytes().to_vec()),
        };
    }
    if path == "/favicon.ico" {
        return Answer {
            status: 204,
            content_type: "image/x-icon",
            body: Body::Bytes(Vec::new()),
        };
    }
    if path == "/bakes.json" {
        return Answer {
            status: 200,
            content_type: "application/json",
            body: Body::Bytes(index.to_vec()),
        };
    }
    if let Some(name) = path.strip_prefix("/app/") {
        return match assets::script(name) {
            Some(s) => Answer {
                status: 200,
                content_type: "text/javascript; charset=utf-8",
                body: Body::Bytes(s.as_bytes().to_vec()),
            },
            None => text(404, "no such script"),
        };
    }
    if let Some(rest) = path.strip_prefix("/bake/") {
        return bake_file(catalog, rest);
    }
    text(404, "not found")
}

/// File `<name>` of bake `<i>` from `<i>/<name>`.
fn bake_file(catalog: &Catalog, rest: &str) -> Answer {
    let Some((id, name)) = rest.split_once('/') else {
        return text(404, "not found");
    };
    let Some(bake) = id.parse::<usize>().ok().and_then(|i| catalog.bakes.get(i)) else {
        return text(404, "no such bake");
    };
    if !plain_name(name) {
        return text(400, "refused: not a plain file name");
    }
    if !bake.files.contains_key(name) {
        return text(404, "not a file of this bake");
    }
    // Opened now, relative to the bake's folder handle held from start,
    // refusing a link at the name and anything but a regular file: a
    // folder swapped for a link, or a file replaced by one, since the
    // catalog was built serves nothing from elsewhere.
    match bake.open_file(name) {
        Some(f) => Answer {
            status: 200,
            content_type: content_type(name),
            body: Body::File(f),
        },
        None => text(404, "not a regular file"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traversal_is_refused_in_every_spelling() {
        for bad in [
            "/bake/0/../x",
            "/bake/0/%2e%2e/x",
            "/bake/0/%2E%2E%2Fx",
            "/bake/0/..%2fx",
            "/bake/0/.%2e/x",
            "/bake/0/..%5cx",
            "/bake/0/a%00b",
            "/./bakes.json",
            "relative",
        ] {
            assert!(decoded_path(bad).is_err(), "{bad} was accepted");
        }
        assert_eq!(
            decoded_path("/bake/0/a%20b.exr?x=1").unwrap(),
            "/bake/0/a b.exr"
        );
        // Decoded once, never twice: a name holding `%` (what the page's
        // encodeURIComponent sends for a bake named `t%41`), and a doubly
        // encoded `..` that stays a literal, harmless name.
        assert_eq!(
            decoded_path("/bake/0/t%2541.weights.glb").unwrap(),
            "/bake/0/t%41.weights.glb"
        );
        assert_eq!(
            decoded_path("/bake/0/%252e%252e/x").unwrap(),
            "/bake/0/%2e%2e/x"
        );
    }

    #[test]
    fn only_loopback_host_names_pass() {
        assert!(host_allowed("127.0.0.1:8000", 8000));
        assert!(host_allowed("LOCALHOST:8000", 8000));
        assert!(!host_allowed("evil.example:8000", 8000));
        assert!(!host_allowed("127.0.0.1:8001", 8000));
    }
}
