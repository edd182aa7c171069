//! Pass-through overhead per `vkCmd*` call with the layer enabled and
//! unused: `demo`'s `cmd_cost` measurement ([`demo::cmd_cost`]) run on the
//! bench's device, CPU time of recording only (nothing is submitted).

use demo::cmd_cost::{Cost, PassThrough};

/// Calls of each command per repeat, and repeats: full, then `--quick`.
const FULL: (u32, u32) = (200_000, 5);
const QUICK: (u32, u32) = (50_000, 5);

/// The per-command medians and how they were taken.
#[derive(Debug, Clone)]
pub struct Figures {
    /// `"<device> [driver <driver>]"` as the three instances saw it.
    pub device: String,
    pub iters: u32,
    pub repeats: u32,
    /// The instance without the layer lists the extension too (a native
    /// driver or an implicit layer), so `without` may include a layer.
    pub plain_lists_amdx: bool,
    pub costs: Vec<Cost>,
}

/// Measures on physical device `device_index` (enumeration order).
pub fn run(entry: &ash::Entry, device_index: usize, quick: bool) -> Result<Figures, String> {
    let (iters, repeats) = if quick { QUICK } else { FULL };
    println!("pass-through: {iters} calls of each command x {repeats} repeats, 3 configurations ...");
    let rigs = PassThrough::new(entry, device_index)?;
    let costs = rigs.measure(iters, repeats)?;
    Ok(Figures { device: rigs.device().to_string(), iters, repeats, plain_lists_amdx: rigs.plain_lists_amdx(), costs })
}
