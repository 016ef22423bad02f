/*
 * A stand-in for the CUDA driver (libcuda.so.1) on a machine without a GPU,
 * loaded through $PTXGEN_LIBCUDA: one device that reports itself as an
 * H100 (compute capability 9.0, 132 SMs, 227 KiB of shared memory per
 * block), "device" memory that is host memory, modules that load any image
 * and launches that run nothing. What it is for:
 *   - tools/gpu_bundle.sh runs the GPU suites with it here, so that every
 *     kernel they prepare is generated and compiled (by the real NVRTC)
 *     into the bundle's kernel cache, and the GPU host only loads them;
 *   - tests of what a launch is given, on a machine without a GPU: each
 *     launch is appended to $PTXGEN_FAKE_CUDA_LOG when that is set, one
 *     line "launch <kernel> grid=X,Y,Z block=X,Y,Z shared=N cluster=X,Y,Z".
 * Results computed "on the device" are whatever the memory held before:
 * a suite run with it fails its comparisons, which is expected.
 * Every entry point ptxgen resolves (runtime/driver.h) is exported under
 * the name <cuda.h> gives it; there is no cuGetProcAddress, so ptxgen asks
 * by exported name.
 */
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAKE_SM_COUNT 132
#define FAKE_SHARED_OPTIN 232448 /* 227 KiB */
#define FAKE_ALIGNMENT 256

struct CUctx_st {
  unsigned long long id;
};
struct CUmod_st {
  int loaded;
};
struct CUfunc_st {
  char name[256];
};
struct CUstream_st {
  int capturing;
  unsigned long long capture_id;
};
struct CUevent_st {
  int recorded;
};
struct CUgraph_st {
  int unused;
};
struct CUgraphExec_st {
  int unused;
};

static struct CUctx_st primary = {1};
static unsigned long long next_id = 2; /* contexts, then captures */
static __thread CUcontext current = NULL;
static __thread CUcontext pushed[16];
static __thread int pushed_count = 0;

/* ---- errors, initialization, the device ---- */

