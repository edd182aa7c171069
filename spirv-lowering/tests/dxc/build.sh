#!/usr/bin/env bash
# Regenerates every .spv of this folder from its .hlsl with a real DXC, so
# that the tests never need the compiler:
#
#   DXC=/path/to/dxc ./build.sh            compile everything (name.spv, name.O0.spv)
#   DXC=/path/to/dxc ./build.sh --check    compile into a temp dir; fail if any
#                                          committed .spv differs
#
# Two builds per source, as applications ship them:
#   name.spv     dxc -T lib_6_8 -spirv -fspv-target-env=vulkan1.3            (default -O3)
#   name.O0.spv  dxc -T lib_6_8 -spirv -fspv-target-env=vulkan1.3 -O0 -Vd
# -Vd because DXC 1.9's own validator rejects every -O0 node shader (it passes
# NodePayloadAMDX pointers to the src_* wrapper functions); that output is
# exactly what real -O0 builds contain. Sources using uint16_t are listed in
# SIXTEEN_BIT and get -enable-16bit-types. DXC's "SPIR-V implementation of
# node shaders is experimental" warnings are expected and filtered out.
#
# Afterwards every output is run through spirv-val --target-env vulkan1.3 when
# it is on PATH; the verdicts are printed for information (README.md lists the
# expected ones: every .O0.spv is rejected).
set -euo pipefail

cd "$(dirname "$0")"

if [[ -z "${DXC:-}" ]]; then
  echo "error: set DXC to the dxc binary (DXC 1.9 or later, with SPIR-V codegen)" >&2
  exit 1
fi
if [[ ! -x "$DXC" ]]; then
  echo "error: DXC=$DXC is not an executable file" >&2
  exit 1
fi

check=0
if [[ "${1:-}" == "--check" ]]; then check=1; fi

SIXTEEN_BIT=(layout16)
COMMON=(-T lib_6_8 -spirv -fspv-target-env=vulkan1.3)

outdir=.
if [[ $check -eq 1 ]]; then
  outdir="$(mktemp -d)"
  trap 'rm -rf "$outdir"' EXIT
fi

fail=0
compile() { # $1 = source stem, $2 = output file, rest = extra flags
  local stem="$1" out="$2"
  shift 2
  local log
  if ! log="$("$DXC" "${COMMON[@]}" "$@" "$stem.hlsl" -Fo "$out" 2>&1)"; then
    echo "FAIL dxc: $stem.hlsl $*" >&2
    echo "$log" >&2
    return 1
  fi
  # Anything besides the experimental-node-shader warning is worth seeing.
  if grep -v -e 'experimental and subject to change' -e '^\[Shader("node")\]$' -e '^ *\^$' <<<"$log" | grep -q .; then
    echo "note dxc: $stem.hlsl $*:" >&2
    echo "$log" >&2
  fi
}

for src in *.hlsl; do
  stem="${src%.hlsl}"
  extra=()
  for s in "${SIXTEEN_BIT[@]}"; do
    if [[ "$s" == "$stem" ]]; then extra=(-enable-16bit-types); fi
  done
  compile "$stem" "$outdir/$stem.spv" "${extra[@]}" || fail=1
  compile "$stem" "$outdir/$stem.O0.spv" -O0 -Vd "${extra[@]}" || fail=1
done

if [[ $check -eq 1 ]]; then
  for f in "$outdir"/*.spv; do
    name="$(basename "$f")"
    if ! cmp -s "$f" "$name"; then
      echo "FAIL stale: $name differs from a fresh compile" >&2
      fail=1
    fi
  done
fi

if command -v spirv-val >/dev/null 2>&1; then
  for f in "$outdir"/*.spv; do
    if msg="$(spirv-val --target-env vulkan1.3 "$f" 2>&1)"; then
      echo "spirv-val ok      $(basename "$f")"
    else
      echo "spirv-val rejects $(basename "$f"): $(head -n1 <<<"$msg")"
    fi
  done
else
  echo "note: spirv-val not on PATH; outputs not validated"
fi

if [[ $fail -ne 0 ]]; then
  echo "dxc corpus: FAILED" >&2
  exit 1
fi
echo "dxc corpus: every .hlsl compiled at -O3 and -O0"
