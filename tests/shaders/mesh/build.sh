#!/bin/sh
# Regenerates the mesh-node tests' shaders next to their sources:
#   scene.hlsl  -> scene.spv       (compute nodes; DXC 1.9: DXC=/path/to/dxc)
#   marker.mesh -> marker.mesh.spv (glslangValidator)
#   marker_set.mesh -> marker_set.mesh.spv (glslangValidator)
# The mesh node itself is spirv-lowering/tests/corpus/35_mesh_node.spvasm
# (DXC 1.9 cannot compile NodeLaunch("mesh") yet); the fragment shader is
# the demo's (demo/shaders/mesh/color.frag). tests/tests/shaders.rs checks
# that the markers' .spv are up to date.
set -eu
cd "$(dirname "$0")"
if [ -n "${DXC:-}" ]; then
    "$DXC" -T lib_6_8 -spirv -fspv-target-env=vulkan1.3 scene.hlsl -Fo scene.spv 2>&1 | grep -v experimental || true
fi
for m in marker marker_set; do
    glslangValidator -V --target-env vulkan1.3 $m.mesh -o $m.mesh.spv >/dev/null
done
for spv in *.spv; do spirv-val --target-env vulkan1.3 "$spv"; done
