//! The entry point's execution modes: its workgroup size, its grid modes
//! and the launch mode they make with the input, and the node's own modes
//! (`SharesInputWithAMDX` and the plain constants the caller reads).

use super::entry::node_name;
use super::info::LaunchMode;
use crate::consts::{eval_u32, SpecMap};
use crate::error::LowerError;
use crate::ir::{op_id, op_lit, Ir};
use rspirv::dr::{Instruction, Operand};
use spirv::{BuiltIn, Decoration, ExecutionMode, Word};

/// Three id operands and their values.
pub(super) type Grid3 = ([Word; 3], [u32; 3]);

/// The execution modes of one entry point, read with its specialization.
pub(super) struct Modes<'a> {
    ir: &'a Ir,
    spec: &'a SpecMap,
    /// The entry point's name, for errors.
    name: &'a str,
    list: Vec<(ExecutionMode, &'a Instruction)>,
}

/// The grid modes: coalescing, or a static or a largest dynamic grid (at
/// most one of them).
pub(super) struct GridModes {
    pub coalescing: bool,
    pub static_grid: Option<Grid3>,
    pub max_grid: Option<Grid3>,
}

impl<'a> Modes<'a> {
    pub fn of(ir: &'a Ir, spec: &'a SpecMap, entry_fn: Word, name: &'a str) -> Self {
        let list =
            ir.m.execution_modes
                .iter()
                .filter(|m| op_id(m, 0) == Some(entry_fn))
                .filter_map(|m| match m.operands.get(1) {
                    Some(Operand::ExecutionMode(x)) => Some((*x, m)),
                    _ => None,
                })
                .collect();
        Modes { ir, spec, name, list }
    }

    fn e(&self) -> String {
        self.name.to_string()
    }

