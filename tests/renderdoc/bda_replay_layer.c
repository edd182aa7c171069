/*
 * VK_LAYER_EMU_bda_replay: bufferDeviceAddressCaptureReplay for lavapipe.
 *
 * RenderDoc captures an application that uses buffer device addresses only
 * where the driver has bufferDeviceAddressCaptureReplay (without it RenderDoc
 * clamps a Vulkan 1.3 device to 1.2 and hides bufferDeviceAddress:
 * renderdoc/driver/vulkan/wrappers/vk_get_funcs.cpp, ClampPhysDevAPIVersion,
 * and baldurk/renderdoc#2682). Lavapipe (Mesa 22.3 and 25.0) does not offer
 * it, although nothing stops it: its device addresses are host pointers.
 * This layer, placed between RenderDoc and lavapipe, supplies it: memory
 * allocated with VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_CAPTURE_REPLAY_BIT is
 * mapped by the layer at an address of its own arena and imported into
 * lavapipe with VK_EXT_external_memory_host, so that its device addresses
 * are known; the replay passes the captured address back
 * (VkMemoryOpaqueCaptureAddressAllocateInfo) and gets the same mapping, so
 * every buffer bound at the same offset has the same device address.
 *
 * It acts only on lavapipe without the feature (Mesa's vendor ID, a CPU
 * device: one memory type, host pointers as device addresses) and passes
 * everything through elsewhere. Freed memory goes back to the arena's
 * reservation but its addresses are not reused, so that no two allocations
 * of one capture share an address.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <vulkan/vk_layer.h>

#define EXPORT __attribute__((visibility("default")))

/* The arena: far from where the kernel puts mappings on x86-64 (below
 * 0x7f..., above the heap), the same in the capturing and the replaying
 * process; reserved without memory (PROT_NONE, MAP_NORESERVE). */
#define ARENA_BASE ((uintptr_t)0x200000000000ull)
#define ARENA_SIZE ((uintptr_t)64 << 30)
/* Lavapipe's minImportedHostPointerAlignment. */
#define PAGE ((VkDeviceSize)4096)
#define MAX_OBJECTS 32

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int arena_state; /* 0 not tried, 1 reserved, -1 failed */
static uintptr_t arena_next = ARENA_BASE;

struct instance {
    void *key;
    VkInstance handle;
    PFN_vkGetInstanceProcAddr gipa;
    PFN_vkDestroyInstance destroy;
    PFN_vkGetPhysicalDeviceFeatures2 features2;
    PFN_vkGetPhysicalDeviceProperties properties;
};

struct device {
    void *key;
    PFN_vkGetDeviceProcAddr gdpa;
    PFN_vkDestroyDevice destroy;
    PFN_vkAllocateMemory allocate;
    PFN_vkFreeMemory free_memory;
    PFN_vkGetDeviceMemoryOpaqueCaptureAddress opaque_address;
    int active; /* lavapipe without the feature: memory is placed */
};

struct placed {
    VkDeviceMemory memory;
    uintptr_t address;
    size_t size;
};

static struct instance instances[MAX_OBJECTS];
static struct device devices[MAX_OBJECTS];
static struct placed *placed;
static size_t placed_count, placed_cap;

/* The loader's dispatch table pointer: one per instance (and its physical
 * devices) and per device (and its queues and command buffers). */
static void *key_of(const void *handle) { return *(void *const *)handle; }

static void say(const char *what) { fprintf(stderr, "VK_LAYER_EMU_bda_replay: %s\n", what); }

static struct instance *instance_of(const void *handle) {
    void *key = key_of(handle);
    for (int i = 0; i < MAX_OBJECTS; i++)
        if (instances[i].key == key) return &instances[i];
    return NULL;
}

static struct device *device_of(const void *handle) {
    void *key = key_of(handle);
    for (int i = 0; i < MAX_OBJECTS; i++)
        if (devices[i].key == key) return &devices[i];
    return NULL;
}