CUresult CUDAAPI cuGetErrorName(CUresult error, const char **name) {
  if (name == NULL) return CUDA_ERROR_INVALID_VALUE;
  *name = error == CUDA_SUCCESS ? "CUDA_SUCCESS" : "CUDA_ERROR_FAKE";
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGetErrorString(CUresult error, const char **text) {
  if (text == NULL) return CUDA_ERROR_INVALID_VALUE;
  *text = error == CUDA_SUCCESS ? "no error" : "an error of the fake driver";
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuInit(unsigned int flags) {
  (void)flags;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDriverGetVersion(int *version) {
  if (version == NULL) return CUDA_ERROR_INVALID_VALUE;
  *version = 13000;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGet(CUdevice *device, int ordinal) {
  if (device == NULL || ordinal != 0) return CUDA_ERROR_INVALID_DEVICE;
  *device = 0;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetCount(int *count) {
  if (count == NULL) return CUDA_ERROR_INVALID_VALUE;
  *count = 1;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetName(char *name, int length, CUdevice device) {
  if (name == NULL || length < 1 || device != 0)
    return CUDA_ERROR_INVALID_VALUE;
  snprintf(name, (size_t)length,
           "NVIDIA H100 80GB HBM3 (ptxgen's fake driver)");
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetAttribute(int *value, CUdevice_attribute attribute,
                                      CUdevice device) {
  if (value == NULL || device != 0) return CUDA_ERROR_INVALID_VALUE;
  switch (attribute) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
      *value = 9;
      break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
      *value = 0;
      break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
      *value = FAKE_SM_COUNT;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
      *value = FAKE_SHARED_OPTIN;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR:
      *value = 233472;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:
      *value = 49152;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
      *value = 1024;
      break;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE:
      *value = 50 << 20;
      break;
    case CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH:
      *value = 1;
      break;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE:
      *value = 1980000;
      break;
    default:
      *value = 0;
      break;
  }
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceTotalMem(size_t *bytes, CUdevice device) {
  if (bytes == NULL || device != 0) return CUDA_ERROR_INVALID_VALUE;
  *bytes = (size_t)80 << 30;
  return CUDA_SUCCESS;
}

/* ---- contexts: the primary one, and those tests create ---- */

CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *context, CUdevice device) {
  if (context == NULL || device != 0) return CUDA_ERROR_INVALID_VALUE;
  *context = &primary;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice device) {
  return device == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

CUresult CUDAAPI cuCtxSetCurrent(CUcontext context) {
  current = context;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetCurrent(CUcontext *context) {
  if (context == NULL) return CUDA_ERROR_INVALID_VALUE;
  *context = current;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxPushCurrent(CUcontext context) {
  if (pushed_count == 16) return CUDA_ERROR_INVALID_VALUE;
  pushed[pushed_count++] = current;
  current = context;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxPopCurrent(CUcontext *context) {
  if (pushed_count == 0) return CUDA_ERROR_INVALID_CONTEXT;
  if (context != NULL) *context = current;
  current = pushed[--pushed_count];
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetDevice(CUdevice *device) {
  if (device == NULL) return CUDA_ERROR_INVALID_VALUE;
  if (current == NULL) return CUDA_ERROR_INVALID_CONTEXT;
  *device = 0;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetId(CUcontext context, unsigned long long *id) {
  if (id == NULL) return CUDA_ERROR_INVALID_VALUE;
  if (context == NULL) context = current;
  if (context == NULL) return CUDA_ERROR_INVALID_CONTEXT;
  *id = context->id;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxCreate(CUcontext *context, CUctxCreateParams *params,
                             unsigned int flags, CUdevice device) {
  (void)params;
  (void)flags;
  if (context == NULL || device != 0) return CUDA_ERROR_INVALID_VALUE;
  struct CUctx_st *created = calloc(1, sizeof(*created));
  if (created == NULL) return CUDA_ERROR_OUT_OF_MEMORY;
  created->id = __atomic_fetch_add(&next_id, 1, __ATOMIC_RELAXED);
  *context = created;
  /* As the driver's: the new context is pushed, current until popped. */
  return cuCtxPushCurrent(created);
}

CUresult CUDAAPI cuCtxDestroy(CUcontext context) {
  if (context == NULL || context == &primary) return CUDA_ERROR_INVALID_VALUE;
  if (current == context) current = NULL;
  free(context);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSynchronize(void) { return CUDA_SUCCESS; }

/* Memory ptxgen asks about is memory this driver does not know (type 0),
 * which every launch check lets pass. */
CUresult CUDAAPI cuPointerGetAttributes(unsigned int count,
                                        CUpointer_attribute *attributes,
                                        void **values, CUdeviceptr pointer) {
  (void)pointer;
  if (attributes == NULL || values == NULL) return CUDA_ERROR_INVALID_VALUE;
  for (unsigned int i = 0; i < count; ++i) {
    switch (attributes[i]) {
      case CU_POINTER_ATTRIBUTE_CONTEXT:
        *(CUcontext *)values[i] = NULL;
        break;
      case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
        *(CUdeviceptr *)values[i] = 0;
        break;
      case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
        *(int *)values[i] = -2;
        break;
      default:
        *(unsigned int *)values[i] = 0;
        break;
    }
  }
  return CUDA_SUCCESS;
}

/* ---- modules and launches ---- */

CUresult CUDAAPI cuModuleLoadDataEx(CUmodule *module, const void *image,
                                    unsigned int count, CUjit_option *options,
                                    void **values) {
  (void)count;
  (void)options;
  (void)values;
  if (module == NULL || image == NULL) return CUDA_ERROR_INVALID_VALUE;
  if (current == NULL) return CUDA_ERROR_INVALID_CONTEXT;
  *module = calloc(1, sizeof(struct CUmod_st));
  return *module != NULL ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult CUDAAPI cuModuleUnload(CUmodule module) {
  free(module);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleGetFunction(CUfunction *function, CUmodule module,
                                     const char *name) {
  if (function == NULL || module == NULL || name == NULL) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  struct CUfunc_st *found = calloc(1, sizeof(*found));
  if (found == NULL) return CUDA_ERROR_OUT_OF_MEMORY;
  snprintf(found->name, sizeof(found->name), "%s", name);
  *function = found;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuFuncGetAttribute(int *value, CUfunction_attribute attribute,
                                    CUfunction function) {
  if (value == NULL || function == NULL) return CUDA_ERROR_INVALID_VALUE;
  *value = attribute == CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK ? 1024 : 0;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuFuncSetAttribute(CUfunction function,
                                    CUfunction_attribute attribute, int value) {
  (void)attribute;
  (void)value;
  return function != NULL ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* One line per launch in $PTXGEN_FAKE_CUDA_LOG, when set. */
static void LogLaunch(CUfunction function, const unsigned grid[3],
                      const unsigned block[3], unsigned shared,
                      const unsigned cluster[3]) {
  const char *path = getenv("PTXGEN_FAKE_CUDA_LOG");
  if (path == NULL || path[0] == '\0') return;
  FILE *log = fopen(path, "a");
  if (log == NULL) return;
  fprintf(log,
          "launch %s grid=%u,%u,%u block=%u,%u,%u shared=%u cluster=%u,%u,%u\n",
          function->name, grid[0], grid[1], grid[2], block[0], block[1],
          block[2], shared, cluster[0], cluster[1], cluster[2]);
  fclose(log);
}

CUresult CUDAAPI cuLaunchKernel(CUfunction function, unsigned grid_x,
                                unsigned grid_y, unsigned grid_z,
                                unsigned block_x, unsigned block_y,
                                unsigned block_z, unsigned shared,
                                CUstream stream, void **parameters,
                                void **extra) {
  (void)stream;
  (void)parameters;
  (void)extra;
  if (function == NULL) return CUDA_ERROR_INVALID_HANDLE;
  const unsigned grid[3] = {grid_x, grid_y, grid_z};
  const unsigned block[3] = {block_x, block_y, block_z};
  const unsigned cluster[3] = {1, 1, 1};
  LogLaunch(function, grid, block, shared, cluster);
  return CUDA_SUCCESS;
}

/* The cluster a launch configuration asks for; 1x1x1 without one. */
static void ClusterOf(const CUlaunchConfig *config, unsigned cluster[3]) {
  cluster[0] = cluster[1] = cluster[2] = 1;
  for (unsigned i = 0; i < config->numAttrs; ++i) {
    if (config->attrs[i].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) {
      cluster[0] = config->attrs[i].value.clusterDim.x;
      cluster[1] = config->attrs[i].value.clusterDim.y;
      cluster[2] = config->attrs[i].value.clusterDim.z;
    }
  }
}

CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig *config,
                                  CUfunction function, void **parameters,
                                  void **extra) {
  (void)parameters;
  (void)extra;
  if (config == NULL || function == NULL) return CUDA_ERROR_INVALID_VALUE;
  const unsigned grid[3] = {config->gridDimX, config->gridDimY,
                            config->gridDimZ};
  const unsigned block[3] = {config->blockDimX, config->blockDimY,
                             config->blockDimZ};
  unsigned cluster[3];
  ClusterOf(config, cluster);
  LogLaunch(function, grid, block, config->sharedMemBytes, cluster);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuOccupancyMaxActiveClusters(int *clusters,
                                              CUfunction function,
                                              const CUlaunchConfig *config) {
  if (clusters == NULL || function == NULL || config == NULL) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  unsigned cluster[3];
  ClusterOf(config, cluster);
  *clusters = FAKE_SM_COUNT / (int)(cluster[0] * cluster[1] * cluster[2]);
  return CUDA_SUCCESS;
}

/* ---- memory: host memory, 256-byte aligned ---- */

CUresult CUDAAPI cuMemAlloc(CUdeviceptr *pointer, size_t bytes) {
  if (pointer == NULL || bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  const size_t rounded =
      (bytes + FAKE_ALIGNMENT - 1) / FAKE_ALIGNMENT * FAKE_ALIGNMENT;
  void *memory = aligned_alloc(FAKE_ALIGNMENT, rounded);
  if (memory == NULL) return CUDA_ERROR_OUT_OF_MEMORY;
  *pointer = (CUdeviceptr)(uintptr_t)memory;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemFree(CUdeviceptr pointer) {
  free((void *)(uintptr_t)pointer);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr to, const void *from, size_t bytes) {
  memcpy((void *)(uintptr_t)to, from, bytes);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpyDtoH(void *to, CUdeviceptr from, size_t bytes) {
  memcpy(to, (const void *)(uintptr_t)from, bytes);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpyDtoDAsync(CUdeviceptr to, CUdeviceptr from,
                                   size_t bytes, CUstream stream) {
  (void)stream;
  memmove((void *)(uintptr_t)to, (const void *)(uintptr_t)from, bytes);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemsetD8(CUdeviceptr to, unsigned char value, size_t count) {
  memset((void *)(uintptr_t)to, value, count);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemsetD16Async(CUdeviceptr to, unsigned short value,
                                  size_t count, CUstream stream) {
  (void)stream;
  unsigned short *words = (unsigned short *)(uintptr_t)to;
  for (size_t i = 0; i < count; ++i) words[i] = value;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemsetD32(CUdeviceptr to, unsigned int value, size_t count) {
  unsigned int *words = (unsigned int *)(uintptr_t)to;
  for (size_t i = 0; i < count; ++i) words[i] = value;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemsetD32Async(CUdeviceptr to, unsigned int value,
                                  size_t count, CUstream stream) {
  (void)stream;
  return cuMemsetD32(to, value, count);
}

/* ---- streams, captures, graphs, events: nothing runs, so nothing waits ----
 */

CUresult CUDAAPI cuStreamCreate(CUstream *stream, unsigned int flags) {
  (void)flags;
  if (stream == NULL) return CUDA_ERROR_INVALID_VALUE;
  *stream = calloc(1, sizeof(struct CUstream_st));
  return *stream != NULL ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult CUDAAPI cuStreamDestroy(CUstream stream) {
  free(stream);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamSynchronize(CUstream stream) {
  (void)stream;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamGetCtx(CUstream stream, CUcontext *context) {
  (void)stream;
  if (context == NULL) return CUDA_ERROR_INVALID_VALUE;
  *context = current != NULL ? current : &primary;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamBeginCapture(CUstream stream,
                                      CUstreamCaptureMode mode) {
  (void)mode;
  if (stream == NULL) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  stream->capturing = 1;
  stream->capture_id = __atomic_fetch_add(&next_id, 1, __ATOMIC_RELAXED);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamGetCaptureInfo(CUstream stream,
                                        CUstreamCaptureStatus *status,
                                        cuuint64_t *id, CUgraph *graph,
                                        const CUgraphNode **dependencies,
                                        const CUgraphEdgeData **edges,
                                        size_t *count) {
  const int capturing = stream != NULL && stream->capturing;
  if (status != NULL) {
    *status = capturing ? CU_STREAM_CAPTURE_STATUS_ACTIVE
                        : CU_STREAM_CAPTURE_STATUS_NONE;
  }
  if (id != NULL) *id = capturing ? stream->capture_id : 0;
  if (graph != NULL) *graph = NULL;
  if (dependencies != NULL) *dependencies = NULL;
  if (edges != NULL) *edges = NULL;
  if (count != NULL) *count = 0;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamEndCapture(CUstream stream, CUgraph *graph) {
  if (stream == NULL || graph == NULL || !stream->capturing) {
    return CUDA_ERROR_ILLEGAL_STATE;
  }
  stream->capturing = 0;
  *graph = calloc(1, sizeof(struct CUgraph_st));
  return *graph != NULL ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult CUDAAPI cuGraphInstantiateWithFlags(CUgraphExec *exec, CUgraph graph,
                                             unsigned long long flags) {
  (void)flags;
  if (exec == NULL || graph == NULL) return CUDA_ERROR_INVALID_VALUE;
  *exec = calloc(1, sizeof(struct CUgraphExec_st));
  return *exec != NULL ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult CUDAAPI cuGraphLaunch(CUgraphExec exec, CUstream stream) {
  (void)stream;
  return exec != NULL ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuGraphExecDestroy(CUgraphExec exec) {
  free(exec);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphDestroy(CUgraph graph) {
  free(graph);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventCreate(CUevent *event, unsigned int flags) {
  (void)flags;
  if (event == NULL) return CUDA_ERROR_INVALID_VALUE;
  *event = calloc(1, sizeof(struct CUevent_st));
  return *event != NULL ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult CUDAAPI cuEventDestroy(CUevent event) {
  free(event);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventRecord(CUevent event, CUstream stream) {
  (void)stream;
  if (event == NULL) return CUDA_ERROR_INVALID_HANDLE;
  event->recorded = 1;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventSynchronize(CUevent event) {
  return event != NULL ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

/* Every timed interval takes a microsecond: benchmarks run, and say so. */
CUresult CUDAAPI cuEventElapsedTime(float *milliseconds, CUevent start,
                                    CUevent end) {
  if (milliseconds == NULL || start == NULL || end == NULL) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  *milliseconds = 0.001f;
  return CUDA_SUCCESS;
}

/* Any map is accepted and left zero: ptxgen validates its own first. */
CUresult CUDAAPI cuTensorMapEncodeTiled(
    CUtensorMap *map, CUtensorMapDataType type, cuuint32_t rank, void *address,
    const cuuint64_t *dims, const cuuint64_t *strides, const cuuint32_t *box,
    const cuuint32_t *element_strides, CUtensorMapInterleave interleave,
    CUtensorMapSwizzle swizzle, CUtensorMapL2promotion promotion,
    CUtensorMapFloatOOBfill fill) {
  (void)type;
  (void)rank;
  (void)address;
  (void)dims;
  (void)strides;
  (void)box;
  (void)element_strides;
  (void)interleave;
  (void)swizzle;
  (void)promotion;
  (void)fill;
  if (map == NULL) return CUDA_ERROR_INVALID_VALUE;
  memset(map, 0, sizeof(*map));
  return CUDA_SUCCESS;
}
