//! A small sampled texture for tests that read images in compute shaders
//! (embedded samplers, descriptor buffers): uploaded through a staging
//! buffer and left in `SHADER_READ_ONLY_OPTIMAL`.

use crate::TestDevice;
use ash::vk;

/// A `texels.len()` x 1 RGBA8 texture holding `texels`, ready to sample in
/// compute shaders, with its memory and view (the caller destroys them).
pub fn rgba8_texture(dev: &TestDevice<'_>, texels: &[[u8; 4]]) -> (vk::Image, vk::DeviceMemory, vk::ImageView) {
    let d = &dev.device;
    let bytes: Vec<u8> = texels.concat();
    let staging = dev.create_host_buffer(bytes.len() as u64, vk::BufferUsageFlags::TRANSFER_SRC).expect("staging");
    staging.write_bytes(0, &bytes).expect("texels");
    let extent = vk::Extent3D { width: texels.len() as u32, height: 1, depth: 1 };
    let info = vk::ImageCreateInfo::default()
        .image_type(vk::ImageType::TYPE_2D)
        .format(vk::Format::R8G8B8A8_UNORM)
        .extent(extent)
        .mip_levels(1)
        .array_layers(1)
        .samples(vk::SampleCountFlags::TYPE_1)
        .tiling(vk::ImageTiling::OPTIMAL)
        .usage(vk::ImageUsageFlags::SAMPLED | vk::ImageUsageFlags::TRANSFER_DST);
    let range =
        vk::ImageSubresourceRange::default().aspect_mask(vk::ImageAspectFlags::COLOR).level_count(1).layer_count(1);
    // SAFETY: (block) valid device; the caller destroys the objects.
    unsafe {
        let image = d.create_image(&info, None).expect("image");
        let req = d.get_image_memory_requirements(image);
        let ty = dev.memory_type(req.memory_type_bits, vk::MemoryPropertyFlags::empty()).expect("memory type");
        let memory = d
            .allocate_memory(&vk::MemoryAllocateInfo::default().allocation_size(req.size).memory_type_index(ty), None)
            .expect("memory");
        d.bind_image_memory(image, memory, 0).expect("bind");
        dev.submit_once(|cb| {
            let barrier = |from, to, src, dst| {
                vk::ImageMemoryBarrier::default()
                    .src_access_mask(src)
                    .dst_access_mask(dst)
                    .old_layout(from)
                    .new_layout(to)
                    .image(image)
                    .subresource_range(range)
            };
            let to_dst = barrier(
                vk::ImageLayout::UNDEFINED,
                vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                vk::AccessFlags::empty(),
                vk::AccessFlags::TRANSFER_WRITE,
            );
            let (top, transfer) = (vk::PipelineStageFlags::TOP_OF_PIPE, vk::PipelineStageFlags::TRANSFER);
            d.cmd_pipeline_barrier(cb, top, transfer, vk::DependencyFlags::empty(), &[], &[], &[to_dst]);
            let region = vk::BufferImageCopy::default()
                .image_subresource(
                    vk::ImageSubresourceLayers::default().aspect_mask(vk::ImageAspectFlags::COLOR).layer_count(1),
                )
                .image_extent(extent);
            d.cmd_copy_buffer_to_image(cb, staging.buffer, image, vk::ImageLayout::TRANSFER_DST_OPTIMAL, &[region]);
            let to_read = barrier(
                vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL,
                vk::AccessFlags::TRANSFER_WRITE,
                vk::AccessFlags::SHADER_READ,
            );
            let compute = vk::PipelineStageFlags::COMPUTE_SHADER;
            d.cmd_pipeline_barrier(cb, transfer, compute, vk::DependencyFlags::empty(), &[], &[], &[to_read]);
        })
        .expect("upload");
        let view_info = vk::ImageViewCreateInfo::default()
            .image(image)
            .view_type(vk::ImageViewType::TYPE_2D)
            .format(vk::Format::R8G8B8A8_UNORM)
            .subresource_range(range);
        let view = d.create_image_view(&view_info, None).expect("view");
        (image, memory, view)
    }
}