static int reserve_arena(void) {
    if (arena_state == 0) {
        void *p = mmap((void *)ARENA_BASE, ARENA_SIZE, PROT_NONE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
        arena_state = p == (void *)ARENA_BASE ? 1 : -1;
        if (arena_state < 0) say("cannot reserve the address arena: capture/replay addresses disabled");
    }
    return arena_state > 0;
}

/* The loader unloads a layer between instances (RenderDoc's replay makes
 * one to enumerate devices first): the reservation goes with the library,
 * whose devices and memory are all gone by then. */
__attribute__((destructor)) static void release_arena(void) {
    if (arena_state > 0) munmap((void *)ARENA_BASE, ARENA_SIZE);
}

static const void *find(const void *chain, VkStructureType type) {
    for (const VkBaseInStructure *s = chain; s; s = s->pNext)
        if (s->sType == type) return s;
    return NULL;
}

static VKAPI_ATTR VkResult VKAPI_CALL create_instance(const VkInstanceCreateInfo *info,
                                                      const VkAllocationCallbacks *allocator, VkInstance *out) {
    VkLayerInstanceCreateInfo *link = (VkLayerInstanceCreateInfo *)info->pNext;
    while (link && !(link->sType == VK_STRUCTURE_TYPE_LOADER_INSTANCE_CREATE_INFO && link->function == VK_LAYER_LINK_INFO))
        link = (VkLayerInstanceCreateInfo *)link->pNext;
    if (!link) return VK_ERROR_INITIALIZATION_FAILED;
    PFN_vkGetInstanceProcAddr next = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
    link->u.pLayerInfo = link->u.pLayerInfo->pNext;
    PFN_vkCreateInstance create = (PFN_vkCreateInstance)next(VK_NULL_HANDLE, "vkCreateInstance");
    VkResult result = create(info, allocator, out);
    if (result != VK_SUCCESS) return result;
    pthread_mutex_lock(&lock);
    reserve_arena();
    for (int i = 0; i < MAX_OBJECTS; i++) {
        if (instances[i].key == NULL) {
            instances[i] = (struct instance){
                .key = key_of(*out),
                .handle = *out,
                .gipa = next,
                .destroy = (PFN_vkDestroyInstance)next(*out, "vkDestroyInstance"),
                .features2 = (PFN_vkGetPhysicalDeviceFeatures2)next(*out, "vkGetPhysicalDeviceFeatures2"),
            };
            if (!instances[i].features2)
                instances[i].features2 = (PFN_vkGetPhysicalDeviceFeatures2)next(*out, "vkGetPhysicalDeviceFeatures2KHR");
            instances[i].properties = (PFN_vkGetPhysicalDeviceProperties)next(*out, "vkGetPhysicalDeviceProperties");
            pthread_mutex_unlock(&lock);
            return VK_SUCCESS;
        }
    }
    pthread_mutex_unlock(&lock);
    say("too many instances");
    PFN_vkDestroyInstance destroy = (PFN_vkDestroyInstance)next(*out, "vkDestroyInstance");
    destroy(*out, allocator);
    return VK_ERROR_INITIALIZATION_FAILED;
}

static VKAPI_ATTR void VKAPI_CALL destroy_instance(VkInstance instance, const VkAllocationCallbacks *allocator) {
    if (!instance) return;
    pthread_mutex_lock(&lock);
    struct instance *in = instance_of(instance);
    PFN_vkDestroyInstance destroy = in ? in->destroy : NULL;
    if (in) in->key = NULL;
    pthread_mutex_unlock(&lock);
    if (destroy) destroy(instance, allocator);
}

/* Whether the layer acts for `pd`: lavapipe (Mesa's vendor ID, a CPU
 * device) whose driver lacks the feature, with the arena reserved. */
static int acts_for(VkPhysicalDevice pd, PFN_vkGetPhysicalDeviceFeatures2 features2,
                    PFN_vkGetPhysicalDeviceProperties properties) {
    if (!features2 || !properties) return 0;
    VkPhysicalDeviceProperties p;
    properties(pd, &p);
    if (p.vendorID != VK_VENDOR_ID_MESA || p.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU) return 0;
    VkPhysicalDeviceBufferDeviceAddressFeatures bda = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_BUFFER_DEVICE_ADDRESS_FEATURES};
    VkPhysicalDeviceFeatures2 f = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &bda};
    features2(pd, &f);
    pthread_mutex_lock(&lock);
    int arena = arena_state > 0;
    pthread_mutex_unlock(&lock);
    return arena && bda.bufferDeviceAddress && !bda.bufferDeviceAddressCaptureReplay;
}

