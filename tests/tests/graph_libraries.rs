//! Pipeline libraries (issue 5): node stages given as compute pipelines
//! created with the library and execution-graph flags, and as an execution
//! graph pipeline created as a library, linked into graphs through
//! `VkPipelineLibraryCreateInfoKHR`. Every graph, the one built from plain
//! stages included, must compute what the hello chain's CPU model says. A
//! graph library may also be flagged through
//! `VkPipelineCreateFlags2CreateInfoKHR` (maintenance5), which then replaces
//! `flags`; and graph creation answers `VkPipelineCreationFeedbackCreateInfo`
//! (issue 13).

use ash::vk;
use conformance_tests::graph::{hello_chain_records, TestGraph};
use conformance_tests::models::hello_chain;
use conformance_tests::{InstanceOptions, TestDevice, TestInstance};
use std::ffi::CStr;

/// `VK_PIPELINE_CREATE_2_EXECUTION_GRAPH_BIT_AMDX`.
const EXECUTION_GRAPH_BIT: u64 = 0x1_0000_0000;

fn stage_info(module: vk::ShaderModule, entry: &CStr) -> vk::PipelineShaderStageCreateInfo<'_> {
    vk::PipelineShaderStageCreateInfo::default().stage(vk::ShaderStageFlags::COMPUTE).module(module).name(entry)
}

/// A compute pipeline created as an execution-graph library stage.
fn compute_library(dev: &TestDevice<'_>, graph: &TestGraph<'_>, entry: &CStr) -> vk::Pipeline {
    let mut flags2 = vk::PipelineCreateFlags2CreateInfoKHR::default().flags(vk::PipelineCreateFlags2KHR::from_raw(
        EXECUTION_GRAPH_BIT | vk::PipelineCreateFlags2KHR::LIBRARY.as_raw(),
    ));
    let info = vk::ComputePipelineCreateInfo::default()
        .stage(stage_info(graph.module, entry))
        .layout(graph.layout)
        .push_next(&mut flags2);
    // SAFETY: valid create info.
    unsafe { dev.device.create_compute_pipelines(vk::PipelineCache::null(), &[info], None) }.expect("library stage")[0]
}

/// A graph (or graph library, with `flags`) from `stages` and `libraries`.
fn graph_pipeline(
    graph: &TestGraph<'_>,
    dev: &TestDevice<'_>,
    entries: &[&CStr],
    libraries: &[vk::Pipeline],
    flags: vk::PipelineCreateFlags,
) -> vk::Pipeline {
    graph_pipeline_chained(graph, dev, entries, libraries, flags, std::ptr::null())
}

/// [`graph_pipeline`] with `p_next` chained to the create info.
fn graph_pipeline_chained(
    graph: &TestGraph<'_>,
    dev: &TestDevice<'_>,
    entries: &[&CStr],
    libraries: &[vk::Pipeline],
    flags: vk::PipelineCreateFlags,
    p_next: *const std::ffi::c_void,
) -> vk::Pipeline {
    let stages: Vec<_> = entries.iter().map(|e| stage_info(graph.module, e)).collect();
    let library_info = vk::PipelineLibraryCreateInfoKHR::default().libraries(libraries);
    let mut info =
        vk::ExecutionGraphPipelineCreateInfoAMDX::default().stages(&stages).layout(graph.layout).flags(flags);
    info.p_library_info = &library_info;
    info.p_next = p_next;
    let mut pipeline = vk::Pipeline::null();
    // SAFETY: valid create info whose arrays live across the call.
    let result = unsafe {
        (graph.fns.create)(dev.device.handle(), vk::PipelineCache::null(), 1, &info, std::ptr::null(), &mut pipeline)
    };
    assert_eq!(result, vk::Result::SUCCESS, "graph from libraries");
    pipeline
}

/// The entry records `run_chain` dispatches: firstNode's (grid, record index).
const RECORDS: [(u32, u32); 2] = [(3, 1), (2, 3)];

/// Dispatches `pipeline` (the hello chain) with [`RECORDS`] and asserts that
/// the UAV holds what the CPU model computes from them.
fn run_chain(
    dev: &TestDevice<'_>,
    graph: &TestGraph<'_>,
    uav: &conformance_tests::HostBuffer,
    pipeline: vk::Pipeline,
    what: &str,
) {
    uav.write_u32(&[0; 8]).expect("clear");
    let scratch = graph.scratch(graph.scratch_sizes_of(pipeline).expect("sizes").0).expect("scratch");
    let records = hello_chain_records(&RECORDS);
    let count = RECORDS.len() as u32;
    dev.submit_once(|cb| graph.record_pipeline(cb, pipeline, &scratch, true, &[(0, &records, count, 8)]))
        .expect("submit");
    assert_eq!(uav.read_u32(8).expect("read"), hello_chain(&RECORDS, &[]), "{what}");
}

