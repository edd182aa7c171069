//! Which blocks of a function every invocation that enters it reaches: the
//! blocks on every path from its entry block to a return (they post-dominate
//! the entry). An allocation there is in the workgroup's uniform control
//! flow (when the function is the node's entry, which the lowering calls
//! for a whole workgroup at once), so the lowering may count its records
//! with workgroup barriers; anywhere else (under a branch, in a loop body,
//! after an early return, in another function) it may not. The blocks
//! reached exactly once (on no cycle as well) can hold the workgroup's
//! done count (`passes::epilogue`).

use crate::ir::op_id;
use rspirv::dr::Function;
use spirv::{Op, Word};
use std::collections::{HashMap, HashSet};

/// The labels of `func`'s blocks that post-dominate its entry block.
pub fn always_reached(func: &Function) -> HashSet<Word> {
    let (labels, successors) = graph(func);
    // Post-dominator sets by iteration to the fixed point (functions are small).
    let n = labels.len();
    let all: HashSet<usize> = (0..n).collect();
    let mut post: Vec<HashSet<usize>> = vec![all; n];
    let mut changed = true;
    while changed {
        changed = false;
        for b in (0..n).rev() {
            let mut meet: Option<HashSet<usize>> = None;
            for s in &successors[b] {
                let theirs = match s {
                    None => HashSet::new(),
                    Some(s) => post[*s].clone(),
                };
                meet = Some(match meet {
                    None => theirs,
                    Some(m) => m.intersection(&theirs).copied().collect(),
                });
            }
            let mut new = meet.unwrap_or_default();
            new.insert(b);
            if new != post[b] {
                post[b] = new;
                changed = true;
            }
        }
    }
    post.first().map(|entry| entry.iter().map(|&i| labels[i]).collect()).unwrap_or_default()
}

/// The labels of `func`'s blocks that every invocation entering it reaches
/// exactly once: always reached ([`always_reached`]) and on no cycle (a
/// loop header post-dominates the entry too, and runs once per iteration).
pub fn reached_once(func: &Function) -> HashSet<Word> {
    let (labels, successors) = graph(func);
    let on_cycle = |start: usize| {
        let mut seen = vec![false; labels.len()];
        let mut stack: Vec<usize> = successors[start].iter().flatten().copied().collect();
        while let Some(b) = stack.pop() {
            if b == start {
                return true;
            }
            if !std::mem::replace(&mut seen[b], true) {
                stack.extend(successors[b].iter().flatten().copied());
            }
        }
        false
    };
    let always = always_reached(func);
    labels.iter().enumerate().filter(|&(i, l)| always.contains(l) && !on_cycle(i)).map(|(_, &l)| l).collect()
}

/// `func`'s block labels in order and each block's successors by index
/// (`None`: the function's exit).
fn graph(func: &Function) -> (Vec<Word>, Vec<Vec<Option<usize>>>) {
    let labels: Vec<Word> = func.blocks.iter().filter_map(|b| b.label.as_ref()?.result_id).collect();
    let index: HashMap<Word, usize> = labels.iter().enumerate().map(|(i, &l)| (l, i)).collect();
    let successors: Vec<Vec<Option<usize>>> = func
        .blocks
        .iter()
        .map(|b| {
            let Some(last) = b.instructions.last() else { return vec![None] };
            match last.class.opcode {
                Op::Branch => vec![op_id(last, 0).and_then(|l| index.get(&l).copied())],
                Op::BranchConditional => {
                    [1, 2].iter().map(|&k| op_id(last, k).and_then(|l| index.get(&l).copied())).collect()
                }
                Op::Switch => (1..last.operands.len())
                    .filter_map(|k| op_id(last, k))
                    .filter_map(|l| index.get(&l).copied())
                    .map(Some)
                    .collect(),
                _ => vec![None],
            }
        })
        .collect();
    (labels, successors)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{id, inst};
    use rspirv::dr::{Block, Operand};

    fn block(label: Word, last: Op, targets: &[Word]) -> Block {
        let mut b = Block::new();
        b.label = Some(inst(Op::Label, None, Some(label), vec![]));
        let mut ops: Vec<Operand> = targets.iter().map(|&t| id(t)).collect();
        if last == Op::BranchConditional {
            ops.insert(0, id(99));
        }
        b.instructions.push(inst(last, None, None, ops));
        b
    }

    #[test]
    fn blocks_under_a_branch_or_after_an_early_return_are_not_always_reached() {
        // 1 -> (2 | 3) -> 4 -> 5 (return); 2 also returns early.
        let mut f = Function::new();
        f.blocks = vec![
            block(1, Op::BranchConditional, &[2, 3]),
            block(2, Op::Return, &[]),
            block(3, Op::Branch, &[4]),
            block(4, Op::Branch, &[5]),
            block(5, Op::Return, &[]),
        ];
        assert_eq!(always_reached(&f), [1].into_iter().collect());
        // Without the early return, the join and everything after it are.
        f.blocks[1] = block(2, Op::Branch, &[4]);
        assert_eq!(always_reached(&f), [1, 4, 5].into_iter().collect());
    }

    #[test]
    fn a_loop_body_is_not_always_reached() {
        // 1 -> 2 (header) -> (3 body -> 2 | 4 merge) -> return.
        let mut f = Function::new();
        f.blocks = vec![
            block(1, Op::Branch, &[2]),
            block(2, Op::BranchConditional, &[3, 4]),
            block(3, Op::Branch, &[2]),
            block(4, Op::Return, &[]),
        ];
        assert_eq!(always_reached(&f), [1, 2, 4].into_iter().collect());
        // The header runs once per iteration: only 1 and 4 run once.
        assert_eq!(reached_once(&f), [1, 4].into_iter().collect());
    }
}
