"""DLPack, the array API's __dlpack__ protocol, through ctypes: dlpack.h's
structs and the consumer's side of a "dltensor" capsule, taken over as the
protocol says (renamed "used_dltensor", its deleter called once when the
consumer is done). What ptxgen accepts of a tensor is _gemm's to say."""
import ctypes

# DLDeviceType, as dlpack.h names them.
DEVICE_TYPES = {1: "kDLCPU", 2: "kDLCUDA", 3: "kDLCUDAHost", 4: "kDLOpenCL",
                7: "kDLVulkan", 8: "kDLMetal", 9: "kDLVPI", 10: "kDLROCM",
                11: "kDLROCMHost", 12: "kDLExtDev", 13: "kDLCUDAManaged",
                14: "kDLOneAPI", 15: "kDLWebGPU", 16: "kDLHexagon", 17: "kDLMAIA"}
# Memory a kernel reads as it reads cudaMalloc's: device memory, and managed
# memory (which __cuda_array_interface__ hands over unmarked as well).
CUDA_DEVICE_TYPES = (2, 13)

# PyCapsule_SetName keeps the name's pointer, not a copy: a module constant
# outlives the capsules renamed with it, which die with the call (producers
# hand them over and keep none).
UNUSED_NAME = b"dltensor"
USED_NAME = b"used_dltensor"


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)),  # elements; NULL: row-major
                ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    pass


# Called with the GIL held: some producers' deleters release Python
# objects without taking it themselves.
Deleter = ctypes.PYFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                            ("deleter", Deleter)]


def _python_function(name, restype, *argtypes):
    # Prototypes of our own: setting argtypes on ctypes.pythonapi's shared
    # function objects would change them for every other user in the process.
    return ctypes.PYFUNCTYPE(restype, *argtypes)((name, ctypes.pythonapi))


_capsule_is_valid = _python_function("PyCapsule_IsValid", ctypes.c_int,
                                     ctypes.py_object, ctypes.c_char_p)
_capsule_get_pointer = _python_function("PyCapsule_GetPointer", ctypes.c_void_p,
                                        ctypes.py_object, ctypes.c_char_p)
_capsule_set_name = _python_function("PyCapsule_SetName", ctypes.c_int,
                                     ctypes.py_object, ctypes.c_char_p)


def stream_argument(cuda_stream):
    """__dlpack__'s stream= for a CUstream: the handle itself, but 1 for the
    legacy default stream, which the protocol never spells 0 (ambiguous
    there); the driver takes 1 (CU_STREAM_LEGACY) for it too, as it takes
    the protocol's 2 for the per-thread default stream (CU_STREAM_PER_THREAD)."""
    return cuda_stream or 1


def consume(capsule, holds):
    """The DLTensor of a "dltensor" capsule, None for anything else. The
    capsule is renamed "used_dltensor", which tells its destructor that
    the consumer owns the tensor now, and the producer's deleter is called
    when `holds` (a contextlib.ExitStack) closes: until then the tensor
    stays valid."""
    if not _capsule_is_valid(capsule, UNUSED_NAME):
        return None
    managed = ctypes.cast(_capsule_get_pointer(capsule, UNUSED_NAME),
                          ctypes.POINTER(DLManagedTensor))
    _capsule_set_name(capsule, USED_NAME)
    holds.callback(_delete, managed)
    return managed.contents.dl_tensor


def _delete(managed):
    deleter = managed.contents.deleter
    if deleter:  # NULL: the producer has nothing to free
        deleter(managed)
