//! `rigbake view` in headless Chromium, and the three.js example.
//!
//! Fox and CesiumMan are baked (bone-matrix texture with weights, and VAT
//! with normals), and `rigbake view OUT --port 0` serves both bakes. For each
//! model and each playback path, one instance at a fixed frame is drawn as a
//! plain silhouette (`look=mask`) from the CPU preview's camera
//! (`crates/bake/src/preview`, `crates/preview`: orthographic, fitted to the
//! frame), screenshotted, and compared with the CPU preview's coverage of the
//! same frame: intersection over union at least 0.95. The examples/three
//! page (three.js's own GLTFLoader and EXRLoader) is compared the same way,
//! and drawn unmasked it shows the meshes' materials (coloured like the
//! page's drawing, not a flat grey).
//! A crowd drawn at two moments differs. The server answers only on
//! 127.0.0.1 and refuses traversal in every spelling. Bakes whose textures
//! are KTX2 or DDS (`--texture-container`) play in the page and (KTX2,
//! through three.js's KTX2Loader) in the example like the CPU preview, a
//! large KTX2 VAT (BrainStem) loads within 60 s showing its progress, and
//! what the page cannot play is refused with a message.
//!
//! Needs Chromium (`chromium` on PATH, or `RIGBAKE_CHROMIUM`) and Node with
//! tools/node's packages (playwright-core drives the browser). Without them
//! the browser tests are skipped with a message, unless
//! `RIGBAKE_REQUIRE_CHROMIUM` is set (`.ci/run` sets it): then they fail.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{IpAddr, Ipv4Addr, TcpStream, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::{bake, bright_mask as mask_of, iou, shared_models};
use rigbake::playback;
use rigbake::preview::scene::{self, PathChoice, Producer, Topology};
use rigbake::preview::{fit_camera, render};
use rigbake_preview::camera::{AZIMUTH_DEGREES, ELEVATION_DEGREES};

/// Pixels per side of the compared frames.
const SIZE: u32 = 256;

/// Acceptance bound of the issue. The page draws the same triangles as the
/// CPU preview from the same camera; they differ only in rasterisation rules
/// at edges (GPU vs fixed-point top-left) and in f32 vs f64 arithmetic, a
/// fraction of a pixel along the outline, which costs a few percent of IoU
/// on a 256-pixel frame at most.
const MIN_IOU: f64 = 0.95;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn required() -> bool {
    std::env::var_os("RIGBAKE_REQUIRE_CHROMIUM").is_some_and(|v| !v.is_empty() && v != "0")
}

/// Chromium and the node packages, or `None` with a notice (a panic when
/// `RIGBAKE_REQUIRE_CHROMIUM` is set).
fn browser(test: &str) -> Option<(PathBuf, PathBuf)> {
    let on_path = || {
        std::env::var_os("PATH").and_then(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join("chromium"))
                .find(|c| c.is_file())
        })
    };
    let chromium = std::env::var_os("RIGBAKE_CHROMIUM")
        .map(PathBuf::from)
        .or_else(on_path)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    let modules = repo().join("tools/node/node_modules");
    let node_ok = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let why = if !chromium.is_file() {
        format!(
            "Chromium not found at {} (Debian: apt-get install chromium; or set RIGBAKE_CHROMIUM)",
            chromium.display()
        )
    } else if !node_ok {
        "node is not on PATH".to_owned()
    } else if !modules.join("playwright-core").is_dir() || !modules.join("three").is_dir() {
        format!(
            "{} lacks playwright-core or three (run npm ci --prefix tools/node)",
            modules.display()
        )
    } else {
        return Some((chromium, modules));
    };
    if required() {
        panic!("{test}: {why}, and RIGBAKE_REQUIRE_CHROMIUM is set");
    }
    rigbake_fixtures::testkit::notice(&format!("SKIPPED {test}: {why}"));
    None
}

/// A child process killed when the test ends.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `program args` and returns it with the first `http://` URL it
/// prints on stdout.
fn serve(mut command: Command) -> (Running, String) {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start the server");
    let stdout = child.stdout.take().unwrap();
    let running = Running(child);
    let mut lines = BufReader::new(stdout).lines();
    let line = lines
        .next()
        .expect("the server printed nothing")
        .expect("read the server's output");
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("no URL in {line:?}"))
        .to_owned();
    (running, url)
}

/// The three.js example's server for one bake.
fn start_three(container: &Path) -> (Running, String) {
    let mut c = Command::new("node");
    c.arg(repo().join("examples/three/serve.mjs"))
        .arg(container)
        .args(["--port", "0", "--rigbake", env!("CARGO_BIN_EXE_rigbake")]);
    serve(c)
}

fn start_view(out: &Path) -> (Running, String) {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rigbake"));
    c.arg("view").arg(out).args(["--port", "0"]);
    serve(c)
}

/// One screenshot to take.
struct Shot {
    url: String,
    width: u32,
    height: u32,
    out: PathBuf,
}

/// The browser_shoot.mjs job of a shot.
fn shot_job(s: &Shot) -> serde_json::Value {
    serde_json::json!({
        "url": s.url, "width": s.width, "height": s.height, "out": s.out,
        "timeout_ms": 90000,
    })
}

/// A page that must refuse what it is given (browser_shoot.mjs
/// `expect_error`); what it said is written to `state`.
fn refusal_job(url: String, state: &Path) -> serde_json::Value {
    serde_json::json!({
        "url": url, "width": SIZE, "height": SIZE, "out": state.with_extension("png"),
        "timeout_ms": 60000, "expect_error": true, "state_out": state,
    })
}

/// What a page showed while it loaded (browser_shoot.mjs `state_out`).
fn page_state(file: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap()
}

/// The error a refusing page showed (from its `state_out` file), checked
/// to contain every one of `says`.
fn assert_refused(what: &str, state: &Path, says: &[&str]) {
    let state = page_state(state);
    let error = state["error"].as_str().unwrap_or("").to_owned();
    rigbake_fixtures::testkit::notice(&format!("{what}: refused with: {error}"));
    for s in says {
        assert!(
            error.contains(s),
            "{what}: the message lacks {s:?}: {error:?}"
        );
    }
}

/// Takes every shot in one headless Chromium session.
fn shoot(chromium: &Path, modules: &Path, shots: &[Shot], dir: &Path) {
    run_jobs(chromium, modules, shots.iter().map(shot_job).collect(), dir);
}

