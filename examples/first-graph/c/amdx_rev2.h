/* amdx_rev2.h: the VK_AMDX_shader_enqueue revision 2 declarations that
 * first_graph.c uses, for Vulkan headers that do not have them.
 *
 * Why: Debian 12's libvulkan-dev (headers 1.3.239) predates the extension,
 * and the headers that first carried it declare revision 1, whose scratch
 * commands and scratch-size structure differ (no scratchSize parameters, one
 * size instead of min/max/granularity): calling revision 2 with those
 * prototypes breaks the ABI. Headers that declare revision 2 (in
 * vulkan_beta.h) are used as they are; revision-1 headers stop the build.
 *
 * Source: the extension's revision-2 proposal, section "Proposal / API
 * Changes" (Graph Pipelines, Scratch Memory, Dispatch a graph, Features);
 * the enumerant values are the registry's for extension number 135
 * (1000000000 + (135 - 1) * 1000 + offset). */
#ifndef AMDX_REV2_H
#define AMDX_REV2_H

#define VK_ENABLE_BETA_EXTENSIONS
#include <vulkan/vulkan.h>

#if defined(VK_AMDX_SHADER_ENQUEUE_SPEC_VERSION) && VK_AMDX_SHADER_ENQUEUE_SPEC_VERSION >= 2
/* The system headers declare revision 2: nothing to add. */
#elif defined(VK_AMDX_SHADER_ENQUEUE_SPEC_VERSION)
#error "these Vulkan headers declare VK_AMDX_shader_enqueue revision 1; use headers with revision 2"
#else

#define VK_AMDX_shader_enqueue 1
#define VK_AMDX_SHADER_ENQUEUE_SPEC_VERSION 2
#define VK_AMDX_SHADER_ENQUEUE_EXTENSION_NAME "VK_AMDX_shader_enqueue"
#define VK_SHADER_INDEX_UNUSED_AMDX (~0U)

#define VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ENQUEUE_FEATURES_AMDX ((VkStructureType)1000134000)
#define VK_STRUCTURE_TYPE_EXECUTION_GRAPH_PIPELINE_SCRATCH_SIZE_AMDX ((VkStructureType)1000134002)
#define VK_STRUCTURE_TYPE_EXECUTION_GRAPH_PIPELINE_CREATE_INFO_AMDX ((VkStructureType)1000134003)
#define VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_NODE_CREATE_INFO_AMDX ((VkStructureType)1000134004)
#define VK_PIPELINE_BIND_POINT_EXECUTION_GRAPH_AMDX ((VkPipelineBindPoint)1000134000)
#define VK_BUFFER_USAGE_EXECUTION_GRAPH_SCRATCH_BIT_AMDX ((VkBufferUsageFlags)0x02000000)

typedef struct VkPhysicalDeviceShaderEnqueueFeaturesAMDX {
    VkStructureType sType;
    void *pNext;
    VkBool32 shaderEnqueue;
    VkBool32 shaderMeshEnqueue; /* new in revision 2 */
} VkPhysicalDeviceShaderEnqueueFeaturesAMDX;

typedef struct VkExecutionGraphPipelineScratchSizeAMDX {
    VkStructureType sType;
    void *pNext;
    VkDeviceSize minSize; /* revision 2: a range instead of one size */
    VkDeviceSize maxSize;
    VkDeviceSize sizeGranularity;
} VkExecutionGraphPipelineScratchSizeAMDX;

typedef struct VkExecutionGraphPipelineCreateInfoAMDX {
    VkStructureType sType;
    const void *pNext;
    VkPipelineCreateFlags flags;
    uint32_t stageCount;
    const VkPipelineShaderStageCreateInfo *pStages;
    const VkPipelineLibraryCreateInfoKHR *pLibraryInfo;
    VkPipelineLayout layout;
    VkPipeline basePipelineHandle;
    int32_t basePipelineIndex;
} VkExecutionGraphPipelineCreateInfoAMDX;

typedef struct VkPipelineShaderStageNodeCreateInfoAMDX {
    VkStructureType sType;
    const void *pNext;
    const char *pName;
    uint32_t index;
} VkPipelineShaderStageNodeCreateInfoAMDX;

typedef union VkDeviceOrHostAddressConstAMDX {
    VkDeviceAddress deviceAddress;
    const void *hostAddress;
} VkDeviceOrHostAddressConstAMDX;

typedef struct VkDispatchGraphInfoAMDX {
    uint32_t nodeIndex;
    uint32_t payloadCount;
    VkDeviceOrHostAddressConstAMDX payloads;
    uint64_t payloadStride;
} VkDispatchGraphInfoAMDX;

typedef struct VkDispatchGraphCountInfoAMDX {
    uint32_t count;
    VkDeviceOrHostAddressConstAMDX infos;
    uint64_t stride;
} VkDispatchGraphCountInfoAMDX;

typedef VkResult(VKAPI_PTR *PFN_vkCreateExecutionGraphPipelinesAMDX)(
    VkDevice device, VkPipelineCache pipelineCache, uint32_t createInfoCount,
    const VkExecutionGraphPipelineCreateInfoAMDX *pCreateInfos, const VkAllocationCallbacks *pAllocator,
    VkPipeline *pPipelines);
typedef VkResult(VKAPI_PTR *PFN_vkGetExecutionGraphPipelineScratchSizeAMDX)(
    VkDevice device, VkPipeline executionGraph, VkExecutionGraphPipelineScratchSizeAMDX *pSizeInfo);
typedef VkResult(VKAPI_PTR *PFN_vkGetExecutionGraphPipelineNodeIndexAMDX)(
    VkDevice device, VkPipeline executionGraph, const VkPipelineShaderStageNodeCreateInfoAMDX *pNodeInfo,
    uint32_t *pNodeIndex);
typedef void(VKAPI_PTR *PFN_vkCmdInitializeGraphScratchMemoryAMDX)(
    VkCommandBuffer commandBuffer, VkPipeline executionGraph, VkDeviceAddress scratch, VkDeviceSize scratchSize);
typedef void(VKAPI_PTR *PFN_vkCmdDispatchGraphAMDX)(
    VkCommandBuffer commandBuffer, VkDeviceAddress scratch, VkDeviceSize scratchSize,
    const VkDispatchGraphCountInfoAMDX *pCountInfo);

#endif
#endif