/* The feature, advertised wherever bufferDeviceAddress is. */
static VKAPI_ATTR void VKAPI_CALL get_features2(VkPhysicalDevice pd, VkPhysicalDeviceFeatures2 *features) {
    pthread_mutex_lock(&lock);
    struct instance *in = instance_of(pd);
    PFN_vkGetPhysicalDeviceFeatures2 next = in ? in->features2 : NULL;
    PFN_vkGetPhysicalDeviceProperties properties = in ? in->properties : NULL;
    pthread_mutex_unlock(&lock);
    if (!next) return;
    int acts = acts_for(pd, next, properties);
    next(pd, features);
    if (!acts) return;
    for (VkBaseOutStructure *s = (VkBaseOutStructure *)features->pNext; s; s = s->pNext) {
        if (s->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES) {
            VkPhysicalDeviceVulkan12Features *f = (VkPhysicalDeviceVulkan12Features *)s;
            f->bufferDeviceAddressCaptureReplay = f->bufferDeviceAddress;
        } else if (s->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_BUFFER_DEVICE_ADDRESS_FEATURES ||
                   s->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_BUFFER_DEVICE_ADDRESS_FEATURES_EXT) {
            VkPhysicalDeviceBufferDeviceAddressFeatures *f = (VkPhysicalDeviceBufferDeviceAddressFeatures *)s;
            f->bufferDeviceAddressCaptureReplay = f->bufferDeviceAddress;
        }
    }
}

static VkResult remember_device(VkDevice device, PFN_vkGetDeviceProcAddr gdpa, int active,
                                const VkAllocationCallbacks *allocator) {
    pthread_mutex_lock(&lock);
    for (int i = 0; i < MAX_OBJECTS; i++) {
        if (devices[i].key == NULL) {
            devices[i] = (struct device){
                .key = key_of(device),
                .gdpa = gdpa,
                .destroy = (PFN_vkDestroyDevice)gdpa(device, "vkDestroyDevice"),
                .allocate = (PFN_vkAllocateMemory)gdpa(device, "vkAllocateMemory"),
                .free_memory = (PFN_vkFreeMemory)gdpa(device, "vkFreeMemory"),
                .opaque_address =
                    (PFN_vkGetDeviceMemoryOpaqueCaptureAddress)gdpa(device, "vkGetDeviceMemoryOpaqueCaptureAddress"),
                .active = active,
            };
            pthread_mutex_unlock(&lock);
            return VK_SUCCESS;
        }
    }
    pthread_mutex_unlock(&lock);
    say("too many devices");
    PFN_vkDestroyDevice destroy = (PFN_vkDestroyDevice)gdpa(device, "vkDestroyDevice");
    destroy(device, allocator);
    return VK_ERROR_INITIALIZATION_FAILED;
}

