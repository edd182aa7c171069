#!/usr/bin/env bash
# Compiles nodes.hlsl into nodes.spv, the SPIR-V both examples load, with DXC
# (1.9 or later, built with SPIR-V code generation):
#
#   DXC=/path/to/dxc ./build-shaders.sh           write nodes.spv
#   DXC=/path/to/dxc ./build-shaders.sh --check   fail if nodes.spv differs from a fresh compile
#
# The command: dxc -T lib_6_8 -spirv -fspv-target-env=vulkan1.3 nodes.hlsl -Fo nodes.spv
# (-T lib_6_8: a library, one SPIR-V entry point per [Shader("node")] function).
# DXC warns "SPIR-V implementation of node shaders is experimental" once per
# node: expected, filtered out.
set -euo pipefail
cd "$(dirname "$0")"

if [[ -z "${DXC:-}" || ! -x "$DXC" ]]; then
  echo "error: set DXC to the dxc executable (DXC=${DXC:-unset})" >&2
  exit 1
fi

out=nodes.spv
if [[ "${1:-}" == "--check" ]]; then
  out="$(mktemp)"
  trap 'rm -f "$out"' EXIT
fi

log="$("$DXC" -T lib_6_8 -spirv -fspv-target-env=vulkan1.3 nodes.hlsl -Fo "$out" 2>&1)" || {
  echo "$log" >&2
  exit 1
}
grep -v -e 'experimental and subject to change' -e '^\[Shader("node")\]$' -e '^ *\^$' -e '^$' <<<"$log" >&2 || true

if [[ "${1:-}" == "--check" ]]; then
  if ! cmp -s "$out" nodes.spv; then
    echo "FAIL: nodes.spv differs from a fresh compile of nodes.hlsl: run ./build-shaders.sh" >&2
    exit 1
  fi
  echo "nodes.spv is up to date"
else
  echo "wrote nodes.spv"
fi
