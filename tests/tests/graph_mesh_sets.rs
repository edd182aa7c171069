//! The application's descriptor sets at the graphics bind point around a
//! graph with mesh nodes (modern and GPU lanes). The scene's graph and the
//! marker drawn after it share a layout with a storage buffer at set 0; the
//! application binds the graph's set for the compute stages and the
//! marker's for the mesh stage before the dispatch. The mesh nodes' draws
//! bind the graph's set at the graphics bind point, so the marker after the
//! dispatch draws its own word only where the layer binds the
//! application's set again: bound per bind point, and bound per stage with
//! `VK_KHR_maintenance6`'s `vkCmdBindDescriptorSets2KHR` (whose graphics
//! stages the layer shadows at the graphics bind point on devices with mesh
//! nodes). Where the driver has no mesh shaders (Mesa 22.3) both skip.
//!
//! Validation 1.3.239 predates maintenance6 and wraps handles in commands
//! it does not know, which crashes lavapipe 25: this file runs with handle
//! wrapping off, as `graph_maintenance6.rs` does (own file for that
//! environment).

use ash::vk;
use conformance_tests::mesh::{
    expected, first_difference, mesh_device, mesh_device_with_maintenance6, Dispatch, Frame, MeshScene, Scene,
    SetBinding, View,
};
use conformance_tests::{env, InstanceOptions, TestDevice, TestInstance};

/// A device of the kind a test needs, from [`mesh_device`] or
/// [`mesh_device_with_maintenance6`].
type MeshDevice = for<'i> fn(&'i TestInstance, vk::PhysicalDevice) -> Option<TestDevice<'i>>;

/// Draws a frame with the marker after the dispatch, host and indirect, in
/// a scene whose sets are bound as `binding` says, on a device from
/// `device`, and compares it with its CPU rasterisation.
fn marker_after_dispatch(binding: SetBinding, device: MeshDevice) {
    env::init_with(&[("VK_LAYER_DISABLES", "VK_VALIDATION_FEATURE_DISABLE_UNIQUE_HANDLES_EXT")]).expect("environment");
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("device");
    if let Some(dev) = device(&inst, pd) {
        let scene = MeshScene::with_sets(&dev, binding).expect("mesh scene with sets");
        for dispatch in [Dispatch::Host, Dispatch::Indirect] {
            let frame = Frame {
                scene: Scene { tiles_x: 5, tiles_y: 4, grid: 2 },
                view: View::default(),
                background: 3,
                early_clear: 4,
                marker_after: true,
                dispatch,
            };
            let got = scene.draw(&frame).expect("draw");
            if let Some(diff) = first_difference(&got, &expected(&frame)) {
                panic!("{binding:?}, {dispatch:?}: {diff}");
            }
        }
    }
    inst.finish();
}

#[test]
fn sets_bound_at_each_bind_point_are_bound_again_after_mesh_nodes() {
    marker_after_dispatch(SetBinding::BindPoints, mesh_device);
}

#[test]
fn sets_bound_per_stage_with_maintenance6_are_bound_again_after_mesh_nodes() {
    marker_after_dispatch(SetBinding::Stages, mesh_device_with_maintenance6);
}
