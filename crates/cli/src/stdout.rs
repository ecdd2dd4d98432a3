//! Writing to stdout without `println!`: when the reader has gone away (a
//! pipe into `head` that closed early), the rest of the output is dropped
//! quietly and the command ends with its usual exit code instead of
//! panicking.

use std::io::Write as _;

/// Writes `text` to stdout and flushes. A closed pipe is not an error (the
/// reader wanted no more); any other write error is reported on stderr.
/// Returns whether everything was written.
pub fn print(text: &str) -> bool {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => true,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => false,
        Err(e) => {
            eprintln!("error: cannot write to stdout: {e}");
            false
        }
    }
}

/// [`print`] followed by a newline.
pub fn println(text: &str) -> bool {
    let mut s = String::with_capacity(text.len() + 1);
    s.push_str(text);
    s.push('\n');
    print(&s)
}
