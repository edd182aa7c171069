//! Analyses and lowered kernels kept per device across pipeline creations.
//! API translators re-create graph pipelines from the same SPIR-V all the
//! time (every PSO permutation, every level load); the lowering of a node
//! depends only on its module's words and the [`LowerOptions`], so a second
//! creation skips parsing, analysis and lowering and goes straight to the
//! driver compile (which the application's `VkPipelineCache` serves).
//!
//! Keys hold the module's words themselves (compared in full, never by hash
//! alone). Entries are bounded by [`MAX_BYTES`] of SPIR-V (lowered words and
//! the module words their keys keep); past it the least recently used go.

use spirv_lowering::{LowerOptions, LoweredNode, NodeShaderInfo, SpecMap};
use std::collections::HashMap;
use std::sync::Arc;

/// SPIR-V bytes kept per device at most (a node module and its lowered
/// kernel are typically 5–50 KiB each, so thousands of kernels).
pub const MAX_BYTES: usize = 64 << 20;

/// A module's words and the specialization it was analyzed under.
type AnalysisKey = (Arc<[u32]>, SpecMap);

#[derive(PartialEq, Eq, Hash)]
struct KernelKey {
    words: Arc<[u32]>,
    options: LowerOptions,
}

struct Kept<T> {
    value: T,
    used: u64,
}

/// Hit and miss counts, for the log and the tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheCounts {
    pub hits: u64,
    pub misses: u64,
}

#[derive(Default)]
pub struct LoweredCache {
    analyses: HashMap<AnalysisKey, Kept<Arc<[NodeShaderInfo]>>>,
    kernels: HashMap<KernelKey, Kept<Arc<LoweredNode>>>,
    bytes: usize,
    clock: u64,
    pub counts: CacheCounts,
}

/// Bytes an entry accounts for: its lowered words and the module words its
/// key keeps alive (counted per entry, so modules shared by several entries
/// count more than once: the bound errs on the small side).
fn entry_bytes(words: &[u32], lowered: &LoweredNode) -> usize {
    (words.len() + lowered.words.len()) * 4
}

/// `options` with the shader index that kernels not reading it share.
pub fn index_free(options: &LowerOptions) -> LowerOptions {
    LowerOptions { shader_index: 0, ..options.clone() }
}

impl LoweredCache {
    fn tick(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }

    /// The analysis of `words` under `spec`, if kept.
    pub fn analysis(&mut self, words: &Arc<[u32]>, spec: &SpecMap) -> Option<Arc<[NodeShaderInfo]>> {
        let now = self.tick();
        let kept = self.analyses.get_mut(&(words.clone(), spec.clone()))?;
        kept.used = now;
        Some(kept.value.clone())
    }

    pub fn keep_analysis(&mut self, words: &Arc<[u32]>, spec: &SpecMap, infos: Arc<[NodeShaderInfo]>) {
        let used = self.tick();
        self.analyses.insert((words.clone(), spec.clone()), Kept { value: infos, used });
    }

    /// The kernel lowered from `words` with `options`, if kept: under the
    /// exact options, or under [`index_free`] ones when it reads no index.
    pub fn kernel(&mut self, words: &Arc<[u32]>, options: &LowerOptions) -> Option<Arc<LoweredNode>> {
        let now = self.tick();
        let exact = KernelKey { words: words.clone(), options: options.clone() };
        let shared = KernelKey { words: words.clone(), options: index_free(options) };
        let found = match self.kernels.get_mut(&exact) {
            Some(kept) => Some(kept),
            None => self.kernels.get_mut(&shared).filter(|k| !k.value.reads_shader_index),
        };
        match found {
            Some(kept) => {
                kept.used = now;
                self.counts.hits += 1;
                Some(kept.value.clone())
            }
            None => {
                self.counts.misses += 1;
                None
            }
        }
    }

    /// Keeps a kernel lowered from `words` with `options`.
    pub fn keep_kernel(&mut self, words: &Arc<[u32]>, options: &LowerOptions, lowered: Arc<LoweredNode>) {
        let options = if lowered.reads_shader_index { options.clone() } else { index_free(options) };
        let used = self.tick();
        self.bytes += entry_bytes(words, &lowered);
        let key = KernelKey { words: words.clone(), options };
        if let Some(old) = self.kernels.insert(key, Kept { value: lowered, used }) {
            self.bytes -= entry_bytes(words, &old.value);
        }
        while self.bytes > MAX_BYTES && self.evict_oldest() {}
    }

    /// Drops the least recently used kernel (and analyses of modules no
    /// kernel uses any more); false when nothing is left.
    fn evict_oldest(&mut self) -> bool {
        let Some(oldest) = self
            .kernels
            .iter()
            .min_by_key(|(_, k)| k.used)
            .map(|(key, _)| KernelKey { words: key.words.clone(), options: key.options.clone() })
        else {
            return false;
        };
        if let Some(old) = self.kernels.remove(&oldest) {
            self.bytes -= entry_bytes(&oldest.words, &old.value);
        }
        let kernels = &self.kernels;
        self.analyses.retain(|(words, _), _| kernels.keys().any(|k| Arc::ptr_eq(&k.words, words) || k.words == *words));
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lowered(words: usize, reads_shader_index: bool) -> Arc<LoweredNode> {
        let info = spirv_lowering::analyze(&corpus_words()).unwrap().remove(0);
        Arc::new(LoweredNode {
            words: vec![0; words],
            info,
            dispatch_workgroup_size: [1, 1, 1],
            records_per_workgroup: 1,
            push_range: (0, 24),
            reads_shader_index,
        })
    }

    fn corpus_words() -> Vec<u32> {
        let bytes = include_bytes!("../../../spirv-lowering/tests/corpus/01_hello_chain.spv");
        bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
    }

    #[test]
    fn kernels_are_found_by_content_and_options() {
        let mut cache = LoweredCache::default();
        let a: Arc<[u32]> = vec![1, 2, 3].into();
        let same_content: Arc<[u32]> = vec![1, 2, 3].into();
        let mut options = LowerOptions::new("main");
        assert!(cache.kernel(&a, &options).is_none());
        cache.keep_kernel(&a, &options, lowered(10, false));
        assert!(cache.kernel(&same_content, &options).is_some(), "found by content");
        options.shader_index = 7;
        assert!(cache.kernel(&a, &options).is_some(), "shared across indices when not read");
        options.push_offset = 8;
        assert!(cache.kernel(&a, &options).is_none(), "other options miss");
        cache.keep_kernel(&a, &options, lowered(10, true));
        options.shader_index = 8;
        assert!(cache.kernel(&a, &options).is_none(), "an index-reading kernel is kept per index");
        assert_eq!(cache.counts, CacheCounts { hits: 2, misses: 3 });
    }

    #[test]
    fn least_recently_used_kernels_go_past_the_bound() {
        let mut cache = LoweredCache::default();
        let words: Vec<Arc<[u32]>> = (0..3u32).map(|i| Arc::from(vec![i])).collect();
        let options = LowerOptions::new("main");
        let quarter = MAX_BYTES / 4 / 4;
        for w in &words {
            cache.keep_kernel(w, &options, lowered(quarter + 1, false));
        }
        assert!(cache.kernel(&words[0], &options).is_some());
        cache.keep_kernel(&Arc::from(vec![9u32]), &options, lowered(quarter + 1, false));
        assert!(cache.kernel(&words[1], &options).is_none(), "the least recently used went");
        assert!(cache.kernel(&words[0], &options).is_some());
        assert!(cache.bytes <= MAX_BYTES);
    }
}
