//! Descriptor buffers (`VK_EXT_descriptor_buffer`) for the tests of the
//! translators' binding model: a heap of sets of one storage buffer each
//! (binding 0), laid out one after the other in a host-visible descriptor
//! buffer, with the set layout and a pipeline layout for them. The device
//! comes from `TestDevice::with_amdx_extras`.

use ash::vk;

use crate::buffer::HostBuffer;
use crate::device::{Owned, TestDevice};
use crate::error::{Error, Result};
use crate::instance::TestInstance;

/// Sets of one storage buffer in a descriptor buffer.
pub struct DescriptorHeap {
    pub fns: ash::ext::descriptor_buffer::Device,
    /// Binding 0: a storage buffer; created for descriptor buffers.
    pub set_layout: vk::DescriptorSetLayout,
    /// The set layout at set 0 and `push_bytes` of compute push constants.
    pub layout: vk::PipelineLayout,
    pub heap: HostBuffer,
    /// Bytes from one set to the next (aligned as the device requires).
    pub stride: u64,
    binding_offset: usize,
    descriptor_size: usize,
}

impl DescriptorHeap {
    /// A heap of `sets` sets on `dev`.
    pub fn new(inst: &TestInstance, dev: &TestDevice<'_>, sets: u64, push_bytes: u32) -> Result<Self> {
        let d = &dev.device;
        let fns = ash::ext::descriptor_buffer::Device::new(&inst.instance, d);
        let mut props = vk::PhysicalDeviceDescriptorBufferPropertiesEXT::default();
        let mut p2 = vk::PhysicalDeviceProperties2::default().push_next(&mut props);
        // SAFETY: valid physical device and output chain.
        unsafe { inst.instance.get_physical_device_properties2(dev.physical, &mut p2) };
        let binding = [vk::DescriptorSetLayoutBinding::default()
            .binding(0)
            .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
            .descriptor_count(1)
            .stage_flags(vk::ShaderStageFlags::COMPUTE)];
        let info = vk::DescriptorSetLayoutCreateInfo::default()
            .bindings(&binding)
            .flags(vk::DescriptorSetLayoutCreateFlags::DESCRIPTOR_BUFFER_EXT);
        // SAFETY: valid device and create info.
        let set_layout =
            unsafe { d.create_descriptor_set_layout(&info, None) }.map_err(Error::vk("vkCreateDescriptorSetLayout"))?;
        dev.own(Owned::SetLayout(set_layout));
        let ranges =
            [vk::PushConstantRange { stage_flags: vk::ShaderStageFlags::COMPUTE, offset: 0, size: push_bytes }];
        let set_layouts = [set_layout];
        let mut layout_info = vk::PipelineLayoutCreateInfo::default().set_layouts(&set_layouts);
        if push_bytes > 0 {
            layout_info = layout_info.push_constant_ranges(&ranges);
        }
        // SAFETY: valid device and create info.
        let layout =
            unsafe { d.create_pipeline_layout(&layout_info, None) }.map_err(Error::vk("vkCreatePipelineLayout"))?;
        dev.own(Owned::PipelineLayout(layout));
        // SAFETY: a set layout created for descriptor buffers.
        let (size, binding_offset) = unsafe {
            (
                fns.get_descriptor_set_layout_size(set_layout),
                fns.get_descriptor_set_layout_binding_offset(set_layout, 0),
            )
        };
        let stride = size.next_multiple_of(props.descriptor_buffer_offset_alignment);
        let heap = dev.create_host_buffer(
            sets * stride,
            vk::BufferUsageFlags::RESOURCE_DESCRIPTOR_BUFFER_EXT | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS,
        )?;
        Ok(DescriptorHeap {
            fns,
            set_layout,
            layout,
            heap,
            stride,
            binding_offset: binding_offset as usize,
            descriptor_size: props.storage_buffer_descriptor_size,
        })
    }

    /// Byte offset of set `set` in the heap.
    pub fn offset(&self, set: u64) -> u64 {
        set * self.stride
    }

    /// Makes set `set` describe all of `target` (a buffer with a device address).
    pub fn write_storage(&self, set: u64, target: &HostBuffer) -> Result<()> {
        let address = vk::DescriptorAddressInfoEXT::default()
            .address(target.address.ok_or_else(|| Error::Setup("the target has no device address".into()))?)
            .range(target.size)
            .format(vk::Format::UNDEFINED);
        let get = vk::DescriptorGetInfoEXT::default()
            .ty(vk::DescriptorType::STORAGE_BUFFER)
            .data(vk::DescriptorDataEXT { p_storage_buffer: &address });
        let mut bytes = vec![0u8; self.descriptor_size];
        // SAFETY: valid device; `bytes` holds a storage-buffer descriptor.
        unsafe { self.fns.get_descriptor(&get, &mut bytes) };
        Ok(self.heap.write_bytes(self.offset(set) as usize + self.binding_offset, &bytes)?)
    }

    /// Binds the heap as the command buffer's one resource descriptor buffer.
    pub fn bind(&self, cb: vk::CommandBuffer) {
        let heaps = [vk::DescriptorBufferBindingInfoEXT::default()
            .address(self.heap.address.unwrap_or(0))
            .usage(vk::BufferUsageFlags::RESOURCE_DESCRIPTOR_BUFFER_EXT)];
        // SAFETY: `cb` is recording on the heap's device.
        unsafe { self.fns.cmd_bind_descriptor_buffers(cb, &heaps) };
    }
}
