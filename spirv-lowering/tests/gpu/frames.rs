//! A CPU mirror of the frame pool (`abi`'s "Records stored per node, in
//! frames"): the same keys, home slots and linear probing as the kernels'
//! `node_frame_find` / `node_frame_claim`, and the same placement of an
//! allocation's records (by rank, on into the frame's tail, with the tail
//! word and meta words). The harness uses it to put level-0 records where a
//! consumer looks for them, and to find what a producer wrote.

use super::{at, Gpu};
use spirv_lowering::abi::{frame_key, frame_key_low, home_slot, probe_start, FrameGeometry, FRAME_MAX_PROBES};

/// The frame pool as the `GraphContext` describes it (at [`at::POOL`] and [`at::KEYS`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pool {
    /// log2 of a frame's bytes.
    pub shift: u32,
    /// Frames in the pool.
    pub count: u32,
    /// Node slots of the graph (namespaces: records `0..n`, grid entries `n..2n`).
    pub node_count: u32,
    /// Home frames per parity (`GraphContext::homes`).
    pub homes: u32,
}

/// Where one record sits: a pool frame and its record index there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place {
    pub frame: u32,
    pub index: u32,
    /// The record is in the tail of the frame before its own (by rank).
    pub in_tail: bool,
}

impl Pool {
    pub fn frame_bytes(&self) -> usize {
        1 << self.shift
    }

    /// Grid entries a frame holds.
    pub fn entries_per_frame(&self) -> u32 {
        (self.frame_bytes() as u32 - 4) / 8
    }

    /// Buffer offset of frame `frame`'s key.
    pub fn key_at(&self, frame: u32) -> usize {
        at::KEYS + 8 * frame as usize
    }

    /// Buffer offset of byte 0 of frame `frame`.
    pub fn frame_at(&self, frame: u32) -> usize {
        at::POOL + ((frame as usize) << self.shift)
    }

    /// Buffer offset of frame `frame`'s tail word (its last word).
    pub fn tail_word_at(&self, frame: u32) -> usize {
        self.frame_at(frame) + self.frame_bytes() - 4
    }

    /// The key's low word of frame `k` of node `slot`'s records.
    pub fn records_low(&self, slot: u32, k: u32) -> u32 {
        frame_key_low(slot, k, 2 * self.node_count).expect("frame key fits 32 bits")
    }

    /// The key's low word of frame `k` of node `slot`'s grid entries.
    pub fn entries_low(&self, slot: u32, k: u32) -> u32 {
        frame_key_low(self.node_count + slot, k, 2 * self.node_count).expect("frame key fits 32 bits")
    }

    /// The hashed slots a probe for (`tag`, `low`) visits, in order.
    fn probe(&self, tag: u32, low: u32) -> impl Iterator<Item = u32> {
        let first = 2 * self.homes;
        let (start, hashed) = (probe_start(tag, low, self.count, self.homes) - first, self.count - first);
        (0..FRAME_MAX_PROBES).map(move |k| first + ((u64::from(start) + u64::from(k)) % u64::from(hashed)) as u32)
    }

    /// The frame keyed (`tag`, `low`), as `node_frame_find` finds it.
    pub fn find(&self, g: &Gpu, tag: u32, low: u32) -> Option<u32> {
        if let Some(home) = home_slot(tag, low, self.homes) {
            return Some(home);
        }
        let want = frame_key(tag, low);
        self.probe(tag, low).find(|&i| g.get64(self.key_at(i)) == want)
    }

    /// Claims the frame keyed (`tag`, `low`) as `node_frame_claim` does: the
    /// first slot on the way that is already it, or free (its tag neither
    /// `tag` nor `tag - 1`). `None`: no such slot within the probes.
    pub fn claim(&self, g: &mut Gpu, tag: u32, low: u32) -> Option<u32> {
        if let Some(home) = home_slot(tag, low, self.homes) {
            return Some(home);
        }
        let want = frame_key(tag, low);
        for i in self.probe(tag, low) {
            let seen = g.get64(self.key_at(i));
            let seen_tag = (seen >> 32) as u32;
            if seen == want {
                return Some(i);
            }
            if seen_tag != tag && seen_tag != tag.wrapping_sub(1) {
                g.put64(self.key_at(i), want);
                return Some(i);
            }
        }
        None
    }

