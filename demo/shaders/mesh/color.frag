#version 450
// The mesh nodes' fragment shader: writes the flat colour word as it came.
layout(location = 0) flat in uint color;
layout(location = 0) out uint outColor;
void main() { outColor = color; }
