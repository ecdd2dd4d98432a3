//! `rigbake completions SHELL` and `rigbake man`: shell completion scripts
//! and the manual page, generated from the clap definition of the command
//! line (clap_complete, clap_mangen), so they never fall behind it.

use clap::CommandFactory as _;

use crate::args::Cli;
use crate::exit::{EXIT_OK, Failure, Outcome};

/// Prints the completion script for `shell` on stdout.
pub fn completions(shell: clap_complete::Shell) -> Outcome {
    let mut command = Cli::command();
    let mut bytes = Vec::new();
    clap_complete::generate(shell, &mut command, "rigbake", &mut bytes);
    write_stdout(&bytes)
}

/// Prints the manual page (roff, section 1) on stdout: the command, then
/// one section per subcommand with its options.
pub fn man() -> Outcome {
    let page =
        man_page().map_err(|e| Failure::Failed(format!("cannot render the manual page: {e}")))?;
    write_stdout(&page)
}

/// The manual page as roff bytes.
pub fn man_page() -> std::io::Result<Vec<u8>> {
    let command = Cli::command();
    let mut bytes = Vec::new();
    let man = clap_mangen::Man::new(command.clone());
    man.render_title(&mut bytes)?;
    man.render_name_section(&mut bytes)?;
    man.render_synopsis_section(&mut bytes)?;
    man.render_description_section(&mut bytes)?;
    man.render_options_section(&mut bytes)?;
    // The subcommands, named as they are typed (`rigbake bake`): each has
    // its section in this page, not a page of its own to refer to.
    bytes.extend_from_slice(b".SH SUBCOMMANDS\n");
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        let about = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
        bytes.extend_from_slice(
            format!(
                ".TP\n\\fBrigbake {}\\fR\n{}\n",
                sub.get_name(),
                roff_text(&about)
            )
            .as_bytes(),
        );
    }
    // Each subcommand's own options, as a section of its own.
    for sub in command.get_subcommands() {
        let name = format!("rigbake {}", sub.get_name());
        bytes.extend_from_slice(format!(".SH \"{}\"\n", name.to_uppercase()).as_bytes());
        let page = clap_mangen::Man::new(sub.clone().bin_name(name));
        page.render_synopsis_section(&mut bytes)?;
        page.render_description_section(&mut bytes)?;
        page.render_options_section(&mut bytes)?;
    }
    man.render_version_section(&mut bytes)?;
    man.render_extra_section(&mut bytes)?;
    Ok(bytes)
}

/// `text` as a roff text line: backslashes escaped, and a line that would
/// start with a control character (`.` or `'`) protected.
fn roff_text(text: &str) -> String {
    text.lines()
        .map(|line| {
            let line = line.replace('\\', "\\e").replace('-', "\\-");
            if line.starts_with(['.', '\'']) {
                format!("\\&{line}")
            } else {
                line
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn write_stdout(bytes: &[u8]) -> Outcome {
    let text = std::str::from_utf8(bytes)
        .map_err(|_| Failure::Failed("the generated text is not UTF-8".into()))?;
    crate::stdout::print(text);
    Ok(EXIT_OK)
}