static VKAPI_ATTR VkResult VKAPI_CALL create_device(VkPhysicalDevice pd, const VkDeviceCreateInfo *info,
                                                    const VkAllocationCallbacks *allocator, VkDevice *out) {
    VkLayerDeviceCreateInfo *link = (VkLayerDeviceCreateInfo *)info->pNext;
    while (link && !(link->sType == VK_STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO && link->function == VK_LAYER_LINK_INFO))
        link = (VkLayerDeviceCreateInfo *)link->pNext;
    if (!link) return VK_ERROR_INITIALIZATION_FAILED;
    PFN_vkGetInstanceProcAddr gipa = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
    PFN_vkGetDeviceProcAddr gdpa = link->u.pLayerInfo->pfnNextGetDeviceProcAddr;
    pthread_mutex_lock(&lock);
    struct instance *in = instance_of(pd);
    VkInstance instance = in ? in->handle : VK_NULL_HANDLE;
    PFN_vkGetPhysicalDeviceFeatures2 features2 = in ? in->features2 : NULL;
    PFN_vkGetPhysicalDeviceProperties properties = in ? in->properties : NULL;
    pthread_mutex_unlock(&lock);
    /* vkCreateDevice is an instance command: looked up with the instance
     * (a layer below may answer NULL for a null instance). */
    PFN_vkCreateDevice create = instance ? (PFN_vkCreateDevice)gipa(instance, "vkCreateDevice") : NULL;
    if (!create) return VK_ERROR_INITIALIZATION_FAILED;
    link->u.pLayerInfo = link->u.pLayerInfo->pNext;
    if (!acts_for(pd, features2, properties)) {
        VkResult result = create(pd, info, allocator, out);
        if (result != VK_SUCCESS) return result;
        return remember_device(*out, gdpa, 0, allocator);
    }

    /* Lavapipe rejects the feature it does not have: it is turned off in
     * the caller's structures for the call and turned back on after. */
    VkBool32 *switched[8];
    int n_switched = 0;
    for (VkBaseOutStructure *s = (VkBaseOutStructure *)info->pNext; s && n_switched < 8; s = s->pNext) {
        VkBool32 *flag = NULL;
        if (s->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES)
            flag = &((VkPhysicalDeviceVulkan12Features *)s)->bufferDeviceAddressCaptureReplay;
        else if (s->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_BUFFER_DEVICE_ADDRESS_FEATURES ||
                 s->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_BUFFER_DEVICE_ADDRESS_FEATURES_EXT)
            flag = &((VkPhysicalDeviceBufferDeviceAddressFeatures *)s)->bufferDeviceAddressCaptureReplay;
        if (flag && *flag) {
            *flag = VK_FALSE;
            switched[n_switched++] = flag;
        }
    }
    /* Host pointer import, which placing memory needs. */
    VkDeviceCreateInfo copy = *info;
    const char *names[256];
    uint32_t count = info->enabledExtensionCount < 255 ? info->enabledExtensionCount : 255;
    int has_import = 0;
    for (uint32_t i = 0; i < count; i++) {
        names[i] = info->ppEnabledExtensionNames[i];
        has_import |= strcmp(names[i], VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME) == 0;
    }
    if (!has_import) names[count++] = VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME;
    copy.enabledExtensionCount = count;
    copy.ppEnabledExtensionNames = names;
    VkResult result = create(pd, &copy, allocator, out);
    for (int i = 0; i < n_switched; i++) *switched[i] = VK_TRUE;
    if (result != VK_SUCCESS) return result;
    return remember_device(*out, gdpa, 1, allocator);
}

static VKAPI_ATTR void VKAPI_CALL destroy_device(VkDevice device, const VkAllocationCallbacks *allocator) {
    if (!device) return;
    pthread_mutex_lock(&lock);
    struct device *d = device_of(device);
    PFN_vkDestroyDevice destroy = d ? d->destroy : NULL;
    if (d) d->key = NULL;
    pthread_mutex_unlock(&lock);
    if (destroy) destroy(device, allocator);
}

/* Maps `size` bytes at `want` (a replayed address) or at the arena's next
 * free address (a new one); 0 when that cannot be done. Called locked. */
