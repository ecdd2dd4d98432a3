//! Command-line conventions: `--version` names the container format,
//! `--help` lists the exit codes, progress lines count in good English.

use std::process::Command;

fn rigbake(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_rigbake"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn version_names_the_container_format() {
    let r = rigbake(&["--version"]);
    assert!(r.status.success());
    let text = String::from_utf8_lossy(&r.stdout);
    assert!(text.starts_with("rigbake "), "{text}");
    assert!(text.contains("container format 1."), "{text}");
}

#[test]
fn help_lists_the_exit_codes() {
    let r = rigbake(&["--help"]);
    assert!(r.status.success());
    let text = String::from_utf8_lossy(&r.stdout);
    assert!(text.contains("Exit codes: 0"), "{text}");
    assert!(text.contains("2 for usage errors"), "{text}");
}

#[test]
fn one_clip_is_not_one_clips() {
    let dir = tempfile::tempdir().unwrap();
    let model =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/tentacle.glb");
    let r = Command::new(env!("CARGO_BIN_EXE_rigbake"))
        .arg("bake")
        .arg(&model)
        .args(["--clip", "wave", "--out"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let text = String::from_utf8_lossy(&r.stderr);
    assert!(text.contains("1 clip,"), "{text}");
    assert!(!text.contains("1 clips"), "{text}");
}

#[test]
fn vat_only_flags_without_vat_are_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let model =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/tentacle.glb");
    for flag in [&["--normals"][..], &["--format", "png16"], &["--zip"]] {
        let r = Command::new(env!("CARGO_BIN_EXE_rigbake"))
            .arg("bake")
            .arg(&model)
            .arg("--out")
            .arg(dir.path())
            .args(flag)
            .output()
            .unwrap();
        assert_eq!(r.status.code(), Some(2), "{flag:?}");
        let text = String::from_utf8_lossy(&r.stderr);
        assert!(text.contains(flag[0]) && text.contains("--vat"), "{text}");
    }
    // With --vat the same flags are used.
    let r = Command::new(env!("CARGO_BIN_EXE_rigbake"))
        .arg("bake")
        .arg(&model)
        .arg("--out")
        .arg(dir.path())
        .args(["--vat", "--normals", "--quiet"])
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
}

#[test]
fn a_missing_model_path_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let r = Command::new(env!("CARGO_BIN_EXE_rigbake"))
        .args(["bake", "no_such_model_or_folder", "--out"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(2));
    let text = String::from_utf8_lossy(&r.stderr);
    assert!(
        text.contains("no_such_model_or_folder") && text.contains("no such file or folder"),
        "{text}"
    );
}

fn tentacle() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/tentacle.glb")
}

#[test]
fn progress_lines_count_up_in_order() {
    // Eight models on four workers finish in any order; the numbered lines
    // must still read [1/8], [2/8], ... (issue 19 item 12).
    let dir = tempfile::tempdir().unwrap();
    let models = dir.path().join("models");
    std::fs::create_dir(&models).unwrap();
    for i in 0..8 {
        std::fs::copy(tentacle(), models.join(format!("m{i}.glb"))).unwrap();
    }
    let r = Command::new(env!("CARGO_BIN_EXE_rigbake"))
        .arg("bake")
        .arg(&models)
        .args(["--jobs", "4", "--out"])
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let text = String::from_utf8_lossy(&r.stderr);
    let counters: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix('[')?.split(']').next())
        .collect();
    let expected: Vec<String> = (1..=8).map(|n| format!("{n}/8")).collect();
    assert_eq!(counters, expected, "{text}");
}

