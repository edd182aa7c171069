#version 450
// cmd_cost's graphics pipeline (bound, never drawn): one triangle from the
// vertex index, so the pipeline needs no vertex input.
void main() {
    vec2 corner = vec2(float(gl_VertexIndex & 1), float(gl_VertexIndex >> 1));
    gl_Position = vec4(corner * 2.0 - 1.0, 0.0, 1.0);
}
