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
//! (403, so that a web page cannot reach the viewer through DNS rebinding).
//! Every response closes its connection.

use std::fs::File;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;
use std::sync::Arc;

use percent_encoding::percent_decode_str;
use serde_json::{Value, json};
use std::io::{Read, Write};

use tiny_http::{Method, Request};

use crate::assets;
use crate::catalog::{Catalog, plain_name};

/// Threads answering requests.
const WORKERS: usize = 4;

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
    http: Arc<tiny_http::Server>,
    addr: SocketAddr,
    catalog: Arc<Catalog>,
    index: Arc<Vec<u8>>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server").field("addr", &self.addr).finish()
    }
}

/// An answer before it is sent.
struct Answer {
    status: u16,
    content_type: &'static str,
    body: Body,
}

enum Body {
    Bytes(Vec<u8>),
    File(File),
}

fn text(status: u16, message: &str) -> Answer {
    Answer {
        status,
        content_type: "text/plain; charset=utf-8",
        body: Body::Bytes(format!("{message}\n").into_bytes()),
    }
}

fn content_type(name: &str) -> &'static str {
    match Path::new(name).extension().and_then(|e| e.to_str()) {
        Some("html") => "text/html; charset=utf-8",
        Some("js" | "mjs") => "text/javascript; charset=utf-8",
        Some("json") => "application/json",
        Some("glb") => "model/gltf-binary",
        Some("png") => "image/png",
        _ => "application/octet-stream",
    }
}

/// The JSON document the page starts from.
pub fn bakes_json(catalog: &Catalog) -> Value {
    let bakes: Vec<Value> = catalog
        .bakes
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let placements: serde_json::Map<String, Value> = b
                .placements
                .iter()
                .map(|(k, m)| (k.clone(), json!(m.to_cols_array())))
                .collect();
            json!({
                "id": i,
                "name": b.name,
                "base": format!("/bake/{i}/"),
                "container": b.file.file_name().map(|n| n.to_string_lossy().into_owned()),
                "files": b.files.keys().collect::<Vec<_>>(),
                "report": b.report,
                "placements": placements,
                "placement_note": b.placement_note,
            })
        })
        .collect();
    json!({ "viewer_version": 1, "bakes": bakes })
}

impl Server {
    /// Binds 127.0.0.1:`port` (0: any free port) for `catalog`.
    pub fn bind(catalog: Catalog, port: u16) -> Result<Self, ServeError> {
        let http = tiny_http::Server::http((Ipv4Addr::LOCALHOST, port))
            .map_err(|e| ServeError(format!("cannot listen on 127.0.0.1:{port}: {e}")))?;
        let addr = http
            .server_addr()
            .to_ip()
            .ok_or_else(|| ServeError("the server has no IP address".to_owned()))?;
        let index = serde_json::to_vec(&bakes_json(&catalog))
            .map_err(|e| ServeError(format!("cannot describe the bakes: {e}")))?;
        Ok(Self {
            http: Arc::new(http),
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

    /// Answers requests on [`WORKERS`] threads until the process ends.
    pub fn run(self) {
        let workers: Vec<_> = (0..WORKERS)
            .map(|_| {
                let (http, catalog, index) =
                    (self.http.clone(), self.catalog.clone(), self.index.clone());
                let port = self.addr.port();
                std::thread::spawn(move || {
                    for request in http.incoming_requests() {
                        let answer = answer(&request, &catalog, &index, port);
                        send(request, answer);
                    }
                })
            })
            .collect();
        for w in workers {
            let _ = w.join();
        }
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        204 => "No Content",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        _ => "Error",
    }
}

/// Writes the answer and ends the connection. The response head is written
/// here (through tiny_http's raw writer) because tiny_http 0.12 does not let
/// a response say `Connection: close`, and on reused keep-alive connections
/// it left some of Chromium's parallel module requests unanswered; one
/// request per connection avoids that (the loopback server has nothing to
/// gain from keep-alive).
fn send(request: Request, answer: Answer) {
    let head_only = *request.method() == Method::Head;
    let length = match &answer.body {
        Body::Bytes(b) => b.len() as u64,
        Body::File(f) => f.metadata().map(|m| m.len()).unwrap_or(0),
    };
    let head = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {length}\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n",
        answer.status,
        reason(answer.status),
        answer.content_type
    );
    let mut w = request.into_writer();
    // A client that hung up is not the server's problem.
    let _ = (|| -> std::io::Result<()> {
        w.write_all(head.as_bytes())?;
        if !head_only {
            match answer.body {
                Body::Bytes(b) => w.write_all(&b)?,
                Body::File(f) => {
                    std::io::copy(&mut f.take(length), &mut w)?;
                }
            }
        }
        w.flush()
    })();
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

fn answer(request: &Request, catalog: &Catalog, index: &[u8], port: u16) -> Answer {
    if !matches!(request.method(), Method::Get | Method::Head) {
        return text(405, "only GET and HEAD");
    }
    let host = request
        .headers()
        .iter()
        .find(|h| h.field.equiv("Host"))
        .map(|h| h.value.as_str().to_owned());
    if host.as_deref().is_some_and(|h| !host_allowed(h, port)) {
        return text(
            403,
            "refused: the Host header does not name 127.0.0.1 or localhost",
        );
    }
    let path = match decoded_path(request.url()) {
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
    let Some(path) = bake.files.get(name) else {
        return text(404, "not a file of this bake");
    };
    // Checked again now: the file may have been replaced since the catalog
    // was built (by a link, a folder, a FIFO...).
    let regular = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_file());
    let opened = regular
        .then(|| File::open(path).ok())
        .flatten()
        .filter(|f| f.metadata().is_ok_and(|m| m.is_file()));
    match opened {
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