    /// Every key in the pool.
    pub fn keys(&self, g: &Gpu) -> Vec<u64> {
        (0..self.count).map(|i| g.get64(self.key_at(i))).collect()
    }

    /// Where rank `rank` of node `slot`'s records sits at `tag`, as a
    /// consumer finds it: in frame `rank / P` at `rank % P`, or, for one of
    /// the first `tail` ranks of a frame, in the previous frame's tail when
    /// that frame's tail word says its last allocation ran that far.
    pub fn locate(&self, g: &Gpu, geom: &FrameGeometry, tag: u32, slot: u32, rank: u32) -> Option<Place> {
        let per_frame = geom.per_frame.max(1);
        let (k, j) = (rank / per_frame, rank % per_frame);
        if j < geom.tail && k > 0 {
            if let Some(prev) = self.find(g, tag, self.records_low(slot, k - 1)) {
                if j < g.get32(self.tail_word_at(prev)) {
                    return Some(Place { frame: prev, index: per_frame + j, in_tail: true });
                }
            }
        }
        let frame = self.find(g, tag, self.records_low(slot, k))?;
        Some(Place { frame, index: j, in_tail: false })
    }

    /// Buffer offset of the record at `place`.
    pub fn record_at(&self, geom: &FrameGeometry, place: Place) -> usize {
        self.frame_at(place.frame) + (place.index * geom.stride) as usize
    }

    /// Buffer offset of the meta word of the record at `place`.
    pub fn meta_at(&self, geom: &FrameGeometry, place: Place) -> usize {
        self.frame_at(place.frame) + (geom.meta_offset() + 4 * place.index) as usize
    }

    /// Places an allocation of `payloads.len()` records of node `slot` at
    /// ranks `rank..` in frames of `tag`, as a producer's allocation does:
    /// claims the first rank's frame, writes the records on from its place
    /// (into the tail past `P`), the tail word when the allocation holds the
    /// frame's last rank, and the meta words (`remaining` levels, the count
    /// on the first) when the geometry keeps them.
    pub fn place_allocation(
        &self,
        g: &mut Gpu,
        geom: &FrameGeometry,
        (tag, slot, rank): (u32, u32, u32),
        payloads: &[Vec<u8>],
        remaining: u32,
    ) {
        let per_frame = geom.per_frame.max(1);
        let (k, j) = (rank / per_frame, rank % per_frame);
        let count = payloads.len() as u32;
        assert!(count <= geom.tail + 1, "an allocation of {count} records does not fit the tail {}", geom.tail);
        let frame = self.claim(g, tag, self.records_low(slot, k)).expect("a free frame for the harness's records");
        for (i, p) in payloads.iter().enumerate() {
            assert!(p.len() <= geom.stride as usize, "payload of {} bytes over the stride {}", p.len(), geom.stride);
            let place = Place { frame, index: j + i as u32, in_tail: j + i as u32 >= per_frame };
            g.put_bytes(self.record_at(geom, place), p);
            if geom.meta {
                let first = if i == 0 { count << 16 } else { 0 };
                g.put32(self.meta_at(geom, place), (remaining & 0xFFFF) | first);
            }
        }
        if j + count >= per_frame {
            g.put32(self.tail_word_at(frame), j + count - per_frame);
        }
    }

    /// Buffer offset of grid entry `e` of node `slot` at `tag` (`None`: its frame is missing).
    pub fn entry_at(&self, g: &Gpu, tag: u32, slot: u32, e: u32) -> Option<usize> {
        let per = self.entries_per_frame();
        let frame = self.find(g, tag, self.entries_low(slot, e / per))?;
        Some(self.frame_at(frame) + 8 * (e % per) as usize)
    }

    /// Writes grid entry `e` of node `slot` at `tag`: (first workgroup, rank).
    pub fn put_entry(&self, g: &mut Gpu, (tag, slot, e): (u32, u32, u32), start: u32, rank: u32) {
        let per = self.entries_per_frame();
        let frame = self.claim(g, tag, self.entries_low(slot, e / per)).expect("a free frame for the grid entries");
        let at = self.frame_at(frame) + 8 * (e % per) as usize;
        g.put32(at, start);
        g.put32(at + 4, rank);
    }
}
