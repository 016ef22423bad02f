"""What ptxgen reads of the CUDA arrays every entry point takes (PyTorch
tensors, CuPy arrays, any object with __cuda_array_interface__ or DLPack's
__dlpack__), and what a run asks of their library: new arrays, the current
stream and device, workspaces. Shared by ptxgen.gemm, ptxgen.grouped_gemm
and ptxgen.attention.

The readers name ptxgen.gemm (_FUNCTION) in what they refuse; every other
entry point renames that to its own (renamed_refusals).
"""
import collections
import contextlib
import threading

from ptxgen import _dlpack, _library, _problem
from ptxgen._library import echo, refuse

_FUNCTION = "ptxgen.gemm"
# The interface has no bfloat16 or fp8; one byte has no byte order ("|").
_TYPESTRS = {"<f2": "f16", "<f4": "f32", "|i1": "s8", "|u1": "u8", "<i4": "s32"}
# DLPack's (type code, bits): kDLInt is 0, kDLUInt 1, kDLFloat 2, kDLBfloat
# 4, kDLFloat8_e4m3fn 10, kDLFloat8_e5m2 12.
_DLPACK_DTYPES = {(2, 16): "f16", (4, 16): "bf16", (2, 32): "f32", (10, 8): "e4m3",
                  (12, 8): "e5m2", (0, 8): "s8", (1, 8): "u8", (0, 32): "s32"}
_CUPY_DTYPES = ("f16", "f32", "s8", "s32")  # outputs NumPy has (no bfloat16 or fp8)
# The interface's versions: 1 added "mask", 3 "stream"; this reads them all.
_INTERFACE_VERSIONS = (0, 1, 2, 3)
_MAX_DIMENSIONS = 3  # a GEMM's [batch, rows, columns]; describe takes another limit


class Array:
    """What ptxgen reads of one argument; strides in elements."""

    def __init__(self, name, pointer, shape, strides, dtype, library, device,
                 stream=None, readonly=False):
        self.name = name
        self.pointer = pointer
        self.shape = shape
        self.strides = strides
        self.dtype = dtype
        self.library = library  # "torch", "cupy" or None
        self.device = device    # the device's index, None when unknown
        self.stream = stream    # __cuda_array_interface__'s "stream", if any
        self.readonly = readonly


@contextlib.contextmanager
def renamed_refusals(function):
    """The readers here name ptxgen.gemm in what they refuse; renamed inside
    to `function`, the one called. The library's messages name its entry
    points and pass unchanged."""
    prefix = _FUNCTION + ": "
    try:
        yield
    except _library.Error as error:
        if not error.message.startswith(prefix):
            raise
        # The caller's exception, where one caused it, stays the cause.
        raise _library.Error(error.status, f"{function}: {error.message[len(prefix):]}"
                             ) from error.__cause__


def library_of(x):
    module = type(x).__module__.split(".")[0]
    return module if module in ("torch", "cupy") else None


def _describe_torch(name, x):
    if not x.is_cuda:
        raise refuse(f"{_FUNCTION}: {name} is on {x.device}, not on a CUDA device")
    return Array(name, x.data_ptr(), tuple(x.shape), tuple(x.stride()),
                 _problem.dtype_name(_FUNCTION, f"{name}.dtype", x.dtype), "torch",
                 x.device.index)


def compact_strides(shape):
    """The strides, in elements, of a C-contiguous (row-major) array."""
    strides, step = [], 1
    for size in reversed(shape):
        strides.insert(0, step)
        step *= size
    return tuple(strides)


def _interface_of(name, x):
    """x's __cuda_array_interface__: a dict of a version this reads, with
    the keys every version requires."""
    interface = x.__cuda_array_interface__
    if not isinstance(interface, dict):
        raise refuse(f"{_FUNCTION}: {name}.__cuda_array_interface__ is a "
                     f"{type(interface).__name__}, not a dict")
    for key in ("version", "shape", "typestr", "data"):
        if key not in interface:
            raise refuse(f"{_FUNCTION}: {name}.__cuda_array_interface__ has no {key!r}, "
                         "which the interface requires")
    version = _problem.int64(_FUNCTION, f"{name}'s interface version", interface["version"])
    if version not in _INTERFACE_VERSIONS:
        raise refuse(f"{_FUNCTION}: {name}.__cuda_array_interface__ is of version "
                     f"{version}; ptxgen reads versions {_INTERFACE_VERSIONS[0]} to "
                     f"{_INTERFACE_VERSIONS[-1]}")
    return interface


