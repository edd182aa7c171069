//! Choosing the physical device (the best one offering `shaderEnqueue`:
//! discrete before integrated before virtual before CPU), the features a
//! workload's logical device is created with ([`Features`]), and the run's
//! provenance: the UTC date and the git commit.

use std::process::Command;

use ash::vk;

use demo::gpu::Gpu;
use vk_amdx::PhysicalDeviceShaderEnqueueFeatures;
use vk_host::render;

/// What a workload needs of its logical device. Each set gets a device of
/// its own, so that a workload runs on what an application with that
/// workload would create, and the others keep the plain compute device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Features {
    /// `shaderEnqueue` and buffer device addresses on a compute queue.
    Compute,
    /// `shaderMeshEnqueue` and mesh shaders besides, on a graphics queue.
    MeshNodes,
}

impl Features {
    /// Why a workload needing them is skipped on `pd`, or `None` where the
    /// device (through the layer) offers them.
    pub fn missing(self, instance: &ash::Instance, pd: vk::PhysicalDevice) -> Option<&'static str> {
        match self {
            // `pick` chose a device offering `shaderEnqueue`.
            Features::Compute => None,
            Features::MeshNodes => {
                (!render::mesh_enqueue_offered(instance, pd)).then_some("the device offers no shaderMeshEnqueue")
            }
        }
    }

    /// A logical device of `pd` with them.
    pub fn device(self, instance: &ash::Instance, pd: vk::PhysicalDevice) -> Result<Gpu, String> {
        match self {
            Features::Compute => Gpu::new(instance, pd),
            Features::MeshNodes => Gpu::with_mesh_nodes(instance, pd),
        }
    }
}

/// The best physical device whose `shaderEnqueue` feature is true.
pub fn pick(instance: &ash::Instance) -> Result<vk::PhysicalDevice, String> {
    // SAFETY: valid instance.
    let devices =
        unsafe { instance.enumerate_physical_devices() }.map_err(|e| format!("vkEnumeratePhysicalDevices: {e:?}"))?;
    let mut best: Option<(u32, vk::PhysicalDevice)> = None;
    for pd in devices {
        let mut f = PhysicalDeviceShaderEnqueueFeatures::default();
        let mut f2 = vk::PhysicalDeviceFeatures2::default().push_next(&mut f);
        // SAFETY: valid physical device; output chain of locals.
        unsafe { instance.get_physical_device_features2(pd, &mut f2) };
        if f.shader_enqueue != vk::TRUE {
            continue;
        }
        // SAFETY: valid physical device.
        let rank = match unsafe { instance.get_physical_device_properties(pd) }.device_type {
            vk::PhysicalDeviceType::DISCRETE_GPU => 0,
            vk::PhysicalDeviceType::INTEGRATED_GPU => 1,
            vk::PhysicalDeviceType::VIRTUAL_GPU => 2,
            vk::PhysicalDeviceType::CPU => 3,
            _ => 4,
        };
        if best.is_none_or(|(r, _)| rank < r) {
            best = Some((rank, pd));
        }
    }
    best.map(|(_, pd)| pd).ok_or_else(|| "no device offers VK_AMDX_shader_enqueue with shaderEnqueue".into())
}

/// The position of `pd` in `instance`'s enumeration (how the pass-through
/// measurement, with instances of its own, names the same device).
pub fn index_of(instance: &ash::Instance, pd: vk::PhysicalDevice) -> Result<usize, String> {
    // SAFETY: valid instance.
    let devices =
        unsafe { instance.enumerate_physical_devices() }.map_err(|e| format!("vkEnumeratePhysicalDevices: {e:?}"))?;
    devices.iter().position(|&d| d == pd).ok_or_else(|| "the chosen device is not enumerated".to_string())
}

/// The UTC date and time (`date -u`), or seconds since the epoch.
pub fn date() -> String {
    let out = Command::new("date").args(["-u", "+%Y-%m-%dT%H:%M:%SZ"]).output();
    match out {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_string(),
        _ => {
            let secs =
                std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
            format!("unix:{secs}")
        }
    }
}

/// `BENCH_COMMIT` when set (a copy of the tree whose git metadata is not the
/// build's, as on the GPU machine), else `git rev-parse --short HEAD`.
pub fn commit() -> Option<String> {
    if let Ok(commit) = std::env::var("BENCH_COMMIT") {
        return Some(commit);
    }
    let out = Command::new("git").args(["rev-parse", "--short", "HEAD"]).output();
    match out {
        Ok(o) if o.status.success() => Some(String::from_utf8_lossy(&o.stdout).trim().to_string()),
        _ => None,
    }
}
