//! Device creation with the extension: the AMDX features struct chained;
//! the app's own `Vulkan12Features` (with `bufferDeviceAddress` false) whose
//! other fields must survive the layer's merge; legacy `pEnabledFeatures`;
//! `VkPhysicalDeviceFeatures2`. Survival is proven by using the features
//! afterwards: validation beneath the layer flags a feature that was dropped.

use std::ffi::c_char;

use ash::vk;
use conformance_tests::{
    compute_queue_family, queue_info, run_scale_add, scale_add_reference, InstanceOptions, TestDevice, TestInstance,
};
use vk_amdx::PhysicalDeviceShaderEnqueueFeatures;

fn amdx_features() -> PhysicalDeviceShaderEnqueueFeatures {
    PhysicalDeviceShaderEnqueueFeatures { shader_enqueue: vk::TRUE, ..Default::default() }
}

/// Creates and signals a timeline semaphore: needs `timelineSemaphore`.
fn use_timeline_semaphore(dev: &TestDevice<'_>) {
    let mut ty = vk::SemaphoreTypeCreateInfo::default().semaphore_type(vk::SemaphoreType::TIMELINE).initial_value(1);
    let info = vk::SemaphoreCreateInfo::default().push_next(&mut ty);
    // SAFETY: valid device.
    let sem = unsafe { dev.device.create_semaphore(&info, None) }.expect("timeline semaphore");
    let signal = vk::SemaphoreSignalInfo::default().semaphore(sem).value(5);
    // SAFETY: host signal of a timeline semaphore to a larger value.
    unsafe { dev.device.signal_semaphore(&signal) }.expect("signal");
    // SAFETY: valid timeline semaphore.
    let value = unsafe { dev.device.get_semaphore_counter_value(sem) }.expect("value");
    assert_eq!(value, 5);
    // SAFETY: not in use.
    unsafe { dev.device.destroy_semaphore(sem, None) };
}

/// Creates a pipeline-statistics query pool: needs `pipelineStatisticsQuery`.
fn use_pipeline_statistics(dev: &TestDevice<'_>) {
    let info = vk::QueryPoolCreateInfo::default()
        .query_type(vk::QueryType::PIPELINE_STATISTICS)
        .query_count(1)
        .pipeline_statistics(vk::QueryPipelineStatisticFlags::COMPUTE_SHADER_INVOCATIONS);
    // SAFETY: valid device.
    let pool = unsafe { dev.device.create_query_pool(&info, None) }.expect("query pool");
    // SAFETY: not in use.
    unsafe { dev.device.destroy_query_pool(pool, None) };
}

fn check_compute(dev: &TestDevice<'_>) {
    let input: Vec<u32> = (0..300).collect();
    let out = run_scale_add(dev, &input, 5, 1).expect("dispatch");
    assert_eq!(out, scale_add_reference(&input, 5, 1));
}

#[test]
fn with_amdx_features_struct() {
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("physical device");
    {
        let family = compute_queue_family(&inst, pd).expect("family");
        let queues = [queue_info(family)];
        let names = [vk_amdx::EXTENSION_NAME.as_ptr()];
        let mut amdx = amdx_features();
        let info = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queues)
            .enabled_extension_names(&names)
            .push_next(&mut amdx);
        let dev = TestDevice::create(&inst, pd, &info).expect("device with AMDX");
        check_compute(&dev);
    }
    inst.finish();
}

#[test]
fn app_vulkan12_features_survive() {
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("physical device");
    {
        // Everything the driver supports, except the device-address features
        // (the layer must turn bufferDeviceAddress on itself, in this struct).
        let mut supported = vk::PhysicalDeviceVulkan12Features::default();
        let mut f2 = vk::PhysicalDeviceFeatures2::default().push_next(&mut supported);
        // SAFETY: valid physical device and output chain.
        unsafe { inst.instance.get_physical_device_features2(pd, &mut f2) };
        let mut v12 = supported;
        v12.p_next = std::ptr::null_mut();
        v12.buffer_device_address = vk::FALSE;
        v12.buffer_device_address_capture_replay = vk::FALSE;
        v12.buffer_device_address_multi_device = vk::FALSE;
        assert_eq!(v12.timeline_semaphore, vk::TRUE, "lavapipe has timeline semaphores");

        let family = compute_queue_family(&inst, pd).expect("family");
        let queues = [queue_info(family)];
        let names = [vk_amdx::EXTENSION_NAME.as_ptr()];
        let mut amdx = amdx_features();
        let info = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queues)
            .enabled_extension_names(&names)
            .push_next(&mut amdx)
            .push_next(&mut v12);
        let dev = TestDevice::create(&inst, pd, &info).expect("device with app Vulkan12Features");
        use_timeline_semaphore(&dev);
        check_compute(&dev);
        // The layer must not have written into the app's struct.
        assert_eq!(v12.buffer_device_address, vk::FALSE, "app struct untouched");
    }
    inst.finish();
}

#[test]
fn legacy_enabled_features_survive() {
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("physical device");
    {
        let family = compute_queue_family(&inst, pd).expect("family");
        let queues = [queue_info(family)];
        let names: [*const c_char; 1] = [vk_amdx::EXTENSION_NAME.as_ptr()];
        // shaderInt64 false: the layer needs it and must merge it in here,
        // not add a VkPhysicalDeviceFeatures2 (validation would flag both).
        let features = vk::PhysicalDeviceFeatures::default().pipeline_statistics_query(true).shader_int64(false);
        let mut amdx = amdx_features();
        let info = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queues)
            .enabled_extension_names(&names)
            .enabled_features(&features)
            .push_next(&mut amdx);
        let dev = TestDevice::create(&inst, pd, &info).expect("device with pEnabledFeatures");
        use_pipeline_statistics(&dev);
        check_compute(&dev);
    }
    inst.finish();
}

#[test]
fn features2_in_chain_survive() {
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("physical device");
    {
        let family = compute_queue_family(&inst, pd).expect("family");
        let queues = [queue_info(family)];
        let names = [vk_amdx::EXTENSION_NAME.as_ptr()];
        let mut amdx = amdx_features();
        let mut timeline = vk::PhysicalDeviceTimelineSemaphoreFeatures::default().timeline_semaphore(true);
        let mut f2 = vk::PhysicalDeviceFeatures2::default()
            .features(vk::PhysicalDeviceFeatures::default().pipeline_statistics_query(true));
        let info = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queues)
            .enabled_extension_names(&names)
            .push_next(&mut amdx)
            .push_next(&mut timeline)
            .push_next(&mut f2);
        let dev = TestDevice::create(&inst, pd, &info).expect("device with Features2");
        use_pipeline_statistics(&dev);
        use_timeline_semaphore(&dev);
        check_compute(&dev);
    }
    inst.finish();
}
