#version 450
// cmd_cost's graphics pipeline (bound, never drawn): a constant colour to
// its one R8G8B8A8_UNORM attachment.
layout(location = 0) out vec4 outColor;
void main() { outColor = vec4(1.0, 0.5, 0.0, 1.0); }
