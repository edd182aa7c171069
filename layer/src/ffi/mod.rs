//! The C boundary: exported entry points and hooks. The only module with
//! `extern "system"` functions and raw pointers. Each hook turns pointers
//! into references with the helpers below, looks up state, calls safe code
//! and converts the result; each runs inside a [`guard`], but for the short
//! paths of the hottest `vkCmd*` hooks, which cannot panic ([`hook`]).
//!
//! The top tier (see the crate's "Layers"): the hooks look their device up
//! through [`lookup`] in [`crate::device`] and call the runtime in
//! [`crate::graph`] with what it needs; nothing below imports `ffi`.

mod buffers;
mod chain;
mod commands;
mod descriptor_buffer;
mod device;
mod device_features;
mod graph;
mod guard;
mod hook;
mod instance;
mod layouts;
mod loader;
mod lookup;
mod maintenance6;
mod objects;
mod pipelines;
mod proc_addr;
mod rendering;
mod report;
mod shader_modules;
mod struct_sizes;
mod templates;

use crate::state::DispatchKey;
use ash::vk::{self, Handle};
use std::ffi::{c_char, CStr};

/// The dispatch key of a dispatchable handle: its first pointer-sized word.
///
/// # Safety
/// `handle` must be a valid dispatchable object created through the loader.
pub(crate) unsafe fn dispatch_key<H: Handle>(handle: H) -> DispatchKey {
    let raw = handle.as_raw() as usize as *const usize;
    // SAFETY: dispatchable objects start with the loader's dispatch pointer.
    DispatchKey(unsafe { *raw })
}

/// A slice from a Vulkan (pointer, count) pair; empty for null or 0.
///
/// # Safety
/// When non-null, `ptr` must point to `count` valid elements that outlive `'a`.
pub(crate) unsafe fn slice<'a, T>(ptr: *const T, count: u32) -> &'a [T] {
    if ptr.is_null() || count == 0 {
        &[]
    } else {
        // SAFETY: caller's contract.
        unsafe { std::slice::from_raw_parts(ptr, count as usize) }
    }
}

/// A C string argument, or `None` for null.
///
/// # Safety
/// When non-null, `ptr` must be a NUL-terminated string outliving `'a`.
pub(crate) unsafe fn c_str<'a>(ptr: *const c_char) -> Option<&'a CStr> {
    // SAFETY: caller's contract.
    (!ptr.is_null()).then(|| unsafe { CStr::from_ptr(ptr) })
}

/// Creates one pipeline per create info with `create`, as the
/// `vkCreate*Pipelines` commands specify: a failed entry is
/// `VK_NULL_HANDLE`, the first error is returned, and
/// `VK_PIPELINE_CREATE_EARLY_RETURN_ON_FAILURE_BIT` stops at it.
pub(crate) fn create_each<I>(
    infos: &[I],
    out: &mut [vk::Pipeline],
    flags: impl Fn(&I) -> vk::PipelineCreateFlags,
    mut create: impl FnMut(&I) -> Result<vk::Pipeline, vk::Result>,
) -> vk::Result {
    out.fill(vk::Pipeline::null());
    let mut result = vk::Result::SUCCESS;
    for (info, slot) in infos.iter().zip(out.iter_mut()) {
        match create(info) {
            Ok(pipeline) => *slot = pipeline,
            Err(error) => {
                if result == vk::Result::SUCCESS {
                    result = error;
                }
                if flags(info).contains(vk::PipelineCreateFlags::EARLY_RETURN_ON_FAILURE) {
                    break;
                }
            }
        }
    }
    result
}

/// Writes `items` with Vulkan's two-call idiom (`pCount` in/out, optional
/// array, `VK_INCOMPLETE` when the array is too short).
///
/// # Safety
/// `count` must be valid; `out`, when non-null, must hold `*count` elements.
pub(crate) unsafe fn write_array<T: Copy>(items: &[T], count: *mut u32, out: *mut T) -> vk::Result {
    if count.is_null() {
        return vk::Result::ERROR_INITIALIZATION_FAILED;
    }
    if out.is_null() {
        // SAFETY: valid count pointer.
        unsafe { *count = items.len() as u32 };
        return vk::Result::SUCCESS;
    }
    // SAFETY: valid count pointer.
    let capacity = unsafe { *count } as usize;
    let written = capacity.min(items.len());
    // SAFETY: `out` holds `capacity >= written` elements.
    unsafe {
        std::ptr::copy_nonoverlapping(items.as_ptr(), out, written);
        *count = written as u32;
    }
    if written < items.len() {
        vk::Result::INCOMPLETE
    } else {
        vk::Result::SUCCESS
    }
}