#[test]
fn inspect_text_rounds_numbers_and_shows_png16_bounds() {
    // A range clip ending at frame 17 of 24 fps ends at 0.70833... s; the
    // text summary shows 0.708, the JSON keeps the full value.
    let dir = tempfile::tempdir().unwrap();
    let manifest = dir.path().join("rigbake.toml");
    std::fs::copy(tentacle(), dir.path().join("tentacle.glb")).unwrap();
    std::fs::write(
        &manifest,
        "[[model]]\npath = \"tentacle.glb\"\nfps = 24\noutputs = [\"bones\", \"vat\"]\nvat = { format = \"png16\", normals = true }\n\
         [[model.clip]]\nsource = \"wave\"\nname = \"start\"\nframes = [0, 17]\n",
    )
    .unwrap();
    let out = dir.path().join("out");
    let r = Command::new(env!("CARGO_BIN_EXE_rigbake"))
        .args(["bake", "--manifest"])
        .arg(&manifest)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let container = walk(&out)
        .into_iter()
        .find(|p| p.extension().is_some_and(|e| e == "rigbake"))
        .unwrap();
    let r = Command::new(env!("CARGO_BIN_EXE_rigbake"))
        .arg("inspect")
        .arg(&container)
        .output()
        .unwrap();
    assert!(r.status.success());
    let text = String::from_utf8_lossy(&r.stdout);
    let origin = text
        .lines()
        .find(|l| l.contains("clip 0: wave from"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(origin.ends_with("from 0 s to 0.708 s"), "{origin}");
    assert!(text.contains("options   24 fps"), "{text}");
    // One bounds line per bounds-normalised texture (here the positions;
    // octahedral normals need none), with the min and max the metadata
    // records.
    let json = Command::new(env!("CARGO_BIN_EXE_rigbake"))
        .arg("inspect")
        .arg(&container)
        .arg("--json")
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let textures = doc["vat"]["textures"].as_array().unwrap();
    let bounded: Vec<_> = textures.iter().filter(|t| !t["bounds"].is_null()).collect();
    assert!(!bounded.is_empty(), "{textures:?}");
    for t in bounded {
        let name = t["name"].as_str().unwrap();
        let min = t["bounds"][0][0].as_f64().unwrap() as f32;
        let line = text
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("bounds {name}:")))
            .unwrap_or_else(|| panic!("no bounds for {name}: {text}"));
        assert!(line.contains(&format!("min ({min}, ")), "{line} vs {min}");
    }
    assert!(
        !text.contains(" 1 clips") && !text.contains("(1 primitives"),
        "{text}"
    );
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                found.push(p);
            }
        }
    }
    found
}

#[test]
fn completions_and_man_page_mention_every_subcommand() {
    let subcommands = [
        "bake",
        "vat",
        "inspect",
        "merge-report",
        "verify",
        "preview",
    ];
    for shell in ["bash", "zsh", "fish"] {
        let r = rigbake(&["completions", shell]);
        assert!(r.status.success(), "{shell}");
        let text = String::from_utf8_lossy(&r.stdout);
        for sub in subcommands {
            assert!(text.contains(sub), "{shell} completion lacks {sub}");
        }
    }
    let r = rigbake(&["completions", "bash"]);
    assert!(String::from_utf8_lossy(&r.stdout).contains("complete -F _rigbake"));
    let r = rigbake(&["man"]);
    assert!(r.status.success());
    let text = String::from_utf8_lossy(&r.stdout);
    assert!(
        text.starts_with(".ie") || text.contains(".TH rigbake"),
        "{text}"
    );
    for sub in subcommands {
        // A section per subcommand, with its own options.
        assert!(
            text.contains(&format!(".SH \"RIGBAKE {}\"", sub.to_uppercase())),
            "{sub}"
        );
    }
    assert!(
        text.contains("max\\-texture\\-size"),
        "bake's options are in the page"
    );
    // The NAME line names the tool once, and the page refers to no other
    // page that nothing installs (`rigbake-bake(1)`).
    let name = text
        .lines()
        .skip_while(|l| !l.starts_with(".SH NAME"))
        .nth(1)
        .unwrap_or_default();
    assert!(
        name.starts_with("rigbake \\- ") && !name.contains("rigbake:"),
        "{name}"
    );
    assert!(
        !text.contains("rigbake\\-bake(") && !text.contains("rigbake-bake("),
        "refers to pages that do not exist"
    );
    for sub in subcommands {
        assert!(
            text.contains(&format!("\\fBrigbake {sub}\\fR")),
            "{sub} in SUBCOMMANDS"
        );
    }
    // What the help says matches what the commands do.
    let help = String::from_utf8_lossy(&rigbake(&["--help"]).stdout).into_owned();
    let inspect = help
        .lines()
        .find(|l| l.trim_start().starts_with("inspect"))
        .unwrap();
    assert!(
        inspect.contains(".glb"),
        "inspect also takes models: {inspect}"
    );
    let view = String::from_utf8_lossy(&rigbake(&["view", "--help"]).stdout).into_owned();
    assert!(
        view.contains("recorded relative to the container"),
        "{view}"
    );
    let vat = String::from_utf8_lossy(&rigbake(&["vat", "--help"]).stdout).into_owned();
    assert!(
        vat.contains("--manifest"),
        "vat's --out help names the manifest's `out`: {vat}"
    );
    assert_eq!(rigbake(&["completions", "tcsh"]).status.code(), Some(2));
}

#[test]
fn a_bare_bake_uses_rigbake_toml_in_the_current_folder() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(tentacle(), dir.path().join("tentacle.glb")).unwrap();
    let bare = || {
        Command::new(env!("CARGO_BIN_EXE_rigbake"))
            .arg("bake")
            .current_dir(dir.path())
            .output()
            .unwrap()
    };
    // No manifest: a usage error that says what to give.
    let r = bare();
    assert_eq!(r.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&r.stderr).contains("rigbake.toml"));
    std::fs::write(
        dir.path().join("rigbake.toml"),
        "out = \"baked\"\n[[model]]\npath = \"tentacle.glb\"\n",
    )
    .unwrap();
    let r = bare();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert!(dir.path().join("baked/tentacle/tentacle.rigbake").is_file());
}