def _describe_interface(name, x):
    interface = _interface_of(name, x)
    typestr = interface["typestr"]
    if not isinstance(typestr, str) or typestr not in _TYPESTRS:
        raise refuse(f"{_FUNCTION}: {name} has elements of type {echo(typestr)}; ptxgen "
                     "takes '<f2' (f16), '<f4' (f32), '|i1' (s8), '|u1' (u8) and '<i4' "
                     "(s32) through __cuda_array_interface__ (bf16 and fp8 as torch "
                     "tensors or through DLPack)")
    if interface.get("mask") is not None:
        raise refuse(f"{_FUNCTION}: {name} is a masked array")
    shape = _integers(name, "shape", interface["shape"])
    strides = _interface_strides(name, shape, interface.get("strides"), int(typestr[2:]))
    pointer, readonly = _interface_data(name, interface["data"])
    stream = interface.get("stream")
    if stream is not None:
        stream = _problem.address(_FUNCTION, f"{name}'s interface stream", stream)
    library = library_of(x)
    device = x.device.id if library == "cupy" else None
    return Array(name, pointer, shape, strides, _TYPESTRS[typestr], library,
                 device, stream, readonly)


def _integers(name, what, values):
    """An interface's shape or strides: a tuple (or list) of integers."""
    if not isinstance(values, (tuple, list)):
        raise refuse(f"{_FUNCTION}: {name}'s interface {what} {echo(values)} is not a tuple "
                     "of integers")
    return tuple(_problem.int64(_FUNCTION, f"{name}'s interface {what}", value)
                 for value in values)


