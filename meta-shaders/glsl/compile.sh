#!/bin/sh
# Recompiles every meta shader next to its source and validates it
# (tests/mirror.rs checks that the committed .spv files match the sources).
set -e
cd "$(dirname "$0")"
for src in *.comp; do
    glslangValidator -V --target-env vulkan1.2 -o "${src%.comp}.spv" "$src" >/dev/null
    spirv-val --target-env vulkan1.2 "${src%.comp}.spv"
done
