//! The `asset.version` and `asset.minVersion` check (glTF 2.0, section 5.2).
//!
//! Both must have the form `<major>.<minor>`. rigbake reads glTF 2.0: the
//! major version must be 2 (a 2.x file without `minVersion` is readable by a
//! 2.0 loader, as the spec requires of minor versions), and `minVersion`, if
//! given, must not ask for more than 2.0 nor exceed `version`.

use crate::error::{Error, ErrorKind, Result};

/// `(major, minor)` of a `<major>.<minor>` version string.
fn parse(text: &str) -> Option<(u32, u32)> {
    let (major, minor) = text.split_once('.')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(major) || !digits(minor) {
        return None;
    }
    Some((major.parse().ok()?, minor.parse().ok()?))
}

fn malformed(field: &str, text: &str) -> Error {
    Error::new(
        ErrorKind::Malformed,
        format!("asset.{field}"),
        format!(
            "`{}` is not a glTF version (the form is <major>.<minor>, such as 2.0)",
            text.escape_debug()
        ),
    )
}

/// Refuses files that are not glTF 2.x, or that need more than glTF 2.0.
pub(super) fn check(asset: &gltf::json::Asset) -> Result<()> {
    let version = parse(&asset.version).ok_or_else(|| malformed("version", &asset.version))?;
    if version.0 != 2 {
        return Err(Error::new(
            ErrorKind::Unsupported,
            "asset.version",
            format!(
                "the file is glTF {}.{}; rigbake reads glTF 2.x only",
                version.0, version.1
            ),
        )
        .with_hint("convert the model to glTF 2.0"));
    }
    if let Some(min) = &asset.min_version {
        let min_version = parse(min).ok_or_else(|| malformed("minVersion", min))?;
        if min_version > version {
            return Err(Error::new(
                ErrorKind::Invalid,
                "asset.minVersion",
                format!(
                    "minVersion {}.{} is greater than version {}.{}",
                    min_version.0, min_version.1, version.0, version.1
                ),
            ));
        }
        if min_version > (2, 0) {
            return Err(Error::new(
                ErrorKind::Unsupported,
                "asset.minVersion",
                format!(
                    "the file requires glTF {}.{}; rigbake reads glTF 2.0",
                    min_version.0, min_version.1
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asset(version: &str, min: Option<&str>) -> gltf::json::Asset {
        gltf::json::Asset {
            version: version.to_owned(),
            min_version: min.map(str::to_owned),
            ..Default::default()
        }
    }

    #[test]
    fn only_gltf_2_is_read() {
        assert!(check(&asset("2.0", None)).is_ok());
        assert!(check(&asset("2.1", None)).is_ok());
        assert!(check(&asset("2.1", Some("2.0"))).is_ok());
        let e = check(&asset("3.0", None)).unwrap_err();
        assert_eq!(
            (e.kind, e.object.as_str()),
            (ErrorKind::Unsupported, "asset.version")
        );
        let e = check(&asset("1.0", None)).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Unsupported);
        let e = check(&asset("2", None)).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Malformed);
        let e = check(&asset("2.0", Some("2.1"))).unwrap_err();
        assert_eq!(
            (e.kind, e.object.as_str()),
            (ErrorKind::Invalid, "asset.minVersion")
        );
        let e = check(&asset("2.2", Some("2.1"))).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Unsupported);
        let e = check(&asset("2.0", Some("x"))).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Malformed);
    }
}
