#!/bin/sh
# Compiles the HLSL node shaders of the graph tests (hostile.hlsl) with a
# real DXC 1.9 into the committed .spv next to them, then validates:
#
#   DXC=/path/to/dxc ./compile-hlsl.sh           rewrite every .spv
#   DXC=/path/to/dxc ./compile-hlsl.sh --check   fail if a committed .spv is stale
#
# The command for each name.hlsl:
#   $DXC -T lib_6_8 -spirv -fspv-target-env=vulkan1.3 name.hlsl -Fo name.spv
set -eu
cd "$(dirname "$0")"
[ -x "${DXC:-}" ] || { echo "set DXC to the dxc binary (1.9 or later, with SPIR-V codegen)" >&2; exit 1; }
check=${1:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
for src in *.hlsl; do
    spv=${src%.hlsl}.spv
    # DXC warns that node shaders in SPIR-V are experimental: expected.
    "$DXC" -T lib_6_8 -spirv -fspv-target-env=vulkan1.3 "$src" -Fo "$tmp/$spv" >"$tmp/log" 2>&1 \
        || { cat "$tmp/log" >&2; exit 1; }
    spirv-val --target-env vulkan1.3 "$tmp/$spv" || status=1
    if [ "$check" = "--check" ]; then
        cmp -s "$tmp/$spv" "$spv" || { echo "$spv is stale" >&2; status=1; }
    else
        cp "$tmp/$spv" "$spv"
    fi
done
exit $status