#[test]
fn verbose_and_quiet_mean_the_same_before_or_after_the_subcommand() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let run = |args: &[&std::ffi::OsStr]| {
        Command::new(env!("CARGO_BIN_EXE_rigbake"))
            .args(args)
            .output()
            .unwrap()
    };
    let model = tentacle();
    // -q before or after the subcommand: nothing but errors.
    for args in [
        [
            "-q".as_ref(),
            "bake".as_ref(),
            model.as_os_str(),
            "--out".as_ref(),
            out.as_os_str(),
        ],
        [
            "bake".as_ref(),
            model.as_os_str(),
            "--out".as_ref(),
            out.as_os_str(),
            "--quiet".as_ref(),
        ],
    ] {
        let r = run(&args);
        assert!(r.status.success());
        assert!(r.stderr.is_empty() && r.stdout.is_empty(), "{args:?}");
    }
    // -v lists the files a baked model wrote.
    let r = run(&[
        "bake".as_ref(),
        model.as_os_str(),
        "--out".as_ref(),
        out.as_os_str(),
        "--force".as_ref(),
        "-v".as_ref(),
    ]);
    let text = String::from_utf8_lossy(&r.stderr);
    assert!(
        text.contains("bones.skin0.exr (") && text.contains("tentacle.rigbake ("),
        "{text}"
    );
    // verify: a passing check prints nothing with -q, its table without.
    let container = out.join("tentacle/tentacle.rigbake");
    let verify = |flag: &str| {
        run(&[
            "verify".as_ref(),
            container.as_os_str(),
            "--source".as_ref(),
            model.as_os_str(),
            flag.as_ref(),
        ])
    };
    let r = verify("-q");
    assert!(r.status.success() && r.stdout.is_empty() && r.stderr.is_empty());
    let r = verify("--stride=1");
    assert!(String::from_utf8_lossy(&r.stdout).contains("PASS"));
    // -q and -v together are a usage error, before the subcommand, after
    // it, or one on each side.
    for args in [
        &["-q".as_ref(), "-v".as_ref(), "man".as_ref()][..],
        &[
            "bake".as_ref(),
            model.as_os_str(),
            "--out".as_ref(),
            out.as_os_str(),
            "-q".as_ref(),
            "-v".as_ref(),
        ],
        &[
            "-q".as_ref(),
            "bake".as_ref(),
            model.as_os_str(),
            "--out".as_ref(),
            out.as_os_str(),
            "-v".as_ref(),
        ],
    ] {
        assert_eq!(run(args).status.code(), Some(2), "{args:?}");
    }
    // Each subcommand offers the output flags it uses, with its own help:
    // none on man, completions, inspect and view; -q alone on verify and
    // merge-report.
    let help = |command: &str| {
        String::from_utf8_lossy(&run(&[command.as_ref(), "--help".as_ref()]).stdout).into_owned()
    };
    for command in ["man", "completions", "inspect", "view"] {
        let text = help(command);
        assert!(
            !text.contains("--quiet") && !text.contains("--verbose"),
            "{command}: {text}"
        );
    }
    for command in ["verify", "merge-report"] {
        let text = help(command);
        assert!(
            text.contains("--quiet") && !text.contains("--verbose"),
            "{command}: {text}"
        );
    }
    assert!(help("bake").contains("the files each baked model wrote"));
    assert!(help("preview").contains("the frames drawn per clip"));
    assert!(!help("merge-report").contains("frames"));
}

