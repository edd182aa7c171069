//! RenderDoc's in-application API, used when RenderDoc is already loaded in
//! this process (`renderdoccmd capture`, `cargo xtask capture`, qrenderdoc's
//! "Launch Application"); nothing happens otherwise.
//!
//! A headless program presents no frames, so RenderDoc never starts a
//! capture by itself: the demo wraps its first hello-graph submission in
//! `StartFrameCapture` / `EndFrameCapture` ([`capture_once`]). With RenderDoc
//! loaded it also enables `VK_EXT_debug_utils` (which RenderDoc's layer
//! offers), so the layer's "dispatch graph" / "level N" / "node" labels and
//! the demo's buffer names show in the capture.
//!
//! The API table is read by index from RenderDoc's `renderdoc_app.h`
//! (`RENDERDOC_API_1_4_0` layout; RenderDoc 1.24 returns a newer, compatible
//! table). `dlopen` with `RTLD_NOLOAD` only finds a library that is already
//! loaded, so running the demo normally never loads RenderDoc.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use ash::vk;
use ash::vk::Handle;

/// glibc's `dlfcn.h` values on Linux.
const RTLD_NOW: c_int = 2;
const RTLD_NOLOAD: c_int = 4;

extern "C" {
    fn dlopen(file: *const c_char, mode: c_int) -> *mut c_void;
    fn dlsym(handle: *mut c_void, name: *const c_char) -> *mut c_void;
}

/// `eRENDERDOC_API_Version_1_4_0`.
const API_1_4_0: c_int = 10400;
/// Indices into the API's table of function pointers.
const START_FRAME_CAPTURE: usize = 19;
const END_FRAME_CAPTURE: usize = 21;
/// Pointers in the 1.4.0 table (through `DiscardFrameCapture`).
const TABLE_LEN: usize = 25;

type GetApi = unsafe extern "C" fn(version: c_int, out: *mut *mut c_void) -> c_int;
type StartFrameCapture = unsafe extern "C" fn(device: *mut c_void, window: *mut c_void);
type EndFrameCapture = unsafe extern "C" fn(device: *mut c_void, window: *mut c_void) -> u32;

/// The two functions the demo calls.
struct Api {
    start: StartFrameCapture,
    end: EndFrameCapture,
}

/// RenderDoc's API when `librenderdoc.so` is loaded in this process.
fn api() -> Option<&'static Api> {
    static API: OnceLock<Option<Api>> = OnceLock::new();
    API.get_or_init(|| {
        // SAFETY: dlopen/dlsym with NUL-terminated names; RTLD_NOLOAD loads nothing.
        let get_api = unsafe {
            let lib = dlopen(c"librenderdoc.so".as_ptr(), RTLD_NOW | RTLD_NOLOAD);
            if lib.is_null() {
                return None;
            }
            dlsym(lib, c"RENDERDOC_GetAPI".as_ptr())
        };
        if get_api.is_null() {
            return None;
        }
        // SAFETY: RENDERDOC_GetAPI has this signature (renderdoc_app.h).
        let get_api: GetApi = unsafe { std::mem::transmute::<*mut c_void, GetApi>(get_api) };
        let mut table: *mut c_void = std::ptr::null_mut();
        // SAFETY: `table` receives a pointer to RenderDoc's static table.
        if unsafe { get_api(API_1_4_0, &mut table) } != 1 || table.is_null() {
            return None;
        }
        // SAFETY: a 1.4.0 table holds TABLE_LEN function pointers, which live
        // as long as the library (never unloaded: we hold a reference).
        let entries = unsafe { std::slice::from_raw_parts(table as *const *mut c_void, TABLE_LEN) };
        let (start, end) = (entries[START_FRAME_CAPTURE], entries[END_FRAME_CAPTURE]);
        if start.is_null() || end.is_null() {
            return None;
        }
        // SAFETY: the table's entries at these indices have these signatures.
        Some(unsafe {
            Api {
                start: std::mem::transmute::<*mut c_void, StartFrameCapture>(start),
                end: std::mem::transmute::<*mut c_void, EndFrameCapture>(end),
            }
        })
    })
    .as_ref()
}

/// True when RenderDoc is loaded in this process.
pub fn loaded() -> bool {
    api().is_some()
}

/// The instance extensions the demo adds under RenderDoc (debug labels).
pub fn instance_extensions() -> &'static [&'static CStr] {
    if loaded() {
        &[ash::ext::debug_utils::NAME]
    } else {
        &[]
    }
}

/// Runs `f` inside a RenderDoc frame capture of `instance`'s device the
/// first time it is called in a process with RenderDoc loaded; otherwise
/// just runs it.
pub fn capture_once<R>(instance: &ash::Instance, f: impl FnOnce() -> R) -> R {
    static DONE: AtomicBool = AtomicBool::new(false);
    let Some(api) = api().filter(|_| !DONE.swap(true, Ordering::SeqCst)) else { return f() };
    // RENDERDOC_DEVICEPOINTER_FROM_VKINSTANCE: the instance's dispatch table
    // pointer, the first pointer-sized word of the object the handle points at.
    // SAFETY: a live dispatchable handle points at loader memory starting with it.
    let device = unsafe { *(instance.handle().as_raw() as *const *mut c_void) };
    // SAFETY: RenderDoc's API; a headless capture passes no window.
    unsafe { (api.start)(device, std::ptr::null_mut()) };
    let result = f();
    // SAFETY: ends the capture started above.
    if unsafe { (api.end)(device, std::ptr::null_mut()) } == 1 {
        println!("renderdoc: captured the first submission of the hello graph");
    } else {
        eprintln!("renderdoc: EndFrameCapture reported a failure; no capture was written");
    }
    result
}

/// Names `buffer` for RenderDoc's resource lists, where debug utils are on.
pub fn name_buffer(instance: &ash::Instance, device: &ash::Device, buffer: vk::Buffer, name: &CStr) {
    if !loaded() {
        return;
    }
    let utils = ash::ext::debug_utils::Device::new(instance, device);
    let info = vk::DebugUtilsObjectNameInfoEXT::default().object_handle(buffer).object_name(name);
    // SAFETY: a live buffer of `device`, whose instance enabled debug utils.
    if let Err(e) = unsafe { utils.set_debug_utils_object_name(&info) } {
        eprintln!("renderdoc: vkSetDebugUtilsObjectNameEXT: {e:?}");
    }
}
