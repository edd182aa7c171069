//! Embedded samplers of descriptor buffers around a graph dispatch.
//!
//! `sample_embedded.comp` samples a 2x1 texture (texel 0 red [`RED`],
//! texel 1 black) at u = 0.3 through set 1's embedded sampler: nearest
//! filtering reads [`RED`], linear filtering about nine tenths of it.
//! Compute's set 1 is the nearest sampler; the hello chain at the
//! execution-graph bind point has the linear one as its set 1, so compute
//! left with the graph's samplers reads the wrong value. Only the embedded
//! samplers are bound at the compute bind point before the graph dispatch;
//! the pipeline and set 0's offset follow it.

use ash::vk;
use conformance_tests::models::hello_chain;
use conformance_tests::texture::rgba8_texture;
use conformance_tests::{HostBuffer, TestDevice, TestInstance};
use vk_amdx::{Commands, PIPELINE_BIND_POINT_EXECUTION_GRAPH};

use super::{binding, descriptor_buffer_properties, pipeline_layout, pipelines, set_layout, Pipelines};

const SAMPLE_EMBEDDED: &[u8] = include_bytes!("../../shaders/sample_embedded.comp.spv");

/// The red value of texel 0.
const RED: u8 = 200;
const RECORDS: [(u32, u32); 1] = [(4, 1)];

pub struct Embedded<'d> {
    dev: &'d TestDevice<'d>,
    fns: Commands,
    db: ash::ext::descriptor_buffer::Device,
    image: vk::Image,
    memory: vk::DeviceMemory,
    view: vk::ImageView,
    /// Nearest (compute's) and linear (the graph's).
    samplers: [vk::Sampler; 2],
    /// Compute's set 0, the graph's set 0, compute's set 1, the graph's set 1.
    set_layouts: [vk::DescriptorSetLayout; 4],
    compute_layout: vk::PipelineLayout,
    graph_layout: vk::PipelineLayout,
    heap: HostBuffer,
    /// Where compute's set 0 starts in `heap` (the graph's starts at 0).
    compute_offset: u64,
    pipelines: Pipelines,
    out: HostBuffer,
    uav: HostBuffer,
}

impl<'d> Embedded<'d> {
    /// The scene on `dev`, which has `VK_EXT_descriptor_buffer`.
    pub fn new(inst: &TestInstance, dev: &'d TestDevice<'d>) -> Self {
        let d = &dev.device;
        let fns = dev.amdx_commands().expect("graph entry points");
        let db = ash::ext::descriptor_buffer::Device::new(&inst.instance, d);
        let props = descriptor_buffer_properties(dev);
        let usage = vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS;
        let out = dev.create_host_buffer(64, usage).expect("out");
        out.write_u32(&[0; 16]).expect("clear");
        let uav = dev.create_host_buffer(32, usage).expect("uav");
        uav.write_u32(&[0; 8]).expect("clear");
        let (image, memory, view) = rgba8_texture(dev, &[[RED, 0, 0, 255], [0, 0, 0, 255]]);
        let samplers = [sampler(dev, vk::Filter::NEAREST), sampler(dev, vk::Filter::LINEAR)];

        let on_heap = vk::DescriptorSetLayoutCreateFlags::DESCRIPTOR_BUFFER_EXT;
        let embedded = on_heap | vk::DescriptorSetLayoutCreateFlags::EMBEDDED_IMMUTABLE_SAMPLERS_EXT;
        let compute_set0 = set_layout(
            dev,
            &[binding(0, vk::DescriptorType::SAMPLED_IMAGE), binding(1, vk::DescriptorType::STORAGE_BUFFER)],
            on_heap,
        );
        let graph_set0 = set_layout(dev, &[binding(0, vk::DescriptorType::STORAGE_BUFFER)], on_heap);
        let nearest = [samplers[0]];
        let linear = [samplers[1]];
        let compute_set1 =
            set_layout(dev, &[binding(0, vk::DescriptorType::SAMPLER).immutable_samplers(&nearest)], embedded);
        let graph_set1 =
            set_layout(dev, &[binding(0, vk::DescriptorType::SAMPLER).immutable_samplers(&linear)], embedded);
        let compute_layout = pipeline_layout(dev, &[compute_set0, compute_set1], 0);
        let graph_layout = pipeline_layout(dev, &[graph_set0, graph_set1], 0);

        // SAFETY: set layouts created for descriptor buffers.
        let (graph_size, compute_size) =
            unsafe { (db.get_descriptor_set_layout_size(graph_set0), db.get_descriptor_set_layout_size(compute_set0)) };
        let compute_offset = graph_size.next_multiple_of(props.descriptor_buffer_offset_alignment);
        let heap = dev
            .create_host_buffer(
                compute_offset + compute_size,
                vk::BufferUsageFlags::RESOURCE_DESCRIPTOR_BUFFER_EXT | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS,
            )
            .expect("heap");
        let storage = |target: &HostBuffer| vk::DescriptorAddressInfoEXT {
            address: target.address.expect("address"),
            range: target.size,
            format: vk::Format::UNDEFINED,
            ..Default::default()
        };
        let (uav_address, out_address) = (storage(&uav), storage(&out));
        let image_info =
            vk::DescriptorImageInfo::default().image_view(view).image_layout(vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL);
        let (storage_buffer, sampled_image) = (vk::DescriptorType::STORAGE_BUFFER, vk::DescriptorType::SAMPLED_IMAGE);
        let descriptors = [
            (graph_set0, 0, 0, storage_buffer, vk::DescriptorDataEXT { p_storage_buffer: &uav_address }),
            (compute_set0, compute_offset, 0, sampled_image, vk::DescriptorDataEXT { p_sampled_image: &image_info }),
            (compute_set0, compute_offset, 1, storage_buffer, vk::DescriptorDataEXT { p_storage_buffer: &out_address }),
        ];
        for (layout, base, at, ty, data) in descriptors {
            let size = if ty == sampled_image {
                props.sampled_image_descriptor_size
            } else {
                props.storage_buffer_descriptor_size
            };
            let mut bytes = vec![0u8; size];
            // SAFETY: (block) valid device; `data` points at a live info of `ty`;
            // `bytes` holds one descriptor of `ty`.
            let offset = unsafe {
                db.get_descriptor(&vk::DescriptorGetInfoEXT::default().ty(ty).data(data), &mut bytes);
                db.get_descriptor_set_layout_binding_offset(layout, at)
            };
            heap.write_bytes((base + offset) as usize, &bytes).expect("descriptor");
        }

        let flags = vk::PipelineCreateFlags::DESCRIPTOR_BUFFER_EXT;
        let pipelines = pipelines(dev, &fns, SAMPLE_EMBEDDED, [compute_layout, graph_layout], flags, &RECORDS);
        Embedded {
            dev,
            fns,
            db,
            image,
            memory,
            view,
            samplers,
            set_layouts: [compute_set0, graph_set0, compute_set1, graph_set1],
            compute_layout,
            graph_layout,
            heap,
            compute_offset,
            pipelines,
            out,
            uav,
        }
    }

