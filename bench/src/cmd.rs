//! Command-buffer helpers shared by the workloads: begin/end, global memory
//! barriers, buffer fill/copy, and a one-time upload of input words into a
//! device-local buffer.

use ash::vk;

use demo::gpu::{Buffer, Gpu};
use vk_host::submit::memory_barrier;

/// Buffer usage of every benchmark buffer (storage, indirect, transfers).
pub fn usage() -> vk::BufferUsageFlags {
    vk::BufferUsageFlags::STORAGE_BUFFER
        | vk::BufferUsageFlags::INDIRECT_BUFFER
        | vk::BufferUsageFlags::TRANSFER_SRC
        | vk::BufferUsageFlags::TRANSFER_DST
}

/// Begins `cb` (reset implicitly by the pool's flag).
pub fn begin(gpu: &Gpu, cb: vk::CommandBuffer) -> Result<(), String> {
    // SAFETY: `cb` is not pending (every submit is waited on).
    unsafe { gpu.device.begin_command_buffer(cb, &vk::CommandBufferBeginInfo::default()) }
        .map_err(|e| format!("vkBeginCommandBuffer: {e:?}"))
}

/// Ends `cb`.
pub fn end(gpu: &Gpu, cb: vk::CommandBuffer) -> Result<(), String> {
    // SAFETY: `cb` is recording.
    unsafe { gpu.device.end_command_buffer(cb) }.map_err(|e| format!("vkEndCommandBuffer: {e:?}"))
}

/// A global memory barrier, all writes of `src` visible to all reads/writes of `dst`.
pub fn barrier(gpu: &Gpu, cb: vk::CommandBuffer, src: vk::PipelineStageFlags, dst: vk::PipelineStageFlags) {
    let all = vk::AccessFlags::MEMORY_READ | vk::AccessFlags::MEMORY_WRITE;
    memory_barrier(&gpu.device, cb, (src, vk::AccessFlags::MEMORY_WRITE), (dst, all));
}

/// Compute-to-compute (and indirect-argument) barrier, as between passes.
pub fn compute_barrier(gpu: &Gpu, cb: vk::CommandBuffer) {
    let dst = vk::PipelineStageFlags::COMPUTE_SHADER | vk::PipelineStageFlags::DRAW_INDIRECT;
    let reads = vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE | vk::AccessFlags::INDIRECT_COMMAND_READ;
    let src = (vk::PipelineStageFlags::COMPUTE_SHADER, vk::AccessFlags::SHADER_WRITE);
    memory_barrier(&gpu.device, cb, src, (dst, reads));
}

/// Transfer writes before compute work.
pub fn transfer_to_compute(gpu: &Gpu, cb: vk::CommandBuffer) {
    let dst = vk::PipelineStageFlags::COMPUTE_SHADER | vk::PipelineStageFlags::DRAW_INDIRECT;
    barrier(gpu, cb, vk::PipelineStageFlags::TRANSFER, dst);
}

/// Compute writes before transfers (a readback copy).
pub fn compute_to_transfer(gpu: &Gpu, cb: vk::CommandBuffer) {
    barrier(gpu, cb, vk::PipelineStageFlags::COMPUTE_SHADER, vk::PipelineStageFlags::TRANSFER);
}

/// Transfer writes before host reads.
pub fn transfer_to_host(gpu: &Gpu, cb: vk::CommandBuffer) {
    barrier(gpu, cb, vk::PipelineStageFlags::TRANSFER, vk::PipelineStageFlags::HOST);
}

/// Fills the whole of `b` with zeros.
pub fn zero(gpu: &Gpu, cb: vk::CommandBuffer, b: &Buffer<'_>) {
    // SAFETY: `cb` is recording; `b` has TRANSFER_DST usage.
    unsafe { gpu.device.cmd_fill_buffer(cb, b.buffer, 0, vk::WHOLE_SIZE, 0) };
}

/// Copies the first `bytes` of `src` to `dst`.
pub fn copy(gpu: &Gpu, cb: vk::CommandBuffer, src: &Buffer<'_>, dst: &Buffer<'_>, bytes: u64) {
    let region = vk::BufferCopy { src_offset: 0, dst_offset: 0, size: bytes };
    // SAFETY: `cb` is recording; both buffers have transfer usage and room.
    unsafe { gpu.device.cmd_copy_buffer(cb, src.buffer, dst.buffer, &[region]) };
}

/// A device-local buffer of `bytes` (at least 16) with [`usage`].
pub fn device_buffer(gpu: &Gpu, bytes: u64) -> Result<Buffer<'_>, String> {
    gpu.buffer(bytes.max(16), usage(), false)
}

/// A host-visible buffer of `bytes` (at least 16) for readbacks and uploads.
pub fn host_buffer(gpu: &Gpu, bytes: u64) -> Result<Buffer<'_>, String> {
    gpu.buffer(bytes.max(16), usage(), true)
}

/// A device-local buffer holding `words` (uploaded through a staging buffer).
pub fn upload<'d>(gpu: &'d Gpu, words: &[u32]) -> Result<Buffer<'d>, String> {
    let bytes = 4 * words.len() as u64;
    let staging = host_buffer(gpu, bytes)?;
    staging.write_u32(words)?;
    let out = device_buffer(gpu, bytes)?;
    let cb = gpu.command_buffer()?;
    begin(gpu, cb)?;
    copy(gpu, cb, &staging, &out, bytes.max(4));
    transfer_to_compute(gpu, cb);
    end(gpu, cb)?;
    gpu.submit_and_wait(cb)?;
    Ok(out)
}

/// `vkCmdUpdateBuffer` of `words` at the start of `b`.
pub fn update(gpu: &Gpu, cb: vk::CommandBuffer, b: &Buffer<'_>, words: &[u32]) {
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    // SAFETY: `cb` is recording outside a render pass; `b` has TRANSFER_DST
    // usage and room for `bytes` (a multiple of 4, at most 65536).
    unsafe { gpu.device.cmd_update_buffer(cb, b.buffer, 0, &bytes) };
}
