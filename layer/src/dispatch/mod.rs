//! The driver façade: the next layer's entry points, resolved once inside
//! `vkCreateInstance` / `vkCreateDevice` (resolving lazily later made the
//! loader hand back this layer's own functions and recurse until the stack
//! overflowed), and every driver call the runtime makes for itself as a
//! safe method of [`DeviceDispatch`], stated once, in the manner of
//! wgpu-hal's backend traits or ash's `Device` wrappers.
//!
//! # Where `unsafe` lives
//!
//! Calling a driver entry point is `unsafe` in Rust. The crate denies
//! `unsafe_code` everywhere but here and [`ffi`](crate::ffi) (the C
//! boundary: the application's raw pointers become Rust data there);
//! `layer/tests/unsafe_boundary.rs` checks it. The runtime above
//! (`graph`, `device`) records and creates through these methods and holds
//! no raw pointer.
//!
//! - [`commands`]: the `vkCmd*` the runtime records in the application's
//!   command buffers (barriers, binds, push constants, dispatches, draws,
//!   labels, timestamps).
//! - [`objects`]: the objects it creates, queries and destroys (shader
//!   modules, pipelines, layouts, query pools, executable statistics).
//! - [`mapped`]: buffers in host-visible memory mapped for their lifetime,
//!   written and read through bounds-checked [`mapped::HostRange`]s.
//!
//! # The façade's invariant
//!
//! The methods are safe to call because of what holds for every caller in
//! this crate, stated here once instead of at each call: the table is the
//! one its device was created with, and the device lives; every handle
//! passed is a live object of that device (the runtime's own, or one the
//! application handed the layer in the call being served); a command
//! buffer is one the application is recording, on the thread that serves
//! its `vkCmd*` call; an object the runtime destroys is its own and idle.
//! A method takes Rust slices and create infos that borrow what they point
//! to, so that every array it passes down lives across the call. What a
//! command needs beyond that (a render pass instance open or not, a range
//! inside its buffer) is the recording code's part, said at each method;
//! the driver's validity rules are then met exactly as by the raw calls
//! this replaced, in the same order with the same arguments.

pub(crate) mod commands;
pub(crate) mod mapped;
pub(crate) mod objects;

use ash::vk;
use std::ffi::{c_void, CStr};

/// Instance-level entry points of the next layer.
pub(crate) struct InstanceDispatch {
    pub handle: vk::Instance,
    pub get_instance_proc_addr: vk::PFN_vkGetInstanceProcAddr,
    pub fp: ash::Instance,
    /// `vkGetPhysicalDeviceFeatures2KHR` / `...Properties2KHR`, when the
    /// application enabled `VK_KHR_get_physical_device_properties2`.
    pub get_features2_khr: vk::PFN_vkGetPhysicalDeviceFeatures2,
    pub get_properties2_khr: vk::PFN_vkGetPhysicalDeviceProperties2,
    pub has_features2_khr: bool,
    /// `VK_EXT_debug_utils` instance commands, when the application enabled it.
    pub debug_utils: Option<ash::ext::debug_utils::InstanceFn>,
}

impl InstanceDispatch {
    /// Resolves every entry point through the next layer's `vkGetInstanceProcAddr`.
    ///
    /// # Safety
    /// `gipa` must be the next layer's valid `vkGetInstanceProcAddr` and
    /// `handle` the instance it just created.
    pub(crate) unsafe fn load(gipa: vk::PFN_vkGetInstanceProcAddr, handle: vk::Instance, debug_utils: bool) -> Self {
        let lookup = |name: &CStr| -> *const c_void {
            // SAFETY: valid next-layer GIPA and instance (caller's contract).
            unsafe { std::mem::transmute::<vk::PFN_vkVoidFunction, *const c_void>(gipa(handle, name.as_ptr())) }
        };
        // SAFETY: `lookup` returns entry points of this instance or null;
        // ash replaces null ones with stubs that panic (caught by the guards).
        let fp = unsafe { ash::Instance::load_with(lookup, handle) };
        let features2 = lookup(c"vkGetPhysicalDeviceFeatures2KHR");
        let properties2 = lookup(c"vkGetPhysicalDeviceProperties2KHR");
        InstanceDispatch {
            handle,
            get_instance_proc_addr: gipa,
            get_features2_khr: if features2.is_null() {
                fp.fp_v1_1().get_physical_device_features2
            } else {
                // SAFETY: the name's prototype is vkGetPhysicalDeviceFeatures2's.
                unsafe { std::mem::transmute::<*const c_void, vk::PFN_vkGetPhysicalDeviceFeatures2>(features2) }
            },
            get_properties2_khr: if properties2.is_null() {
                fp.fp_v1_1().get_physical_device_properties2
            } else {
                // SAFETY: as above, for vkGetPhysicalDeviceProperties2.
                unsafe { std::mem::transmute::<*const c_void, vk::PFN_vkGetPhysicalDeviceProperties2>(properties2) }
            },
            has_features2_khr: !features2.is_null(),
            debug_utils: debug_utils.then(|| ash::ext::debug_utils::InstanceFn::load(lookup)),
            fp,
        }
    }
}