/// Runs browser_shoot.mjs jobs in one headless Chromium session.
fn run_jobs(chromium: &Path, modules: &Path, jobs: Vec<serde_json::Value>, dir: &Path) {
    let spec = serde_json::json!({ "chromium": chromium, "node_modules": modules, "jobs": jobs });
    let file = dir.join("shots.json");
    std::fs::write(&file, serde_json::to_vec(&spec).unwrap()).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser_shoot.mjs");
    let out = Command::new("node")
        .arg(script)
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "headless Chromium failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn pixels(png_file: &Path) -> Vec<u8> {
    let decoder = png::Decoder::new(BufReader::new(std::fs::File::open(png_file).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    reader.next_frame(&mut buf).unwrap();
    buf
}

/// A frame of a bake as the CPU preview draws it: its coverage and the URL
/// parameters of the same camera.
struct Reference {
    covered: Vec<bool>,
    camera_query: String,
    clip: String,
    frame: u32,
}

fn reference(file: &Path, model: &Path, path: PathChoice, clip: usize) -> Reference {
    let loaded = playback::load(file, Some(model), playback::Paths::All).unwrap();
    let clip = clip.min(loaded.clips.len() - 1);
    let frame = loaded.clips[clip].info.frames / 3;
    let topology = Topology::new(&loaded, path);
    let meshes = scene::pose(&loaded, &topology, path, Producer::Bake, clip, frame);
    let camera = fit_camera(std::slice::from_ref(&meshes), SIZE);
    let picture = render(&meshes, &topology, &camera);
    let c = camera.center;
    Reference {
        covered: picture.covered,
        camera_query: format!(
            "cam=ortho&az={AZIMUTH_DEGREES}&el={ELEVATION_DEGREES}&cx={}&cy={}&cz={}&half={}",
            c.x, c.y, c.z, camera.half_extent
        ),
        clip: loaded.clips[clip].name.clone(),
        frame,
    }
}

fn enc(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Bakes `names` (from the shared models) into `out`, each source copied
/// beside its container. The pages stand bakes of format 1.11 on their
/// recorded placements and do not read it
/// (`the_three_example_stands_a_bake_without_its_source`); it is there as
/// a user would have it.
fn bake_models(models: &Path, names: &[&str], out: &Path) -> Vec<(String, PathBuf, PathBuf)> {
    let files: Vec<PathBuf> = names
        .iter()
        .map(|n| models.join("khronos").join(format!("{n}.glb")))
        .collect();
    let o = bake(&files, out, &["--vat", "--normals"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    names
        .iter()
        .zip(files)
        .map(|(n, f)| {
            let dir = out.join(n);
            std::fs::copy(&f, dir.join(format!("{n}.glb"))).unwrap();
            (n.to_string(), dir.join(format!("{n}.rigbake")), f)
        })
        .collect()
}

#[test]
fn view_plays_fox_and_cesium_man_like_the_cpu_preview() {
    let test = "view_plays_fox_and_cesium_man_like_the_cpu_preview";
    let Some((chromium, modules)) = browser(test) else {
        return;
    };
    let Some(models) = shared_models(test) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let bakes = bake_models(&models, &["Fox", "CesiumMan"], &out);
    let (_server, url) = start_view(&out);
    let three: Vec<(Running, String)> = bakes.iter().map(|(_, f, _)| start_three(f)).collect();

    let mut shots = Vec::new();
    let mut expected = Vec::new();
    // Pages whose loading state is kept (browser_shoot.mjs `state_out`):
    // the shot's index, the state file, the path drawn.
    let mut states: Vec<(usize, PathBuf, &str)> = Vec::new();
    // Without the row flip the three.js example must go wrong.
    let mut literal = Vec::new();
    for ((name, file, model), (_, three_url)) in bakes.iter().zip(&three) {
        for (path, key) in [(PathChoice::Bones, "bones"), (PathChoice::Vat, "vat")] {
            let r = reference(file, model, path, 1);
            let query = format!(
                "path={key}&clip={}&frame={}&look=mask&{}",
                enc(&r.clip),
                r.frame,
                r.camera_query
            );
            for (flip, list) in [("1", &mut expected), ("0", &mut literal)] {
                let shot = tmp
                    .path()
                    .join(format!("{name}-{key}-three-flip{flip}.png"));
                shots.push(Shot {
                    url: format!("{three_url}?{query}&flip={flip}"),
                    width: SIZE,
                    height: SIZE,
                    out: shot.clone(),
                });
                list.push((
                    format!("three.js {name} {key} {} frame {}", r.clip, r.frame),
                    shot,
                    r.covered.clone(),
                ));
            }
            let shot = tmp.path().join(format!("{name}-{key}.png"));
            states.push((shots.len(), shot.with_extension("json"), key));
            shots.push(Shot {
                url: format!(
                    "{url}?bake={}&path={key}&clip={}&frame={}&look=mask&hud=0&{}",
                    enc(&format!("{name}/{name}.rigbake")),
                    enc(&r.clip),
                    r.frame,
                    r.camera_query
                ),
                width: SIZE,
                height: SIZE,
                out: shot.clone(),
            });
            expected.push((
                format!("{name} {key} {} frame {}", r.clip, r.frame),
                shot,
                r.covered,
            ));
        }
        // The crowd at two moments.
        for t in ["0.25", "0.75"] {
            shots.push(Shot {
                url: format!(
                    "{url}?bake={}&path=vat&n=40&time={t}&hud=0",
                    enc(&format!("{name}/{name}.rigbake"))
                ),
                width: 320,
                height: 240,
                out: tmp.path().join(format!("{name}-crowd-{t}.png")),
            });
        }
    }
    // 16-bit PNG VAT textures (bounds-normalised positions, octahedral
    // normals; deflated, and in stored blocks with `--png-compression
    // none`) and half-float ZIP EXRs, decoded by the page too; a VAT
    // folded into 4 pages per stream (252 x 208 texels, 16 frames each),
    // bound as texture arrays; and half-float qts bone textures (rotation
    // quaternion, translation and scale per joint), in the page and in the
    // three.js example.
    let mut others = Vec::new();
    for (dir, flags) in [
        ("png16", &["--vat", "--normals", "--format", "png16"][..]),
        (
            "png16-stored",
            &[
                "--vat",
                "--normals",
                "--format",
                "png16",
                "--png-compression",
                "none",
            ][..],
        ),
        ("zip", &["--vat", "--normals", "--zip"][..]),
        (
            "paged",
            &["--vat", "--normals", "--max-texture-size", "256"][..],
        ),
        ("qts", &["--layout", "qts", "--precision", "f16"][..]),
    ] {
        let out = tmp.path().join(dir);
        let model = models.join("khronos/CesiumMan.glb");
        let o = bake(std::slice::from_ref(&model), &out, flags);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let file = out.join("CesiumMan/CesiumMan.rigbake");
        if dir == "paged" {
            let page3 = out.join("CesiumMan/CesiumMan.vat.positions.page3.exr");
            assert!(page3.is_file(), "the paged case has no fourth page");
        }
        std::fs::copy(&model, out.join("CesiumMan/CesiumMan.glb")).unwrap();
        let (choice, key) = match dir {
            "qts" => (PathChoice::Bones, "bones"),
            _ => (PathChoice::Vat, "vat"),
        };
        let r = reference(&file, &model, choice, 0);
        let (server, dir_url) = start_view(&out);
        others.push(server);
        let query = format!(
            "path={key}&clip={}&frame={}&look=mask&{}",
            enc(&r.clip),
            r.frame,
            r.camera_query
        );
        if dir == "qts" {
            let (three, three_url) = start_three(&file);
            others.push(three);
            let shot = tmp.path().join("CesiumMan-qts-three.png");
            shots.push(Shot {
                url: format!("{three_url}?{query}&flip=1"),
                width: SIZE,
                height: SIZE,
                out: shot.clone(),
            });
            expected.push((
                format!("three.js CesiumMan bones qts {} frame {}", r.clip, r.frame),
                shot,
                r.covered.clone(),
            ));
        }
        let shot = tmp.path().join(format!("CesiumMan-{dir}.png"));
        if !dir.starts_with("png16") && dir != "qts" {
            states.push((shots.len(), shot.with_extension("json"), "vat"));
        }
        shots.push(Shot {
            url: format!("{dir_url}?{query}&hud=0"),
            width: SIZE,
            height: SIZE,
            out: shot.clone(),
        });
        expected.push((
            format!("CesiumMan {key} {dir} {} frame {}", r.clip, r.frame),
            shot,
            r.covered,
        ));
    }
    let mut jobs: Vec<serde_json::Value> = shots.iter().map(shot_job).collect();
    for (i, state, _) in &states {
        jobs[*i]["state_out"] = serde_json::json!(state);
    }
    run_jobs(&chromium, &modules, jobs, tmp.path());

    // EXR textures decode in the page's decode worker, not on its main
    // thread; the bone-matrix EXRs (32-bit floats) go to the GPU as RGBA32F,
    // the VAT EXRs (half floats) stay halves: RGBA16F.
    for (_, file, key) in &states {
        let state = page_state(file);
        let what = file.file_stem().unwrap().to_string_lossy();
        let decoded = &state["decoded"];
        rigbake_fixtures::testkit::notice(&format!(
            "view {what}: decoded {decoded}, uploads {}",
            state["uploads"]
        ));
        assert!(
            decoded["worker"].as_u64().unwrap_or(0) > 0,
            "{what}: no texture was decoded in the worker: {decoded} ({})",
            state["workerError"]
        );
        assert_eq!(
            decoded["main"].as_u64(),
            Some(0),
            "{what}: a texture was decoded on the main thread"
        );
        let uploads = state["uploads"].as_array().unwrap();
        let exr: Vec<_> = uploads
            .iter()
            .filter(|u| u["name"].as_str().unwrap_or("").ends_with(".exr"))
            .collect();
        assert!(!exr.is_empty(), "{what}: no EXR upload: {uploads:?}");
        let (format, internal) = if *key == "vat" {
            ("f16", "RGBA16F")
        } else {
            ("f32", "RGBA32F")
        };
        for u in exr {
            assert_eq!(u["format"], format, "{what}: {u}");
            assert_eq!(u["internal"], internal, "{what}: {u}");
        }
        let shown: Vec<String> = serde_json::from_value(state["shown"].clone()).unwrap();
        assert!(
            shown
                .iter()
                .any(|t| t.starts_with("decoding ") && t.contains(" in a worker")),
            "{what}: no decoding line: {shown:?}"
        );
        assert!(
            shown
                .iter()
                .any(|t| t.starts_with("uploading ") && t.contains(&format!("as {internal})"))),
            "{what}: no upload line naming {internal}: {shown:?}"
        );
    }

    for (what, shot, covered) in &expected {
        let (w, h, mask) = mask_of(shot);
        assert_eq!((w, h), (SIZE, SIZE), "{what}: screenshot size");
        let (score, area) = iou(&mask, covered);
        rigbake_fixtures::testkit::notice(&format!(
            "view {what}: IoU {score:.4} over {area} pixels"
        ));
        assert!(area > 500, "{what}: almost nothing drawn ({area} pixels)");
        assert!(score >= MIN_IOU, "{what}: IoU {score:.4} < {MIN_IOU}");
    }
    // The literal recipe plays the wrong rows: mirrored frames (Fox: the
    // 0.30-of-its-size offset of issue 17) and even garbage matrices.
    for (what, shot, covered) in &literal {
        let (_, _, mask) = mask_of(shot);
        let (score, _) = iou(&mask, covered);
        rigbake_fixtures::testkit::notice(&format!("{what} without the flip: IoU {score:.4}"));
        assert!(
            score < 0.9,
            "{what}: the unflipped rows match too ({score:.4}): the test cannot tell"
        );
    }
    for (name, _, _) in &bakes {
        let a = pixels(&tmp.path().join(format!("{name}-crowd-0.25.png")));
        let b = pixels(&tmp.path().join(format!("{name}-crowd-0.75.png")));
        let changed = a.chunks(4).zip(b.chunks(4)).filter(|(x, y)| x != y).count();
        assert!(
            changed > 200,
            "{name}: the crowd looks the same at 0.25 s and 0.75 s ({changed} pixels differ)"
        );
    }
}

/// Sends `request` raw (so no client normalises the path) and returns the
/// status code and body.
fn raw_get(addr: &str, request: &str) -> (u16, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    let mut bytes = Vec::new();
    let _ = s.read_to_end(&mut bytes);
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    (status, body)
}

/// `127.0.0.1:PORT` of a server URL `http://127.0.0.1:PORT/`.
fn addr_of(url: &str) -> String {
    url.trim_start_matches("http://")
        .trim_end_matches('/')
        .to_owned()
}

/// The file names `/bakes.json` lists for bake 0.
fn first_bake_files(addr: &str) -> Vec<String> {
    let (status, index) = get(addr, "/bakes.json");
    assert_eq!(status, 200);
    let index: serde_json::Value = serde_json::from_str(&index).unwrap();
    index["bakes"][0]["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap().to_owned())
        .collect()
}

fn get(addr: &str, path: &str) -> (u16, String) {
    raw_get(
        addr,
        &format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"),
    )
}

/// Whether `port` has a listening TCP socket on an address other than
/// 127.0.0.1, from /proc/net/tcp and tcp6 (Linux).
fn listens_beyond_loopback(port: u16) -> Option<bool> {
    let mut any = false;
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            let (Some(local), Some(state)) = (f.get(1), f.get(3)) else {
                continue;
            };
            let Some((ip, p)) = local.split_once(':') else {
                continue;
            };
            if *state == "0A" && u16::from_str_radix(p, 16) == Ok(port) {
                // 127.0.0.1 in /proc's little-endian hex.
                if ip != "0100007F" {
                    return Some(true);
                }
                any = true;
            }
        }
    }
    any.then_some(false)
}

#[test]
fn view_serves_only_the_bake_and_only_on_loopback() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/tentacle.glb");
    let o = bake(&[model], &out, &["--vat"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let dir = out.join("tentacle");
    // Files in and beside the bake that are not the bake's own.
    std::fs::write(dir.join("secret.txt"), "SECRET-IN-FOLDER").unwrap();
    std::fs::write(tmp.path().join("outside.txt"), "SECRET-OUTSIDE").unwrap();
    let (_server, url) = start_view(&out);
    let addr = addr_of(&url);
    assert!(addr.starts_with("127.0.0.1:"), "{url}");
    let port: u16 = addr.rsplit(':').next().unwrap().parse().unwrap();

    // What it serves.
    let files = first_bake_files(&addr);
    assert!(files.contains(&"tentacle.rigbake".to_owned()), "{files:?}");
    assert!(!files.contains(&"secret.txt".to_owned()));
    let (status, body) = get(&addr, "/bake/0/tentacle.rigbake");
    assert_eq!(status, 200);
    assert!(!body.is_empty());
    assert_eq!(get(&addr, "/").0, 200);
    assert_eq!(get(&addr, "/app/viewer.js").0, 200);

    // What it refuses.
    for path in [
        "/bake/0/secret.txt",
        "/bake/0/../outside.txt",
        "/bake/0/../../outside.txt",
        "/bake/0/%2e%2e/%2e%2e/outside.txt",
        "/bake/0/%2E%2E%2F%2E%2E%2Foutside.txt",
        "/bake/0/..%2f..%2foutside.txt",
        "/bake/0/..%5c..%5coutside.txt",
        "/bake/0/%252e%252e/%252e%252e/outside.txt",
        "/bake/0/%c0%ae%c0%ae/outside.txt",
        "/bake/0/./tentacle.rigbake",
        "/bake/0/",
        "/bake/0",
        "/bake/1/tentacle.rigbake",
        "/bake/-1/tentacle.rigbake",
        "/../outside.txt",
        "/app/../bakes.json",
        "//etc/passwd",
        "/etc/passwd",
        "/bake/0//etc/passwd",
        "/bake/0/tentacle.rigbake%00.txt",
    ] {
        let (status, body) = get(&addr, path);
        assert!(
            (400..500).contains(&status),
            "{path}: status {status}, body {body:?}"
        );
        assert!(
            !body.contains("SECRET") && !body.contains("root:"),
            "{path} leaked {body:?}"
        );
    }
    // Absolute-form targets and other methods.
    let (status, _) = raw_get(
        &addr,
        &format!(
            "GET http://{addr}/../outside.txt HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
        ),
    );
    assert!((400..500).contains(&status), "absolute form: {status}");
    let (status, _) = raw_get(
        &addr,
        &format!(
            "PUT /bake/0/x HTTP/1.1\r\nHost: {addr}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        ),
    );
    assert_eq!(status, 405);
    // A page on another origin reaching the server by DNS rebinding.
    let (status, _) = raw_get(
        &addr,
        "GET /bakes.json HTTP/1.1\r\nHost: attacker.example:80\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(status, 403);
    // A Host the server cannot read is refused, never let through: none on
    // HTTP/1.1, two, or one that is not UTF-8.
    for request in [
        "GET /bakes.json HTTP/1.1\r\nConnection: close\r\n\r\n".to_owned(),
        format!("GET /bakes.json HTTP/1.1\r\nHost: {addr}\r\nHost: attacker.example\r\n\r\n"),
    ] {
        assert_eq!(raw_get(&addr, &request).0, 400, "{request:?}");
    }
    let mut s = TcpStream::connect(&addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(b"GET /bakes.json HTTP/1.1\r\nHost: 127.0.0.1\xff\r\n\r\n")
        .unwrap();
    let mut answer = Vec::new();
    let _ = s.read_to_end(&mut answer);
    assert!(answer.starts_with(b"HTTP/1.1 400"), "a non-UTF-8 Host");
    // A file replaced by a link after the server started is not followed.
    #[cfg(unix)]
    {
        let exr = files.iter().find(|f| f.ends_with(".exr")).unwrap();
        std::fs::remove_file(dir.join(exr)).unwrap();
        std::os::unix::fs::symlink(tmp.path().join("outside.txt"), dir.join(exr)).unwrap();
        let (status, body) = get(&addr, &format!("/bake/0/{exr}"));
        assert_eq!(status, 404, "{body}");
        assert!(!body.contains("SECRET"));
    }

    // Loopback only: the listening socket is 127.0.0.1's, and the machine's
    // other address (if it has one) does not answer.
    if let Some(beyond) = listens_beyond_loopback(port) {
        assert!(!beyond, "port {port} listens beyond 127.0.0.1");
    }
    let other = UdpSocket::bind((Ipv4Addr::UNSPECIFIED, 0))
        .and_then(|s| s.connect((Ipv4Addr::new(10, 255, 255, 255), 9)).map(|_| s))
        .and_then(|s| s.local_addr())
        .map(|a| a.ip());
    if let Ok(ip @ IpAddr::V4(v4)) = other
        && !v4.is_loopback()
        && !v4.is_unspecified()
    {
        let reached = TcpStream::connect_timeout(&(ip, port).into(), Duration::from_secs(2));
        assert!(reached.is_err(), "{ip}:{port} answered");
    }
}

#[test]
fn view_refuses_unusable_targets_with_usage_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let run = |args: &[&std::ffi::OsStr]| {
        Command::new(env!("CARGO_BIN_EXE_rigbake"))
            .arg("view")
            .args(args)
            .args(["--port", "0"])
            .output()
            .unwrap()
    };
    let missing = tmp.path().join("missing");
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let not_a_bake = tmp.path().join("x.txt");
    std::fs::write(&not_a_bake, "x").unwrap();
    for (target, says) in [
        (&missing, "missing"),
        (&empty, "no .rigbake containers"),
        (&not_a_bake, "not a .rigbake container"),
    ] {
        let o = run(&[target.as_os_str()]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{}: {err}", target.display());
        assert!(err.contains(says), "{}: {err}", target.display());
        assert!(
            o.stdout.is_empty(),
            "printed a URL for {}",
            target.display()
        );
    }
    // A damaged container is a failure (1) naming the file.
    let bad = tmp.path().join("bad.rigbake");
    std::fs::write(&bad, b"not a container at all").unwrap();
    let o = run(&[bad.as_os_str()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("bad.rigbake"), "{err}");
}

/// Whether `node` runs; when it does not, a notice (a panic when
/// `RIGBAKE_REQUIRE_CHROMIUM` is set) and `false`.
fn node_available(test: &str) -> bool {
    let ok = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        if required() {
            panic!("{test}: node is not on PATH, and RIGBAKE_REQUIRE_CHROMIUM is set");
        }
        rigbake_fixtures::testkit::notice(&format!("SKIPPED {test}: node is not on PATH"));
    }
    ok
}

/// The page's animation state (crates/view/assets/state.js) is a port of
/// `rigbake_core::runtime::state`: the same texture rows and fractions for
/// loops, holds, even-spread clips and crossfades, run in Node.
#[test]
fn the_pages_animation_state_matches_the_runtime_reference() {
    use rigbake_core::runtime::{AnimationState, ClipInfo, PlayMode};
    use rigbake_core::timeline::SampleRule;
    if !node_available("the_pages_animation_state_matches_the_runtime_reference") {
        return;
    }
    let clips = [
        (
            0u32,
            38u32,
            30.0f64,
            37.0 / 30.0 + 0.02,
            true,
            SampleRule::FixedRate,
        ),
        (38, 301, 30.0, 10.0, false, SampleRule::FixedRate),
        (339, 44, 24.0, 1.5, true, SampleRule::EvenSpread),
        (383, 1, 30.0, 0.0, true, SampleRule::FixedRate),
    ];
    let times = [
        -0.5, 0.0, 0.01, 0.5, 1.0, 1.2333, 1.25, 1.26, 2.9, 10.0, 11.0, 123.456,
    ];
    let state = repo().join("crates/view/assets/state.js");
    let mut script = format!(
        "import {{ ClipInfo, AnimationState }} from {:?};\nconst out = [];\n",
        url_of(&state)
    );
    let mut expected = Vec::new();
    let info = |c: &(u32, u32, f64, f64, bool, SampleRule)| ClipInfo {
        start_row: c.0,
        frames: c.1,
        fps: c.2,
        duration: c.3,
        looping: c.4,
        rule: c.5,
    };
    for (i, c) in clips.iter().enumerate() {
        let rule = if c.5 == SampleRule::EvenSpread {
            "even_spread"
        } else {
            "fixed_rate"
        };
        script += &format!(
            "const c{i} = new ClipInfo({{ name: 'c{i}', start_row: {}, frames: {}, fps: {}, duration: {}, looping: {} }}, '{rule}');\n",
            c.0, c.1, c.2, c.3, c.4
        );
        for t in times {
            for (mode, m) in [("loop", PlayMode::Loop), ("once", PlayMode::Once)] {
                script += &format!(
                    "{{ const s = c{i}.sample({t}, '{mode}'); out.push([s.row, s.nextRow, s.fraction]); }}\n"
                );
                let s = info(c).sample(t, m);
                expected.push(vec![
                    f64::from(s.row),
                    f64::from(s.next_row),
                    f64::from(s.fraction),
                ]);
            }
        }
    }
    // A crossfade from clip 0 to clip 1 over 0.4 s, sampled as it runs.
    let mut st = AnimationState::new();
    st.play(info(&clips[0]), PlayMode::Loop, 1.0);
    st.update(1.1);
    st.crossfade(info(&clips[1]), PlayMode::Once, 1.0, 0.4);
    script += "const st = new AnimationState(); st.play(c0, 'loop', 1); st.update(1.1); st.crossfade(c1, 'once', 1, 0.4);\nconst buf = new Float32Array(16);\n";
    for _ in 0..6 {
        let g = st.update(0.1);
        expected.push(g.rows.iter().flatten().map(|v| f64::from(*v)).collect());
        script += "st.update(0.1); st.gpuState(buf, 0); out.push(Array.from(buf));\n";
    }
    // Rows are exact; fractions and weights are f32 in both.
    assert_node_output(script, &expected);
}

/// Runs `script` (an ES module whose array `out` holds the page's numbers)
/// in Node and checks each number against `expected` within 1e-6.
fn assert_node_output(mut script: String, expected: &[Vec<f64>]) {
    script += "console.log(JSON.stringify(out));\n";
    let file = tempfile::Builder::new().suffix(".mjs").tempfile().unwrap();
    std::fs::write(file.path(), script).unwrap();
    let o = Command::new("node").arg(file.path()).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let got: Vec<Vec<f64>> = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(got.len(), expected.len());
    for (k, (g, e)) in got.iter().zip(expected).enumerate() {
        assert_eq!(g.len(), e.len(), "case {k}");
        for (a, b) in g.iter().zip(e) {
            assert!((a - b).abs() <= 1e-6, "case {k}: page {g:?}, runtime {e:?}");
        }
    }
}

fn url_of(path: &Path) -> String {
    format!("file://{}", path.canonicalize().unwrap().display())
}

/// The page's root-motion port (`ClipInfo.motionAt` in state.js) gives the
/// same motion as `rigbake_core::runtime::root_motion::RootMotionTrack::at`
/// inside a clip, across a loop's wrap and held after a clip played once;
/// its `MotionTracker` adds a loop's `end` motion once per completed cycle.
#[test]
fn the_pages_root_motion_matches_the_runtime_reference() {
    use rigbake_core::runtime::root_motion::RootMotionTrack;
    use rigbake_core::runtime::{ClipInfo, PlayMode};
    use rigbake_core::timeline::SampleRule;
    if !node_available("the_pages_root_motion_matches_the_runtime_reference") {
        return;
    }
    // 4 frames at 2 fps over 1.8 s (a 0.3 s wrap), turning as it goes.
    let frames: Vec<[f64; 4]> = (0..4)
        .map(|i| {
            let i = f64::from(i);
            [0.3 * i, 0.0, 0.5 * i, 0.2 * i]
        })
        .collect();
    let end = [0.54, 0.0, 0.9, 0.36];
    let info = ClipInfo {
        start_row: 7,
        frames: 4,
        fps: 2.0,
        duration: 1.8,
        looping: true,
        rule: SampleRule::FixedRate,
    };
    let track = RootMotionTrack {
        frames: &frames,
        end,
    };
    let times = [0.0, 0.25, 0.5, 1.2, 1.5, 1.65, 1.79, 1.9, 2.5];
    let state = repo().join("crates/view/assets/state.js");
    let mut script = format!(
        "import {{ ClipInfo, AnimationState, MotionTracker }} from {:?};\nconst out = [];\n\
         const c = new ClipInfo({{ name: 'c', start_row: 7, frames: 4, fps: 2, duration: 1.8, looping: true }}, 'fixed_rate', \
         {{ mode: 'extract_yaw', track: {}, end: {} }});\n",
        url_of(&state),
        serde_json::to_string(&frames).unwrap(),
        serde_json::to_string(&end).unwrap()
    );
    let mut expected: Vec<Vec<f64>> = Vec::new();
    for t in times {
        for (mode, m) in [("loop", PlayMode::Loop), ("once", PlayMode::Once)] {
            script += &format!("out.push(c.motionAt({t}, '{mode}'));\n");
            expected.push(track.at(&info, &info.sample(t, m)).to_vec());
        }
    }
    // Played in a loop for 2.0 s in 0.5 s steps: one wrap (at 1.8 s), so
    // at 2.0 s (0.2 s into the second cycle) the instance is at end ∘ M(0.2).
    script += "const st = new AnimationState(); st.play(c, 'loop', 1); const tr = new MotionTracker();\n\
               for (let k = 0; k < 4; k++) { st.update(0.5); tr.at(st); }\n\
               out.push(tr.at(st));\n";
    let inner = track.at(&info, &info.sample(0.2, PlayMode::Loop));
    let (c, s) = (end[3].cos(), end[3].sin());
    expected.push(vec![
        end[0] + c * inner[0] + s * inner[2],
        end[2] - s * inner[0] + c * inner[2],
        end[3] + inner[3],
    ]);
    // Fractions are f32 in both; the motions are f64.
    assert_node_output(script, &expected);
}

/// The horizontal centre of a mask's covered pixels, in pixels.
fn centre_x(mask: &[bool], width: u32) -> f64 {
    let (mut sum, mut n) = (0.0, 0usize);
    for (i, _) in mask.iter().enumerate().filter(|(_, c)| **c) {
        sum += (i % width as usize) as f64;
        n += 1;
    }
    assert!(n > 0, "nothing drawn");
    sum / n as f64
}

/// `rigbake view` moves an instance of a clip baked in place by its root
/// motion: Knight's `Dodge_Left` baked with `--root-motion extract`, seen
/// from the front with an orthographic camera, is drawn shifted along +X by
/// the recorded track at that time (and not at all with `motion=0`).
#[test]
fn view_moves_instances_by_their_root_motion() {
    let test = "view_moves_instances_by_their_root_motion";
    let Some((chromium, modules)) = browser(test) else {
        return;
    };
    let Some(models) = shared_models(test) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let knight = models.join("kaykit/Knight.glb");
    let o = bake(
        &[knight],
        &out,
        &["--vat", "--clip", "Dodge_Left", "--root-motion", "extract"],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let sidecar: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("Knight/Knight.rigbake.json")).unwrap())
            .unwrap();
    // Frame 9 of 30 fps sits at 0.3 s exactly.
    let moved = sidecar["root_motion"]["clips"][0]["track"][9][0]
        .as_f64()
        .unwrap();
    assert!(moved > 0.2, "Dodge_Left has travelled {moved} by 0.3 s");
    let (_server, url) = start_view(&out);
    let half = 1.5;
    let size = 256u32;
    let mut shots = Vec::new();
    // Shots 0 to 2 play to 0.3 s; 3 and 4 show frame 9 (0.3 s), which is
    // drawn in place like `rigbake preview` unless motion=1.
    for (path, when, motion) in [
        ("bones", "time=0.3", "&motion=1"),
        ("bones", "time=0.3", "&motion=0"),
        ("vat", "time=0.3", "&motion=1"),
        ("vat", "frame=9", ""),
        ("vat", "frame=9", "&motion=1"),
    ] {
        shots.push(Shot {
            url: format!(
                "{url}?path={path}&clip=Dodge_Left&{when}&n=1&look=mask&grid=0&hud=0{motion}&cam=ortho&az=0&el=0&cx=0&cy=0.9&cz=0&half={half}"
            ),
            width: size,
            height: size,
            out: tmp.path().join(format!("{path}-{when}{motion}.png")),
        });
    }
    shoot(&chromium, &modules, &shots, tmp.path());
    let x: Vec<f64> = shots
        .iter()
        .map(|s| {
            let (w, _, mask) = mask_of(&s.out);
            centre_x(&mask, w)
        })
        .collect();
    // One model unit is size / (2 half) pixels; screen right is +X.
    let want = moved * f64::from(size) / (2.0 * half);
    assert!(
        (x[3] - x[1]).abs() < 1.0,
        "frame=9 is drawn in place: {:.2} px from the motion=0 shot",
        x[3] - x[1]
    );
    for (k, got) in [x[0] - x[1], x[2] - x[1], x[4] - x[1]]
        .into_iter()
        .enumerate()
    {
        // The silhouette's centre moves with the model to within a pixel or
        // two of rasterisation.
        assert!(
            (got - want).abs() < 2.0,
            "shot {k}: the instance moved {got:.2} px, the track says {want:.2} px"
        );
    }
}

/// `lod=N` draws level N of every LOD group (docs/viewer.md): the
/// `tentacle_lods` fixture (levels of 204, 108 and 50 vertices, its levels
/// in `MSFT_lod`) at level 0 matches the CPU reference; at level 2 the
/// bone path (the level's own weights mesh, `lod2.weights.glb`, on the
/// shared bone texture) and the VAT path (the level's own columns of the
/// atlas) draw the same silhouette, and a different picture from level 0.
#[test]
fn view_draws_the_lod_level_asked_for() {
    let test = "view_draws_the_lod_level_asked_for";
    let Some((chromium, modules)) = browser(test) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let model = rigbake_fixtures::fixture("tentacle_lods.glb");
    let o = bake(std::slice::from_ref(&model), &out, &["--vat", "--normals"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let file = out.join("tentacle_lods/tentacle_lods.rigbake");
    std::fs::copy(&model, out.join("tentacle_lods/tentacle_lods.glb")).unwrap();
    let r = reference(&file, &model, PathChoice::Bones, 0);
    let (_server, url) = start_view(&out);
    let (_three_server, three_url) = start_three(&file);
    let shot = |path: &str, lod: u32, look: &str| Shot {
        url: format!(
            "{url}?path={path}&lod={lod}&clip={}&frame={}&look={look}&grid=0&hud=0&{}",
            enc(&r.clip),
            r.frame,
            r.camera_query
        ),
        width: SIZE,
        height: SIZE,
        out: tmp.path().join(format!("{path}-lod{lod}-{look}.png")),
    };
    let shots = [
        shot("bones", 0, "mask"),
        shot("vat", 2, "mask"),
        shot("bones", 2, "mask"),
        shot("bones", 0, "textured"),
        shot("bones", 2, "textured"),
        // A level past the last draws the last.
        shot("bones", 9, "textured"),
    ];
    // The three.js example draws the level asked for too (the bone path
    // from the level's own weights mesh).
    let three: Vec<Shot> = [("bones", 0), ("bones", 2), ("vat", 2)]
        .into_iter()
        .map(|(path, lod)| Shot {
            url: format!(
                "{three_url}?path={path}&lod={lod}&clip={}&frame={}&look=mask&{}",
                enc(&r.clip),
                r.frame,
                r.camera_query
            ),
            width: SIZE,
            height: SIZE,
            out: tmp.path().join(format!("three-{path}-lod{lod}.png")),
        })
        .collect();
    let all: Vec<&Shot> = shots.iter().chain(&three).collect();
    run_jobs(
        &chromium,
        &modules,
        all.into_iter().map(shot_job).collect(),
        tmp.path(),
    );
    let (_, _, level0) = mask_of(&shots[0].out);
    let (score, area) = iou(&level0, &r.covered);
    assert!(area > 500, "level 0: almost nothing drawn ({area} pixels)");
    assert!(
        score >= MIN_IOU,
        "level 0 against the CPU reference: IoU {score:.4}"
    );
    let (_, _, vat2) = mask_of(&shots[1].out);
    let (_, _, bones2) = mask_of(&shots[2].out);
    let (score, area) = iou(&bones2, &vat2);
    rigbake_fixtures::testkit::notice(&format!(
        "view tentacle_lods level 2, bones against VAT: IoU {score:.4} over {area} pixels"
    ));
    assert!(
        area > 500 && score >= MIN_IOU,
        "level 2: bones and VAT differ: IoU {score:.4}"
    );
    let (a, b, last) = (
        pixels(&shots[3].out),
        pixels(&shots[4].out),
        pixels(&shots[5].out),
    );
    let changed = a.chunks(4).zip(b.chunks(4)).filter(|(x, y)| x != y).count();
    rigbake_fixtures::testkit::notice(&format!(
        "view tentacle_lods level 0 against level 2: {changed} pixels differ"
    ));
    assert!(
        changed > 300,
        "level 2 looks like level 0 ({changed} pixels differ)"
    );
    assert_eq!(b, last, "lod=9 draws the last level, 2");
    for (shot, want, what) in [
        (&three[0], &level0, "level 0"),
        (&three[1], &bones2, "level 2, bones"),
        (&three[2], &bones2, "level 2, VAT"),
    ] {
        let (_, _, mask) = mask_of(&shot.out);
        let (score, area) = iou(&mask, want);
        rigbake_fixtures::testkit::notice(&format!(
            "three.js tentacle_lods {what} against rigbake view: IoU {score:.4} over {area} pixels"
        ));
        // Two GPU drawings of the same triangles: closer than the CPU
        // comparison's bound (the example drawing every level at once, as
        // it did, scores 0.81 at level 2).
        assert!(
            area > 500 && score >= 0.99,
            "three.js {what}: IoU {score:.4} against rigbake view"
        );
    }
}

/// A screenshot's pixels as RGB triples.
fn rgb_of(png_file: &Path) -> Vec<[u8; 3]> {
    let decoder = png::Decoder::new(BufReader::new(std::fs::File::open(png_file).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!(info.bit_depth, png::BitDepth::Eight);
    let channels = info.color_type.samples();
    buf[..info.buffer_size()]
        .chunks(channels)
        .map(|p| [p[0], p[1], p[2]])
        .collect()
}

/// The colour of a drawing where `covered`: its mean RGB, and the fraction
/// of the pixels whose channels differ by 48 or more (coloured, not grey).
fn colour_of(rgb: &[[u8; 3]], covered: &[bool]) -> ([f64; 3], f64) {
    let inside: Vec<&[u8; 3]> = rgb
        .iter()
        .zip(covered)
        .filter(|(_, c)| **c)
        .map(|(p, _)| p)
        .collect();
    let n = inside.len().max(1) as f64;
    let mean = [0, 1, 2].map(|i| inside.iter().map(|p| f64::from(p[i])).sum::<f64>() / n);
    let coloured = inside
        .iter()
        .filter(|p| p.iter().max().unwrap() - p.iter().min().unwrap() >= 48)
        .count();
    (mean, coloured as f64 / n)
}

/// The three.js example draws the meshes' own materials (GLTFLoader's, the
/// animation injected into their vertex shaders), not a flat grey: Fox
/// (its orange fur texture) and CesiumMan (its white, blue and green
/// texture), on both paths, drawn unmasked from the CPU preview's camera,
/// have about as many coloured pixels as `rigbake view` (which draws the
/// base-colour texture and factor) at the same frame from the same camera,
/// and about its mean colour, each over its own silhouette. A flat grey
/// drawing has no coloured pixel.
#[test]
fn the_three_example_draws_the_meshes_materials() {
    let test = "the_three_example_draws_the_meshes_materials";
    let Some((chromium, modules)) = browser(test) else {
        return;
    };
    let Some(models) = shared_models(test) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let bakes = bake_models(&models, &["Fox", "CesiumMan"], &out);
    let (_server, url) = start_view(&out);
    let three: Vec<(Running, String)> = bakes.iter().map(|(_, f, _)| start_three(f)).collect();
    let mut shots = Vec::new();
    // (what, three.js mask, three.js colour, view mask, view colour)
    let mut cases = Vec::new();
    for ((name, file, model), (_, three_url)) in bakes.iter().zip(&three) {
        for (path, key) in [(PathChoice::Bones, "bones"), (PathChoice::Vat, "vat")] {
            let r = reference(file, model, path, 1);
            let query = format!(
                "path={key}&clip={}&frame={}&{}",
                enc(&r.clip),
                r.frame,
                r.camera_query
            );
            let bake = enc(&format!("{name}/{name}.rigbake"));
            let mut shot = |url: String, file: String| {
                let out = tmp.path().join(file);
                shots.push(Shot {
                    url,
                    width: SIZE,
                    height: SIZE,
                    out: out.clone(),
                });
                out
            };
            cases.push((
                format!("{name} {key} {} frame {}", r.clip, r.frame),
                shot(
                    format!("{three_url}?{query}&look=mask"),
                    format!("{name}-{key}-three-mask.png"),
                ),
                shot(
                    format!("{three_url}?{query}"),
                    format!("{name}-{key}-three.png"),
                ),
                shot(
                    format!("{url}?bake={bake}&{query}&look=mask&hud=0"),
                    format!("{name}-{key}-view-mask.png"),
                ),
                shot(
                    format!("{url}?bake={bake}&{query}&grid=0&hud=0"),
                    format!("{name}-{key}-view.png"),
                ),
            ));
        }
    }
    shoot(&chromium, &modules, &shots, tmp.path());
    for (what, three_mask, three_colour, view_mask, view_colour) in &cases {
        let (_, _, covered) = mask_of(three_mask);
        let (three_mean, three_coloured) = colour_of(&rgb_of(three_colour), &covered);
        let (_, _, covered) = mask_of(view_mask);
        let (view_mean, view_coloured) = colour_of(&rgb_of(view_colour), &covered);
        rigbake_fixtures::testkit::notice(&format!(
            "three.js {what}: mean RGB {three_mean:.0?}, {:.1}% coloured; rigbake view: {view_mean:.0?}, {:.1}% coloured",
            three_coloured * 100.0,
            view_coloured * 100.0
        ));
        assert!(
            view_coloured > 0.1,
            "{what}: rigbake view draws the model almost grey ({view_coloured:.3} coloured): the test cannot tell"
        );
        assert!(
            three_coloured >= 0.6 * view_coloured,
            "{what}: the three.js example draws {three_coloured:.3} of the model coloured, rigbake view {view_coloured:.3}: it does not draw the base-colour texture"
        );
        for c in 0..3 {
            assert!(
                (three_mean[c] - view_mean[c]).abs() <= 32.0,
                "{what}: the three.js example's mean colour {three_mean:.0?} is far from rigbake view's {view_mean:.0?}"
            );
        }
    }
}

/// Width and height in pixels of the box around a mask's covered pixels.
fn extent_of(mask: &[bool], width: u32) -> (usize, usize) {
    let (mut x0, mut x1, mut y0, mut y1) = (usize::MAX, 0, usize::MAX, 0);
    for (i, _) in mask.iter().enumerate().filter(|(_, c)| **c) {
        let (x, y) = (i % width as usize, i / width as usize);
        (x0, x1, y0, y1) = (x0.min(x), x1.max(x), y0.min(y), y1.max(y));
    }
    (x1.saturating_sub(x0) + 1, y1.saturating_sub(y0) + 1)
}

/// A bake of format 1.11 stands without its source: CesiumMan (a Z-up mesh
/// stood upright by its root node's matrix) is baked from a
/// copy of the model that is then deleted, so no source can be found beside
/// the bake or where the container says it was. The three.js example
/// (GLTFLoader applying the meshes' recorded node matrices) and `rigbake
/// view` (the sidecar's placements) draw it standing, both paths, like the
/// CPU preview placed by the source (IoU at least 0.95), and taller than
/// wide; the preview's silhouette is the one of the man standing.
#[test]
fn the_three_example_stands_a_bake_without_its_source() {
    let test = "the_three_example_stands_a_bake_without_its_source";
    let Some((chromium, modules)) = browser(test) else {
        return;
    };
    let Some(models) = shared_models(test) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let model = models.join("khronos/CesiumMan.glb");
    let copy = tmp.path().join("source/CesiumMan.glb");
    std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
    std::fs::copy(&model, &copy).unwrap();
    let out = tmp.path().join("out");
    let o = bake(std::slice::from_ref(&copy), &out, &["--vat", "--normals"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::remove_file(&copy).unwrap();
    let file = out.join("CesiumMan/CesiumMan.rigbake");
    let sidecar: serde_json::Value = serde_json::from_slice(
        &std::fs::read(out.join("CesiumMan/CesiumMan.rigbake.json")).unwrap(),
    )
    .unwrap();
    let matrix = &sidecar["placement"]["matrix"];
    assert!(
        matrix.as_array().is_some_and(|m| m.len() == 16),
        "the sidecar records no placement: {matrix}"
    );
    let (_three_server, three_url) = start_three(&file);
    let (_view_server, view_url) = start_view(&out);
    let mut shots = Vec::new();
    let mut expected = Vec::new();
    for (path, key) in [(PathChoice::Bones, "bones"), (PathChoice::Vat, "vat")] {
        // The CPU preview, placed by the source model.
        let r = reference(&file, &model, path, 0);
        let query = format!(
            "path={key}&clip={}&frame={}&look=mask&{}",
            enc(&r.clip),
            r.frame,
            r.camera_query
        );
        for (page, url) in [
            ("three.js", format!("{three_url}?{query}")),
            ("view", format!("{view_url}?{query}&hud=0")),
        ] {
            let out = tmp.path().join(format!("{page}-{key}.png"));
            shots.push(Shot {
                url,
                width: SIZE,
                height: SIZE,
                out: out.clone(),
            });
            expected.push((
                format!("{page} CesiumMan {key} {} frame {}", r.clip, r.frame),
                out,
                r.covered.clone(),
            ));
        }
    }
    shoot(&chromium, &modules, &shots, tmp.path());
    for (what, shot, covered) in &expected {
        let (w, _, mask) = mask_of(shot);
        let (score, area) = iou(&mask, covered);
        let (across, up) = extent_of(&mask, w);
        let (ref_across, ref_up) = extent_of(covered, w);
        rigbake_fixtures::testkit::notice(&format!(
            "{what}, no source: IoU {score:.4} over {area} pixels; {across} x {up} pixels (the CPU preview: {ref_across} x {ref_up})"
        ));
        assert!(
            ref_up as f64 > 1.5 * ref_across as f64,
            "{what}: the CPU preview's CesiumMan is not standing ({ref_across} x {ref_up} pixels): the test cannot tell"
        );
        assert!(area > 500, "{what}: almost nothing drawn ({area} pixels)");
        assert!(
            up as f64 > 1.5 * across as f64,
            "{what}: CesiumMan is not standing ({across} x {up} pixels)"
        );
        assert!(score >= MIN_IOU, "{what}: IoU {score:.4} < {MIN_IOU}");
    }
}

/// A copy of the GLB `src` at `dst` whose scene's root nodes are turned
/// `degrees` about +Y and moved by `offset` (as glTF `rotation` and
/// `translation`; the nodes had no transform).
fn turned_glb(src: &Path, dst: &Path, degrees: f64, offset: [f64; 3]) {
    let bytes = std::fs::read(src).unwrap();
    let length = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    assert_eq!(
        &bytes[16..20],
        b"JSON",
        "{}: the first chunk",
        src.display()
    );
    let mut json: serde_json::Value = serde_json::from_slice(&bytes[20..20 + length]).unwrap();
    let roots: Vec<usize> = json["scenes"][0]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_u64().unwrap() as usize)
        .collect();
    let half = degrees.to_radians() / 2.0;
    for r in roots {
        let node = json["nodes"][r].as_object_mut().unwrap();
        for key in ["matrix", "rotation", "translation", "scale"] {
            assert!(!node.contains_key(key), "root node {r} has a {key}");
        }
        node.insert(
            "rotation".into(),
            serde_json::json!([0.0, half.sin(), 0.0, half.cos()]),
        );
        node.insert("translation".into(), serde_json::json!(offset));
    }
    let mut text = serde_json::to_vec(&json).unwrap();
    text.resize(text.len().next_multiple_of(4), b' ');
    let rest = &bytes[20 + length..];
    let mut out = b"glTF".to_vec();
    out.extend(2u32.to_le_bytes());
    out.extend(
        u32::try_from(20 + text.len() + rest.len())
            .unwrap()
            .to_le_bytes(),
    );
    out.extend(u32::try_from(text.len()).unwrap().to_le_bytes());
    out.extend(b"JSON");
    out.extend(&text);
    out.extend(rest);
    std::fs::write(dst, out).unwrap();
}

/// The three.js example moves a clip baked in place by its root-motion
/// track: Knight's Dodge_Left (`--root-motion extract`), its scene root
/// turned 40 degrees about +Y and moved (so its placement is not the
/// identity and its track, in scene space, is turned too), at frame 9 with
/// `motion=1` is drawn moved by the track's frame 9 (to within 2 pixels of
/// the silhouette's centre) from where it stands without `motion=1`, like
/// `rigbake view` draws the same frame with `motion=1` (IoU at least 0.95:
/// instance * root motion * placement * p in both; root motion applied in
/// the placed node's space would move the model along another direction),
/// on both paths.
#[test]
fn the_three_example_moves_by_root_motion() {
    let test = "the_three_example_moves_by_root_motion";
    let Some((chromium, modules)) = browser(test) else {
        return;
    };
    let Some(models) = shared_models(test) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let knight = tmp.path().join("Knight.glb");
    turned_glb(
        &models.join("kaykit/Knight.glb"),
        &knight,
        40.0,
        [0.3, 0.0, -0.2],
    );
    let o = bake(
        &[knight],
        &out,
        &["--vat", "--clip", "Dodge_Left", "--root-motion", "extract"],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let sidecar: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("Knight/Knight.rigbake.json")).unwrap())
            .unwrap();
    let moved = sidecar["root_motion"]["clips"][0]["track"][9][0]
        .as_f64()
        .unwrap();
    assert!(moved > 0.2, "Dodge_Left has travelled {moved} by frame 9");
    let turn = sidecar["placement"]["matrix"][8].as_f64().unwrap();
    assert!(
        turn > 0.5,
        "the placement is not turned: {}",
        sidecar["placement"]
    );
    let (_three_server, three_url) = start_three(&out.join("Knight/Knight.rigbake"));
    let (_view_server, view_url) = start_view(&out);
    let half = 2.0;
    // From the front, centred between where the model stands (0.3 along
    // +X) and where frame 9 takes it, with room for its props: a
    // silhouette cut by the frame's edge would not move by the track.
    let camera = format!("look=mask&cam=ortho&az=0&el=0&cx=0.45&cy=0.9&cz=0&half={half}");
    let mut shots = Vec::new();
    for path in ["bones", "vat"] {
        for (page, url, motion) in [
            ("three", &three_url, ""),
            ("three", &three_url, "&motion=1"),
            ("view", &view_url, "&motion=1"),
        ] {
            shots.push(Shot {
                url: format!("{url}?path={path}&clip=Dodge_Left&frame=9{motion}&hud=0&{camera}"),
                width: SIZE,
                height: SIZE,
                out: tmp.path().join(format!("{page}-{path}{motion}.png")),
            });
        }
    }
    shoot(&chromium, &modules, &shots, tmp.path());
    // One model unit is SIZE / (2 half) pixels; screen right is +X.
    let want = moved * f64::from(SIZE) / (2.0 * half);
    for (path, trio) in ["bones", "vat"].iter().zip(shots.chunks(3)) {
        let [still, moving, view] = [0, 1, 2].map(|k| mask_of(&trio[k].out));
        let got = centre_x(&moving.2, moving.0) - centre_x(&still.2, still.0);
        let (score, area) = iou(&moving.2, &view.2);
        rigbake_fixtures::testkit::notice(&format!(
            "three.js Knight {path} Dodge_Left frame 9: moved {got:.2} px (the track: {want:.2} px); against rigbake view with motion=1: IoU {score:.4} over {area} pixels"
        ));
        assert!(
            (got - want).abs() < 2.0,
            "{path}: the model moved {got:.2} px, the track says {want:.2} px"
        );
        assert!(area > 500, "{path}: almost nothing drawn ({area} pixels)");
        assert!(
            score >= MIN_IOU,
            "{path}: the moved frame differs from rigbake view's: IoU {score:.4}"
        );
    }
}

/// The three.js example's server says what is missing, and how to fix it,
/// when it cannot run `rigbake` (no raw Node stack).
#[test]
fn the_three_example_server_says_how_to_get_rigbake() {
    if !node_available("the_three_example_server_says_how_to_get_rigbake") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-rigbake");
    let o = Command::new("node")
        .arg(repo().join("examples/three/serve.mjs"))
        .arg(dir.path().join("m.rigbake"))
        .arg("--rigbake")
        .arg(&missing)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("not on PATH"), "{err}");
    assert!(
        err.contains("cargo install --path crates/cli --locked"),
        "{err}"
    );
    assert!(err.contains("--rigbake"), "{err}");
    assert!(!err.contains("    at "), "a raw stack trace: {err}");
    // A rigbake that runs but refuses the file: its own words, no stack.
    let o = Command::new("node")
        .arg(repo().join("examples/three/serve.mjs"))
        .arg(dir.path().join("m.rigbake"))
        .args(["--rigbake", env!("CARGO_BIN_EXE_rigbake")])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("m.rigbake"), "{err}");
    assert!(!err.contains("    at "), "a raw stack trace: {err}");
}

/// A bake whose name needs percent-encoding (`t%41`) is served to the
/// request the page makes for it (`t%2541`, encodeURIComponent): the path
/// is decoded exactly once.
#[test]
fn view_serves_a_bake_whose_name_needs_percent_encoding() {
    let tmp = tempfile::tempdir().unwrap();
    let model = tmp.path().join("t%41.glb");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/tentacle.glb"),
        &model,
    )
    .unwrap();
    let out = tmp.path().join("out");
    let o = bake(&[model], &out, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (_server, url) = start_view(&out);
    let addr = addr_of(&url);
    let files = first_bake_files(&addr);
    assert!(files.iter().any(|f| f == "t%41.weights.glb"), "{files:?}");
    for name in &files {
        let (status, _) = get(&addr, &format!("/bake/0/{}", enc(name)));
        assert_eq!(status, 200, "{name}");
    }
    // Doubly encoded traversal stays a literal name the bake does not have.
    let (status, body) = get(&addr, "/bake/0/%252e%252e%252fsecret");
    assert_eq!(status, 404, "{body}");
}

/// The served files are opened relative to the bake's folder as it was at
/// start (issue 30, class 2): replacing that folder with a link to another
/// folder afterwards serves nothing from the other folder, and a file
/// replaced by a link is refused.
#[cfg(unix)]
#[test]
fn view_serves_from_the_folder_it_started_with_after_a_swap() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/tentacle.glb");
    let o = bake(&[model], &out, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let original = std::fs::read(out.join("tentacle/tentacle.rigbake")).unwrap();
    let (_server, url) = start_view(&out);
    let addr = addr_of(&url);
    assert_eq!(get(&addr, "/bake/0/tentacle.rigbake").0, 200);
    // The folder is swapped for a link to a folder of secrets with the
    // same file names.
    let secrets = tmp.path().join("secrets");
    std::fs::create_dir(&secrets).unwrap();
    for name in [
        "tentacle.rigbake",
        "bones.skin0.exr",
        "tentacle.weights.glb",
    ] {
        std::fs::write(secrets.join(name), "SECRET").unwrap();
    }
    std::fs::rename(out.join("tentacle"), tmp.path().join("moved")).unwrap();
    std::os::unix::fs::symlink(&secrets, out.join("tentacle")).unwrap();
    let (status, body) = get(&addr, "/bake/0/tentacle.rigbake");
    assert!(
        !body.contains("SECRET"),
        "served a file from outside the bake"
    );
    assert_eq!(status, 200);
    // The container itself (binary; its magic bytes start the body).
    assert!(
        body.starts_with(&String::from_utf8_lossy(&original[..4]).into_owned()),
        "the original container"
    );
    // Inside the held folder, a file replaced by a link is not served.
    let held = tmp.path().join("moved");
    std::fs::remove_file(held.join("bones.skin0.exr")).unwrap();
    std::os::unix::fs::symlink(
        secrets.join("bones.skin0.exr"),
        held.join("bones.skin0.exr"),
    )
    .unwrap();
    let (status, body) = get(&addr, "/bake/0/bones.skin0.exr");
    assert_eq!(status, 404, "{body}");
    assert!(!body.contains("SECRET"));
}

/// The viewer's catalogue has a total memory bound (issue 30, class 4):
/// each report is kept as its JSON text only, and their total is bounded.
/// A folder of 200 hard links to one container starts (a few MB of
/// reports); the same folder under a small bound is refused with a usage
/// error that says what to do, never an abort.
#[cfg(unix)]
#[test]
fn the_catalogue_bounds_the_reports_it_keeps() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/tentacle.glb");
    let o = bake(&[model], &out, &["--vat"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let dir = out.join("tentacle");
    for k in 0..200 {
        std::fs::hard_link(
            dir.join("tentacle.rigbake"),
            dir.join(format!("link{k}.rigbake")),
        )
        .unwrap();
    }
    let catalog = rigbake_view::Catalog::open(&out, None).expect("200 links fit");
    assert_eq!(catalog.bakes.len(), 201);
    let total: usize = catalog.bakes.iter().map(|b| b.report.get().len()).sum();
    assert!(total <= rigbake_view::catalog::MAX_REPORT_BYTES, "{total}");
    let one = catalog.bakes[0].report.get().len();
    let e = rigbake_view::Catalog::open_with(&out, None, one * 10).expect_err("over a small bound");
    assert!(
        matches!(&e, rigbake_view::CatalogError::Unusable(m) if m.contains("add up to more than") && m.contains("fewer bakes")),
        "{e}"
    );
}

/// The 16-bit forms of format 1.13 in KTX2: `qts` bones at `unorm16` and
/// packed VAT normals.
const SIXTEEN_BIT_KTX2: &[&str] = &[
    "--format",
    "png16",
    "--direction-encoding",
    "packed",
    "--layout",
    "qts",
    "--precision",
    "unorm16",
    "--texture-container",
    "ktx2",
];

/// One texture-container case of the tentacle fixture: its folder, the bake
/// flags besides `--vat --normals`, the paths drawn, and the sidecar
/// encodings of its bone texture and VAT positions.
struct ContainerCase {
    dir: &'static str,
    flags: &'static [&'static str],
    paths: &'static [&'static str],
    bones: &'static str,
    vat: &'static str,
}

impl ContainerCase {
    /// The same bake as EXR (and PNG for `--format png16`): the flags
    /// before `--texture-container`, and the encodings they give. The 8
    /// and 10-bit VAT formats, which only KTX2 and DDS hold, take PNG16
    /// (the same values over the same bounds, to half an 8-bit step).
    fn exr_twin(&self) -> (Vec<&'static str>, &'static str, &'static str) {
        let flags = self
            .flags
            .iter()
            .copied()
            .take_while(|f| *f != "--texture-container")
            .map(|f| {
                if matches!(f, "unorm8" | "unorm10") {
                    "png16"
                } else {
                    f
                }
            })
            .collect();
        let bones = if self.bones.ends_with("unorm16") {
            "png16"
        } else if self.bones.ends_with("f16") {
            "exr_f16"
        } else {
            "exr_f32"
        };
        let vat = if self.vat.contains("unorm") {
            "png16"
        } else {
            "exr_f16"
        };
        (flags, bones, vat)
    }
}

/// Bakes `case` of `model` into `root/<dir>` (the source copied beside the
/// container, for placements) and checks the sidecar's encodings; returns
/// the container.
fn bake_container_case(model: &Path, root: &Path, case: &ContainerCase) -> PathBuf {
    let file = bake_with_encodings(model, root, case.dir, case.flags, case.bones, case.vat);
    if case.dir.contains("paged") {
        // Folded into pages that are the array layers of one file.
        let sidecar: serde_json::Value =
            serde_json::from_slice(&std::fs::read(file.with_extension("rigbake.json")).unwrap())
                .unwrap();
        let textures = sidecar["textures"].as_array().unwrap();
        let positions = textures
            .iter()
            .find(|t| t["role"] == "vat_positions")
            .unwrap();
        let pages = positions["fold"]["pages"].as_u64().unwrap_or(0);
        assert!(pages > 1, "{}: {pages} pages", case.dir);
        assert!(
            textures.iter().any(|t| t["layer"] == pages - 1),
            "{}: no layer {}",
            case.dir,
            pages - 1
        );
    }
    file
}

/// Bakes `model` with `--vat --normals` and `flags` into `root/<dir>` (the
/// source copied beside the container, for placements), checks the
/// sidecar's encodings of the bone texture and the VAT positions, and
/// returns the container.
fn bake_with_encodings(
    model: &Path,
    root: &Path,
    dir: &str,
    flags: &[&str],
    bones: &str,
    vat: &str,
) -> PathBuf {
    let out = root.join(dir);
    let mut all = vec!["--vat", "--normals"];
    all.extend(flags);
    let o = bake(std::slice::from_ref(&model.to_path_buf()), &out, &all);
    assert!(
        o.status.success(),
        "{dir}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let stem = model.file_stem().unwrap().to_str().unwrap();
    let folder = out.join(stem);
    std::fs::copy(model, folder.join(model.file_name().unwrap())).unwrap();
    let sidecar: serde_json::Value = serde_json::from_slice(
        &std::fs::read(folder.join(format!("{stem}.rigbake.json"))).unwrap(),
    )
    .unwrap();
    let textures = sidecar["textures"].as_array().unwrap();
    let role = |r: &str| textures.iter().find(|t| t["role"] == r).unwrap();
    assert_eq!(role("bone_matrices")["encoding"], bones, "{dir}");
    assert_eq!(role("vat_positions")["encoding"], vat, "{dir}");
    folder.join(format!("{stem}.rigbake"))
}

/// Adds `delta` to the little-endian u32 at `offset` of `file`.
fn patch_u32(file: &Path, offset: usize, delta: u32) {
    let mut bytes = std::fs::read(file).unwrap();
    let v = u32::from_le_bytes(bytes[offset..offset + 4].try_into().unwrap());
    bytes[offset..offset + 4].copy_from_slice(&(v + delta).to_le_bytes());
    std::fs::write(file, bytes).unwrap();
}

/// `rigbake view` plays bakes whose textures are KTX2 or DDS
/// (`--texture-container`, formats/textures.md), their texel bytes handed
/// to WebGL as they are (RGBA32F, RGBA16F, RGBA16UI for 16-bit UNORM): the
/// tentacle fixture baked as KTX2 and as DDS (f32 bones, f16 VAT), as KTX2
/// with f16 bones and 16-bit UNORM VAT (`--format png16`), and folded into
/// pages that are the array layers of one file (KTX2 f16, DDS UNORM16; the
/// bone texture then folds into column blocks), and with 10-bit (KTX2) and
/// 8-bit (DDS) VATs (format 1.15, RGB10_A2 and RGBA8 in WebGL2), draws
/// every path like the CPU preview of the same bake made as EXR/PNG (PNG16
/// for the 8 and 10-bit VATs)
/// (IoU at least 0.95). The page refuses, with a message naming the file and
/// the cause: a Zstandard-supercompressed KTX2 (rebake with
/// `--texture-container ktx2`), a KTX2 whose `pixelWidth` and a DDS whose
/// `dwHeight` disagree with the sidecar, and a texture larger than the
/// GPU's MAX_TEXTURE_SIZE (lowered with `max_texture=64`).
#[test]
fn view_plays_ktx2_and_dds_bakes_like_the_cpu_preview() {
    let test = "view_plays_ktx2_and_dds_bakes_like_the_cpu_preview";
    let Some((chromium, modules)) = browser(test) else {
        return;
    };
    let started = std::time::Instant::now();
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("out");
    let exr_root = tmp.path().join("exr");
    let model = rigbake_fixtures::fixture("tentacle.glb");
    let cases = [
        ContainerCase {
            dir: "ktx2",
            flags: &["--texture-container", "ktx2"],
            paths: &["bones", "vat"],
            bones: "ktx2_f32",
            vat: "ktx2_f16",
        },
        ContainerCase {
            dir: "dds",
            flags: &["--texture-container", "dds"],
            paths: &["bones", "vat"],
            bones: "dds_f32",
            vat: "dds_f16",
        },
        ContainerCase {
            dir: "ktx2-unorm16",
            flags: &[
                "--format",
                "png16",
                "--precision",
                "f16",
                "--texture-container",
                "ktx2",
            ],
            paths: &["bones", "vat"],
            bones: "ktx2_f16",
            vat: "ktx2_unorm16",
        },
        // The 16-bit forms of format 1.13: `qts` bones at `unorm16` (over
        // the bone-range record) and packed normals in the positions' alpha.
        ContainerCase {
            dir: "ktx2-qts-unorm16-packed",
            flags: SIXTEEN_BIT_KTX2,
            paths: &["bones", "vat"],
            bones: "ktx2_unorm16",
            vat: "ktx2_unorm16",
        },
        // At this size the bone texture folds too, into column blocks.
        ContainerCase {
            dir: "ktx2-paged",
            flags: &["--max-texture-size", "64", "--texture-container", "ktx2"],
            paths: &["bones", "vat"],
            bones: "ktx2_f32",
            vat: "ktx2_f16",
        },
        ContainerCase {
            dir: "dds-unorm16-paged",
            flags: &[
                "--format",
                "png16",
                "--max-texture-size",
                "64",
                "--texture-container",
                "dds",
            ],
            paths: &["bones", "vat"],
            bones: "dds_f32",
            vat: "dds_unorm16",
        },
        // The 8 and 10-bit VAT formats of format 1.15 (RGBA8 and RGB10A2
        // UNORM), uploaded as WebGL2's own normalised formats.
        ContainerCase {
            dir: "ktx2-unorm10",
            flags: &["--format", "unorm10", "--texture-container", "ktx2"],
            paths: &["vat"],
            bones: "ktx2_f32",
            vat: "ktx2_unorm10",
        },
        ContainerCase {
            dir: "dds-unorm8",
            flags: &["--format", "unorm8", "--texture-container", "dds"],
            paths: &["vat"],
            bones: "dds_f32",
            vat: "dds_unorm8",
        },
        ContainerCase {
            dir: "zstd",
            flags: &["--texture-container", "ktx2-zstd"],
            paths: &[],
            bones: "ktx2_f32",
            vat: "ktx2_f16",
        },
    ];
    let mut shots = Vec::new();
    let mut expected = Vec::new();
    for case in &cases {
        bake_container_case(&model, &root, case);
        // The same bake as EXR (and PNG), whose CPU preview is the reference.
        let (flags, bones, vat) = case.exr_twin();
        let exr_file = bake_with_encodings(&model, &exr_root, case.dir, &flags, bones, vat);
        for path in case.paths {
            let choice = if *path == "bones" {
                PathChoice::Bones
            } else {
                PathChoice::Vat
            };
            let r = reference(&exr_file, &model, choice, 0);
            let shot = tmp.path().join(format!("{}-{path}.png", case.dir));
            shots.push(Shot {
                url: format!(
                    "BASE?bake={}&path={path}&clip={}&frame={}&look=mask&hud=0&{}",
                    enc(&format!("{}/tentacle/tentacle.rigbake", case.dir)),
                    enc(&r.clip),
                    r.frame,
                    r.camera_query
                ),
                width: SIZE,
                height: SIZE,
                out: shot.clone(),
            });
            expected.push((
                format!("{} {path} {} frame {}", case.dir, r.clip, r.frame),
                shot,
                r.covered,
            ));
        }
    }
    // Headers that disagree with the sidecar: a KTX2 one texel wider, a DDS
    // one row taller (copies of good bakes; the server reads no checksums).
    for (from, to, file, offset) in [
        ("ktx2", "bad-ktx2", "bones.skin0.ktx2", 20),
        ("dds", "bad-dds", "tentacle.vat.positions.dds", 12),
    ] {
        let dir = root.join(to).join("tentacle");
        std::fs::create_dir_all(&dir).unwrap();
        for entry in std::fs::read_dir(root.join(from).join("tentacle")).unwrap() {
            let entry = entry.unwrap();
            std::fs::copy(entry.path(), dir.join(entry.file_name())).unwrap();
        }
        patch_u32(&dir.join(file), offset, 1);
    }
    let (_server, url) = start_view(&root);
    let mut jobs: Vec<serde_json::Value> = shots
        .iter_mut()
        .map(|s| {
            s.url = s.url.replacen("BASE", &url, 1);
            shot_job(s)
        })
        .collect();
    let bake_url = |dir: &str, rest: &str| {
        format!(
            "{url}?bake={}&{rest}",
            enc(&format!("{dir}/tentacle/tentacle.rigbake"))
        )
    };
    let refusals = [
        (
            "zstd",
            bake_url("zstd", "path=vat"),
            &[
                "tentacle.vat.positions.ktx2",
                "Zstandard",
                "--texture-container ktx2",
            ][..],
        ),
        (
            "bad-ktx2",
            bake_url("bad-ktx2", "path=bones"),
            &["bones.skin0.ktx2", "pixelWidth is 33", "width 32"][..],
        ),
        (
            "bad-dds",
            bake_url("bad-dds", "path=vat"),
            &["tentacle.vat.positions.dds", "dwHeight is 93", "height 92"][..],
        ),
        (
            "max-texture",
            bake_url("ktx2", "path=vat&max_texture=64"),
            &[
                "tentacle.vat.positions.ktx2",
                "204 x 92",
                "MAX_TEXTURE_SIZE",
                "--max-texture-size 64",
            ][..],
        ),
    ];
    for (name, url, _) in &refusals {
        jobs.push(refusal_job(
            url.clone(),
            &tmp.path().join(format!("{name}.json")),
        ));
    }
    run_jobs(&chromium, &modules, jobs, tmp.path());

    for (what, shot, covered) in &expected {
        let (w, h, mask) = mask_of(shot);
        assert_eq!((w, h), (SIZE, SIZE), "{what}: screenshot size");
        let (score, area) = iou(&mask, covered);
        rigbake_fixtures::testkit::notice(&format!(
            "view {what}: IoU {score:.4} over {area} pixels"
        ));
        assert!(area > 500, "{what}: almost nothing drawn ({area} pixels)");
        assert!(score >= MIN_IOU, "{what}: IoU {score:.4} < {MIN_IOU}");
    }
    for (name, _, says) in &refusals {
        assert_refused(name, &tmp.path().join(format!("{name}.json")), says);
    }
    rigbake_fixtures::testkit::notice(&format!("{test}: {:.1} s", started.elapsed().as_secs_f64()));
}

/// A large KTX2 VAT loads in time and shows its progress: BrainStem (34,159
/// vertices, 1,047 frames; a 286 MB half-float positions texture) baked with
/// `--vat --no-weights --texture-container ktx2` is ready in the viewer
/// within 60 s and draws like the CPU preview (IoU at least 0.95); from the
/// first second until it is ready, the page shows what it is loading, and
/// the positions texture's download is shown in megabytes as it arrives.
#[test]
fn view_loads_a_large_ktx2_vat_in_time_with_progress() {
    let test = "view_loads_a_large_ktx2_vat_in_time_with_progress";
    let Some((chromium, modules)) = browser(test) else {
        return;
    };
    let Some(models) = shared_models(test) else {
        return;
    };
    let started = std::time::Instant::now();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let model = models.join("khronos/BrainStem.glb");
    let o = bake(
        std::slice::from_ref(&model),
        &out,
        &["--vat", "--no-weights", "--texture-container", "ktx2"],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let dir = out.join("BrainStem");
    std::fs::copy(&model, dir.join("BrainStem.glb")).unwrap();
    let texture = "BrainStem.vat.positions.ktx2";
    let size = std::fs::metadata(dir.join(texture)).unwrap().len();
    assert!(size > 100_000_000, "{texture} is only {size} bytes");
    let r = reference(&dir.join("BrainStem.rigbake"), &model, PathChoice::Vat, 0);
    let baked = started.elapsed();
    let (_server, url) = start_view(&out);
    let shot = tmp.path().join("BrainStem.png");
    let state = tmp.path().join("BrainStem.json");
    let job = serde_json::json!({
        "url": format!(
            "{url}?path=vat&clip={}&frame={}&look=mask&hud=0&{}",
            enc(&r.clip),
            r.frame,
            r.camera_query
        ),
        "width": SIZE, "height": SIZE, "out": shot, "timeout_ms": 60000, "state_out": state,
    });
    run_jobs(&chromium, &modules, vec![job], tmp.path());
    let state = page_state(&state);
    let ready_ms = state["ready_ms"].as_u64().expect("ready");
    let polled: Vec<(u64, String)> = serde_json::from_value(state["polled"].clone()).unwrap();
    let shown: Vec<String> = serde_json::from_value(state["shown"].clone()).unwrap();
    rigbake_fixtures::testkit::notice(&format!(
        "BrainStem KTX2 VAT ({:.1} MB): ready after {ready_ms} ms; the page showed {} progress texts, the first at {} ms: {:?}",
        size as f64 / 1e6,
        polled.len(),
        polled.first().map_or(0, |p| p.0),
        polled.iter().map(|p| &p.1).take(12).collect::<Vec<_>>()
    ));
    assert!(ready_ms <= 60_000, "ready after {ready_ms} ms");
    let first = polled.first().expect("no progress was ever visible");
    // The box is in the static page, so it shows at first paint: 85 to
    // 294 ms here (the target is the first second). The margin is
    // for a loaded CI machine running several browsers at once.
    assert!(
        first.0 < 3000,
        "the first progress text showed after {} ms",
        first.0
    );
    let mb = format!("{:.1}", size as f64 / 1e6);
    let downloading =
        |t: &str| t.starts_with(&format!("loading {texture} ")) && t.contains(&format!("/{mb} MB"));
    // Seen on screen while it downloaded (sampled every 50 ms) ...
    assert!(
        polled.iter().any(|(_, t)| downloading(t)),
        "the download of {texture} was never on screen: {polled:?}"
    );
    // ... and in the page's own list, before all of it had arrived.
    assert!(
        shown
            .iter()
            .any(|t| downloading(t) && !t.contains(&format!("{mb}/{mb} MB"))),
        "no partial progress of {texture}: {shown:?}"
    );
    let (_, _, mask) = mask_of(&shot);
    let (score, area) = iou(&mask, &r.covered);
    rigbake_fixtures::testkit::notice(&format!(
        "view BrainStem KTX2 vat {} frame {}: IoU {score:.4} over {area} pixels; {test}: {:.1} s ({:.1} s baking and the CPU reference)",
        r.clip,
        r.frame,
        started.elapsed().as_secs_f64(),
        baked.as_secs_f64()
    ));
    assert!(area > 500, "almost nothing drawn ({area} pixels)");
    assert!(score >= MIN_IOU, "IoU {score:.4} < {MIN_IOU}");
}

/// The three.js example plays KTX2 bakes through three.js's own KTX2Loader
/// (examples/three/main.js): the tentacle fixture baked as KTX2 (f32 bones,
/// f16 VAT), as Zstandard-supercompressed KTX2 (inflated by three.js's
/// bundled zstddec), with a 16-bit UNORM VAT (`--format png16`, bound as
/// RGBA16UI and decoded with the recorded bounds and the octahedral rule)
/// and with an 8-bit one (`--format unorm8`, normalised RGBA8) draws like
/// the CPU preview (IoU at least 0.95) with KTX2's rows taken as
/// they are; flipping them as the EXR path must (`flip=1`) fails to match.
/// A folded VAT (pages as KTX2 array layers, which KTX2Loader does not
/// build), a 10-bit VAT (a packed format KTX2Loader does not read) and a
/// DDS bake are refused with a message.
#[test]
fn the_three_example_plays_ktx2_bakes_with_ktx2loader() {
    let test = "the_three_example_plays_ktx2_bakes_with_ktx2loader";
    let Some((chromium, modules)) = browser(test) else {
        return;
    };
    let started = std::time::Instant::now();
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("out");
    let model = rigbake_fixtures::fixture("tentacle.glb");
    let cases = [
        ContainerCase {
            dir: "ktx2",
            flags: &["--texture-container", "ktx2"],
            paths: &["bones", "vat"],
            bones: "ktx2_f32",
            vat: "ktx2_f16",
        },
        // The 8-bit VAT format of format 1.15 (R8G8B8A8_UNORM), which
        // KTX2Loader uploads as normalised RGBA8; the 10-bit one
        // (A2B10G10R10_UNORM_PACK32), which it does not read, is refused.
        ContainerCase {
            dir: "ktx2-unorm8",
            flags: &["--format", "unorm8", "--texture-container", "ktx2"],
            paths: &["vat"],
            bones: "ktx2_f32",
            vat: "ktx2_unorm8",
        },
        ContainerCase {
            dir: "ktx2-unorm10",
            flags: &["--format", "unorm10", "--texture-container", "ktx2"],
            paths: &[],
            bones: "ktx2_f32",
            vat: "ktx2_unorm10",
        },
        ContainerCase {
            dir: "zstd",
            flags: &["--texture-container", "ktx2-zstd"],
            paths: &["bones", "vat"],
            bones: "ktx2_f32",
            vat: "ktx2_f16",
        },
        ContainerCase {
            dir: "unorm16",
            flags: &["--format", "png16", "--texture-container", "ktx2"],
            paths: &["vat"],
            bones: "ktx2_f32",
            vat: "ktx2_unorm16",
        },
        ContainerCase {
            dir: "qts-unorm16-packed",
            flags: SIXTEEN_BIT_KTX2,
            paths: &["bones", "vat"],
            bones: "ktx2_unorm16",
            vat: "ktx2_unorm16",
        },
        ContainerCase {
            dir: "paged",
            flags: &["--max-texture-size", "64", "--texture-container", "ktx2"],
            paths: &[],
            bones: "ktx2_f32",
            vat: "ktx2_f16",
        },
        ContainerCase {
            dir: "dds",
            flags: &["--texture-container", "dds"],
            paths: &[],
            bones: "dds_f32",
            vat: "dds_f16",
        },
    ];
    let mut servers = Vec::new();
    let mut jobs = Vec::new();
    let mut expected = Vec::new();
    let mut flipped = Vec::new();
    let mut refusals = Vec::new();
    for case in &cases {
        let file = bake_container_case(&model, &root, case);
        let (server, three_url) = start_three(&file);
        servers.push(server);
        for path in case.paths {
            let choice = if *path == "bones" {
                PathChoice::Bones
            } else {
                PathChoice::Vat
            };
            let r = reference(&file, &model, choice, 0);
            let query = format!(
                "path={path}&clip={}&frame={}&look=mask&{}",
                enc(&r.clip),
                r.frame,
                r.camera_query
            );
            for (flip, list) in [("", &mut expected), ("&flip=1", &mut flipped)] {
                if !flip.is_empty() && case.dir != "ktx2" {
                    continue;
                }
                let shot = tmp
                    .path()
                    .join(format!("three-{}-{path}{flip}.png", case.dir));
                jobs.push(shot_job(&Shot {
                    url: format!("{three_url}?{query}{flip}"),
                    width: SIZE,
                    height: SIZE,
                    out: shot.clone(),
                }));
                list.push((
                    format!("three.js {} {path} {} frame {}", case.dir, r.clip, r.frame),
                    shot,
                    r.covered.clone(),
                ));
            }
        }
        if case.paths.is_empty() {
            let state = tmp.path().join(format!("three-{}.json", case.dir));
            jobs.push(refusal_job(format!("{three_url}?path=vat"), &state));
            refusals.push((case.dir, state));
        }
    }
    run_jobs(&chromium, &modules, jobs, tmp.path());
    for (what, shot, covered) in &expected {
        let (_, _, mask) = mask_of(shot);
        let (score, area) = iou(&mask, covered);
        rigbake_fixtures::testkit::notice(&format!("{what}: IoU {score:.4} over {area} pixels"));
        assert!(area > 500, "{what}: almost nothing drawn ({area} pixels)");
        assert!(score >= MIN_IOU, "{what}: IoU {score:.4} < {MIN_IOU}");
    }
    for (what, shot, covered) in &flipped {
        let (_, _, mask) = mask_of(shot);
        let (score, _) = iou(&mask, covered);
        rigbake_fixtures::testkit::notice(&format!("{what} with the EXR row flip: IoU {score:.4}"));
        assert!(
            score < 0.9,
            "{what}: flipped rows match too ({score:.4}): the test cannot tell"
        );
    }
    for (dir, state) in &refusals {
        let says: &[&str] = if *dir == "ktx2-unorm10" {
            &[
                "tentacle.vat.positions.ktx2",
                "KTX2Loader",
                "10-bit",
                "--format unorm8",
            ]
        } else if *dir == "paged" {
            &[
                "tentacle.vat.positions.ktx2",
                "KTX2Loader",
                "layerCount",
                "pages",
            ]
        } else {
            &[
                "tentacle.vat.positions.dds",
                "DDS",
                "--texture-container ktx2",
            ]
        };
        assert_refused(&format!("three.js {dir}"), state, says);
    }
    drop(servers);
    rigbake_fixtures::testkit::notice(&format!("{test}: {:.1} s", started.elapsed().as_secs_f64()));
}
