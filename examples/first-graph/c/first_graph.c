/* first_graph.c: the Rust example (../src/main.rs) in C. Runs the work graph
 * of ../nodes.hlsl (compiled by DXC into ../nodes.spv) with
 * VK_AMDX_shader_enqueue revision 2: device, graph pipeline with node names,
 * scratch memory, a dispatch of host records; checks the result against the
 * CPU and exits 1 if it is wrong (2 if a Vulkan call fails).
 *
 *   make && ./first_graph [path/to/nodes.spv]
 *   gcc -std=c11 -O2 -Wall -Wextra -o first_graph first_graph.c -lvulkan
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amdx_rev2.h"

#ifndef NODES_SPV
#define NODES_SPV "../nodes.spv"
#endif

#define CHECK(call)                                                        \
    do {                                                                   \
        VkResult r_ = (call);                                              \
        if (r_ != VK_SUCCESS) {                                            \
            fprintf(stderr, "%s failed: VkResult %d\n", #call, (int)r_);  \
            exit(2);                                                       \
        }                                                                  \
    } while (0)

/* Host records for `numbers`: Range { groups, first, count } (1..=600, 601..=1000). */
static const uint32_t ranges[2][3] = {{19, 1, 600}, {13, 601, 400}};

/* (SPIR-V entry point, node name): DXC names entry points after the HLSL
 * functions and drops the name of an entry's [NodeID], so tallyBins must be
 * named "tally" here, the name square's output targets. */
static const char *const nodes[3][2] = {{"numbers", "numbers"}, {"square", "square"}, {"tallyBins", "tally"}};

static VkInstance instance;
static VkPhysicalDevice pd;
static VkDevice dev;

/* A buffer bound to new memory of the first type with `flags`; every
 * allocation can have a device address (the scratch buffer needs one). */
static VkBuffer buffer(VkDeviceSize size, VkBufferUsageFlags usage, VkMemoryPropertyFlags flags, VkDeviceMemory *mem) {
    VkBufferCreateInfo info = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .size = size, .usage = usage};
    VkBuffer buf;
    CHECK(vkCreateBuffer(dev, &info, NULL, &buf));
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(dev, buf, &req);
    VkPhysicalDeviceMemoryProperties types;
    vkGetPhysicalDeviceMemoryProperties(pd, &types);
    uint32_t t = 0;
    while (t < types.memoryTypeCount &&
           !((req.memoryTypeBits & (1u << t)) && (types.memoryTypes[t].propertyFlags & flags) == flags))
        t++;
    if (t == types.memoryTypeCount) {
        fprintf(stderr, "no suitable memory type\n");
        exit(2);
    }
    VkMemoryAllocateFlagsInfo addr = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO,
                                      .flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT};
    VkMemoryAllocateInfo alloc = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .pNext = &addr,
                                  .allocationSize = req.size, .memoryTypeIndex = t};
    CHECK(vkAllocateMemory(dev, &alloc, NULL, mem));
    CHECK(vkBindBufferMemory(dev, buf, *mem, 0));
    return buf;
}

/* The SPIR-V words of `path` (*size bytes). */
static uint32_t *read_spv(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(2);
    }
    fseek(f, 0, SEEK_END);
    *size = (size_t)ftell(f);
    rewind(f);
    uint32_t *words = malloc(*size);
    if (!words || fread(words, 1, *size, f) != *size) {
        fprintf(stderr, "%s: read failed\n", path);
        exit(2);
    }
    fclose(f);
    return words;
}