def _interface_strides(name, shape, strides, item):
    """The strides in elements of the interface's strides in bytes (None:
    row-major)."""
    if strides is None:
        return compact_strides(shape)
    strides = _integers(name, "strides", strides)
    if len(strides) != len(shape):
        raise refuse(f"{_FUNCTION}: {name} has shape {shape} but strides {strides}: "
                     "one stride per dimension")
    if any(stride % item for stride in strides):
        raise refuse(f"{_FUNCTION}: {name}'s strides {strides} (bytes) are "
                     f"not whole elements of {item} bytes")
    return tuple(stride // item for stride in strides)


def _interface_data(name, data):
    """(pointer, read-only flag): the pointer is checked with every reader's."""
    if not (isinstance(data, (tuple, list)) and len(data) == 2
            and isinstance(data[1], bool)):
        raise refuse(f"{_FUNCTION}: {name}'s interface data={echo(data)} is not a pair "
                     "(pointer, read-only flag)")
    return data


def _check_dlpack_device(name, device_type):
    if device_type not in _dlpack.CUDA_DEVICE_TYPES:
        found = _dlpack.DEVICE_TYPES.get(device_type, "an unknown DLDeviceType")
        raise refuse(f"{_FUNCTION}: {name} is on {found} (device type {device_type}), "
                     "not on a CUDA device (kDLCUDA or kDLCUDAManaged)")


def _dlpack_dtype(name, dtype):
    if dtype.lanes != 1:
        raise refuse(f"{_FUNCTION}: {name} has vector elements of {dtype.lanes} lanes; "
                     "ptxgen takes DLPack elements of 1 lane")
    element = _DLPACK_DTYPES.get((dtype.code, dtype.bits))
    if element is None:
        raise refuse(f"{_FUNCTION}: {name} has elements of DLPack type code {dtype.code}, "
                     f"{dtype.bits} bits; ptxgen takes float16 (2, 16), bfloat16 (4, 16), "
                     "float32 (2, 32), float8_e4m3fn (10, 8), float8_e5m2 (12, 8), "
                     "int8 (0, 8), uint8 (1, 8) and int32 (0, 32)")
    return element


def describe_dlpack(name, x, holds, stream, dimensions=_MAX_DIMENSIONS):
    """The Array of `x` through DLPack, exported for the CUstream `stream`
    (the producer orders its work on the array before it) and held by
    `holds` (a contextlib.ExitStack) until it closes; of at most
    `dimensions` dimensions. DLPack names a device but no library: ptxgen
    allocates no out= like it."""
    _check_dlpack_device(name, _dlpack_device_type(name, x))  # before there is a capsule
    tensor = _dlpack.consume(x.__dlpack__(stream=_dlpack.stream_argument(stream)), holds)
    if tensor is None:
        raise refuse(f"{_FUNCTION}: {name}.__dlpack__() gave no capsule named 'dltensor'")
    _check_dlpack_device(name, tensor.device.device_type)
    dtype = _dlpack_dtype(name, tensor.dtype)
    shape, strides = _dlpack_layout(name, tensor, dimensions)
    pointer = (tensor.data or 0) + tensor.byte_offset  # data is NULL for some empty arrays
    return Array(name, pointer, shape, strides, dtype, None, tensor.device.device_id)


def _dlpack_device_type(name, x):
    """The device type of __dlpack_device__'s (device type, device id)."""
    device = x.__dlpack_device__()
    if not (isinstance(device, tuple) and len(device) == 2):
        raise refuse(f"{_FUNCTION}: {name}.__dlpack_device__() gave {echo(device)}, not a "
                     "pair (device type, device id)")
    _problem.int64(_FUNCTION, f"{name}'s DLPack device id", device[1])
    return _problem.int64(_FUNCTION, f"{name}'s DLPack device type", device[0])


def _dlpack_layout(name, tensor, dimensions):
    """(shape, strides) of a DLTensor: ndim says how long its shape and
    strides arrays are, so it is checked (at most `dimensions`) before they
    are read."""
    ndim = tensor.ndim
    if not 0 <= ndim <= dimensions:
        raise refuse(f"{_FUNCTION}: {name} has {ndim} dimensions (DLPack ndim); ptxgen "
                     f"reads arrays of 0 to {dimensions}")
    if ndim and not tensor.shape:
        raise refuse(f"{_FUNCTION}: {name}'s DLPack shape is NULL, with ndim {ndim}")
    shape = tuple(tensor.shape[:ndim])
    strides = tuple(tensor.strides[:ndim]) if tensor.strides else compact_strides(shape)
    return shape, strides


def describe(name, x, holds, stream, dimensions=_MAX_DIMENSIONS):
    """The Array of argument `name`, of at most `dimensions` dimensions; a
    torch tensor is read directly (its interface refuses bfloat16), torch
    itself being imported by then. A DLPack array is exported for the
    CUstream `stream` and held by `holds`. Whatever the object's own code
    raises on the way is a ptxgen.Error naming `name`."""
    with _problem.raised_by(_FUNCTION, name, "array interface"):
        return _describe(name, x, holds, stream, dimensions)


def _describe(name, x, holds, stream, dimensions):
    if library_of(x) == "torch" and hasattr(x, "data_ptr"):
        array = _describe_torch(name, x)
    elif hasattr(x, "__cuda_array_interface__"):
        # Before DLPack where both are (CuPy, Numba): the interface is read
        # with nothing to hand back, and names the library whose device and
        # current stream ptxgen then uses.
        return describe_interface(name, x, dimensions)
    elif hasattr(x, "__dlpack__") and hasattr(x, "__dlpack_device__"):
        array = describe_dlpack(name, x, holds, stream, dimensions)
    else:
        raise refuse(f"{_FUNCTION}: {name} (a {type(x).__name__}) is neither a torch "
                     "tensor nor an object with __cuda_array_interface__ or DLPack's "
                     "__dlpack__ and __dlpack_device__")
    _check_read(array, dimensions)
    _check_stored(array)
    return array


def describe_int32(function, name, x, read):
    """The Array of `name`, an int32 array the kernel reads on the device
    (offsets, counts), by `read`: its dtype checked before it is read
    where the object names one, and after from its description."""
    with _problem.raised_by(function, name, "dtype"):
        dtype = getattr(x, "dtype", None)
        wrong = dtype is not None and str(dtype).removeprefix("torch.") != "int32"
    if wrong:
        raise refuse(f"{function}: {name} must be int32 (torch.int32), not {echo(dtype)}")
    array = read(name, x)
    if array.dtype != "s32":
        raise refuse(f"{function}: {name} must be int32 (torch.int32), not {array.dtype}")
    return array


def describe_interface(name, x, dimensions=_MAX_DIMENSIONS):
    """The Array of `x` through its __cuda_array_interface__, checked as
    describe checks every array."""
    array = _describe_interface(name, x)
    _check_read(array, dimensions)
    _check_stored(array)
    return array


def _check_read(array, dimensions):
    """What each reader gives ptxgen, checked before any kernel is prepared:
    at most `dimensions` sizes, none negative, and an address ctypes passes
    unchanged (NULL only for an array of no elements), kept as a plain int."""
    if len(array.shape) > dimensions or any(size < 0 for size in array.shape):
        raise refuse(f"{_FUNCTION}: {array.name} has shape {array.shape}; ptxgen reads "
                     f"arrays of at most {dimensions} dimensions, of sizes 0 or more")
    array.pointer = _problem.address(_FUNCTION, f"{array.name}'s address", array.pointer)
    if array.pointer == 0 and all(array.shape):
        raise refuse(f"{_FUNCTION}: {array.name} has elements but its address is 0 (NULL)")


def _check_stored(array):
    """Every element stored once, forwards: the library takes a stride of 0
    for "packed", so a broadcast (expand) would be read as memory that is
    not there. An array of no elements stores nothing, and its sizes meet
    the library's own rules."""
    if not all(array.shape):
        return
    for size, stride in zip(array.shape, array.strides):
        if size > 1 and stride < 1:
            raise refuse(f"{_FUNCTION}: {array.name} has shape {array.shape} and strides "
                         f"{array.strides}; ptxgen reads arrays whose elements each have "
                         "memory of their own, stored with positive strides: not "
                         "broadcasts (stride 0) or reversed views (call .contiguous())")


def allocate(like, shape, dtype):
    """A new compact out of type `dtype` from the library of the array
    `like`, on its device."""
    api = library_api(like.library)
    if api is None or (like.library == "cupy" and dtype not in _CUPY_DTYPES):
        raise refuse(f"{_FUNCTION}: give out= for a {dtype} result of arrays other than "
                     "torch tensors and CuPy arrays")
    with api.device(like.device):
        return api.empty(shape, compact_strides(shape), api.dtype(dtype), like.device)


def check_one_device(arrays):
    # By ordinal, so that torch tensors and DLPack arrays on one GPU mix; an
    # array of an unknown device (None) mixes only with others of None.
    devices = {array.device for array in arrays.values()}
    if len(devices) > 1:
        where = ", ".join(f"{name} on {array.library or 'a CUDA array'} device "
                          f"{array.device}" for name, array in arrays.items())
        raise refuse(f"{_FUNCTION}: the arrays are on different devices ({where})")


def stream_of(stream, array):
    """The CUstream to run on, as an int: `stream` (see stream_handle), else
    the current stream of the array's library, else the interface's stream,
    else the default stream (0); `array` None for one of no library and no
    interface stream (a DLPack array)."""
    if stream is not None:
        return stream_handle(stream)
    if array is None:
        return 0
    api = library_api(array.library)
    if api is not None:
        return api.current_stream(array.device)
    return array.stream or 0


def stream_handle(stream):
    """The CUstream of a stream= argument: an int, a torch.cuda.Stream
    (cuda_stream), a cupy Stream (ptr) or a torch.Stream, as code traced by
    torch.compile passes streams (its stream_id is torch's number for the
    stream, not the CUstream)."""
    for attribute in ("cuda_stream", "ptr"):
        if hasattr(stream, attribute):
            return _problem.address(_FUNCTION, f"stream.{attribute}",
                                    getattr(stream, attribute))
    if library_of(stream) == "torch" and hasattr(stream, "stream_id"):
        return library_api("torch").cuda_stream(stream)
    return _problem.address(_FUNCTION, "stream", stream)


def on_device(array):
    """The array's device made current, so that ptxgen prepares in its
    context (the device's primary context, which torch and CuPy use)."""
    api = library_api(array.library)
    return contextlib.nullcontext() if api is None else api.device(array.device)


# Streams (and captures) whose workspace _TorchApi keeps; the least
# recently grown go first (a stream destroyed leaves its block here until
# then).
_KEPT_WORKSPACES = 16
# Set while torch runs ptxgen's operators (_torch_ops): a compiled graph
# may run where torch sends allocations to a CUDA graph's pool without
# capturing (cudagraph trees' warm-up), which must hold no block past the
# call, so no workspace is kept then.
_operator_calls = threading.local()


@contextlib.contextmanager
def workspaces_per_run():
    """Runs inside take each workspace from the allocator, none kept."""
    _operator_calls.active = True
    try:
        yield
    finally:
        _operator_calls.active = False


class _TorchApi:
    """What a run asks of torch, each through the cheapest call torch has:
    the private ones Inductor's generated code calls for the same reason,
    the public ones where a torch lacks them."""

    def __init__(self):
        import torch
        self._torch = torch
        self.device = torch.cuda.device
        self.current_device = getattr(torch._C, "_cuda_getDevice", torch.cuda.current_device)
        self._raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        guards = getattr(getattr(torch._C, "_dynamo", None), "guards", None)
        self._empty_strided = getattr(guards, "_empty_strided_cuda", None)
        self._capturing = getattr(torch._C, "_cuda_isCurrentStreamCapturing",
                                  torch.cuda.is_current_stream_capturing)
        self._kept = collections.OrderedDict()  # (device, CUstream): its workspace
        self._captures = collections.OrderedDict()  # (device, CUstream, capture id): its

    def current_stream(self, device):
        if self._raw_stream is not None:
            return self._raw_stream(device)
        return self._torch.cuda.current_stream(device).cuda_stream

    def cuda_stream(self, stream):
        """The CUstream of a torch.Stream: torch.cuda.Stream's over its id."""
        if stream.device.type != "cuda":
            raise refuse(f"{_FUNCTION}: stream is a torch.Stream of {stream.device}, not of "
                         "a CUDA device")
        return _problem.address(_FUNCTION, "stream's cuda_stream", self._torch.cuda.Stream(
            stream_id=stream.stream_id, device_index=stream.device_index,
            device_type=stream.device_type).cuda_stream)

    def dtype(self, name):
        return getattr(self._torch, _problem.TORCH_DTYPES[name])

    def empty(self, shape, strides, dtype, device):
        """A new array of `shape` with compact `strides` on `device`, which
        is current (the allocator takes the current device's)."""
        if self._empty_strided is not None:
            return self._empty_strided(shape, strides, dtype)
        return self._torch.empty(shape, dtype=dtype, device=self._torch.device("cuda", device))

    @staticmethod
    def pointer(x):
        return x.data_ptr()

    def workspace(self, size, device, cuda_stream):
        """`size` bytes for work on `cuda_stream`, on `device` (current),
        and whether they are zeroed as runs leave them.

        The current stream keeps one block, grown as needed and zeroed when
        allocated, for every run on it: the stream orders them, a block
        allocated per run cost 4 us on an H200's host, as much as the
        launch, and zeroing stream-K's flags each run another launch (in a
        graph, a memset node: 1.8 us a GEMM). A capture keeps its own, from
        the graph's pool and zeroed in the graph, for the capture's runs on
        that stream (by the capture's id: the next capture on the stream
        starts its own); it is dropped at the first call outside a capture,
        to the graph's pool, whose replays zero it again before use.
        Another stream takes a block per run from the caching allocator,
        which hands a freed block only to work on the stream it was
        allocated for, so the caller may drop it once the run is enqueued;
        so does a run of the torch operators (see _operator_calls)."""
        torch = self._torch
        if cuda_stream != self.current_stream(device):
            with torch.cuda.stream(torch.cuda.ExternalStream(cuda_stream, device=device)):
                return self._block(size, device), False
        if getattr(_operator_calls, "active", False):
            return self._block(size, device), False
        if self._capturing():
            kept, key = self._captures, (device, cuda_stream, _library.capture_id(cuda_stream))
        else:
            if self._captures:
                self._captures.clear()
            kept, key = self._kept, (device, cuda_stream)
        block = kept.get(key)
        if block is None or block.shape[0] < size:
            kept.pop(key, None)  # freed first: the allocator may reuse it
            block = kept[key] = self._block(size, device).zero_()
            while len(kept) > _KEPT_WORKSPACES:
                kept.popitem(last=False)
        return block, True

    def _block(self, size, device):
        """`size` bytes from the allocator, for the current stream."""
        return self.empty((size,), (1,), self._torch.uint8, device)


class _CupyApi:
    """What a run asks of CuPy."""

    def __init__(self):
        import cupy
        self._cupy = cupy
        self.device = cupy.cuda.Device
        self.current_device = cupy.cuda.runtime.getDevice

    def current_stream(self, device):
        cuda = self._cupy.cuda
        if cuda.runtime.getDevice() == device:
            return cuda.get_current_stream().ptr
        with cuda.Device(device):
            return cuda.get_current_stream().ptr

    @staticmethod
    def dtype(name):
        return _problem.TORCH_DTYPES[name]  # NumPy's names for the types CuPy has

    def empty(self, shape, strides, dtype, device):
        """A new compact array on `device`, which is current."""
        return self._cupy.empty(shape, dtype=dtype)

    @staticmethod
    def pointer(x):
        return x.data.ptr

    def workspace(self, size, device, cuda_stream):
        """A block per run, as _TorchApi.workspace takes for another stream
        (CuPy's memory pool keeps the blocks of each stream apart too), not
        zeroed."""
        cupy = self._cupy
        on = (contextlib.nullcontext() if cuda_stream == self.current_stream(device)
              else cupy.cuda.ExternalStream(cuda_stream))
        with on:
            return cupy.empty(size, dtype="uint8"), False


_API_CLASSES = {"torch": _TorchApi, "cupy": _CupyApi}
_apis = {}  # library: its _TorchApi or _CupyApi, made at its first array


def library_api(library):
    """The _TorchApi or _CupyApi of a library, None for arrays of none."""
    api = _apis.get(library)
    if api is None and library in _API_CLASSES:
        api = _apis.setdefault(library, _API_CLASSES[library]())
    return api


