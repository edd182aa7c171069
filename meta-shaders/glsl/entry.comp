#version 460
// Level 0 of an indirect graph dispatch, first pass: the graph's entry
// infos read on the GPU (vkCmdDispatchGraphIndirectAMDX: count on the host,
// infos in device memory; ...IndirectCountAMDX: everything in device
// memory). Each VkDispatchGraphInfoAMDX is checked (node index in range and
// an API entry; otherwise the info is dropped and STATUS_INVALID_ENTRY
// raised), its payloads get ranks from the node's entry counter, and each
// payload is copied where level 0's kernels look for that rank: in the
// node's frame of tag GraphContext.tag (see abi.rs), with its meta word and
// the frame's tail word, as a kernel's allocation would leave it. Bits go
// to the entry status word (entry_counts[node_count]); plan.comp runs next.
// One workgroup per info at a time, its invocations striding over the
// payloads. VkDispatchGraphInfoAMDX and VkDispatchGraphCountInfoAMDX are
// read word by word: the application only guarantees 4-byte alignment
// (executionGraphDispatchAddressAlignment).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
layout(local_size_x = 64) in; // meta_shaders::ENTRY_WORKGROUP

// meta_shaders::EntryPush.
layout(push_constant) uniform EntryPush {
    GraphContextRef ctx;
    uint64_t count_info;   // device VkDispatchGraphCountInfoAMDX, or 0
    uint64_t infos;        // host-given infos address (count_info == 0)
    uint64_t info_stride;
    uint count;            // host-given count (count_info == 0)
    uint reserved;
} pc;

shared uint info_valid;
shared uint info_rank;

uint64_t read_u64(Words w, uint index) {
    return uint64_t(w.w[index]) | (uint64_t(w.w[index + 1u]) << 32);
}

void main() {
    GraphContextRef ctx = pc.ctx;
    uint count;
    uint64_t infos;
    uint64_t stride;
    if (pc.count_info != 0ul) {
        Words c = Words(pc.count_info);
        count = c.w[0];
        infos = read_u64(c, 2u);
        stride = read_u64(c, 4u);
    } else {
        count = pc.count;
        infos = pc.infos;
        stride = pc.info_stride;
    }
    uint node_count = ctx.node_count;
    uint tag = ctx.tag;
    uint t = gl_LocalInvocationIndex;
    Words counts = Words(ctx.entry_counts);
    uint raised = 0u;
    // Uniform over the workgroup: every invocation reaches both barriers.
    for (uint i = gl_WorkGroupID.x; i < count; i += gl_NumWorkGroups.x) {
        Words info = Words(infos + uint64_t(i) * stride);
        uint node = info.w[0];
        uint payloads = info.w[1];
        if (t == 0u) {
            bool valid = node < node_count
                && (NodeScheduleRef(ctx.schedules)[node].flags & SCHEDULE_FLAG_API_ENTRY) != 0u;
            info_valid = valid ? 1u : 0u;
            if (valid) {
                info_rank = atomicAdd(counts.w[node], payloads);
            } else {
                raised |= STATUS_INVALID_ENTRY;
            }
        }
        barrier();
        bool valid = info_valid != 0u;
        uint rank0 = info_rank;
        // The next info's invocation 0 overwrites them.
        barrier();
        if (!valid) {
            continue;
        }
        NodeScheduleRef s = NodeScheduleRef(ctx.schedules)[node];
        if ((s.flags & SCHEDULE_FLAG_FRAMELESS) != 0u) {
            continue; // counted, nothing to keep
        }
        uint per_frame = max(s.per_frame, 1u); // as the kernels read it
        uint record_stride = s.input_stride;
        uint meta_offset = (per_frame + s.tail) * record_stride;
        bool meta = (s.flags & SCHEDULE_FLAG_META) != 0u;
        // Every record starts with all its recursion levels and as an
        // allocation of one (abi::FrameGeometry::meta).
        uint meta_word = Words(ctx.nodes).w[4u * node + 1u] | (1u << 16);
        uint64_t base = read_u64(info, 2u);
        uint64_t payload_stride = read_u64(info, 4u);
        uint tail_word = (1u << ctx.frame_shift) - 4u;
        // Consecutive payloads of an invocation mostly share a frame.
        uint cached_k = 0xffffffffu;
        uint slot = NO_FRAME;
        for (uint j = t; j < payloads; j += gl_WorkGroupSize.x) {
            uint r = rank0 + j;
            if (r < rank0) {
                raised |= STATUS_FRAME_RANGE; // a rank past 2^32
                break;
            }
            uint k = r / per_frame;
            uint at = r % per_frame;
            if (k != cached_k) {
                cached_k = k;
                uint low;
                if (frame_key_low(node, k, node_count, low)) {
                    slot = frame_claim(ctx, tag, low, at == 0u);
                    raised |= slot == NO_FRAME ? STATUS_PAYLOAD_OVERFLOW : 0u;
                } else {
                    slot = NO_FRAME;
                    raised |= STATUS_FRAME_RANGE;
                }
            }
            if (slot == NO_FRAME) {
                continue; // the record is lost (and the status says so)
            }
            // A node without a payload may be given none (no address) but
            // still keeps its meta words.
            // The payload's own words (never past them: the application's
            // payload may end there), then zeros to the stride (a
            // TrackFinishWritingAMDX counter lives there).
            Words dst = Words(frame_address(ctx, slot, at * record_stride));
            uint copied = base != 0ul ? min((s.input_size + 3u) / 4u, record_stride / 4u) : 0u;
            Words src = Words(base + uint64_t(j) * payload_stride);
            for (uint w = 0u; w < copied; ++w) {
                dst.w[w] = src.w[w];
            }
            for (uint w = copied; w < record_stride / 4u; ++w) {
                dst.w[w] = 0u;
            }
            if (meta) {
                Words(frame_address(ctx, slot, meta_offset + 4u * at)).w[0] = meta_word;
            }
            if (at == per_frame - 1u) {
                // Whoever writes a frame's last rank says how far its
                // allocation ran into the tail: these never do.
                Words(frame_address(ctx, slot, tail_word)).w[0] = 0u;
            }
        }
    }
    if (raised != 0u) {
        atomicOr(counts.w[node_count], raised);
    }
}
