//! The `phase_clock` setting (`VK_EMU_SE_PHASE_CLOCK`): where the driver has
//! `VK_KHR_shader_clock` with `shaderSubgroupClock` (both lavapipe lanes
//! do), the layer enables it, its node kernels time each phase of their
//! workgroups, and destroying the graph logs one line a level with the
//! workgroups that ran and their average cycles (a last level of nodes
//! without outputs counts nothing and has no finisher, so its line has
//! neither); where it has not, it says
//! so once and the graph works as without the setting. Own file: the
//! environment is read once per process.

use conformance_tests::graph::run_hello_chain;
use conformance_tests::models::hello_chain;
use conformance_tests::{env, InstanceOptions, TestDevice, TestInstance};

/// A phase of a level's line: its average cycles and how many workgroups
/// reached it (all of the level's unless the line says).
fn phase(line: &str, name: &str) -> Option<(f64, u64)> {
    let workgroups: u64 = line.split(": ").nth(1)?.split(' ').next()?.parse().ok()?;
    let list = &line[line.find("start: ")? + "start: ".len()..];
    let item = list.split(", ").find(|item| item.starts_with(&format!("{name} ")))?;
    let mut words = item[name.len() + 1..].split(' ');
    let cycles = words.next()?.parse().ok()?;
    let reached = match words.next() {
        Some(n) => n.trim_start_matches('(').parse().ok()?,
        None => workgroups,
    };
    Some((cycles, reached))
}

#[test]
fn each_level_logs_its_phases_where_the_driver_has_the_clock() {
    let log_path = env::init_with_log_file("phase-clock", &[("VK_EMU_SE_PHASE_CLOCK", "1"), ("VK_EMU_SE_LOG", "info")])
        .expect("environment");
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("physical device");
    let has_it = inst.device_extensions(pd).expect("extensions").iter().any(|(n, _)| n == "VK_KHR_shader_clock");
    {
        let dev = TestDevice::with_amdx(&inst, pd).expect("device");
        // 5 firstNode workgroups; their 10 records to secondNode, then 10 to thirdNode.
        let records = [(3, 1), (2, 0)];
        let uavs = run_hello_chain(&dev, &records, 2, |min, _, _| min).expect("dispatch");
        for uav in uavs {
            assert_eq!(uav, hello_chain(&records, &[]), "timed kernels compute the same");
        }
    }
    inst.finish();
    let text = std::fs::read_to_string(&log_path).unwrap_or_default();
    let _ = std::fs::remove_file(&log_path);
    let levels: Vec<&str> = text.lines().filter(|l| l.contains("phase clock, level")).collect();
    if !has_it {
        assert!(levels.is_empty(), "{text}");
        assert_eq!(text.matches("no VK_KHR_shader_clock").count(), 1, "said once:\n{text}");
        return;
    }
    assert_eq!(levels.len(), 3, "one line a level:\n{text}");
    // Two dispatches: 10 firstNode workgroups, then secondNode's and
    // thirdNode's (at least one a dispatch).
    assert!(levels[0].contains("level 0: 10 workgroups timed"), "{}", levels[0]);
    for (level, line) in levels.iter().enumerate() {
        assert!(line.contains(&format!("level {level}:")), "{line}");
        let at = |name: &str| phase(line, name).unwrap_or_else(|| panic!("{name}: {line}"));
        let (end, workgroups) = at("end");
        // The last level (thirdNode, which has no outputs) counts nothing
        // and has no finisher: the one before it ends the dispatch.
        let counted = level < 2;
        let reached: &[&str] =
            if counted { &["records found", "code done", "counted done"] } else { &["records found", "code done"] };
        for &name in reached {
            assert_eq!(at(name).1, workgroups, "every workgroup reaches {name}: {line}");
            assert!(at(name).0 <= end, "{name} before the end: {line}");
        }
        if !counted {
            for name in ["counted done", "finisher start", "finisher end"] {
                assert!(phase(line, name).is_none(), "no {name} in a level that counts nothing: {line}");
            }
            continue;
        }
        // The level's last workgroup finishes it, once a dispatch.
        assert_eq!(at("finisher start").1, 2, "{line}");
        assert_eq!(at("finisher end").1, 2, "{line}");
        assert!(at("finisher start").0 <= at("finisher end").0, "{line}");
    }
}
