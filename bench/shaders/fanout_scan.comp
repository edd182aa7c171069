#version 450
// fanout baseline, pass 1 of 2: exclusive prefix sum of the records' grid
// sizes in one workgroup of 1024 threads (each scans a contiguous chunk, then
// a shared-memory scan of the chunk totals), and the indirect arguments of
// pass 2: X = min(total, p.y), Y = ceil(total / p.y).
// p.x = record count, p.y = workgroups per row. b1 records { grid, id, off },
// b2 starts (p.x words, then the total), b3 indirect arguments.
layout(local_size_x = 1024) in;
layout(push_constant) uniform P { uvec4 p; };
layout(set = 0, binding = 1, std430) readonly buffer Records { uint records[]; };
layout(set = 0, binding = 2, std430) writeonly buffer Starts { uint starts[]; };
layout(set = 0, binding = 3, std430) writeonly buffer Args { uint args[]; };
shared uint sums[1024];
void main() {
    uint t = gl_LocalInvocationIndex, n = p.x;
    uint chunk = (n + 1023u) / 1024u;
    uint begin = min(t * chunk, n), end = min(begin + chunk, n);
    uint s = 0u;
    for (uint i = begin; i < end; ++i) s += records[i * 3u];
    sums[t] = s;
    barrier();
    for (uint d = 1u; d < 1024u; d <<= 1) {
        uint v = t >= d ? sums[t - d] : 0u;
        barrier();
        sums[t] += v;
        barrier();
    }
    uint run = sums[t] - s;
    for (uint i = begin; i < end; ++i) {
        starts[i] = run;
        run += records[i * 3u];
    }
    if (t == 1023u) {
        uint total = sums[1023];
        starts[n] = total;
        args[0] = min(total, p.y);
        args[1] = (total + p.y - 1u) / p.y;
        args[2] = 1u;
    }
}
