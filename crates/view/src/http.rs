//! The viewer's HTTP/1.1 layer: GET and HEAD only, one request per
//! connection, and every resource a client controls bounded (the
//! [`Limits`]). Written on `std::net` and `httparse` (the request-head
//! parser hyper uses) because the viewer needs none of a general server's
//! features and all of these bounds, which tiny_http did not have:
//!
//! - a request head is at most [`Limits::max_head_bytes`] with at most
//!   [`Limits::max_headers`] headers (431 past them), read within
//!   [`Limits::head_timeout`] (408 after it), so a header that never ends
//!   or a half-sent request holds a few KiB for a few seconds, never more;
//! - at most [`Limits::max_connections`] connections are served at once,
//!   each on its own thread; the next one gets 503 and is closed at once; a
//!   thread that cannot be started drops its connection, never panics;
//! - each answer is written under [`Limits::write_timeout`] per write, with
//!   a fixed buffer (files are streamed), so a client that never reads
//!   holds only its own thread and connection until the timeout, and every
//!   other client is served meanwhile;
//! - a whole connection, from accept to the answer's last byte, lasts at
//!   most [`Limits::connection_timeout`]: a client that reads slowly but
//!   steadily (never tripping the per-write timeout) is cut off then, so
//!   [`Limits::max_connections`] such clients free their places in bounded
//!   time;
//! - a request whose `Host` cannot be read (missing on HTTP/1.1, sent
//!   twice, or not UTF-8) gets 400, so the server's Host check
//!   ([`crate::server`]) never passes a request it could not read.

use std::fs::File;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The bounds every connection is held to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest request head (request line and headers), in bytes.
    pub max_head_bytes: usize,
    /// Most headers in a request.
    pub max_headers: usize,
    /// Longest time to receive the whole request head.
    pub head_timeout: Duration,
    /// Longest time one write of the answer may wait for the client.
    pub write_timeout: Duration,
    /// Most connections served at once.
    pub max_connections: usize,
    /// Longest time one connection is served, from accept to the last byte
    /// of the answer (head and every write included); past it the
    /// connection closes, however steadily the client reads.
    pub connection_timeout: Duration,
}

impl Default for Limits {
    /// 16 KiB and 64 headers, 10 s for the head, 30 s per write, 64
    /// connections, 120 s per connection (documented in docs/limits.md).
    fn default() -> Self {
        Self {
            max_head_bytes: 16 << 10,
            max_headers: 64,
            head_timeout: Duration::from_secs(10),
            write_timeout: Duration::from_secs(30),
            max_connections: 64,
            connection_timeout: Duration::from_secs(120),
        }
    }
}

/// What a request asked for.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// `GET`, `HEAD`, ...
    pub method: &'a str,
    /// The request target as sent (`/bake/0/a%20b.exr?x=1`).
    pub target: &'a str,
    /// The `Host` header, when sent (always sent on HTTP/1.1: a request
    /// without one, with two, or with one that is not UTF-8 is refused with
    /// 400 before the handler sees it).
    pub host: Option<&'a str>,
}

/// An answer before it is sent.
pub struct Response {
    /// The status code.
    pub status: u16,
    /// The `Content-Type`.
    pub content_type: &'static str,
    /// The body.
    pub body: Body,
}

/// A response body.
pub enum Body {
    /// Bytes in memory.
    Bytes(Vec<u8>),
    /// A file, streamed.
    File(File),
}

/// A plain-text response.
pub fn text(status: u16, message: &str) -> Response {
    Response {
        status,
        content_type: "text/plain; charset=utf-8",
        body: Body::Bytes(format!("{message}\n").into_bytes()),
    }
}

