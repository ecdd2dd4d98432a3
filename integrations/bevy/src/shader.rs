//! The WGSL of docs/shaders as Bevy shader modules: `rigbake::runtime` is
//! docs/shaders/rigbake.wgsl itself, its texture bindings moved into the
//! material's bind group and its example entry points left out; the
//! plugin's vertex stage (`vat.wgsl`) imports its functions.

use bevy::asset::uuid_handle;
use bevy::prelude::*;

/// `rigbake::runtime`: docs/shaders/rigbake.wgsl as an importable module.
pub const RUNTIME_SHADER: Handle<Shader> = uuid_handle!("5b0c1e56-8f1d-4c55-9a9b-2f4f0b1f6d11");
/// `bevy_rigbake::instance`: what both vertex stages share (the instance
/// state buffer, the vertex, Bevy's vertex output).
pub const INSTANCE_SHADER: Handle<Shader> = uuid_handle!("3c41d7e0-2b9a-4f51-8e6d-5a0b9c7e1f44");
/// The vertex stage of the vertex-animation material.
pub const VAT_SHADER: Handle<Shader> = uuid_handle!("0f7a3a52-61c4-4d8e-a0a5-3c8f7d6a9e22");
/// The vertex stage of the bone-matrix material.
pub const BONE_SHADER: Handle<Shader> = uuid_handle!("9d2e6c1b-3a47-4f0e-b5d8-71c2a4e8f033");

/// The runtime shader of docs/shaders, as rigbake writes it.
const RIGBAKE_WGSL: &str = include_str!("../../../docs/shaders/rigbake.wgsl");

/// Where rigbake.wgsl's example entry points start (everything before is
/// the runtime: state, math, bone and VAT paths).
const ENTRY_POINTS: &str =
    "// ------------------------------------------------------ example entry points";

/// Binding of the bone texture in the material's group (rigbake.wgsl's
/// `@group(0) @binding(0)`); the VAT's positions and normals follow.
pub const FIRST_BINDING: u32 = 100;

/// Why rigbake.wgsl cannot be made a module (a docs/shaders edit that
/// moved what this relies on).
#[derive(Debug, thiserror::Error)]
#[error("docs/shaders/rigbake.wgsl: {0}")]
pub struct ModuleError(String);

/// `source` (rigbake.wgsl) as the module `rigbake::runtime`: cut before
/// the example entry points, each `@group(0) @binding(k)` rebound to the
/// material's group at binding `FIRST_BINDING + k`.
pub fn runtime_module(source: &str) -> Result<String, ModuleError> {
    let cut = source
        .find(ENTRY_POINTS)
        .ok_or_else(|| ModuleError("no example entry points marker".into()))?;
    let mut body = source[..cut].to_owned();
    for k in 0..3 {
        let from = format!("@group(0) @binding({k})");
        if !body.contains(&from) {
            return Err(ModuleError(format!("no `{from}`")));
        }
        body = body.replace(
            &from,
            &format!(
                "@group(#{{MATERIAL_BIND_GROUP}}) @binding({})",
                FIRST_BINDING + k
            ),
        );
    }
    if body.matches("@group(").count() != 3 {
        return Err(ModuleError("a binding outside group 0".into()));
    }
    Ok(format!("#define_import_path rigbake::runtime\n\n{body}"))
}

/// Registers the shaders with the app.
pub fn register(app: &mut App) {
    let runtime =
        runtime_module(RIGBAKE_WGSL).expect("docs/shaders/rigbake.wgsl is a runtime module");
    let mut shaders = app.world_mut().resource_mut::<Assets<Shader>>();
    shaders
        .insert(
            RUNTIME_SHADER.id(),
            Shader::from_wgsl(runtime, "rigbake/runtime.wgsl"),
        )
        .expect("the runtime shader's handle");
    shaders
        .insert(
            VAT_SHADER.id(),
            Shader::from_wgsl(include_str!("vat.wgsl"), "bevy_rigbake/vat.wgsl"),
        )
        .expect("the VAT shader's handle");
    shaders
        .insert(
            INSTANCE_SHADER.id(),
            Shader::from_wgsl(include_str!("instance.wgsl"), "bevy_rigbake/instance.wgsl"),
        )
        .expect("the instance shader's handle");
    shaders
        .insert(
            BONE_SHADER.id(),
            Shader::from_wgsl(include_str!("bones.wgsl"), "bevy_rigbake/bones.wgsl"),
        )
        .expect("the bone shader's handle");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_runtime_module_is_rigbake_wgsl_rebound_without_entry_points() {
        let m = runtime_module(RIGBAKE_WGSL).unwrap();
        assert!(m.starts_with("#define_import_path rigbake::runtime"));
        assert!(!m.contains("@group(0)") && !m.contains("@vertex"));
        for b in 100..103 {
            assert!(m.contains(&format!("@group(#{{MATERIAL_BIND_GROUP}}) @binding({b})")));
        }
        // The functions the material's vertex stage imports are there.
        for f in [
            "fn vat_deform(",
            "struct AnimationState",
            "struct VatLayout",
            "struct VatStream",
        ] {
            assert!(m.contains(f), "{f}");
        }
        assert!(runtime_module("fn f() {}").is_err());
    }
}
