//! Test harness for `VK_LAYER_EMU_shader_enqueue`: runs everything through
//! the real Vulkan loader, with the layer under test on top of the Khronos
//! validation layer, on Mesa lavapipe.
//!
//! Typical test:
//! ```no_run
//! use conformance_tests::{InstanceOptions, TestDevice, TestInstance};
//! let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
//! let pd = inst.pick_physical_device().expect("lavapipe");
//! {
//!     let dev = TestDevice::new(&inst, pd, &[]).expect("device");
//!     // ... use dev ...
//! } // the device and everything it made is destroyed here
//! inst.finish(); // destroys the instance, fails on any validation error
//! ```
//!
//! Modules: [`env`](mod@env) (loader environment, once per process), [`instance`],
//! [`device`], [`buffer`], [`compute`], [`graph`], [`messages`] (validation
//! messages), [`descriptor_heap`] (descriptor buffers), [`mesh`] (the
//! mesh-node scene), [`skip`] (run-time skips CI sees), [`texture`] (a sampled
//! texture), [`error`]. The revision-2 AMDX declarations are
//! `vk_amdx`'s; the Vulkan plumbing under the helpers is `vk_host`'s.

pub mod buffer;
pub mod compute;
pub mod descriptor_heap;
pub mod device;
pub mod dxc_models;
pub mod env;
pub mod error;
pub mod graph;
pub mod instance;
pub mod mesh;
pub mod messages;
pub mod models;
pub mod skip;
pub mod texture;

pub use buffer::HostBuffer;
pub use compute::{run_scale_add, StorageCompute};
pub use device::{compute_only_queue_family, compute_queue_family, queue_info, Extras, TestDevice};
pub use error::{Error, Result};
pub use instance::{string_setting, InstanceOptions, TestInstance};

/// CPU reference for `scale_add.comp`.
pub fn scale_add_reference(input: &[u32], mul: u32, add: u32) -> Vec<u32> {
    input.iter().map(|v| v.wrapping_mul(mul).wrapping_add(add)).collect()
}
