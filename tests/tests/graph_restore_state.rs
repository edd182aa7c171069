//! The compute state the layer binds again after a graph dispatch (issue
//! 26): the application binds one piece of compute state, records a graph
//! dispatch (the hello chain), binds the rest without touching that piece,
//! and dispatches its own kernel, whose output shows the piece survived.
//! One test per piece: the pipeline, descriptor sets, their dynamic offsets,
//! push descriptors (written, and from an update template), descriptor-
//! buffer offsets, embedded samplers, push constants. The execution-graph
//! bind point holds the same kind of state, pointing elsewhere, so a restore
//! that replayed the wrong bind point fails too (see `common_restore`).
//!
//! Push descriptors run on both lanes; descriptor buffers need the modern
//! lane; embedded samplers need a driver that samples through them in
//! compute shaders, which lavapipe does not (it crashes, also without this
//! layer): they run on the GPU lane.

mod common_restore;

use ash::vk;
use common_restore::embedded::Embedded;
use common_restore::scene::{Before, Resources, Scene};
use conformance_tests::skip::{skip, Lane};
use conformance_tests::{compute_queue_family, Extras, InstanceOptions, TestDevice, TestInstance};

#[test]
fn compute_pipeline_is_bound_again() {
    run(Resources::Sets, Before::Pipeline);
}

#[test]
fn descriptor_sets_are_bound_again() {
    run(Resources::Sets, Before::Resources);
}

#[test]
fn dynamic_offsets_are_kept() {
    run(Resources::DynamicSets, Before::Resources);
}

#[test]
fn push_descriptors_are_pushed_again() {
    run(Resources::PushWrites, Before::Resources);
}

#[test]
fn template_push_descriptors_are_pushed_again() {
    run(Resources::PushTemplate, Before::Resources);
}

#[test]
fn descriptor_buffer_offsets_are_set_again() {
    run(Resources::DescriptorBuffer, Before::Resources);
}

#[test]
fn push_constants_are_pushed_again() {
    run(Resources::Sets, Before::PushConstants);
}

#[test]
fn embedded_samplers_are_bound_again() {
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("physical device");
    let mut driver = vk::PhysicalDeviceDriverProperties::default();
    let mut p2 = vk::PhysicalDeviceProperties2::default().push_next(&mut driver);
    // SAFETY: valid physical device and output chain.
    unsafe { inst.instance.get_physical_device_properties2(pd, &mut p2) };
    if driver.driver_id == vk::DriverId::MESA_LLVMPIPE {
        skip(&[Lane::Gpu], "lavapipe crashes on embedded samplers in compute shaders (without this layer too)");
    } else if let Some(dev) = device(&inst, pd, Extras { descriptor_buffer: true, ..Default::default() }) {
        let mut scene = Embedded::new(&inst, &dev);
        dev.submit_once(|cb| scene.record(cb)).expect("submit");
        scene.check();
    }
    inst.finish();
}

/// The scene of `resources` with `before` bound before the graph dispatch.
fn run(resources: Resources, before: Before) {
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("physical device");
    let extras = Extras {
        push_descriptor: matches!(resources, Resources::PushWrites | Resources::PushTemplate),
        descriptor_buffer: resources == Resources::DescriptorBuffer,
        ..Default::default()
    };
    if let Some(dev) = device(&inst, pd, extras) {
        let mut scene = Scene::new(&inst, &dev, resources);
        dev.submit_once(|cb| scene.record(cb, before)).expect("submit");
        scene.check();
    }
    inst.finish();
}

/// An AMDX device with `extras`, or `None` where the driver lacks one
/// (`with_amdx_extras` has said so through `skip`, which fails on the lanes
/// that have them all).
fn device<'i>(inst: &'i TestInstance, pd: vk::PhysicalDevice, extras: Extras) -> Option<TestDevice<'i>> {
    let family = compute_queue_family(inst, pd).expect("queue family");
    TestDevice::with_amdx_extras(inst, pd, family, 1, extras)
}
