//! The levels of a graph dispatch ([`Graph::levels`]: the nodes that can
//! have records at each depth), computed once per graph for each single
//! entry node and for an indirect dispatch's API entry nodes. Every
//! dispatch records by them and its status slot keeps them, so that a
//! report can name what ran at a level; computing and naming them on every
//! dispatch took about a fifth of recording one (chain, callgrind on
//! lavapipe: 7k of 39k instructions).

use super::link::Graph;
use std::collections::BTreeSet;
use std::sync::{Arc, OnceLock};

/// The node slots that can have records at each level.
pub type Levels = Arc<[BTreeSet<usize>]>;

/// The levels a graph's dispatches are recorded by, each kind computed on
/// first use.
#[derive(Debug, Default)]
pub struct LevelCache {
    /// Entered at one node (by slot).
    single: Vec<OnceLock<Levels>>,
    /// Entered at every API entry node (an indirect dispatch).
    api_entries: OnceLock<Levels>,
}

impl LevelCache {
    /// An empty cache for a graph of `nodes` node slots.
    pub fn new(nodes: usize) -> LevelCache {
        LevelCache { single: (0..nodes).map(|_| OnceLock::new()).collect(), api_entries: OnceLock::new() }
    }

    /// The levels of `graph` entered at `entries` (cached where that is one
    /// node).
    pub fn entered_at(&self, graph: &Graph, entries: &BTreeSet<usize>) -> Levels {
        let compute = || Levels::from(graph.levels(entries));
        match entries.first().filter(|_| entries.len() == 1).and_then(|&n| self.single.get(n)) {
            Some(cell) => Arc::clone(cell.get_or_init(compute)),
            None => compute(),
        }
    }

    /// The levels of `graph` entered at every API entry node (an indirect
    /// dispatch's, whose entries are read on the GPU).
    pub fn at_api_entries(&self, graph: &Graph) -> Levels {
        let levels = self.api_entries.get_or_init(|| {
            let entries: BTreeSet<usize> =
                (0..graph.nodes.len()).filter(|&n| graph.nodes[n].decl.info.is_api_entry).collect();
            Levels::from(graph.levels(&entries))
        });
        Arc::clone(levels)
    }
}
