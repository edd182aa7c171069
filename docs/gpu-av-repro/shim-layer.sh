#!/bin/sh
# shim-layer.sh DIR: builds into DIR a pass-through Vulkan layer
# VK_LAYER_SHIM_dump (needs gcc and libvulkan-dev) that writes the code of
# every vkCreateShaderModule to $SHIM_DUMP_DIR/mod-N.spv and, where
# $SHIM_REPLACE_DIR/mod-N.spv exists, hands that code down instead.
# Placed *below* the validation layer it sees (and can swap) what GPU-AV gives
# the driver. With the Debian 12 loader (1.3.239), VK_INSTANCE_LAYERS put this
# layer above the validation layer whatever the order in our runs; listing
# both in VkInstanceCreateInfo::ppEnabledLayerNames as
# {"VK_LAYER_KHRONOS_validation", "VK_LAYER_SHIM_dump"} put it below
# (check with VK_LOADER_DEBUG=layer). Use VK_LAYER_PATH=DIR:/usr/share/vulkan/explicit_layer.d.
set -eu
dir=${1:?usage: shim-layer.sh DIR}
mkdir -p "$dir"
cat > "$dir/shim.c" <<'C'
// Pass-through Vulkan layer: dumps every vkCreateShaderModule's code to
// $SHIM_DUMP_DIR/mod-N.spv and, if $SHIM_REPLACE_DIR/mod-N.spv exists, passes
// that file's code down instead. Placed below the validation layer, it sees
// what GPU-AV hands the driver.
#include <vulkan/vulkan.h>
#include <vulkan/vk_layer.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static PFN_vkGetInstanceProcAddr next_gipa;
static PFN_vkGetDeviceProcAddr next_gdpa;
static PFN_vkCreateShaderModule next_csm;
static int counter;
#define EXPORT __attribute__((visibility("default")))
static VKAPI_ATTR VkResult VKAPI_CALL shim_CreateInstance(const VkInstanceCreateInfo* ci, const VkAllocationCallbacks* a, VkInstance* out) {
  VkLayerInstanceCreateInfo* li = (VkLayerInstanceCreateInfo*)ci->pNext;
  while (li && !(li->sType == VK_STRUCTURE_TYPE_LOADER_INSTANCE_CREATE_INFO && li->function == VK_LAYER_LINK_INFO)) li = (VkLayerInstanceCreateInfo*)li->pNext;
  if (!li) return VK_ERROR_INITIALIZATION_FAILED;
  next_gipa = li->u.pLayerInfo->pfnNextGetInstanceProcAddr;
  li->u.pLayerInfo = li->u.pLayerInfo->pNext;
  PFN_vkCreateInstance f = (PFN_vkCreateInstance)next_gipa(NULL, "vkCreateInstance");
  return f(ci, a, out);
}
static VKAPI_ATTR VkResult VKAPI_CALL shim_CreateDevice(VkPhysicalDevice pd, const VkDeviceCreateInfo* ci, const VkAllocationCallbacks* a, VkDevice* out) {
  VkLayerDeviceCreateInfo* li = (VkLayerDeviceCreateInfo*)ci->pNext;
  while (li && !(li->sType == VK_STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO && li->function == VK_LAYER_LINK_INFO)) li = (VkLayerDeviceCreateInfo*)li->pNext;
  if (!li) return VK_ERROR_INITIALIZATION_FAILED;
  PFN_vkGetInstanceProcAddr gipa = li->u.pLayerInfo->pfnNextGetInstanceProcAddr;
  next_gdpa = li->u.pLayerInfo->pfnNextGetDeviceProcAddr;
  li->u.pLayerInfo = li->u.pLayerInfo->pNext;
  PFN_vkCreateDevice f = (PFN_vkCreateDevice)gipa(NULL, "vkCreateDevice");
  VkResult r = f(pd, ci, a, out);
  if (r == VK_SUCCESS) next_csm = (PFN_vkCreateShaderModule)next_gdpa(*out, "vkCreateShaderModule");
  return r;
}
static VKAPI_ATTR VkResult VKAPI_CALL shim_CreateShaderModule(VkDevice d, const VkShaderModuleCreateInfo* ci, const VkAllocationCallbacks* a, VkShaderModule* out) {
  int n = __sync_fetch_and_add(&counter, 1);
  char path[4096];
  const char* dd = getenv("SHIM_DUMP_DIR");
  if (dd) {
    snprintf(path, sizeof path, "%s/mod-%d.spv", dd, n);
    FILE* f = fopen(path, "wb");
    if (f) { fwrite(ci->pCode, 1, ci->codeSize, f); fclose(f); }
  }
  const char* rd = getenv("SHIM_REPLACE_DIR");
  if (rd) {
    snprintf(path, sizeof path, "%s/mod-%d.spv", rd, n);
    FILE* f = fopen(path, "rb");
    if (f) {
      fseek(f, 0, SEEK_END); long sz = ftell(f); fseek(f, 0, SEEK_SET);
      uint32_t* code = malloc(sz);
      fread(code, 1, sz, f); fclose(f);
      VkShaderModuleCreateInfo c2 = *ci; c2.pCode = code; c2.codeSize = sz;
      fprintf(stderr, "shim: module %d replaced by %s\n", n, path);
      VkResult r = next_csm(d, &c2, a, out);
      free(code);
      return r;
    }
  }
  return next_csm(d, ci, a, out);
}
EXPORT VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL shim_GetDeviceProcAddr(VkDevice d, const char* name) {
  if (!strcmp(name, "vkCreateShaderModule")) return (PFN_vkVoidFunction)shim_CreateShaderModule;
  if (!strcmp(name, "vkGetDeviceProcAddr")) return (PFN_vkVoidFunction)shim_GetDeviceProcAddr;
  return next_gdpa(d, name);
}
EXPORT VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL shim_GetInstanceProcAddr(VkInstance i, const char* name) {
  if (!strcmp(name, "vkCreateInstance")) return (PFN_vkVoidFunction)shim_CreateInstance;
  if (!strcmp(name, "vkCreateDevice")) return (PFN_vkVoidFunction)shim_CreateDevice;
  if (!strcmp(name, "vkGetInstanceProcAddr")) return (PFN_vkVoidFunction)shim_GetInstanceProcAddr;
  if (!strcmp(name, "vkGetDeviceProcAddr")) return (PFN_vkVoidFunction)shim_GetDeviceProcAddr;
  if (!strcmp(name, "vkCreateShaderModule")) return (PFN_vkVoidFunction)shim_CreateShaderModule;
  return next_gipa(i, name);
}
C
gcc -shared -fPIC -fvisibility=hidden -O1 -o "$dir/libVkLayer_shim.so" "$dir/shim.c"
cat > "$dir/VkLayer_shim.json" <<'J'
{
  "file_format_version": "1.1.0",
  "layer": {
    "name": "VK_LAYER_SHIM_dump",
    "type": "GLOBAL",
    "library_path": "./libVkLayer_shim.so",
    "api_version": "1.3.239",
    "implementation_version": "1",
    "description": "dump/replace shader modules",
    "functions": {
      "vkGetInstanceProcAddr": "shim_GetInstanceProcAddr",
      "vkGetDeviceProcAddr": "shim_GetDeviceProcAddr"
    }
  }
}
J
echo "built $dir/libVkLayer_shim.so"
