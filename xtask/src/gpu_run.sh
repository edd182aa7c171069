#!/bin/sh
# Runs the conformance tests carried in this folder on this machine's Vulkan
# driver, as the GPU lane (EMU_SE_LANE=gpu: a test that skips for want of
# something a GPU has fails). Made by `cargo xtask gpu-tests`.
#
# usage: sh run.sh [out-dir]       (default ./gpu-test-out)
# needs: libvulkan.so.1 where the dynamic linker finds it (LD_LIBRARY_PATH),
#        the driver's manifest in VK_DRIVER_FILES (else nvidia_icd.json from
#        /usr/share/vulkan/icd.d or /etc/vulkan/icd.d).
# writes: <out-dir>/<test>.log per test binary, <out-dir>/skips.log.
# exits:  0 when every binary passed, 1 otherwise, 2 on a setup error.
set -u
here=$(cd "$(dirname "$0")" && pwd) || exit 2
out=${1:-./gpu-test-out}
mkdir -p "$out" && out=$(cd "$out" && pwd) || exit 2

icd=${VK_DRIVER_FILES:-${VK_ICD_FILENAMES:-}}
if [ -z "$icd" ]; then
    for f in /usr/share/vulkan/icd.d/nvidia_icd.json /etc/vulkan/icd.d/nvidia_icd.json; do
        if [ -f "$f" ]; then icd=$f; break; fi
    done
fi
if [ -z "$icd" ]; then
    echo "run.sh: no driver manifest: set VK_DRIVER_FILES" >&2
    exit 2
fi

# The harness writes its own manifest for EMU_SE_LAYER_LIB and points the
# loader at EMU_SE_ICD; Debian 12's validation layer (1.3.239) is too old
# to judge a Vulkan 1.4 driver, so it stays out.
export EMU_SE_LANE=gpu
export EMU_SE_ICD="$icd"
export EMU_SE_LAYER_LIB="$here/libVkLayer_EMU_shader_enqueue.so"
export EMU_SE_TESTS_WITHOUT_VALIDATION=1
export EMU_SE_SKIP_LOG="$out/skips.log"
: >"$EMU_SE_SKIP_LOG" || exit 2
echo "run.sh: driver $icd, logs in $out"

failed=0
for bin in "$here"/bin/*; do
    name=$(basename "$bin")
    log="$out/$name.log"
    if "$bin" --nocapture >"$log" 2>&1; then
        status=passed
    else
        status="FAILED (exit $?, see $log)"
        failed=$((failed + 1))
    fi
    printf '%-26s %s\n' "$name" "$status"
    # libtest's own count, when it got that far.
    grep '^test result:' "$log" | sed 's/^/    /'
done

echo "skipped at run time on the gpu lane:"
if [ -s "$EMU_SE_SKIP_LOG" ]; then
    tab=$(printf '\t')
    sort -u "$EMU_SE_SKIP_LOG" | while IFS="$tab" read -r lane binary test why; do
        echo "    $binary::$test: $why"
    done
else
    echo "    none"
fi
# A skip where the GPU should have what the test needs failed that test.
if grep -q 'cannot run on the gpu lane' "$out"/*.log; then
    echo "failed for want of what a GPU should have:"
    grep -h 'cannot run on the gpu lane' "$out"/*.log | sed 's/^/    /'
fi

if [ "$failed" -ne 0 ]; then
    echo "run.sh: $failed test binaries failed"
    exit 1
fi
echo "run.sh: all test binaries passed"
