//! Owned copies of `pNext` chains the layer must edit before calling down.
//!
//! The application's structures are `const`: instead of patching them, the
//! layer copies every node it knows the size of (all of ash's structures,
//! see [`struct_sizes`](super::struct_sizes)) into 8-byte aligned storage it
//! owns, edits, drops or appends nodes, and relinks. Copying stops at the
//! first node of unknown type: from there the application's chain is linked
//! as it is (the tail).
//!
//! Why every structure and not only the few the layer edits: to drop or
//! change a node, every node before it must be relinked, so copied, and the
//! application may put any structure first. A table of the edited types
//! alone would stop the copy early and leave such nodes in the uncopied tail
//! (features the layer must strip would reach the driver). The full table is
//! therefore kept, but generated from ash's definitions
//! (`cargo xtask struct-sizes`), not edited by hand.

use super::loader::{LayerDeviceCreateInfo, LayerInstanceCreateInfo};
use super::struct_sizes::struct_size;
use ash::vk::{self, TaggedStructure};
use std::ffi::c_void;

/// Size of a chain node: ash's structures plus the loader's link structures
/// (which lead every `vkCreateInstance`/`vkCreateDevice` chain a layer sees).
fn node_size(s_type: vk::StructureType) -> Option<usize> {
    match s_type {
        vk::StructureType::LOADER_INSTANCE_CREATE_INFO => Some(std::mem::size_of::<LayerInstanceCreateInfo>()),
        vk::StructureType::LOADER_DEVICE_CREATE_INFO => Some(std::mem::size_of::<LayerDeviceCreateInfo>()),
        _ => struct_size(s_type),
    }
}

/// One copied chain node; `storage` holds the structure's bytes.
struct Node {
    s_type: vk::StructureType,
    storage: Box<[u64]>,
}

impl Node {
    fn base(&mut self) -> *mut vk::BaseOutStructure<'static> {
        self.storage.as_mut_ptr().cast()
    }
}

/// A `pNext` chain the layer owns.
pub(crate) struct OwnedChain {
    nodes: Vec<Node>,
    /// First node that could not be copied; linked after the copies.
    tail: *const c_void,
}