/// Which device extensions with a table in [`DeviceDispatch`] are enabled.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct EnabledTables {
    pub push_descriptor: bool,
    pub maintenance6: bool,
    pub descriptor_buffer: bool,
    /// `shaderMeshEnqueue` (the layer enabled `VK_EXT_mesh_shader`).
    pub mesh_enqueue: bool,
    /// On the instance (labels need it).
    pub debug_utils: bool,
    /// The layer enabled `VK_KHR_pipeline_executable_properties` (the
    /// `shader_statistics` setting).
    pub executable_properties: bool,
}

/// Device-level entry points of the next layer.
pub(crate) struct DeviceDispatch {
    pub fp: ash::Device,
    pub get_device_proc_addr: vk::PFN_vkGetDeviceProcAddr,
    pub push_descriptor: Option<ash::khr::push_descriptor::DeviceFn>,
    /// Present when the application enabled `VK_KHR_maintenance6`.
    pub maintenance6: Option<ash::khr::maintenance6::DeviceFn>,
    /// Present when the application enabled `VK_EXT_descriptor_buffer`.
    pub descriptor_buffer: Option<ash::ext::descriptor_buffer::DeviceFn>,
    /// Present when the application enabled `VK_EXT_debug_utils` (labels).
    pub debug_utils: Option<ash::ext::debug_utils::DeviceFn>,
    /// Present with `shaderMeshEnqueue`: mesh node draws.
    pub mesh_shader: Option<ash::ext::mesh_shader::DeviceFn>,
    /// Present with `shaderMeshEnqueue` where the device has dynamic rendering.
    pub rendering: Option<RenderingFns>,
    /// Present with the `shader_statistics` setting where the driver has it.
    pub executable_properties: Option<ash::khr::pipeline_executable_properties::DeviceFn>,
}

/// Dynamic rendering's two commands (core 1.3, or `VK_KHR_dynamic_rendering`).
#[derive(Clone, Copy)]
pub(crate) struct RenderingFns {
    pub begin: vk::PFN_vkCmdBeginRendering,
    pub end: vk::PFN_vkCmdEndRendering,
}

impl DeviceDispatch {
    /// # Safety
    /// `gdpa` must be the next layer's `vkGetDeviceProcAddr` and `handle` the
    /// device it just created; `extensions` says which of the extensions
    /// with a table here the application enabled.
    pub(crate) unsafe fn load(
        gdpa: vk::PFN_vkGetDeviceProcAddr,
        handle: vk::Device,
        extensions: EnabledTables,
    ) -> Self {
        let lookup = |name: &CStr| -> *const c_void {
            // SAFETY: valid next-layer GDPA and device (caller's contract).
            unsafe { std::mem::transmute::<vk::PFN_vkVoidFunction, *const c_void>(gdpa(handle, name.as_ptr())) }
        };
        DeviceDispatch {
            // SAFETY: as for the instance table.
            fp: unsafe { ash::Device::load_with(lookup, handle) },
            get_device_proc_addr: gdpa,
            push_descriptor: extensions.push_descriptor.then(|| ash::khr::push_descriptor::DeviceFn::load(lookup)),
            maintenance6: extensions.maintenance6.then(|| ash::khr::maintenance6::DeviceFn::load(lookup)),
            descriptor_buffer: extensions
                .descriptor_buffer
                .then(|| ash::ext::descriptor_buffer::DeviceFn::load(lookup)),
            debug_utils: extensions.debug_utils.then(|| ash::ext::debug_utils::DeviceFn::load(lookup)),
            mesh_shader: extensions.mesh_enqueue.then(|| ash::ext::mesh_shader::DeviceFn::load(lookup)),
            rendering: if extensions.mesh_enqueue { RenderingFns::load(&lookup) } else { None },
            executable_properties: extensions
                .executable_properties
                .then(|| ash::khr::pipeline_executable_properties::DeviceFn::load(lookup)),
        }
    }

    /// The device the table belongs to.
    pub(crate) fn handle(&self) -> vk::Device {
        self.fp.handle()
    }

    /// The next layer's entry point for `name`, or null.
    pub(crate) fn next_proc_addr(&self, name: &CStr) -> vk::PFN_vkVoidFunction {
        // SAFETY: valid next-layer GDPA and device handle.
        unsafe { (self.get_device_proc_addr)(self.fp.handle(), name.as_ptr()) }
    }
}

impl RenderingFns {
    /// The core names, else the KHR ones; `None` if the device has neither.
    fn load(lookup: &dyn Fn(&CStr) -> *const c_void) -> Option<Self> {
        let find = |core: &CStr, khr: &CStr| {
            let f = lookup(core);
            if f.is_null() {
                lookup(khr)
            } else {
                f
            }
        };
        let begin = find(c"vkCmdBeginRendering", c"vkCmdBeginRenderingKHR");
        let end = find(c"vkCmdEndRendering", c"vkCmdEndRenderingKHR");
        if begin.is_null() || end.is_null() {
            return None;
        }
        // SAFETY: non-null entry points with these prototypes.
        unsafe {
            Some(RenderingFns {
                begin: std::mem::transmute::<*const c_void, vk::PFN_vkCmdBeginRendering>(begin),
                end: std::mem::transmute::<*const c_void, vk::PFN_vkCmdEndRendering>(end),
            })
        }
    }
}