/// Serves `listener` with `handler` until the listener fails for good
/// (never for one bad client).
pub fn serve<H>(listener: &TcpListener, limits: Limits, handler: Arc<H>)
where
    H: Fn(&Request<'_>) -> Response + Send + Sync + 'static,
{
    let active = Arc::new(AtomicUsize::new(0));
    for conn in listener.incoming() {
        let Ok(stream) = conn else {
            // Out of file descriptors, or a connection reset before it was
            // accepted: wait a moment and go on.
            std::thread::sleep(Duration::from_millis(10));
            continue;
        };
        if active.load(Ordering::Acquire) >= limits.max_connections {
            refuse_busy(stream);
            continue;
        }
        let guard = Active::enter(&active);
        let handler = handler.clone();
        // A failed spawn drops the closure: the connection closes and the
        // guard gives its place back.
        let _ = std::thread::Builder::new()
            .name("rigbake-view".to_owned())
            .stack_size(256 << 10)
            .spawn(move || {
                let _guard = guard;
                connection(stream, &limits, &*handler);
            });
    }
}

/// One place among the connections being served, given back on drop.
struct Active(Arc<AtomicUsize>);

impl Active {
    fn enter(count: &Arc<AtomicUsize>) -> Self {
        count.fetch_add(1, Ordering::AcqRel);
        Self(count.clone())
    }
}

impl Drop for Active {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// 503 for a connection over the limit, without waiting on the client.
fn refuse_busy(mut stream: TcpStream) {
    let wait = Duration::from_millis(100);
    let mut out = Timed::new(&mut stream, Instant::now() + wait, wait);
    let _ = write_response(
        &mut out,
        text(503, "busy: too many connections; try again"),
        false,
    );
}

/// Reads one request head within the limits and answers it.
fn connection<H>(mut stream: TcpStream, limits: &Limits, handler: &H)
where
    H: Fn(&Request<'_>) -> Response,
{
    let accepted = Instant::now();
    let end = accepted + limits.connection_timeout;
    let deadline = (accepted + limits.head_timeout).min(end);
    let mut head = Vec::with_capacity(1024);
    let mut chunk = [0u8; 4096];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || stream.set_read_timeout(Some(left)).is_err() {
            return finish(
                stream,
                text(408, "the request head took too long"),
                false,
                limits,
                end,
            );
        }
        let room = (limits.max_head_bytes - head.len()).clamp(1, chunk.len());
        let n = match stream.read(&mut chunk[..room]) {
            Ok(0) => return,
            Ok(n) => n,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return finish(
                    stream,
                    text(408, "the request head took too long"),
                    false,
                    limits,
                    end,
                );
            }
            Err(_) => return,
        };
        head.extend_from_slice(&chunk[..n]);
        let mut headers = vec![httparse::EMPTY_HEADER; limits.max_headers];
        let mut parsed = httparse::Request::new(&mut headers);
        match parsed.parse(&head) {
            Ok(httparse::Status::Complete(_)) => {
                let host = match host(&parsed) {
                    Ok(host) => host,
                    Err(why) => {
                        return finish(stream, text(400, why), false, limits, end);
                    }
                };
                let request = Request {
                    method: parsed.method.unwrap_or(""),
                    target: parsed.path.unwrap_or(""),
                    host,
                };
                let head_only = request.method == "HEAD";
                let response = handler(&request);
                return finish(stream, response, head_only, limits, end);
            }
            Ok(httparse::Status::Partial) if head.len() < limits.max_head_bytes => {}
            Ok(httparse::Status::Partial) => {
                let message = format!(
                    "the request head is longer than {} bytes",
                    limits.max_head_bytes
                );
                return finish(stream, text(431, &message), false, limits, end);
            }
            Err(httparse::Error::TooManyHeaders) => {
                let message = format!("more than {} request headers", limits.max_headers);
                return finish(stream, text(431, &message), false, limits, end);
            }
            Err(_) => {
                return finish(stream, text(400, "a malformed request"), false, limits, end);
            }
        }
    }
}

/// The request's `Host` header: `None` when absent on HTTP/1.0; an error
/// (answered with 400) when absent on HTTP/1.1, sent more than once, or not
/// UTF-8: a Host the server cannot read is never let through unchecked.
fn host<'h>(parsed: &httparse::Request<'_, 'h>) -> Result<Option<&'h str>, &'static str> {
    let mut hosts = parsed
        .headers
        .iter()
        .filter(|h| h.name.eq_ignore_ascii_case("host"));
    let first = hosts.next();
    if hosts.next().is_some() {
        return Err("refused: more than one Host header");
    }
    match first {
        Some(h) => std::str::from_utf8(h.value)
            .map(Some)
            .map_err(|_| "refused: the Host header is not UTF-8"),
        None if parsed.version == Some(0) => Ok(None),
        None => Err("refused: an HTTP/1.1 request without a Host header"),
    }
}