impl OwnedChain {
    /// Copies the chain starting at `p_next`.
    ///
    /// # Safety
    /// `p_next` must be null or point to a valid Vulkan structure chain.
    pub(crate) unsafe fn copy_from(mut p_next: *const c_void) -> Self {
        let mut nodes = Vec::new();
        while !p_next.is_null() {
            // SAFETY: every chain node starts with sType/pNext (caller's contract).
            let base = unsafe { &*p_next.cast::<vk::BaseInStructure<'static>>() };
            let Some(size) = node_size(base.s_type) else { break };
            let mut storage = vec![0u64; size.div_ceil(8)].into_boxed_slice();
            // SAFETY: the node is `size` bytes long (its sType says so) and
            // the storage holds at least that many bytes; they do not overlap.
            unsafe { std::ptr::copy_nonoverlapping(p_next.cast::<u8>(), storage.as_mut_ptr().cast::<u8>(), size) };
            nodes.push(Node { s_type: base.s_type, storage });
            p_next = base.p_next.cast();
        }
        OwnedChain { nodes, tail: p_next }
    }

    /// True when the uncopied tail contains a node of this type.
    ///
    /// # Safety
    /// The chain the copy was made from must still be valid.
    pub(crate) unsafe fn tail_contains(&self, s_type: vk::StructureType) -> bool {
        let mut p = self.tail;
        while !p.is_null() {
            // SAFETY: the tail is the application's valid chain.
            let base = unsafe { &*p.cast::<vk::BaseInStructure<'static>>() };
            if base.s_type == s_type {
                return true;
            }
            p = base.p_next.cast();
        }
        false
    }

    #[cfg(test)]
    pub(crate) fn contains(&self, s_type: vk::StructureType) -> bool {
        self.nodes.iter().any(|n| n.s_type == s_type)
    }

    /// Drops every copied node of this type; returns how many were dropped.
    pub(crate) fn remove(&mut self, s_type: vk::StructureType) -> usize {
        let before = self.nodes.len();
        self.nodes.retain(|n| n.s_type != s_type);
        before - self.nodes.len()
    }

    /// The first copied node of type `T`, typed.
    pub(crate) fn get_mut<T: TaggedStructure>(&mut self) -> Option<&mut T> {
        let node = self.nodes.iter_mut().find(|n| n.s_type == T::STRUCTURE_TYPE)?;
        debug_assert!(node.storage.len() * 8 >= std::mem::size_of::<T>());
        // SAFETY: the storage holds a copy of a structure whose sType is
        // `T::STRUCTURE_TYPE`, i.e. a `T`, 8-byte aligned and fully sized.
        Some(unsafe { &mut *node.storage.as_mut_ptr().cast::<T>() })
    }

    /// Reads the first node of type `T` (any `pNext` inside is not followed).
    pub(crate) fn get<T: TaggedStructure + Copy>(&mut self) -> Option<T> {
        self.get_mut::<T>().map(|t| *t)
    }

    /// Appends a structure the layer adds (its `pNext` is overwritten on link).
    pub(crate) fn push<T: TaggedStructure>(&mut self, value: T) {
        let size = std::mem::size_of::<T>();
        let mut storage = vec![0u64; size.div_ceil(8)].into_boxed_slice();
        // SAFETY: storage is large enough and 8-byte aligned for `T`.
        unsafe { std::ptr::write(storage.as_mut_ptr().cast::<T>(), value) };
        self.nodes.push(Node { s_type: T::STRUCTURE_TYPE, storage });
    }

    /// Links the nodes (copies first, then the tail) and returns the head,
    /// valid while `self` lives and is not modified.
    pub(crate) fn link(&mut self) -> *const c_void {
        let mut next = self.tail as *mut vk::BaseOutStructure<'static>;
        for node in self.nodes.iter_mut().rev() {
            let base = node.base();
            // SAFETY: `base` points at this node's own storage.
            unsafe { (*base).p_next = next };
            next = base;
        }
        next as *const c_void
    }
}

/// Calls `f` with the output chain at `p_next` temporarily unlinked from
/// every node of type `s_type`, restoring the links afterwards. For output
/// chains (`VkPhysicalDeviceFeatures2` and friends) that the application
/// handed us writable; returns the unlinked nodes' addresses.
///
/// # Safety
/// `head` must point to a valid, writable structure chain owned by the caller.
pub(crate) unsafe fn with_unlinked<R>(
    head: *mut vk::BaseOutStructure<'static>,
    s_type: vk::StructureType,
    f: impl FnOnce() -> R,
) -> (R, Vec<*mut vk::BaseOutStructure<'static>>) {
    let mut removed = Vec::new(); // (predecessor, node)
    let mut prev = head;
    // SAFETY: the whole chain is valid and writable (caller's contract).
    unsafe {
        while !(*prev).p_next.is_null() {
            let node = (*prev).p_next;
            if (*node).s_type == s_type {
                (*prev).p_next = (*node).p_next;
                removed.push((prev, node));
            } else {
                prev = node;
            }
        }
    }
    let result = f();
    for &(prev, node) in removed.iter().rev() {
        // SAFETY: restores exactly the links removed above, in reverse order.
        unsafe { (*prev).p_next = node };
    }
    (result, removed.into_iter().map(|(_, node)| node).collect())
}

/// The first node of type `T` in a const chain.
///
/// # Safety
/// `p_next` must be a valid chain.
pub(super) unsafe fn find_in_chain<T: TaggedStructure>(mut p_next: *const c_void) -> Option<&'static T> {
    while !p_next.is_null() {
        // SAFETY: valid chain.
        let base = unsafe { &*p_next.cast::<vk::BaseInStructure<'static>>() };
        if base.s_type == T::STRUCTURE_TYPE {
            // SAFETY: the sType says it is a `T`.
            return Some(unsafe { &*p_next.cast::<T>() });
        }
        p_next = base.p_next.cast();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_edits_and_relinks_without_touching_the_original() {
        let mut v12 = vk::PhysicalDeviceVulkan12Features { shader_float16: vk::TRUE, ..Default::default() };
        let mut v11 = vk::PhysicalDeviceVulkan11Features {
            p_next: (&mut v12 as *mut vk::PhysicalDeviceVulkan12Features).cast(),
            ..Default::default()
        };
        let head = (&mut v11 as *mut vk::PhysicalDeviceVulkan11Features).cast_const().cast();
        // SAFETY: a valid two-node chain on the stack.
        let mut chain = unsafe { OwnedChain::copy_from(head) };
        chain.get_mut::<vk::PhysicalDeviceVulkan12Features>().unwrap().buffer_device_address = vk::TRUE;
        assert_eq!(chain.remove(vk::StructureType::PHYSICAL_DEVICE_VULKAN_1_1_FEATURES), 1);
        chain.push(vk::PhysicalDeviceMaintenance4Features::default().maintenance4(true));
        let new_head = chain.link();
        // SAFETY: the owned chain is valid while `chain` lives.
        let first = unsafe { &*new_head.cast::<vk::PhysicalDeviceVulkan12Features>() };
        assert_eq!(first.s_type, vk::StructureType::PHYSICAL_DEVICE_VULKAN_1_2_FEATURES);
        assert_eq!((first.shader_float16, first.buffer_device_address), (vk::TRUE, vk::TRUE));
        // SAFETY: as above.
        let second = unsafe { &*first.p_next.cast::<vk::PhysicalDeviceMaintenance4Features>() };
        assert_eq!(second.maintenance4, vk::TRUE);
        assert!(second.p_next.is_null());
        assert_eq!(v12.buffer_device_address, vk::FALSE, "the application's struct is untouched");
    }

    #[test]
    fn unknown_nodes_end_the_copy_and_stay_linked() {
        let mut unknown =
            vk::BaseOutStructure { s_type: vk::StructureType::from_raw(0x7fff_0000), ..Default::default() };
        let v13 = vk::PhysicalDeviceVulkan13Features {
            p_next: (&mut unknown as *mut vk::BaseOutStructure).cast(),
            ..Default::default()
        };
        let head = (&v13 as *const vk::PhysicalDeviceVulkan13Features).cast();
        // SAFETY: a valid two-node chain on the stack.
        let mut chain = unsafe { OwnedChain::copy_from(head) };
        assert!(chain.contains(vk::StructureType::PHYSICAL_DEVICE_VULKAN_1_3_FEATURES));
        // SAFETY: the original chain is alive.
        assert!(unsafe { chain.tail_contains(vk::StructureType::from_raw(0x7fff_0000)) });
        let new_head = chain.link();
        // SAFETY: owned node.
        let first = unsafe { &*new_head.cast::<vk::PhysicalDeviceVulkan13Features>() };
        assert_eq!(first.p_next.cast_const(), (&unknown as *const vk::BaseOutStructure).cast());
    }

    #[test]
    fn unlinking_an_output_node_is_undone() {
        let mut tail = vk::PhysicalDeviceVulkan13Features::default();
        let mut middle = vk::PhysicalDeviceVulkan12Features {
            p_next: (&mut tail as *mut vk::PhysicalDeviceVulkan13Features).cast(),
            ..Default::default()
        };
        let mut head = vk::PhysicalDeviceFeatures2 {
            p_next: (&mut middle as *mut vk::PhysicalDeviceVulkan12Features).cast(),
            ..Default::default()
        };
        let head_ptr: *mut vk::BaseOutStructure = (&mut head as *mut vk::PhysicalDeviceFeatures2).cast();
        let tail_ptr: *mut vk::PhysicalDeviceVulkan13Features = &mut tail;
        let check = || {
            // SAFETY: still valid; the middle node is unlinked here.
            unsafe { (*head_ptr).p_next.cast::<vk::PhysicalDeviceVulkan13Features>() == tail_ptr }
        };
        // SAFETY: valid writable chain on the stack.
        let (seen, removed) =
            unsafe { with_unlinked(head_ptr, vk::StructureType::PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, check) };
        assert!(seen);
        assert_eq!(removed.len(), 1);
        assert_eq!(head.p_next, (&mut middle as *mut vk::PhysicalDeviceVulkan12Features).cast());
    }
}
