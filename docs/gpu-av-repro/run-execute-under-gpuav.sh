#!/bin/sh
# Runs each spirv-lowering execute test (one lowered kernel on lavapipe) alone
# under the Khronos validation layer with GPU-assisted validation, and prints
# the ones that fail. Debian 12: vulkan-validationlayers 1.3.239, Mesa 22.3.
# Run from the repository root. Tests run one per process, as two of them
# crash the process (inside the layer's vkCreateShaderModule).
#   MODE=default    GPU-AV with its default settings
#   MODE=no-oob     same with khronos_validation.gpuav_buffer_oob = false
#   MODE=validate   same with VK_LAYER_GPUAV_VALIDATE_INSTRUMENTED_SHADERS=1
#   MODE=off        no layer (all pass)
set -u
MODE=${MODE:-default}
nice cargo test -p spirv-lowering --test execute --no-run 2>/dev/null >/dev/null || exit 1
bin=$(ls -t target/debug/deps/execute-* | grep -v '\.d$' | head -1)
settings=$(mktemp -d)
cat > "$settings/vk_layer_settings.txt" <<'S'
khronos_validation.debug_action = VK_DBG_LAYER_ACTION_LOG_MSG
khronos_validation.report_flags = error,warn,info,perf
khronos_validation.log_filename = stdout
S
[ "$MODE" = no-oob ] && echo "khronos_validation.gpuav_buffer_oob = false" >> "$settings/vk_layer_settings.txt"
if [ "$MODE" != off ]; then
  export VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation
  export VK_LAYER_ENABLES=VK_VALIDATION_FEATURE_ENABLE_GPU_ASSISTED_EXT
  export VK_LAYER_SETTINGS_PATH="$settings"
fi
[ "$MODE" = validate ] && export VK_LAYER_GPUAV_VALIDATE_INSTRUMENTED_SHADERS=1
pass=0; fail=0
for t in $(cd spirv-lowering && "../$bin" --list 2>/dev/null | sed -n 's/: test$//p'); do
  out=$(cd spirv-lowering && timeout 300 nice "../$bin" --exact "$t" --test-threads=1 2>&1); rc=$?
  if [ $rc -eq 0 ]; then pass=$((pass+1)); else
    fail=$((fail+1))
    why=$(printf '%s\n' "$out" | grep -m1 -E "failed:|panicked" | cut -c1-120)
    echo "FAIL $t (exit $rc) $why"
  fi
  printf '%s\n' "$out" | grep -o -E "(Instrumented shader is invalid|GPU-Assisted|UNASSIGNED-GPU)[^|]{0,160}" | sort -u | sed 's/^/    layer: /'
done
echo "$MODE: $pass passed, $fail failed"
rm -rf "$settings"
