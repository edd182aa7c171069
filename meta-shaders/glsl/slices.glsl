// Used by plan.comp: a node's level-0 record slice and launch.

// Writes node n's record slice and, unless its grid comes from the
// payload (gridscan.comp), its dispatch arguments.
void write_dispatch(NodeDispatchRef d, NodeScheduleRef s, uint node, uint64_t records, uint count) {
    d.record_count = count;
    d.records = records;
    d.mode = RECORDS_LISTED;
    d.key_node = node;
    uint groups = 0u;
    if (s.mode == SCHEDULE_STATIC) {
        groups = count * s.static_groups;
    } else if (s.mode == SCHEDULE_BATCHED) {
        groups = (count + s.records_per_workgroup - 1u) / s.records_per_workgroup;
    }
    d.workgroup_count = groups;
    uvec3 split = split_groups(groups);
    d.indirect_x = split.x;
    d.indirect_y = split.y;
    d.indirect_z = split.z;
}

// SharesInputWithAMDX: a sharer reads its base node's record slice, which
// other invocations of this workgroup wrote with write_dispatch. Every
// invocation must call it, in uniform control flow.
void copy_shared_slices(NodeDispatchRef dispatches, NodeScheduleRef schedules, uint node_count) {
    memoryBarrierBuffer();
    barrier();
    for (uint n = gl_LocalInvocationIndex; n < node_count; n += gl_WorkGroupSize.x) {
        uint base_slot = schedules[n].share_base;
        if (base_slot != 0u) {
            NodeDispatchRef b = dispatches[base_slot - 1u];
            write_dispatch(dispatches[n], schedules[n], n, b.records, b.record_count);
        }
    }
}
