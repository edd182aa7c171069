#!/bin/sh
# Regenerates the mesh-node tests' shaders next to their sources:
#   scene.hlsl  -> scene.spv       (compute nodes; DXC 1.9: DXC=/path/to/dxc)
#   color.frag  -> color.frag.spv  (glslangValidator)
#   marker.mesh -> marker.mesh.spv (glslangValidator)
# The mesh node itself is spirv-lowering/tests/corpus/35_mesh_node.spvasm
# (DXC 1.9 cannot compile NodeLaunch("mesh") yet).
set -eu
cd "$(dirname "$0")"
if [ -n "${DXC:-}" ]; then
    "$DXC" -T lib_6_8 -spirv -fspv-target-env=vulkan1.3 scene.hlsl -Fo scene.spv 2>&1 | grep -v experimental || true
fi
glslangValidator -V --target-env vulkan1.3 color.frag -o color.frag.spv >/dev/null
glslangValidator -V --target-env vulkan1.3 marker.mesh -o marker.mesh.spv >/dev/null
for spv in *.spv; do spirv-val --target-env vulkan1.3 "$spv"; done
