//! The application's compute dispatch around a graph dispatch.
//!
//! At the compute bind point, `scale_add.comp` (`data[i] = data[i] * mul +
//! add` for `i < count`) on a pipeline layout with 12 bytes of push
//! constants; at the execution-graph bind point, the hello chain on a layout
//! with none, so the layer's own push block for the graph's kernels lands
//! where the application's constants were. Both get their set 0 storage
//! buffer the same way ([`Resources`]) but point at different buffers:
//! `data` for compute, `uav` for the graph. A restore that replayed the
//! graph bind point's state at the compute bind point makes the application
//! scale `uav` (or leaves `data` alone), which [`Scene::check`] sees.
//!
//! [`Scene::record`] binds one piece of compute state ([`Before`]) before
//! the graph dispatch and the rest after it, so only that piece has to
//! survive the graph dispatch.

use ash::vk;
use conformance_tests::compute::{scale_add_push, SCALE_ADD_SPV};
use conformance_tests::descriptor_heap::DescriptorHeap;
use conformance_tests::models::hello_chain;
use conformance_tests::{HostBuffer, TestDevice, TestInstance};
use vk_amdx::{Commands, PIPELINE_BIND_POINT_EXECUTION_GRAPH};

use super::{binding, pipeline_layout, pipelines, set_layout, Pipelines};

/// How set 0's storage buffer is given, at both bind points.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Resources {
    /// `vkCmdBindDescriptorSets`.
    Sets,
    /// `vkCmdBindDescriptorSets` of a dynamic storage buffer, at a nonzero
    /// dynamic offset.
    DynamicSets,
    /// `vkCmdPushDescriptorSetKHR`.
    PushWrites,
    /// `vkCmdPushDescriptorSetWithTemplateKHR`, each bind point its template.
    PushTemplate,
    /// A descriptor buffer, placed with `vkCmdSetDescriptorBufferOffsetsEXT`
    /// (compute's set at a nonzero offset).
    DescriptorBuffer,
}

/// The piece of compute state bound before the graph dispatch.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Before {
    Pipeline,
    /// Set 0's storage buffer, given as the scene's [`Resources`] say.
    Resources,
    /// Pushed in two parts (`mul, add`, then `count`): both must come back.
    PushConstants,
}

/// Words in `data` and `uav`.
const WORDS: usize = 128;
/// The dynamic offset of [`Resources::DynamicSets`] (bytes; a multiple of
/// every `minStorageBufferOffsetAlignment`, which is at most 256) and the
/// range of its descriptors.
const DYNAMIC_OFFSET: u32 = 256;
const MUL: u32 = 3;
const ADD: u32 = 7;
/// Fewer than `scale_add`'s 64 invocations: `count` is checked too.
const COUNT: u32 = 48;
/// The hello chain's entry records.
const RECORDS: [(u32, u32); 1] = [(4, 1)];

/// One side's view of set 0: which buffer, through which objects.
struct Side {
    point: vk::PipelineBindPoint,
    layout: vk::PipelineLayout,
    buffer: vk::Buffer,
    set: vk::DescriptorSet,
    template: vk::DescriptorUpdateTemplate,
    heap_set: u64,
}

pub struct Scene<'d> {
    dev: &'d TestDevice<'d>,
    fns: Commands,
    kind: Resources,
    /// Set 0's layout (the heap's for descriptor buffers).
    set_layout: vk::DescriptorSetLayout,
    /// With push constants; the heap's for descriptor buffers.
    compute_layout: vk::PipelineLayout,
    graph_layout: vk::PipelineLayout,
    pool: vk::DescriptorPool,
    /// Compute's and the graph's (descriptor sets only).
    sets: [vk::DescriptorSet; 2],
    /// Compute's and the graph's push templates (templates only).
    templates: [vk::DescriptorUpdateTemplate; 2],
    heap: Option<DescriptorHeap>,
    push: Option<ash::khr::push_descriptor::Device>,
    pipelines: Pipelines,
    data: HostBuffer,
    uav: HostBuffer,
}