static uintptr_t place(uintptr_t want, size_t size) {
    if (!reserve_arena()) return 0;
    uintptr_t at = want ? want : arena_next;
    if (at < ARENA_BASE || at % PAGE != 0 || size > ARENA_BASE + ARENA_SIZE - at) return 0;
    for (size_t i = 0; i < placed_count; i++)
        if (at < placed[i].address + placed[i].size && placed[i].address < at + size) return 0;
    /* MAP_FIXED inside our own PROT_NONE reservation, checked above. */
    void *p = mmap((void *)at, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (p != (void *)at) return 0;
    if (at + size > arena_next) arena_next = at + size;
    return at;
}

static void unplace(uintptr_t at, size_t size) {
    mmap((void *)at, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
}

static VKAPI_ATTR VkResult VKAPI_CALL allocate_memory(VkDevice device, const VkMemoryAllocateInfo *info,
                                                      const VkAllocationCallbacks *allocator, VkDeviceMemory *out) {
    pthread_mutex_lock(&lock);
    struct device *d = device_of(device);
    PFN_vkAllocateMemory next = d ? d->allocate : NULL;
    int active = d && d->active;
    pthread_mutex_unlock(&lock);
    if (!next) return VK_ERROR_INITIALIZATION_FAILED;
    const VkMemoryAllocateFlagsInfo *flags = find(info->pNext, VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO);
    int replayable = active && flags && (flags->flags & VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_CAPTURE_REPLAY_BIT);
    if (!replayable || find(info->pNext, VK_STRUCTURE_TYPE_IMPORT_MEMORY_HOST_POINTER_INFO_EXT) ||
        find(info->pNext, VK_STRUCTURE_TYPE_IMPORT_MEMORY_FD_INFO_KHR))
        return next(device, info, allocator, out);
    const VkMemoryOpaqueCaptureAddressAllocateInfo *replayed =
        find(info->pNext, VK_STRUCTURE_TYPE_MEMORY_OPAQUE_CAPTURE_ADDRESS_ALLOCATE_INFO);
    size_t size = (size_t)((info->allocationSize + PAGE - 1) / PAGE * PAGE);

    pthread_mutex_lock(&lock);
    uintptr_t at = place(replayed ? (uintptr_t)replayed->opaqueCaptureAddress : 0, size);
    pthread_mutex_unlock(&lock);
    if (!at) {
        say("cannot place memory at its capture address");
        return VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS;
    }
    VkImportMemoryHostPointerInfoEXT import = {
        .sType = VK_STRUCTURE_TYPE_IMPORT_MEMORY_HOST_POINTER_INFO_EXT,
        .pNext = info->pNext,
        .handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT,
        .pHostPointer = (void *)at,
    };
    VkMemoryAllocateInfo copy = *info;
    copy.pNext = &import;
    copy.allocationSize = size;
    VkResult result = next(device, &copy, allocator, out);

    pthread_mutex_lock(&lock);
    if (result == VK_SUCCESS && placed_count == placed_cap) {
        size_t cap = placed_cap ? placed_cap * 2 : 64;
        struct placed *grown = realloc(placed, cap * sizeof *placed);
        if (grown) {
            placed = grown;
            placed_cap = cap;
        }
    }
    if (result == VK_SUCCESS && placed_count < placed_cap) {
        placed[placed_count++] = (struct placed){*out, at, size};
        pthread_mutex_unlock(&lock);
        return VK_SUCCESS;
    }
    unplace(at, size);
    pthread_mutex_unlock(&lock);
    if (result == VK_SUCCESS) {
        PFN_vkFreeMemory free_memory = d->free_memory;
        free_memory(device, *out, allocator);
        *out = VK_NULL_HANDLE;
        return VK_ERROR_OUT_OF_HOST_MEMORY;
    }
    return result;
}

static VKAPI_ATTR void VKAPI_CALL free_memory(VkDevice device, VkDeviceMemory memory,
                                              const VkAllocationCallbacks *allocator) {
    pthread_mutex_lock(&lock);
    struct device *d = device_of(device);
    PFN_vkFreeMemory next = d ? d->free_memory : NULL;
    pthread_mutex_unlock(&lock);
    if (!next) return;
    next(device, memory, allocator);
    if (!memory) return;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < placed_count; i++) {
        if (placed[i].memory == memory) {
            unplace(placed[i].address, placed[i].size);
            placed[i] = placed[--placed_count];
            break;
        }
    }
    pthread_mutex_unlock(&lock);
}

static VKAPI_ATTR uint64_t VKAPI_CALL opaque_address(VkDevice device, const VkDeviceMemoryOpaqueCaptureAddressInfo *info) {
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < placed_count; i++) {
        if (placed[i].memory == info->memory) {
            uint64_t at = placed[i].address;
            pthread_mutex_unlock(&lock);
            return at;
        }
    }
    struct device *d = device_of(device);
    PFN_vkGetDeviceMemoryOpaqueCaptureAddress next = d ? d->opaque_address : NULL;
    pthread_mutex_unlock(&lock);
    return next ? next(device, info) : 0;
}

