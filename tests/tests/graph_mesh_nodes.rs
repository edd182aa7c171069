//! Mesh nodes (`shaderMeshEnqueue`), through the loader with validation
//! beneath. Where the driver has `VK_EXT_mesh_shader` (Mesa 25's lavapipe,
//! NVIDIA) the scene of `conformance_tests::mesh` is drawn inside a dynamic
//! rendering instance and compared pixel for pixel with its CPU
//! rasterisation: two compute levels expand one host record into quads for
//! a node array of three mesh nodes (one mesh shader, entry point `main`,
//! named and indexed at creation); the viewport and scissor set before the
//! dispatch apply; what the application drew before the dispatch survives
//! the layer's suspension of the instance, and its graphics pipeline,
//! viewport and scissor are bound again afterwards; the same inside a
//! render pass object of one subpass; dispatched indirectly, and twice on
//! one scratch initialisation (the mesh nodes are drawn once, after the
//! last level: their records pinned across levels). Where the driver has no
//! mesh shaders (Mesa 22.3) the layer offers no mesh nodes and refuses one
//! cleanly. Each half skips where the other runs (`conformance_tests::skip`):
//! the modern and GPU lanes must draw, the old lane must refuse.

use ash::vk;
use conformance_tests::graph::{TestGraph, HELLO_CHAIN_STAGES};
use conformance_tests::mesh::{
    expected, first_difference, mesh_device, mesh_enqueue_offered, Dispatch, Frame, MeshScene, Scene, View,
};
use conformance_tests::models::hello_chain;
use conformance_tests::skip::{skip, Lane};
use conformance_tests::{InstanceOptions, TestDevice, TestInstance};

/// Draws each frame inside dynamic rendering, or inside a render pass
/// object of one subpass, and compares it with its CPU rasterisation.
fn draws(frames: &[Frame], render_pass_object: bool) {
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("device");
    {
        let Some(dev) = mesh_device(&inst, pd) else { return };
        let scene = MeshScene::with_pass(&dev, render_pass_object).expect("mesh scene");
        for frame in frames {
            let got = scene.draw(frame).expect("draw");
            let want = expected(frame);
            if let Some(diff) = first_difference(&got, &want) {
                panic!("{frame:?}: {diff}");
            }
            // The scene is not empty: a broken graph cannot pass by drawing nothing.
            assert!(got.iter().filter(|&&p| p != frame.background).count() > 200, "{frame:?}");
        }
    }
    inst.finish();
}

#[test]
fn compute_levels_expand_records_into_mesh_node_draws() {
    let frame = |scene| Frame {
        scene,
        view: View::default(),
        background: 0xBEEF,
        early_clear: 0xC1EA2,
        marker_after: false,
        dispatch: Dispatch::Host,
    };
    draws(
        &[
            frame(Scene { tiles_x: 6, tiles_y: 5, grid: 1 }),
            // Dynamic grids from the payload: 2 x 2 workgroups a record.
            frame(Scene { tiles_x: 7, tiles_y: 8, grid: 2 }),
        ],
        false,
    );
}

/// The same scene dispatched indirectly (level 0 built on the GPU), and
/// twice in a row on scratch initialised once: the mesh nodes, drawn once
/// after the last level, draw exactly the scene each time.
#[test]
fn mesh_nodes_drawn_after_the_levels_of_every_dispatch() {
    let frame = |dispatch| Frame {
        scene: Scene { tiles_x: 7, tiles_y: 6, grid: 2 },
        view: View::default(),
        background: 0xBEEF,
        early_clear: 0xC1EA2,
        marker_after: false,
        dispatch,
    };
    draws(&[frame(Dispatch::Indirect), frame(Dispatch::HostTwice)], false);
}

#[test]
fn viewport_scissor_and_graphics_state_are_the_applications() {
    let scissor = vk::Rect2D { offset: vk::Offset2D { x: 4, y: 0 }, extent: vk::Extent2D { width: 36, height: 64 } };
    let view = View { offset: (8, 4), scissor };
    draws(
        &[
            Frame {
                scene: Scene { tiles_x: 6, tiles_y: 6, grid: 1 },
                view,
                background: 7,
                early_clear: 9,
                marker_after: true,
                dispatch: Dispatch::Host,
            },
            Frame {
                scene: Scene { tiles_x: 8, tiles_y: 7, grid: 2 },
                view: View::default(),
                background: 0,
                early_clear: 1,
                marker_after: true,
                dispatch: Dispatch::Host,
            },
        ],
        false,
    );
}

