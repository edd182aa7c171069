// Workgroup-wide prefix sum over SCAN_SIZE invocations, the workgroup size
// (Hillis-Steele in shared memory; subgroup arithmetic is not required of
// Vulkan 1.3 devices). Every invocation of the workgroup must call it, in
// uniform control flow.
shared uint scan_partial[SCAN_SIZE];

// The inclusive prefix sum of `value` over invocations 0..t; `total` gets
// the sum over the whole workgroup.
uint workgroup_inclusive_scan(uint value, out uint total) {
    uint t = gl_LocalInvocationIndex;
    scan_partial[t] = value;
    barrier();
    for (uint step = 1u; step < SCAN_SIZE; step <<= 1u) {
        uint add = t >= step ? scan_partial[t - step] : 0u;
        barrier();
        scan_partial[t] += add;
        barrier();
    }
    uint inclusive = scan_partial[t];
    total = scan_partial[SCAN_SIZE - 1u];
    // The next call overwrites scan_partial.
    barrier();
    return inclusive;
}