static PFN_vkVoidFunction device_function(const char *name) {
    if (!strcmp(name, "vkDestroyDevice")) return (PFN_vkVoidFunction)destroy_device;
    if (!strcmp(name, "vkAllocateMemory")) return (PFN_vkVoidFunction)allocate_memory;
    if (!strcmp(name, "vkFreeMemory")) return (PFN_vkVoidFunction)free_memory;
    if (!strcmp(name, "vkGetDeviceMemoryOpaqueCaptureAddress") ||
        !strcmp(name, "vkGetDeviceMemoryOpaqueCaptureAddressKHR"))
        return (PFN_vkVoidFunction)opaque_address;
    return NULL;
}

EXPORT VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL bda_replay_GetDeviceProcAddr(VkDevice device, const char *name) {
    if (!strcmp(name, "vkGetDeviceProcAddr")) return (PFN_vkVoidFunction)bda_replay_GetDeviceProcAddr;
    PFN_vkVoidFunction ours = device_function(name);
    if (ours) return ours;
    pthread_mutex_lock(&lock);
    struct device *d = device ? device_of(device) : NULL;
    PFN_vkGetDeviceProcAddr next = d ? d->gdpa : NULL;
    pthread_mutex_unlock(&lock);
    return next ? next(device, name) : NULL;
}

EXPORT VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL bda_replay_GetInstanceProcAddr(VkInstance instance, const char *name) {
    if (!strcmp(name, "vkGetInstanceProcAddr")) return (PFN_vkVoidFunction)bda_replay_GetInstanceProcAddr;
    if (!strcmp(name, "vkCreateInstance")) return (PFN_vkVoidFunction)create_instance;
    if (!strcmp(name, "vkDestroyInstance")) return (PFN_vkVoidFunction)destroy_instance;
    if (!strcmp(name, "vkCreateDevice")) return (PFN_vkVoidFunction)create_device;
    if (!strcmp(name, "vkGetPhysicalDeviceFeatures2") || !strcmp(name, "vkGetPhysicalDeviceFeatures2KHR"))
        return (PFN_vkVoidFunction)get_features2;
    if (!strcmp(name, "vkGetDeviceProcAddr")) return (PFN_vkVoidFunction)bda_replay_GetDeviceProcAddr;
    PFN_vkVoidFunction ours = device_function(name);
    if (ours) return ours;
    if (!instance) return NULL;
    pthread_mutex_lock(&lock);
    struct instance *in = instance_of(instance);
    PFN_vkGetInstanceProcAddr next = in ? in->gipa : NULL;
    pthread_mutex_unlock(&lock);
    return next ? next(instance, name) : NULL;
}

EXPORT VKAPI_ATTR VkResult VKAPI_CALL bda_replay_NegotiateLoaderLayerInterfaceVersion(VkNegotiateLayerInterface *v) {
    if (!v || v->sType != LAYER_NEGOTIATE_INTERFACE_STRUCT) return VK_ERROR_INITIALIZATION_FAILED;
    if (v->loaderLayerInterfaceVersion > 2) v->loaderLayerInterfaceVersion = 2;
    v->pfnGetInstanceProcAddr = bda_replay_GetInstanceProcAddr;
    v->pfnGetDeviceProcAddr = bda_replay_GetDeviceProcAddr;
    v->pfnGetPhysicalDeviceProcAddr = NULL;
    return VK_SUCCESS;
}