    /// The mode `x`, if declared.
    pub fn mode(&self, x: ExecutionMode) -> Option<&'a Instruction> {
        self.list.iter().find(|(k, _)| *k == x).map(|(_, m)| *m)
    }

    /// Id operand `k` of mode `x` and its value, if the mode is declared.
    pub fn id(&self, x: ExecutionMode, k: usize, what: &'static str) -> Result<Option<(Word, u32)>, LowerError> {
        match self.mode(x) {
            None => Ok(None),
            Some(m) => {
                let w = op_id(m, 2 + k).ok_or_else(|| LowerError::NotConstant { entry: self.e(), what, id: 0 })?;
                let v =
                    eval_u32(self.ir, self.spec, w).ok_or(LowerError::NotConstant { entry: self.e(), what, id: w })?;
                Ok(Some((w, v)))
            }
        }
    }

    /// The three id operands of mode `x` and their values.
    fn grid3(&self, x: ExecutionMode, what: &'static str) -> Result<Option<Grid3>, LowerError> {
        let (Some(a), Some(b), Some(c)) = (self.id(x, 0, what)?, self.id(x, 1, what)?, self.id(x, 2, what)?) else {
            return Ok(None);
        };
        Ok(Some(([a.0, b.0, c.0], [a.1, b.1, c.1])))
    }

    /// The workgroup size and, where it is given by ids, the ids:
    /// WorkgroupSize builtin constant > LocalSizeId > LocalSize.
    pub fn workgroup_size(&self) -> Result<([u32; 3], Option<[Word; 3]>), LowerError> {
        let (ir, e) = (self.ir, || self.e());
        let mut workgroup_size = [1u32; 3];
        let mut wg_size_ids = None;
        if let Some(m) = self.mode(ExecutionMode::LocalSize) {
            for (k, v) in workgroup_size.iter_mut().enumerate() {
                *v = op_lit(m, 2 + k).unwrap_or(1);
            }
        }
        if let Some((ids, v)) = self.grid3(ExecutionMode::LocalSizeId, "LocalSizeId operand")? {
            workgroup_size = v;
            wg_size_ids = Some(ids);
        }
        let wgsize_const = ir.m.types_global_values.iter().find(|i| {
            i.result_id.is_some_and(|r| {
                ir.decorations(r).iter().any(|(d, o)| {
                    *d == Decoration::BuiltIn && matches!(o.first(), Some(Operand::BuiltIn(BuiltIn::WorkgroupSize)))
                })
            })
        });
        if let Some(c) = wgsize_const {
            let mut ids = [0; 3];
            for k in 0..3 {
                let w = op_id(c, k).ok_or(LowerError::NotConstant {
                    entry: e(),
                    what: "WorkgroupSize",
                    id: c.result_id.unwrap_or(0),
                })?;
                ids[k] = w;
                workgroup_size[k] = eval_u32(ir, self.spec, w).ok_or(LowerError::NotConstant {
                    entry: e(),
                    what: "WorkgroupSize component",
                    id: w,
                })?;
            }
            wg_size_ids = Some(ids);
        }
        // Vulkan caps a workgroup far below this (maxComputeWorkGroupInvocations);
        // the driver reports that limit, here only sizes nothing could run are refused.
        let invocations = workgroup_size.iter().try_fold(1u32, |n, v| n.checked_mul(*v));
        if invocations.is_none_or(|n| n == 0) {
            return Err(LowerError::Invalid {
                entry: e(),
                opcode: "OpExecutionMode".into(),
                result_id: None,
                detail: format!("workgroup size {workgroup_size:?} is zero or has more than 2^32 invocations"),
            });
        }
        Ok((workgroup_size, wg_size_ids))
    }

    /// The grid modes, refused where they conflict.
    pub fn grids(&self) -> Result<GridModes, LowerError> {
        let coalescing = self.mode(ExecutionMode::CoalescingAMDX).is_some();
        let static_grid = self.grid3(ExecutionMode::StaticNumWorkgroupsAMDX, "StaticNumWorkgroupsAMDX operand")?;
        let max_grid = self.grid3(ExecutionMode::MaxNumWorkgroupsAMDX, "MaxNumWorkgroupsAMDX operand")?;
        let conflict = |d: &str| LowerError::ConflictingModes { entry: self.e(), detail: d.into() };
        if coalescing && static_grid.is_some() {
            return Err(conflict("CoalescingAMDX with StaticNumWorkgroupsAMDX"));
        }
        if coalescing && max_grid.is_some() {
            return Err(conflict("CoalescingAMDX with MaxNumWorkgroupsAMDX"));
        }
        if static_grid.is_some() && max_grid.is_some() {
            return Err(conflict("StaticNumWorkgroupsAMDX with MaxNumWorkgroupsAMDX"));
        }
        Ok(GridModes { coalescing, static_grid, max_grid })
    }

    /// `SharesInputWithAMDX` (name, index). Whether an output reaches the
    /// node itself depends on the final node names and indices, known only
    /// when the graph is linked.
    pub fn shares_input_with(&self) -> Result<Option<(String, u32)>, LowerError> {
        match self.mode(ExecutionMode::SharesInputWithAMDX) {
            Some(m) => {
                let n = op_id(m, 2).and_then(|w| node_name(self.ir, w)).map(|x| x.0).ok_or(LowerError::Invalid {
                    entry: self.e(),
                    opcode: "OpExecutionModeId".into(),
                    result_id: None,
                    detail: "SharesInputWithAMDX name is not a string constant".into(),
                })?;
                let idx = self
                    .id(ExecutionMode::SharesInputWithAMDX, 1, "SharesInputWithAMDX index")?
                    .map(|x| x.1)
                    .unwrap_or(0);
                Ok(Some((n, idx)))
            }
            None => Ok(None),
        }
    }
}

impl GridModes {
    /// The launch mode, with `input_max` records per workgroup.
    pub fn launch(&self, workgroup_size: [u32; 3], input_max: u32) -> LaunchMode {
        if self.coalescing {
            if workgroup_size == [1, 1, 1] && input_max == 1 {
                LaunchMode::Thread
            } else {
                LaunchMode::Coalescing { max_payloads: input_max }
            }
        } else if let Some((_, g)) = self.static_grid {
            LaunchMode::BroadcastStatic { grid: g }
        } else {
            LaunchMode::BroadcastDynamic { max_grid: self.max_grid.map(|m| m.1) }
        }
    }
}