#[test]
fn preview_says_what_it_wrote_and_refuses_other_extensions() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let model = tentacle();
    let r = Command::new(env!("CARGO_BIN_EXE_rigbake"))
        .arg("bake")
        .arg(&model)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(r.status.success());
    let preview = |file: &str, extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_rigbake"))
            .arg("preview")
            .arg(out.join("tentacle/tentacle.rigbake"))
            .arg("--source")
            .arg(&model)
            .arg("--out")
            .arg(dir.path().join(file))
            .args(extra)
            .output()
            .unwrap()
    };
    let r = preview("sheet.jpg", &[]);
    assert_eq!(r.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&r.stderr).contains("sheet.jpg"));
    assert!(!dir.path().join("sheet.jpg").exists());
    let r = preview("sheet.PNG", &["--columns", "4", "--size", "32"]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let text = String::from_utf8_lossy(&r.stderr);
    // 4 columns of 32 px with 2 px gaps: 4*34+2 = 138 wide; 2 clips, each
    // row under a 14 px label band: 2*(32+14+2)+2 = 98 high.
    assert!(
        text.starts_with("wrote ") && text.contains("sheet.PNG (138 x 98, 2 clips x 4 columns"),
        "{text}"
    );
    let bytes = std::fs::read(dir.path().join("sheet.PNG")).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    // The label bands hold text: light pixels where the gap colour is
    // otherwise, in the band above each row of cells.
    let decoder = png::Decoder::new(std::io::Cursor::new(&bytes));
    let mut reader = decoder.read_info().unwrap();
    let mut rgb = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut rgb).unwrap();
    assert_eq!((info.width, info.height), (138, 98));
    let light_in_band = |top: usize| {
        (top..top + 14)
            .flat_map(|y| (0..138).map(move |x| (y * 138 + x) * 3))
            .filter(|&i| rgb[i] > 150)
            .count()
    };
    assert!(light_in_band(2) > 20 && light_in_band(2 + 48) > 20);
    let r = preview("quiet.png", &["-q"]);
    assert!(r.status.success() && r.stderr.is_empty());
}

#[test]
fn the_readme_names_every_file_its_first_command_writes() {
    let readme = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"),
    )
    .unwrap();
    let start = readme
        .find("## Getting started")
        .expect("a Getting started section");
    let section = &readme[start..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |e| e + 3)];
    // The first command, as the README gives it, run here on the binary.
    assert!(
        section
            .contains("cargo run --release -p rigbake-cli -- bake fixtures/tentacle.glb --out out"),
        "{section}"
    );
    assert!(
        section.contains("cargo install --path crates/cli --locked"),
        "how to install"
    );
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let r = Command::new(env!("CARGO_BIN_EXE_rigbake"))
        .arg("bake")
        .arg(tentacle())
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let written: Vec<String> = std::fs::read_dir(out.join("tentacle"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(written.len() >= 4, "{written:?}");
    for name in &written {
        assert!(
            section.contains(&format!("`{name}`")),
            "README's getting started omits `{name}`"
        );
    }
}

/// README's test command is the one `.ci/run` runs, and README names every
/// `RIGBAKE_REQUIRE_*` variable `.ci/run` sets, so "the same command CI
/// runs" stays true.
#[test]
fn readme_gives_the_test_command_ci_runs() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let ci = std::fs::read_to_string(root.join(".ci/run")).unwrap();
    let command = "cargo test --workspace --locked";
    assert!(
        readme.contains(&format!("```sh\n{command}\n```")),
        "README's test command"
    );
    let last_test = ci
        .lines()
        .rfind(|l| l.trim_start().starts_with("cargo test"))
        .expect(".ci/run runs cargo test");
    assert_eq!(last_test.trim(), command, ".ci/run's test command");
    for variable in ci
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| w.starts_with("RIGBAKE_REQUIRE_"))
    {
        let short = variable.trim_start_matches("RIGBAKE_REQUIRE");
        assert!(
            readme.contains(variable) || readme.contains(&format!("`{short}`")),
            "README does not name {variable}"
        );
    }
}

/// Every option declared with a flag (`rigbake::options`) is a flag of the
/// commands its declaration names and of no other, with the declaration's
/// help; the README's synopsis lists it.
#[test]
fn every_declared_flag_is_on_its_commands_and_in_the_readme() {
    use rigbake::options::{Options, VatOptions, help_text};
    let help = |command: &str| {
        let r = rigbake(&[command, "--help"]);
        assert!(r.status.success());
        String::from_utf8_lossy(&r.stdout).into_owned()
    };
    let (bake, vat) = (help("bake"), help("vat"));
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md")).unwrap();
    let mut flags = 0;
    for doc in [Options::OPTIONS, VatOptions::OPTIONS]
        .into_iter()
        .flat_map(|groups| groups.iter().flat_map(|g| g.iter()))
    {
        let Some(flag) = doc.flag else { continue };
        flags += 1;
        // `--help` puts each flag at the start of a line, its help below.
        let shown = |text: &str| {
            text.lines()
                .any(|l| l.trim_start().split([' ', ',']).next() == Some(&format!("--{flag}")))
        };
        assert!(shown(&bake), "bake --help lacks --{flag}");
        assert_eq!(
            shown(&vat),
            doc.commands.contains("vat"),
            "vat --help and --{flag} ({})",
            doc.commands
        );
        let words: String = help_text(doc.doc, doc.default)
            .split_whitespace()
            .take(4)
            .collect::<Vec<_>>()
            .join(" ");
        assert!(
            bake.split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .contains(&words),
            "--{flag}'s help starts `{words}`"
        );
        assert!(
            readme.contains(&format!("[--{flag}")),
            "README lacks --{flag}"
        );
    }
    assert!(flags >= 30, "{flags} flags");
}
