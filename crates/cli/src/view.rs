//! `rigbake view OUT|FILE.rigbake [--port N] [--open]`: serves the bakes
//! found there on 127.0.0.1 and prints the page's URL (the server and the
//! page are the `rigbake-view` crate). Runs until interrupted. Exit code 1
//! when a container cannot be read, 2 for usage errors (a missing target, a
//! port in use).

use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use rigbake_view::{Catalog, CatalogError, Server};

use crate::exit::{EXIT_OK, Failure, Outcome};

/// Arguments of `rigbake view`.
#[derive(Debug, Args)]
pub struct ViewArgs {
    /// An output folder (searched for .rigbake containers) or one container.
    #[arg(value_name = "OUT|FILE")]
    pub target: PathBuf,
    /// The port on 127.0.0.1 (0: any free port, printed).
    #[arg(long, default_value_t = 8123, value_name = "N")]
    pub port: u16,
    /// Open the page in the default browser.
    #[arg(long)]
    pub open: bool,
    /// The model a single container was baked from (default: the path the
    /// bake recorded relative to the container, if that file is unchanged;
    /// else the recorded file name beside the container); it places the
    /// bake upright.
    #[arg(long, value_name = "MODEL")]
    pub source: Option<PathBuf>,
}

/// Runs `rigbake view` until interrupted; fails when the server cannot
/// start.
pub fn run(args: &ViewArgs) -> Outcome {
    let catalog = Catalog::open(&args.target, args.source.as_deref()).map_err(|e| match e {
        CatalogError::Unusable(m) => Failure::Usage(m),
        CatalogError::Unreadable(m) => Failure::Failed(m),
    })?;
    for b in catalog.bakes.iter().filter(|b| b.placement_note.is_some()) {
        eprintln!(
            "note: {}: placed at the identity ({})",
            b.name,
            b.placement_note.as_deref().unwrap_or_default()
        );
    }
    let count = catalog.bakes.len();
    let server = Server::bind(catalog, args.port).map_err(|e| Failure::Usage(e.to_string()))?;
    let url = server.url();
    let mut out = std::io::stdout().lock();
    let _ = writeln!(
        out,
        "rigbake view: {count} bake{} at {url} (Ctrl-C to stop)",
        if count == 1 { "" } else { "s" }
    );
    let _ = out.flush();
    drop(out);
    if args.open {
        open_browser(&url);
    }
    server.run();
    Ok(EXIT_OK)
}

/// Asks the desktop to open `url`; a failure is only reported.
fn open_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else if cfg!(windows) {
        "explorer"
    } else {
        "xdg-open"
    };
    if let Err(e) = std::process::Command::new(opener).arg(url).spawn() {
        eprintln!("note: could not start {opener} to open {url}: {e}");
    }
}