    /// Records: compute's embedded samplers, the graph's state at its bind
    /// point, the graph dispatch, compute's pipeline and set 0, the sampling
    /// dispatch.
    pub fn record(&mut self, cb: vk::CommandBuffer) {
        let (d, db) = (&self.dev.device, &self.db);
        let compute = vk::PipelineBindPoint::COMPUTE;
        let graph = PIPELINE_BIND_POINT_EXECUTION_GRAPH;
        let heaps = [vk::DescriptorBufferBindingInfoEXT::default()
            .address(self.heap.address.expect("heap address"))
            .usage(vk::BufferUsageFlags::RESOURCE_DESCRIPTOR_BUFFER_EXT)];
        // SAFETY: (block) `cb` is recording on this device; the handles are ours.
        unsafe {
            db.cmd_bind_descriptor_buffers(cb, &heaps);
            db.cmd_bind_descriptor_buffer_embedded_samplers(cb, compute, self.compute_layout, 1);
            d.cmd_bind_pipeline(cb, graph, self.pipelines.graph);
            db.cmd_set_descriptor_buffer_offsets(cb, graph, self.graph_layout, 0, &[0], &[0]);
            db.cmd_bind_descriptor_buffer_embedded_samplers(cb, graph, self.graph_layout, 1);
        }
        self.pipelines.dispatch.record(self.dev, &self.fns, cb);
        self.dev.compute_barrier(cb);
        // SAFETY: as above; set 0 with compute's layout keeps its set 1.
        unsafe {
            d.cmd_bind_pipeline(cb, compute, self.pipelines.compute);
            db.cmd_set_descriptor_buffer_offsets(cb, compute, self.compute_layout, 0, &[0], &[self.compute_offset]);
            d.cmd_dispatch(cb, 1, 1, 1);
        }
        self.dev.host_read_barrier(cb);
    }

    /// The graph's sums, and texel 0 sampled with compute's nearest sampler.
    pub fn check(&self) {
        assert_eq!(self.uav.read_u32(8).expect("read"), hello_chain(&RECORDS, &[]), "the graph's buffer");
        let got = self.out.read_u32(1).expect("read")[0];
        assert_eq!(got, u32::from(RED), "sampled through compute's embedded (nearest) sampler");
    }
}

impl Drop for Embedded<'_> {
    fn drop(&mut self) {
        self.pipelines.destroy(self.dev);
        let d = &self.dev.device;
        // SAFETY: the device is idle after `submit_once`; every object is ours.
        unsafe {
            d.destroy_pipeline_layout(self.graph_layout, None);
            d.destroy_pipeline_layout(self.compute_layout, None);
            for &l in &self.set_layouts {
                d.destroy_descriptor_set_layout(l, None);
            }
            for &s in &self.samplers {
                d.destroy_sampler(s, None);
            }
            d.destroy_image_view(self.view, None);
            d.destroy_image(self.image, None);
            d.free_memory(self.memory, None);
        }
    }
}

/// A clamping sampler with `filter` for magnification and minification.
fn sampler(dev: &TestDevice<'_>, filter: vk::Filter) -> vk::Sampler {
    let info = vk::SamplerCreateInfo::default()
        .mag_filter(filter)
        .min_filter(filter)
        .address_mode_u(vk::SamplerAddressMode::CLAMP_TO_EDGE)
        .address_mode_v(vk::SamplerAddressMode::CLAMP_TO_EDGE)
        .address_mode_w(vk::SamplerAddressMode::CLAMP_TO_EDGE);
    // SAFETY: valid device and create info.
    unsafe { dev.device.create_sampler(&info, None) }.expect("sampler")
}
