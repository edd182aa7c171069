#version 450
// chain baseline, pass 1 of 3 (firstNode by hand): one workgroup of 2 threads
// per workgroup of every record's grid; finds its record by scanning the
// grids, writes one { recordIndex, increment } pair per thread.
// p.x = record count. b0 uav, b1 records { grid, index }, b2 pairs.
layout(local_size_x = 2) in;
layout(push_constant) uniform P { uvec4 p; };
layout(set = 0, binding = 1, std430) readonly buffer Records { uvec2 records[]; };
layout(set = 0, binding = 2, std430) writeonly buffer Pairs { uvec2 pairs[]; };
void main() {
    uint wg = gl_WorkGroupID.x, t = gl_LocalInvocationIndex, start = 0u;
    for (uint r = 0u; r < p.x; ++r) {
        uint g = records[r].x;
        if (wg < start + g) {
            uint dtid = (wg - start) * 2u + t;
            pairs[wg * 2u + t] = uvec2(records[r].y, dtid * 2u + t + 1u);
            return;
        }
        start += g;
    }
}