impl<'d> Scene<'d> {
    /// The scene on `dev`, which has the extension `kind` needs.
    pub fn new(inst: &TestInstance, dev: &'d TestDevice<'d>, kind: Resources) -> Self {
        let d = &dev.device;
        let fns = dev.amdx_commands().expect("graph entry points");
        let usage = vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS;
        let data = dev.create_host_buffer(4 * WORDS as u64, usage).expect("data");
        data.write_u32(&initial_data()).expect("data");
        let uav = dev.create_host_buffer(4 * WORDS as u64, usage).expect("uav");
        uav.write_u32(&[0; WORDS]).expect("uav");

        let heap = (kind == Resources::DescriptorBuffer).then(|| {
            let heap = DescriptorHeap::new(inst, dev, 2, 12).expect("descriptor heap");
            // The graph's set at the heap's set 0, compute's at set 1 (a nonzero offset).
            heap.write_storage(0, &uav).expect("graph descriptor");
            heap.write_storage(1, &data).expect("compute descriptor");
            heap
        });
        let (ty, flags) = match kind {
            Resources::DynamicSets => (vk::DescriptorType::STORAGE_BUFFER_DYNAMIC, Default::default()),
            Resources::PushWrites | Resources::PushTemplate => {
                (vk::DescriptorType::STORAGE_BUFFER, vk::DescriptorSetLayoutCreateFlags::PUSH_DESCRIPTOR_KHR)
            }
            _ => (vk::DescriptorType::STORAGE_BUFFER, Default::default()),
        };
        let set_layout = match &heap {
            Some(h) => h.set_layout,
            None => set_layout(dev, &[binding(0, ty)], flags),
        };
        let compute_layout = heap.as_ref().map_or_else(|| pipeline_layout(dev, &[set_layout], 12), |h| h.layout);
        let graph_layout = pipeline_layout(dev, &[set_layout], 0);

        let (pool, sets) = if matches!(kind, Resources::Sets | Resources::DynamicSets) {
            descriptor_sets(dev, set_layout, ty, [data.buffer, uav.buffer])
        } else {
            (vk::DescriptorPool::null(), [vk::DescriptorSet::null(); 2])
        };
        let templates = if kind == Resources::PushTemplate {
            [
                push_template(dev, vk::PipelineBindPoint::COMPUTE, compute_layout),
                push_template(dev, PIPELINE_BIND_POINT_EXECUTION_GRAPH, graph_layout),
            ]
        } else {
            [vk::DescriptorUpdateTemplate::null(); 2]
        };
        let push = matches!(kind, Resources::PushWrites | Resources::PushTemplate)
            .then(|| ash::khr::push_descriptor::Device::new(&inst.instance, d));

        let flags = if heap.is_some() {
            vk::PipelineCreateFlags::DESCRIPTOR_BUFFER_EXT
        } else {
            vk::PipelineCreateFlags::empty()
        };
        let pipelines = pipelines(dev, &fns, SCALE_ADD_SPV, [compute_layout, graph_layout], flags, &RECORDS);
        Scene {
            dev,
            fns,
            kind,
            set_layout,
            compute_layout,
            graph_layout,
            pool,
            sets,
            templates,
            heap,
            push,
            pipelines,
            data,
            uav,
        }
    }

    fn side(&self, point: vk::PipelineBindPoint) -> Side {
        let compute = point == vk::PipelineBindPoint::COMPUTE;
        let i = usize::from(!compute);
        Side {
            point,
            layout: if compute { self.compute_layout } else { self.graph_layout },
            buffer: if compute { self.data.buffer } else { self.uav.buffer },
            set: self.sets[i],
            template: self.templates[i],
            heap_set: u64::from(compute),
        }
    }

