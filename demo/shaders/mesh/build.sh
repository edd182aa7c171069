#!/bin/sh
# Regenerates the demo's mesh-node picture shaders next to their sources:
#   sierpinski.hlsl       -> sierpinski.spv      (`split`; DXC 1.9: DXC=/path/to/dxc)
#   sierpinski_tri.spvasm -> sierpinski_tri.spv  (the mesh node; SPIRV-Tools 2025.x)
#   color.frag            -> color.frag.spv      (glslangValidator)
# tests/tests/shaders.rs checks that the last two are up to date.
set -eu
cd "$(dirname "$0")"
if [ -n "${DXC:-}" ]; then
    "$DXC" -T lib_6_8 -spirv -fspv-target-env=vulkan1.3 sierpinski.hlsl -Fo sierpinski.spv 2>&1 | grep -v experimental || true
fi
spirv-as --target-env vulkan1.3 sierpinski_tri.spvasm -o sierpinski_tri.spv
glslangValidator -V --target-env vulkan1.3 color.frag -o color.frag.spv >/dev/null
for spv in *.spv; do spirv-val --target-env vulkan1.3 "$spv"; done