/// Runs `body` with a device, the hello chain built from plain stages (the
/// reference whose module and layout the other graphs use) and its UAV.
fn with_reference(body: impl FnOnce(&TestDevice<'_>, &TestGraph<'_>, &conformance_tests::HostBuffer)) {
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("lavapipe");
    {
        let dev = TestDevice::with_amdx(&inst, pd).expect("device");
        let uav = dev.create_host_buffer(32, vk::BufferUsageFlags::STORAGE_BUFFER).expect("uav");
        let reference = TestGraph::hello_chain(&dev, &uav).expect("graph from stages");
        body(&dev, &reference, &uav);
    }
    inst.finish();
}

#[test]
fn graphs_link_compute_and_graph_libraries() {
    with_reference(|dev, reference, uav| {
        run_chain(dev, reference, uav, reference.pipeline, "graph from stages");

        // firstNode as a stage, the other two as compute library stages.
        let second = compute_library(dev, reference, c"secondNode");
        let third = compute_library(dev, reference, c"thirdNode");
        let from_compute =
            graph_pipeline(reference, dev, &[c"firstNode"], &[second, third], vk::PipelineCreateFlags::empty());
        run_chain(dev, reference, uav, from_compute, "graph linking compute library stages");

        // secondNode + thirdNode as a graph library (not linkable alone:
        // nothing targets secondNode there), completed by firstNode.
        let tail =
            graph_pipeline(reference, dev, &[c"secondNode", c"thirdNode"], &[], vk::PipelineCreateFlags::LIBRARY_KHR);
        let from_graph_library =
            graph_pipeline(reference, dev, &[c"firstNode"], &[tail], vk::PipelineCreateFlags::empty());
        run_chain(dev, reference, uav, from_graph_library, "graph linking a graph library");

        // SAFETY: idle device, pipelines created above.
        unsafe {
            for p in [from_graph_library, tail, from_compute, third, second] {
                dev.device.destroy_pipeline(p, None);
            }
        }
    });
}

/// A graph library flagged only through `VkPipelineCreateFlags2CreateInfoKHR`
/// (its `flags` are 0) is a library: linked with firstNode it runs the chain.
#[test]
fn graph_library_flagged_through_flags2() {
    with_reference(|dev, reference, uav| {
        let flags2 = vk::PipelineCreateFlags2CreateInfoKHR::default().flags(vk::PipelineCreateFlags2KHR::LIBRARY);
        let tail = graph_pipeline_chained(
            reference,
            dev,
            &[c"secondNode", c"thirdNode"],
            &[],
            vk::PipelineCreateFlags::empty(),
            (&flags2 as *const vk::PipelineCreateFlags2CreateInfoKHR).cast(),
        );
        let linked = graph_pipeline(reference, dev, &[c"firstNode"], &[tail], vk::PipelineCreateFlags::empty());
        run_chain(dev, reference, uav, linked, "graph linking a library flagged through flags2");
        // SAFETY: idle device, pipelines created above.
        unsafe {
            dev.device.destroy_pipeline(linked, None);
            dev.device.destroy_pipeline(tail, None);
        }
    });
}

/// `VkPipelineCreationFeedbackCreateInfo` on a graph: the pipeline's and each
/// stage's feedback are written, valid, with the creation's duration.
#[test]
fn creation_feedback_for_graphs() {
    with_reference(|dev, reference, uav| {
        let mut pipeline_feedback = vk::PipelineCreationFeedback::default();
        let mut stage_feedback = [vk::PipelineCreationFeedback::default(); 3];
        let feedback = vk::PipelineCreationFeedbackCreateInfo::default()
            .pipeline_creation_feedback(&mut pipeline_feedback)
            .pipeline_stage_creation_feedbacks(&mut stage_feedback);
        let graph = graph_pipeline_chained(
            reference,
            dev,
            &[c"firstNode", c"secondNode", c"thirdNode"],
            &[],
            vk::PipelineCreateFlags::empty(),
            (&feedback as *const vk::PipelineCreationFeedbackCreateInfo).cast(),
        );
        let valid = vk::PipelineCreationFeedbackFlags::VALID;
        assert!(pipeline_feedback.flags.contains(valid), "{pipeline_feedback:?}");
        assert!(pipeline_feedback.duration > 0);
        for (i, stage) in stage_feedback.iter().enumerate() {
            assert!(stage.flags.contains(valid), "stage {i}: {stage:?}");
            assert!(stage.duration <= pipeline_feedback.duration, "stage {i}: {stage:?}");
        }
        run_chain(dev, reference, uav, graph, "graph created with feedback");
        // SAFETY: idle device, pipeline created above.
        unsafe { dev.device.destroy_pipeline(graph, None) };
    });
}