    /// Gives set 0's storage buffer at `point` the scene's way: `data` at
    /// the compute bind point, `uav` at the graph's.
    fn give_buffer(&self, cb: vk::CommandBuffer, point: vk::PipelineBindPoint) {
        let d = &self.dev.device;
        let s = self.side(point);
        let info = [vk::DescriptorBufferInfo { buffer: s.buffer, offset: 0, range: vk::WHOLE_SIZE }];
        let write = vk::WriteDescriptorSet::default()
            .dst_binding(0)
            .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
            .buffer_info(&info);
        let push = || self.push.as_ref().expect("push descriptor commands");
        // SAFETY: `cb` is recording on this device; the arrays live across the calls.
        unsafe {
            match self.kind {
                Resources::Sets => d.cmd_bind_descriptor_sets(cb, s.point, s.layout, 0, &[s.set], &[]),
                Resources::DynamicSets => {
                    d.cmd_bind_descriptor_sets(cb, s.point, s.layout, 0, &[s.set], &[DYNAMIC_OFFSET])
                }
                Resources::PushWrites => push().cmd_push_descriptor_set(cb, s.point, s.layout, 0, &[write]),
                Resources::PushTemplate => {
                    push().cmd_push_descriptor_set_with_template(cb, s.template, s.layout, 0, info.as_ptr().cast())
                }
                Resources::DescriptorBuffer => {
                    let heap = self.heap.as_ref().expect("heap");
                    let offsets = [heap.offset(s.heap_set)];
                    heap.fns.cmd_set_descriptor_buffer_offsets(cb, s.point, s.layout, 0, &[0], &offsets);
                }
            }
        }
    }

    /// Records: `before` at the compute bind point, the graph's own state at
    /// its bind point, the graph dispatch, the rest of the compute state, and
    /// the application's dispatch.
    pub fn record(&mut self, cb: vk::CommandBuffer, before: Before) {
        let d = &self.dev.device;
        let compute = vk::PipelineBindPoint::COMPUTE;
        let push = scale_add_push(MUL, ADD, COUNT);
        if let Some(heap) = &self.heap {
            heap.bind(cb);
        }
        // SAFETY: (block) `cb` is recording on this device; the handles are the scene's.
        unsafe {
            match before {
                Before::Pipeline => d.cmd_bind_pipeline(cb, compute, self.pipelines.compute),
                Before::Resources => self.give_buffer(cb, compute),
                Before::PushConstants => {
                    let stage = vk::ShaderStageFlags::COMPUTE;
                    d.cmd_push_constants(cb, self.compute_layout, stage, 0, &push[..8]);
                    d.cmd_push_constants(cb, self.compute_layout, stage, 8, &push[8..]);
                }
            }
            d.cmd_bind_pipeline(cb, PIPELINE_BIND_POINT_EXECUTION_GRAPH, self.pipelines.graph);
            self.give_buffer(cb, PIPELINE_BIND_POINT_EXECUTION_GRAPH);
        }
        self.pipelines.dispatch.record(self.dev, &self.fns, cb);
        // The graph's writes land first, also where a wrong restore makes
        // the application's dispatch write the graph's buffer.
        self.dev.compute_barrier(cb);
        // SAFETY: as above.
        unsafe {
            if before != Before::Pipeline {
                d.cmd_bind_pipeline(cb, compute, self.pipelines.compute);
            }
            if before != Before::Resources {
                self.give_buffer(cb, compute);
            }
            if before != Before::PushConstants {
                d.cmd_push_constants(cb, self.compute_layout, vk::ShaderStageFlags::COMPUTE, 0, &push);
            }
            d.cmd_dispatch(cb, 1, 1, 1);
        }
        self.dev.host_read_barrier(cb);
    }

    /// The graph's buffer holds the hello chain's sums alone, and the
    /// application's dispatch scaled `COUNT` words of `data` where its
    /// descriptor (and dynamic offset) points.
    pub fn check(&self) {
        let at = if self.kind == Resources::DynamicSets { DYNAMIC_OFFSET as usize / 4 } else { 0 };
        let mut uav = vec![0; WORDS];
        uav[at..at + 8].copy_from_slice(&hello_chain(&RECORDS, &[]));
        let mut data = initial_data();
        for v in &mut data[at..at + COUNT as usize] {
            *v = *v * MUL + ADD;
        }
        let kind = self.kind;
        assert_eq!(self.uav.read_u32(WORDS).expect("read"), uav, "{kind:?}: the graph's buffer");
        assert_eq!(self.data.read_u32(WORDS).expect("read"), data, "{kind:?}: the application's buffer");
    }
}

