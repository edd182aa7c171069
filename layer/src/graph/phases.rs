//! The `phase_clock` setting (`VK_EMU_SE_PHASE_CLOCK`): where a level's time
//! goes inside its workgroups, which timestamps between dispatches cannot
//! show. Each graph gets a table in host-visible memory (device-local
//! where the device has such memory, so that the marks' atomics stay on
//! the card); its node kernels are lowered to add, from invocation 0 of
//! each timed workgroup, the SM clock cycles from the workgroup's start to
//! each `spirv_lowering::abi::Phase` (see the lowering's `phases` pass: a
//! wide level's workgroups are sampled, about one in 64, so that they do
//! not queue on the table's words). When the graph is destroyed (every
//! dispatch of it has finished then, Vulkan's valid usage) the layer logs,
//! at info level, each level's averages over all its dispatches.
//!
//! Cycles, not time: the clock is the SM's (`shaderSubgroupClock`); divide
//! by the SM clock the driver ran at. Marks are two 64-bit atomics each,
//! whose results no one waits for; kernels with them are still other
//! kernels (other registers, other code, the atomics' traffic), so time
//! is measured without the setting.

use super::errors::GraphError;
use super::gpu::Gpu;
use crate::dispatch::mapped::MappedBuffer;
use crate::settings::Settings;
use crate::state::PhysicalDeviceState;
use ash::vk;
use parking_lot::Mutex;
use spirv_lowering::abi::{Phase, PHASE_LEVELS, PHASE_SLOTS, PHASE_TABLE_BYTES};

/// Whether an emulated device with these settings times its kernels' phases
/// (it has the clock the setting asks for).
pub(crate) fn timed(settings: &Settings, physical: &PhysicalDeviceState) -> bool {
    settings.phase_clock && physical.subgroup_clock
}

/// One graph's table (behind a lock only because a mapping's pointer is
/// not `Sync`; it is read once, when the graph goes).
pub struct PhaseTable {
    buffer: Mutex<MappedBuffer>,
    address: u64,
}

impl std::fmt::Debug for PhaseTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PhaseTable({:#x})", self.address)
    }
}

impl PhaseTable {
    /// A zeroed table, where the device times phases (`None` otherwise).
    pub fn create(device: &Gpu) -> Result<Option<PhaseTable>, GraphError> {
        if !device.phase_clock() {
            return Ok(None);
        }
        let buffer = MappedBuffer::create(
            &device.dispatch,
            &device.physical.memory_properties,
            PHASE_TABLE_BYTES,
            vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS | vk::BufferUsageFlags::STORAGE_BUFFER,
            vk::MemoryPropertyFlags::DEVICE_LOCAL,
        )
        .map_err(|e| super::driver::vulkan("vkAllocateMemory (phase_clock table)", e))?;
        buffer.host().zero(0, PHASE_TABLE_BYTES);
        Ok(Some(PhaseTable { address: buffer.address, buffer: Mutex::new(buffer) }))
    }

    /// Its device address (`LowerOptions::phase_clock`).
    pub fn address(&self) -> u64 {
        self.address
    }

    /// Each level's averages, one line a level that ran (`graph` names it).
    pub fn report(&self, graph: vk::Pipeline) -> Vec<String> {
        let host = self.buffer.lock().host();
        let u64_at = |at: u64| u64::from(host.read_word(at)) | (u64::from(host.read_word(at + 4)) << 32);
        let mut lines = Vec::new();
        for level in 0..u64::from(PHASE_LEVELS) {
            // A slot is 16 bytes: the sum of cycles, then the count.
            let slot = |phase: Phase| {
                let at = 16 * (level * u64::from(PHASE_SLOTS) + phase as u64);
                (u64_at(at), u64_at(at + 8))
            };
            let workgroups = slot(Phase::Fetched).1;
            if workgroups == 0 {
                continue;
            }
            let phases: Vec<String> = Phase::ALL
                .iter()
                .filter_map(|&p| {
                    let (sum, n) = slot(p);
                    let average = sum as f64 / n as f64;
                    (n > 0).then(|| match n {
                        _ if n == workgroups => format!("{} {average:.0}", p.name()),
                        1 => format!("{} {average:.0} (1 workgroup)", p.name()),
                        _ => format!("{} {average:.0} ({n} workgroups)", p.name()),
                    })
                })
                .collect();
            let level = if level + 1 == u64::from(PHASE_LEVELS) { format!("{level}+") } else { level.to_string() };
            lines.push(format!(
                "execution graph {graph:?} phase clock, level {level}: {workgroups} workgroups timed, SM cycles \
                 after a workgroup's start: {}",
                phases.join(", ")
            ));
        }
        lines
    }

    pub fn destroy(&self, device: &Gpu) {
        self.buffer.lock().destroy(&device.dispatch);
    }
}
