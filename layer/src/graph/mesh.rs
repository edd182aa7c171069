//! Mesh nodes (`shaderMeshEnqueue`): a graphics pipeline the application
//! creates with the library + execution-graph flags, made of a mesh shader
//! that is a node shader (and usually a fragment shader). The layer lowers
//! the mesh shader at once (a mesh node has no outputs, so its kernel reads
//! no graph table and does not depend on the graph it will join) and
//! creates a complete driver graphics pipeline from the application's own
//! state with the lowered shader in its place and a layout extended by the
//! runtime's push block. A graph that lists the library draws that pipeline
//! with `vkCmdDrawMeshTasksIndirectEXT` on the node's `NodeDispatch` (see
//! `record`).

use super::driver::{node_layout, NodeLayout};
use super::errors::GraphError;
use super::gpu::Gpu;
use super::stage::{spec_map, MeshNode, NodeStage};
use crate::state::pipeline_layout::PipelineLayoutInfo;
use ash::vk;
use spirv_lowering::{LowerOptions, ParsedModule};
use std::sync::Arc;

/// Creates the mesh node of `stage` (the create info's stage `mesh_index`):
/// `info` is the application's create info with its flags and `pNext` chain
/// already made fit for the driver (no library or execution-graph flag),
/// `layout_info` what the layer recorded of its `layout`.
pub(crate) fn create_mesh_node(
    device: &Gpu,
    cache: vk::PipelineCache,
    info: &vk::GraphicsPipelineCreateInfo<'_>,
    layout_info: &PipelineLayoutInfo,
    mesh_index: usize,
    stage: &NodeStage,
) -> Result<MeshNode, GraphError> {
    let node = stage.node_name.clone().unwrap_or_else(|| stage.entry_point.clone());
    let lower_error = |error| GraphError::Lower { node: node.clone(), error };
    let parsed = ParsedModule::parse(&stage.words).map_err(lower_error)?;
    let spec = spec_map(stage);
    let analyzed = parsed.analyze(&spec).map_err(lower_error)?;
    let Some(info_of_entry) = analyzed.into_iter().find(|i| i.name == stage.entry_point) else {
        return Err(GraphError::Stage {
            stage: mesh_index,
            what: format!("no MeshEXT node entry point named \"{}\"", stage.entry_point),
        });
    };
    if !info_of_entry.mesh {
        return Err(GraphError::Stage {
            stage: mesh_index,
            what: format!("entry point \"{}\" is not a MeshEXT node shader", stage.entry_point),
        });
    }
    let NodeLayout { layout, push_offset, push_stages } =
        node_layout(device, layout_info, vk::ShaderStageFlags::MESH_EXT)?;
    let destroy_layout = || {
        // SAFETY: created above, never handed out.
        unsafe { (device.dispatch.fp.fp_v1_0().destroy_pipeline_layout)(device.handle(), layout, std::ptr::null()) };
    };
    let shader_index = if stage.node_index == crate::amdx::SHADER_INDEX_UNUSED {
        info_of_entry.shader_index
    } else {
        stage.node_index
    };
    let options = LowerOptions {
        entry_point: stage.entry_point.clone(),
        push_offset,
        max_push_constants_size: device.physical.max_push_constants_size,
        thread_pack_width: 1,
        shader_index,
        specialization: spec,
        subgroup_ops: device.physical.subgroup_ops,
        tables: None,
        checked_payloads: device.instance.settings.checked_payloads,
    };
    // The guard must not live across the match: the miss arm locks again.
    let kept = device.lowered.lock().kernel(&stage.words, &options);
    let lowered = match kept {
        Some(kept) => kept,
        None => match parsed.lower(&options) {
            Ok(lowered) => {
                let lowered = Arc::new(lowered);
                device.lowered.lock().keep_kernel(&stage.words, &options, lowered.clone());
                lowered
            }
            Err(error) => {
                destroy_layout();
                return Err(lower_error(error));
            }
        },
    };
    match compile(device, cache, info, mesh_index, &lowered.words, layout) {
        Ok(pipeline) => {
            // SAFETY: the application's dynamic state info, when given.
            let dynamic = unsafe { info.p_dynamic_state.as_ref() }.filter(|d| !d.p_dynamic_states.is_null());
            let dynamic_states = match dynamic {
                Some(d) => {
                    // SAFETY: `dynamic_state_count` states.
                    let states =
                        unsafe { std::slice::from_raw_parts(d.p_dynamic_states, d.dynamic_state_count as usize) };
                    states.to_vec()
                }
                None => Vec::new(),
            };
            Ok(MeshNode {
                pipeline,
                layout,
                push_offset,
                push_stages,
                info: lowered.info.clone(),
                records_per_workgroup: lowered.records_per_workgroup,
                dynamic_states,
            })
        }
        Err(e) => {
            destroy_layout();
            Err(e)
        }
    }
}

/// The driver pipeline: the application's create info with the lowered
/// mesh shader in stage `mesh_index` and the extended layout.
fn compile(
    device: &Gpu,
    cache: vk::PipelineCache,
    info: &vk::GraphicsPipelineCreateInfo<'_>,
    mesh_index: usize,
    words: &[u32],
    layout: vk::PipelineLayout,
) -> Result<vk::Pipeline, GraphError> {
    let fp = device.dispatch.fp.fp_v1_0();
    let module_info = vk::ShaderModuleCreateInfo::default().code(words);
    let mut module = vk::ShaderModule::null();
    // SAFETY: valid device and create info.
    let result = unsafe { (fp.create_shader_module)(device.handle(), &module_info, std::ptr::null(), &mut module) };
    if result != vk::Result::SUCCESS {
        return Err(GraphError::Vulkan { call: "vkCreateShaderModule", result });
    }
    // SAFETY: the application's stage array of `stage_count` elements.
    let mut stages: Vec<vk::PipelineShaderStageCreateInfo<'_>> =
        unsafe { std::slice::from_raw_parts(info.p_stages, info.stage_count as usize) }.to_vec();
    let mesh = &mut stages[mesh_index];
    mesh.module = module;
    // The node create info and any inline code are the layer's business, not the driver's.
    mesh.p_next = std::ptr::null();
    let mut copy = *info;
    copy.p_stages = stages.as_ptr();
    copy.layout = layout;
    let mut pipeline = vk::Pipeline::null();
    // SAFETY: `copy`, its stages and the module live across the call.
    let result =
        unsafe { (fp.create_graphics_pipelines)(device.handle(), cache, 1, &copy, std::ptr::null(), &mut pipeline) };
    // SAFETY: the layer's module, no longer needed.
    unsafe { (fp.destroy_shader_module)(device.handle(), module, std::ptr::null()) };
    if result != vk::Result::SUCCESS {
        return Err(GraphError::Vulkan { call: "vkCreateGraphicsPipelines", result });
    }
    Ok(pipeline)
}