impl Drop for Scene<'_> {
    fn drop(&mut self) {
        self.pipelines.destroy(self.dev);
        let d = &self.dev.device;
        // SAFETY: the device is idle after `submit_once`; the objects are the
        // scene's (the heap's are the device's); null handles are ignored.
        unsafe {
            for &t in &self.templates {
                d.destroy_descriptor_update_template(t, None);
            }
            d.destroy_descriptor_pool(self.pool, None);
            d.destroy_pipeline_layout(self.graph_layout, None);
            if self.heap.is_none() {
                d.destroy_pipeline_layout(self.compute_layout, None);
                d.destroy_descriptor_set_layout(self.set_layout, None);
            }
        }
    }
}

/// `data` before the dispatch: nonzero words, each its own.
fn initial_data() -> Vec<u32> {
    (1..=WORDS as u32).collect()
}

/// A pool and two sets of `layout`, whose binding 0 (`ty`) describes each
/// of `buffers` (the range a dynamic offset may move).
fn descriptor_sets(
    dev: &TestDevice<'_>,
    layout: vk::DescriptorSetLayout,
    ty: vk::DescriptorType,
    buffers: [vk::Buffer; 2],
) -> (vk::DescriptorPool, [vk::DescriptorSet; 2]) {
    let d = &dev.device;
    let sizes = [vk::DescriptorPoolSize { ty, descriptor_count: 2 }];
    let range = if ty == vk::DescriptorType::STORAGE_BUFFER_DYNAMIC { DYNAMIC_OFFSET.into() } else { vk::WHOLE_SIZE };
    // SAFETY: (block) valid device and create infos; the sets are not in use.
    unsafe {
        let pool = d
            .create_descriptor_pool(&vk::DescriptorPoolCreateInfo::default().max_sets(2).pool_sizes(&sizes), None)
            .expect("pool");
        let layouts = [layout; 2];
        let info = vk::DescriptorSetAllocateInfo::default().descriptor_pool(pool).set_layouts(&layouts);
        let sets = d.allocate_descriptor_sets(&info).expect("sets");
        for (&set, &buffer) in sets.iter().zip(&buffers) {
            let info = [vk::DescriptorBufferInfo { buffer, offset: 0, range }];
            let write =
                vk::WriteDescriptorSet::default().dst_set(set).dst_binding(0).descriptor_type(ty).buffer_info(&info);
            d.update_descriptor_sets(&[write], &[]);
        }
        (pool, [sets[0], sets[1]])
    }
}

/// A push-descriptor template of `point` for set 0 of `layout`: binding 0,
/// one storage buffer, read from a `VkDescriptorBufferInfo`.
fn push_template(
    dev: &TestDevice<'_>,
    point: vk::PipelineBindPoint,
    layout: vk::PipelineLayout,
) -> vk::DescriptorUpdateTemplate {
    let entries = [vk::DescriptorUpdateTemplateEntry {
        dst_binding: 0,
        dst_array_element: 0,
        descriptor_count: 1,
        descriptor_type: vk::DescriptorType::STORAGE_BUFFER,
        offset: 0,
        stride: std::mem::size_of::<vk::DescriptorBufferInfo>(),
    }];
    let info = vk::DescriptorUpdateTemplateCreateInfo::default()
        .descriptor_update_entries(&entries)
        .template_type(vk::DescriptorUpdateTemplateType::PUSH_DESCRIPTORS_KHR)
        .pipeline_bind_point(point)
        .pipeline_layout(layout)
        .set(0);
    // SAFETY: valid device and create info.
    unsafe { dev.device.create_descriptor_update_template(&info, None) }.expect("push template")
}