#[test]
fn render_pass_objects_are_suspended_and_resumed_too() {
    // The pass clears, is suspended and resumed with the layer's copies
    // (which load from the TRANSFER_SRC_OPTIMAL layout the pass leaves),
    // and the application's pipeline draws in the part it continues in.
    let scissor = vk::Rect2D { offset: vk::Offset2D { x: 0, y: 8 }, extent: vk::Extent2D { width: 64, height: 48 } };
    let view = View { offset: (4, 0), scissor };
    draws(
        &[Frame {
            scene: Scene { tiles_x: 5, tiles_y: 7, grid: 2 },
            view,
            background: 3,
            early_clear: 5,
            marker_after: true,
            dispatch: Dispatch::Host,
        }],
        true,
    );
}

#[test]
fn a_render_pass_of_two_subpasses_is_not_suspended() {
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("device");
    {
        let Some(dev) = mesh_device(&inst, pd) else { return };
        let scene = MeshScene::with_pass(&dev, true).expect("mesh scene");
        // The dispatch records nothing (validation would see compute work
        // inside the render pass otherwise): only the clear colour remains.
        let got = scene.dispatch_in_two_subpasses(&Scene { tiles_x: 4, tiles_y: 4, grid: 1 }, 0xC1EA2).expect("draw");
        assert!(got.iter().all(|&p| p == 0xC1EA2), "{:?}", got.iter().find(|&&p| p != 0xC1EA2));
        // The scene still draws in a render pass of one subpass afterwards.
        let frame = Frame {
            scene: Scene { tiles_x: 3, tiles_y: 2, grid: 1 },
            view: View::default(),
            background: 1,
            early_clear: 2,
            marker_after: false,
            dispatch: Dispatch::Host,
        };
        assert_eq!(first_difference(&scene.draw(&frame).expect("draw"), &expected(&frame)), None);
    }
    inst.finish();
}

#[test]
fn without_mesh_shaders_mesh_nodes_are_refused_cleanly() {
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("device");
    if mesh_enqueue_offered(&inst, pd) {
        skip(&[Lane::Old], "this driver has mesh shaders (the other tests draw mesh nodes)");
        inst.finish();
        return;
    }
    {
        let dev = TestDevice::with_amdx(&inst, pd).expect("device");
        let uav = dev.create_host_buffer(32, vk::BufferUsageFlags::STORAGE_BUFFER).expect("uav");
        uav.write_u32(&[0; 8]).expect("clear");
        let graph = TestGraph::hello_chain(&dev, &uav).expect("graph pipeline");
        let mesh_stage = [vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::MESH_EXT)
            .module(graph.module)
            .name(c"firstNode")];

        // A graphics pipeline whose mesh stage is a node shader, on a device
        // without shaderMeshEnqueue.
        let rendering = vk::PipelineRenderingCreateInfo::default();
        let mut gfx = vk::GraphicsPipelineCreateInfo::default().stages(&mesh_stage).layout(graph.layout);
        gfx.p_next = (&rendering as *const vk::PipelineRenderingCreateInfo).cast();
        let mut pipeline = <vk::Pipeline as vk::Handle>::from_raw(0xdead);
        // SAFETY: valid device and create info; the layer answers without calling down.
        let result = unsafe {
            (dev.device.fp_v1_0().create_graphics_pipelines)(
                dev.device.handle(),
                vk::PipelineCache::null(),
                1,
                &gfx,
                std::ptr::null(),
                &mut pipeline,
            )
        };
        assert_eq!((result, pipeline), (vk::Result::ERROR_INITIALIZATION_FAILED, vk::Pipeline::null()));

        // An execution graph stage flagged as a mesh stage.
        let info = vk::ExecutionGraphPipelineCreateInfoAMDX::default().stages(&mesh_stage).layout(graph.layout);
        let mut pipeline = <vk::Pipeline as vk::Handle>::from_raw(0xdead);
        // SAFETY: valid device and create info.
        let result = unsafe {
            (graph.fns.create)(
                dev.device.handle(),
                vk::PipelineCache::null(),
                1,
                &info,
                std::ptr::null(),
                &mut pipeline,
            )
        };
        assert_eq!((result, pipeline), (vk::Result::ERROR_INITIALIZATION_FAILED, vk::Pipeline::null()));

        // The device is unharmed.
        let (min, _, _) = graph.scratch_sizes().expect("scratch sizes");
        let scratch = graph.scratch(min).expect("scratch");
        let entry = graph.node_index(HELLO_CHAIN_STAGES[0].entry, 0).expect("node index");
        let records: Vec<u8> = [2u32, 0].iter().flat_map(|w| w.to_le_bytes()).collect();
        dev.submit_once(|cb| graph.record(cb, &scratch, true, &[(entry, &records, 1, 8)])).expect("submit");
        assert_eq!(uav.read_u32(8).expect("read"), hello_chain(&[(2, 0)], &[]));
    }
    inst.finish();
}