/// Writes `response` under the write timeout, all of it before `end` (the
/// connection's deadline), and closes the connection.
fn finish(
    mut stream: TcpStream,
    response: Response,
    head_only: bool,
    limits: &Limits,
    end: Instant,
) {
    // A client that hung up, stalled or read too slowly is not the
    // server's problem.
    let _ = write_response(
        &mut Timed::new(&mut stream, end, limits.write_timeout),
        response,
        head_only,
    );
    let _ = stream.shutdown(std::net::Shutdown::Both);
}

/// A connection written under two bounds: each write waits at most
/// `per_write`, and no write starts or waits past `end`.
struct Timed<'a> {
    stream: &'a mut TcpStream,
    end: Instant,
    per_write: Duration,
}

impl<'a> Timed<'a> {
    fn new(stream: &'a mut TcpStream, end: Instant, per_write: Duration) -> Self {
        Self {
            stream,
            end,
            per_write,
        }
    }
}

impl Write for Timed<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let left = self.end.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(std::io::ErrorKind::TimedOut.into());
        }
        self.stream
            .set_write_timeout(Some(left.min(self.per_write)))?;
        self.stream.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.stream.flush()
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
        408 => "Request Timeout",
        431 => "Request Header Fields Too Large",
        503 => "Service Unavailable",
        _ => "Error",
    }
}