int main(int argc, char **argv) {
    VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .apiVersion = VK_API_VERSION_1_3};
    VkInstanceCreateInfo ii = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app};
    CHECK(vkCreateInstance(&ii, NULL, &instance));

    /* The first device listing the extension (the layer adds it) and a compute queue family. */
    VkPhysicalDevice pds[16];
    uint32_t n_pd = 16, family = UINT32_MAX;
    VkResult listed = vkEnumeratePhysicalDevices(instance, &n_pd, pds);
    if (listed != VK_SUCCESS && listed != VK_INCOMPLETE) /* more than 16 devices: look at the first 16 */
        CHECK(listed);
    for (uint32_t i = 0; i < n_pd && family == UINT32_MAX; i++) {
        VkExtensionProperties exts[512];
        uint32_t n_ext = 512;
        vkEnumerateDeviceExtensionProperties(pds[i], NULL, &n_ext, exts);
        int has = 0;
        for (uint32_t e = 0; e < n_ext; e++)
            has |= strcmp(exts[e].extensionName, VK_AMDX_SHADER_ENQUEUE_EXTENSION_NAME) == 0;
        VkQueueFamilyProperties fams[16];
        uint32_t n_fam = 16;
        vkGetPhysicalDeviceQueueFamilyProperties(pds[i], &n_fam, fams);
        for (uint32_t q = 0; has && q < n_fam && family == UINT32_MAX; q++)
            if (fams[q].queueFlags & VK_QUEUE_COMPUTE_BIT) {
                pd = pds[i];
                family = q;
            }
    }
    if (family == UINT32_MAX) {
        fprintf(stderr, "no device with VK_AMDX_shader_enqueue: is the layer enabled?\n");
        return 2;
    }
    VkPhysicalDeviceShaderEnqueueFeaturesAMDX enqueue = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ENQUEUE_FEATURES_AMDX, .shaderEnqueue = VK_TRUE};
    VkPhysicalDeviceVulkan12Features v12 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
                                            .pNext = &enqueue, .bufferDeviceAddress = VK_TRUE};
    float priority = 1.0f;
    VkDeviceQueueCreateInfo qi = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, .queueFamilyIndex = family,
                                  .queueCount = 1, .pQueuePriorities = &priority};
    const char *ext = VK_AMDX_SHADER_ENQUEUE_EXTENSION_NAME;
    VkDeviceCreateInfo di = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .pNext = &v12, .queueCreateInfoCount = 1,
                             .pQueueCreateInfos = &qi, .enabledExtensionCount = 1, .ppEnabledExtensionNames = &ext};
    CHECK(vkCreateDevice(pd, &di, NULL, &dev));
    /* The loader exports no AMDX commands: ask the device (through the layer). */
    PFN_vkCreateExecutionGraphPipelinesAMDX create_graph =
        (PFN_vkCreateExecutionGraphPipelinesAMDX)vkGetDeviceProcAddr(dev, "vkCreateExecutionGraphPipelinesAMDX");
    PFN_vkGetExecutionGraphPipelineScratchSizeAMDX scratch_size = (PFN_vkGetExecutionGraphPipelineScratchSizeAMDX)
        vkGetDeviceProcAddr(dev, "vkGetExecutionGraphPipelineScratchSizeAMDX");
    PFN_vkGetExecutionGraphPipelineNodeIndexAMDX node_index = (PFN_vkGetExecutionGraphPipelineNodeIndexAMDX)
        vkGetDeviceProcAddr(dev, "vkGetExecutionGraphPipelineNodeIndexAMDX");
    PFN_vkCmdInitializeGraphScratchMemoryAMDX init_scratch = (PFN_vkCmdInitializeGraphScratchMemoryAMDX)
        vkGetDeviceProcAddr(dev, "vkCmdInitializeGraphScratchMemoryAMDX");
    PFN_vkCmdDispatchGraphAMDX dispatch_graph =
        (PFN_vkCmdDispatchGraphAMDX)vkGetDeviceProcAddr(dev, "vkCmdDispatchGraphAMDX");
    if (!create_graph || !scratch_size || !node_index || !init_scratch || !dispatch_graph) {
        fprintf(stderr, "the AMDX commands did not resolve\n");
        return 2;
    }

    /* Bins: 4 sums then 4 counts, host-visible so we can read them. */
    VkDeviceMemory bins_mem;
    VkBuffer bins = buffer(32, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
                           VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, &bins_mem);
    uint32_t *got;
    CHECK(vkMapMemory(dev, bins_mem, 0, 32, 0, (void **)&got));
    memset(got, 0, 32);

    /* Set 0, binding 0: `RWStructuredBuffer<uint> Bins : register(u0)`. */
    VkDescriptorSetLayoutBinding binding = {.binding = 0, .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                            .descriptorCount = 1, .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
    VkDescriptorSetLayoutCreateInfo sli = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                                           .bindingCount = 1, .pBindings = &binding};
    VkDescriptorSetLayout set_layout;
    CHECK(vkCreateDescriptorSetLayout(dev, &sli, NULL, &set_layout));
    VkDescriptorPoolSize pool_size = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1};
    VkDescriptorPoolCreateInfo dpi = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO, .maxSets = 1,
                                      .poolSizeCount = 1, .pPoolSizes = &pool_size};
    VkDescriptorPool pool;
    CHECK(vkCreateDescriptorPool(dev, &dpi, NULL, &pool));
    VkDescriptorSetAllocateInfo dsa = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                       .descriptorPool = pool, .descriptorSetCount = 1, .pSetLayouts = &set_layout};
    VkDescriptorSet set;
    CHECK(vkAllocateDescriptorSets(dev, &dsa, &set));
    VkDescriptorBufferInfo bi = {bins, 0, VK_WHOLE_SIZE};
    VkWriteDescriptorSet write = {.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, .dstSet = set,
                                  .descriptorCount = 1, .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                  .pBufferInfo = &bi};
    vkUpdateDescriptorSets(dev, 1, &write, 0, NULL);
    VkPipelineLayoutCreateInfo pli = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, .setLayoutCount = 1,
                                      .pSetLayouts = &set_layout};
    VkPipelineLayout layout;
    CHECK(vkCreatePipelineLayout(dev, &pli, NULL, &layout));

    /* The graph: one stage per node, each named through VkPipelineShaderStageNodeCreateInfoAMDX. */
    size_t code_size;
    uint32_t *code = read_spv(argc > 1 ? argv[1] : NODES_SPV, &code_size);
    VkShaderModuleCreateInfo smi = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, .codeSize = code_size,
                                    .pCode = code};
    VkShaderModule module;
    CHECK(vkCreateShaderModule(dev, &smi, NULL, &module));
    free(code);
    VkPipelineShaderStageNodeCreateInfoAMDX names[3];
    VkPipelineShaderStageCreateInfo stages[3];
    for (int i = 0; i < 3; i++) {
        names[i] = (VkPipelineShaderStageNodeCreateInfoAMDX){
            .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_NODE_CREATE_INFO_AMDX, .pName = nodes[i][1],
            .index = VK_SHADER_INDEX_UNUSED_AMDX};
        stages[i] = (VkPipelineShaderStageCreateInfo){.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                                                      .pNext = &names[i], .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                                                      .module = module, .pName = nodes[i][0]};
    }
    VkExecutionGraphPipelineCreateInfoAMDX gi = {.sType = VK_STRUCTURE_TYPE_EXECUTION_GRAPH_PIPELINE_CREATE_INFO_AMDX,
                                                 .stageCount = 3, .pStages = stages, .layout = layout};
    VkPipeline graph;
    CHECK(create_graph(dev, VK_NULL_HANDLE, 1, &gi, NULL, &graph));

    /* Scratch: the smallest size the graph accepts is plenty for 1,000 records. */
    VkExecutionGraphPipelineScratchSizeAMDX size = {.sType = VK_STRUCTURE_TYPE_EXECUTION_GRAPH_PIPELINE_SCRATCH_SIZE_AMDX};
    CHECK(scratch_size(dev, graph, &size));
    VkDeviceMemory scratch_mem;
    VkBuffer scratch =
        buffer(size.minSize, VK_BUFFER_USAGE_EXECUTION_GRAPH_SCRATCH_BIT_AMDX | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT,
               VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, &scratch_mem);
    VkBufferDeviceAddressInfo bai = {.sType = VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO, .buffer = scratch};
    VkDeviceAddress scratch_addr = vkGetBufferDeviceAddress(dev, &bai);
    VkPipelineShaderStageNodeCreateInfoAMDX entry = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_NODE_CREATE_INFO_AMDX, .pName = "numbers", .index = 0};
    uint32_t entry_node;
    CHECK(node_index(dev, graph, &entry, &entry_node));
    printf("graph created: scratch %llu bytes (min), entry node index %u\n", (unsigned long long)size.minSize,
           entry_node);

    /* Record: bind, initialise scratch, barrier, dispatch the host records, barrier for the host. */
    VkCommandPoolCreateInfo cpi = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, .queueFamilyIndex = family};
    VkCommandPool cmd_pool;
    CHECK(vkCreateCommandPool(dev, &cpi, NULL, &cmd_pool));
    VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                       .commandPool = cmd_pool, .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                       .commandBufferCount = 1};
    VkCommandBuffer cb;
    CHECK(vkAllocateCommandBuffers(dev, &cai, &cb));
    VkCommandBufferBeginInfo cbi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    CHECK(vkBeginCommandBuffer(cb, &cbi));
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_EXECUTION_GRAPH_AMDX, graph);
    vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_EXECUTION_GRAPH_AMDX, layout, 0, 1, &set, 0, NULL);
    init_scratch(cb, graph, scratch_addr, size.minSize);
    VkMemoryBarrier barrier = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
                               .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT};
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1,
                         &barrier, 0, NULL, 0, NULL);
    VkDispatchGraphInfoAMDX dispatch = {.nodeIndex = entry_node, .payloadCount = 2,
                                        .payloads = {.hostAddress = ranges}, .payloadStride = sizeof ranges[0]};
    VkDispatchGraphCountInfoAMDX count = {.count = 1, .infos = {.hostAddress = &dispatch}, .stride = sizeof dispatch};
    dispatch_graph(cb, scratch_addr, size.minSize, &count);
    barrier.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &barrier, 0,
                         NULL, 0, NULL);
    CHECK(vkEndCommandBuffer(cb));
    VkFenceCreateInfo fi = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence fence;
    CHECK(vkCreateFence(dev, &fi, NULL, &fence));
    VkQueue queue;
    vkGetDeviceQueue(dev, family, 0, &queue);
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cb};
    CHECK(vkQueueSubmit(queue, 1, &si, fence));
    CHECK(vkWaitForFences(dev, 1, &fence, VK_TRUE, UINT64_MAX));

    /* Check against the CPU: same bins, and the total is n(n+1)(2n+1)/6 for n = 1000. */
    uint32_t want[8] = {0};
    for (int r = 0; r < 2; r++)
        for (uint32_t n = ranges[r][1]; n < ranges[r][1] + ranges[r][2]; n++) {
            want[n % 4] += n * n;
            want[4 + n % 4] += 1;
        }
    printf("bin  numbers  sum of n*n   expected\n");
    uint64_t total = 0;
    for (int bin = 0; bin < 4; bin++) {
        printf("n%%4=%d  %5u  %11u  %11u\n", bin, got[4 + bin], got[bin], want[bin]);
        total += got[bin];
    }
    const uint64_t formula = 1000ull * 1001 * 2001 / 6;
    printf("total %llu (1000*1001*2001/6 = %llu)\n", (unsigned long long)total, (unsigned long long)formula);
    int ok = memcmp(got, want, sizeof want) == 0 && total == formula;

    vkDestroyFence(dev, fence, NULL);
    vkDestroyCommandPool(dev, cmd_pool, NULL);
    vkDestroyBuffer(dev, scratch, NULL);
    vkFreeMemory(dev, scratch_mem, NULL);
    vkDestroyPipeline(dev, graph, NULL);
    vkDestroyShaderModule(dev, module, NULL);
    vkDestroyPipelineLayout(dev, layout, NULL);
    vkDestroyDescriptorPool(dev, pool, NULL);
    vkDestroyDescriptorSetLayout(dev, set_layout, NULL);
    vkDestroyBuffer(dev, bins, NULL);
    vkFreeMemory(dev, bins_mem, NULL);
    vkDestroyDevice(dev, NULL);
    vkDestroyInstance(instance, NULL);
    if (!ok) {
        fprintf(stderr, "WRONG: the graph's bins differ from the CPU's\n");
        return 1;
    }
    printf("ok\n");
    return 0;
}
