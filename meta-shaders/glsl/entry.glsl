// Shared part of entry_rank.comp and entry_records.comp: the graph's
// entry infos read on the GPU (vkCmdDispatchGraphIndirectAMDX: count on the
// host, infos in device memory; ...IndirectCountAMDX: everything in device
// memory). VkDispatchGraphInfoAMDX and VkDispatchGraphCountInfoAMDX are read
// word by word: the application only guarantees 4-byte alignment
// (executionGraphDispatchAddressAlignment).
layout(local_size_x = 64) in;

layout(push_constant) uniform Push {
    GraphContextRef ctx;
    NodeDispatchRef dispatches;
    NodeScheduleRef schedules;
    uint64_t count_info;   // device VkDispatchGraphCountInfoAMDX, or 0
    uint64_t infos;        // host-given infos address (count_info == 0)
    uint64_t info_stride;
    uint count;            // host-given count (count_info == 0)
    uint rank_capacity;    // entries the rank array (scratch) holds
    uint64_t ranks;        // uvec2 (node slot, rank) per info
    uint64_t counts;       // [node_count] u32 records per node
} pc;

const uint NO_ENTRY = 0xffffffffu;

uint64_t read_u64(Words w, uint index) {
    return uint64_t(w.w[index]) | (uint64_t(w.w[index + 1u]) << 32);
}

// (count, infos address, stride) of this dispatch.
void entry_infos(out uint count, out uint64_t infos, out uint64_t stride) {
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
    count = min(count, pc.rank_capacity);
}