/// Writes the status line, headers (`Connection: close`) and body.
fn write_response(
    stream: &mut impl Write,
    response: Response,
    head_only: bool,
) -> std::io::Result<()> {
    let length = match &response.body {
        Body::Bytes(b) => b.len() as u64,
        Body::File(f) => f.metadata().map(|m| m.len()).unwrap_or(0),
    };
    let head = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {length}\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n",
        response.status,
        reason(response.status),
        response.content_type
    );
    stream.write_all(head.as_bytes())?;
    if !head_only {
        match response.body {
            Body::Bytes(b) => stream.write_all(&b)?,
            Body::File(f) => {
                std::io::copy(&mut f.take(length), stream)?;
            }
        }
    }
    stream.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    /// A server on a free port answering every request with `body`.
    fn start(limits: Limits, body: Vec<u8>) -> std::net::SocketAddr {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let body = Arc::new(body);
        let handler = Arc::new(move |_: &Request<'_>| Response {
            status: 200,
            content_type: "application/octet-stream",
            body: Body::Bytes(body.to_vec()),
        });
        std::thread::spawn(move || serve(&listener, limits, handler));
        addr
    }

    fn quick() -> Limits {
        Limits {
            head_timeout: Duration::from_millis(400),
            write_timeout: Duration::from_millis(400),
            max_connections: 4,
            ..Limits::default()
        }
    }

    /// Sends `bytes` (ignoring a server that closes midway) and returns
    /// the status code the server answered with (0: none).
    fn status_after(addr: std::net::SocketAddr, bytes: &[u8]) -> u16 {
        let mut s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        for chunk in bytes.chunks(4096) {
            if s.write_all(chunk).is_err() {
                break;
            }
        }
        let mut answer = Vec::new();
        let _ = s.read_to_end(&mut answer);
        String::from_utf8_lossy(&answer)
            .split_whitespace()
            .nth(1)
            .and_then(|c| c.parse().ok())
            .unwrap_or(0)
    }

    fn get() -> &'static [u8] {
        b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    }

    #[test]
    fn a_head_that_never_ends_or_has_too_many_headers_is_cut_off() {
        let addr = start(quick(), b"ok".to_vec());
        // 1 MiB of one header and no end: refused once past 16 KiB.
        let mut endless = b"GET / HTTP/1.1\r\nX-Long: ".to_vec();
        endless.resize(1 << 20, b'a');
        assert_eq!(status_after(addr, &endless), 431);
        let mut many = b"GET / HTTP/1.1\r\n".to_vec();
        for k in 0..100 {
            many.extend_from_slice(format!("X-{k}: v\r\n").as_bytes());
        }
        many.extend_from_slice(b"\r\n");
        assert_eq!(status_after(addr, &many), 431);
        assert_eq!(status_after(addr, b"NOT HTTP\r\n\r\n"), 400);
        // The server goes on.
        assert_eq!(status_after(addr, get()), 200);
    }

    #[test]
    fn a_half_sent_request_times_out_and_idle_connections_are_capped() {
        let addr = start(quick(), b"ok".to_vec());
        // Half a request, then silence: 408 after the head timeout.
        assert_eq!(status_after(addr, b"GET / HTTP/1.1\r\nHost: x\r\n"), 408);
        // Four idle connections fill the server; the fifth is refused at
        // once with 503 instead of queueing behind them.
        let idle: Vec<TcpStream> = (0..4).map(|_| TcpStream::connect(addr).unwrap()).collect();
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!(status_after(addr, get()), 503);
        // Once they time out, requests are served again.
        std::thread::sleep(Duration::from_millis(800));
        assert_eq!(status_after(addr, get()), 200);
        drop(idle);
    }

    #[test]
    fn a_host_that_cannot_be_read_is_refused() {
        let addr = start(quick(), b"ok".to_vec());
        // HTTP/1.1 without a Host, with two, with one that is not UTF-8.
        assert_eq!(status_after(addr, b"GET / HTTP/1.1\r\n\r\n"), 400);
        assert_eq!(
            status_after(
                addr,
                b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nhost: evil\r\n\r\n"
            ),
            400
        );
        assert_eq!(
            status_after(addr, b"GET / HTTP/1.1\r\nHost: 127.0.0.1\xff\r\n\r\n"),
            400
        );
        // HTTP/1.0 may leave it out; one readable Host passes.
        assert_eq!(status_after(addr, b"GET / HTTP/1.0\r\n\r\n"), 200);
        assert_eq!(status_after(addr, get()), 200);
    }

    /// Reads from `s` steadily (16 KiB every 10 ms, about 1.6 MB/s) until
    /// `stop` is set or the server closes.
    fn read_slowly(mut s: TcpStream, stop: Arc<std::sync::atomic::AtomicBool>) {
        let mut chunk = vec![0u8; 16 << 10];
        while !stop.load(Ordering::Acquire) {
            match s.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(_) => std::thread::sleep(Duration::from_millis(10)),
            }
        }
    }

    #[test]
    fn slow_but_steady_readers_are_cut_off_after_the_connection_time() {
        let limits = Limits {
            max_connections: 2,
            // Never tripped by a reader that keeps reading.
            write_timeout: Duration::from_secs(5),
            connection_timeout: Duration::from_secs(1),
            ..quick()
        };
        // `/big`: 64 MiB, 40 s at the slow readers' pace; anything else a
        // few bytes.
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let big = Arc::new(vec![7u8; 64 << 20]);
        let handler = Arc::new(move |r: &Request<'_>| Response {
            status: 200,
            content_type: "application/octet-stream",
            body: Body::Bytes(if r.target == "/big" {
                big.to_vec()
            } else {
                b"ok".to_vec()
            }),
        });
        std::thread::spawn(move || serve(&listener, limits, handler));
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let readers: Vec<_> = (0..2)
            .map(|_| {
                let mut s = TcpStream::connect(addr).unwrap();
                s.write_all(b"GET /big HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                    .unwrap();
                let stop = stop.clone();
                std::thread::spawn(move || read_slowly(s, stop))
            })
            .collect();
        std::thread::sleep(Duration::from_millis(200));
        // They hold every place...
        assert_eq!(status_after(addr, get()), 503);
        // ...until their connection time is up; then others are served.
        let started = Instant::now();
        let served = loop {
            std::thread::sleep(Duration::from_millis(100));
            let status = status_after(addr, get());
            if status == 200 || started.elapsed() > Duration::from_secs(6) {
                break status;
            }
        };
        stop.store(true, Ordering::Release);
        assert_eq!(served, 200, "still busy after {:?}", started.elapsed());
        assert!(started.elapsed() < Duration::from_secs(4));
        for r in readers {
            r.join().unwrap();
        }
    }

    #[test]
    fn clients_that_never_read_do_not_block_the_others() {
        let limits = Limits {
            max_connections: 8,
            write_timeout: Duration::from_secs(2),
            ..quick()
        };
        // 16 MiB answers: far more than socket buffers hold.
        let addr = start(limits, vec![7u8; 16 << 20]);
        let stalled: Vec<TcpStream> = (0..4)
            .map(|_| {
                let mut s = TcpStream::connect(addr).unwrap();
                s.write_all(get()).unwrap();
                s
            })
            .collect();
        std::thread::sleep(Duration::from_millis(200));
        let mut s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s.write_all(get()).unwrap();
        let mut answer = Vec::new();
        s.read_to_end(&mut answer).unwrap();
        assert!(answer.starts_with(b"HTTP/1.1 200"));
        assert!(
            answer.len() > 16 << 20,
            "the whole answer: {} bytes",
            answer.len()
        );
        drop(stalled);
    }
}
