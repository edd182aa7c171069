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

use super::driver::{node_layout, vulkan, NodeLayout};
use super::errors::GraphError;
use super::gpu::Gpu;
use super::stage::{spec_map, MeshNode, NodeStage};
use crate::state::pipeline_layout::PipelineLayoutInfo;
use ash::vk;
use spirv_lowering::{LowerOptions, ParsedModule};
use std::sync::Arc;

/// The application's graphics pipeline create info of a mesh node, as
/// `ffi` read it: `info` with its flags and `pNext` chain already made fit
/// for the driver (no library or execution-graph flag; passed down as it
/// is, never read here), its `stages` and its dynamic states.
pub(crate) struct MeshCreateInfo<'a> {
    pub info: &'a vk::GraphicsPipelineCreateInfo<'a>,
    pub stages: &'a [vk::PipelineShaderStageCreateInfo<'a>],
    pub dynamic_states: Vec<vk::DynamicState>,
}

/// Creates the mesh node of `stage` (the create info's stage `mesh_index`):
/// `layout_info` is what the layer recorded of the create info's `layout`.
pub(crate) fn create_mesh_node(
    device: &Gpu,
    cache: vk::PipelineCache,
    create: MeshCreateInfo<'_>,
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
    // Created above, never handed out.
    let destroy_layout = || device.dispatch.destroy_pipeline_layout(layout);
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
        // Drawn, outside the compute levels the diagnostic times.
        phase_clock: None,
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
    match compile(device, cache, &create, mesh_index, &lowered.words, layout) {
        Ok(pipeline) => Ok(MeshNode {
            pipeline,
            layout,
            push_offset,
            push_stages,
            info: lowered.info.clone(),
            records_per_workgroup: lowered.records_per_workgroup,
            dynamic_states: create.dynamic_states,
        }),
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
    create: &MeshCreateInfo<'_>,
    mesh_index: usize,
    words: &[u32],
    layout: vk::PipelineLayout,
) -> Result<vk::Pipeline, GraphError> {
    let vk = &device.dispatch;
    let module = vk.create_shader_module(words).map_err(|result| vulkan("vkCreateShaderModule", result))?;
    let mut stages = create.stages.to_vec();
    let mesh = &mut stages[mesh_index];
    mesh.module = module;
    // The node create info and any inline code are the layer's business, not the driver's.
    mesh.p_next = std::ptr::null();
    let result = vk.create_graphics_pipeline(cache, create.info, &stages, layout);
    // The layer's module, no longer needed.
    vk.destroy_shader_module(module);
    result.map_err(|result| vulkan("vkCreateGraphicsPipelines", result))
}
