"""libptxgen.so through ctypes: its structs, its functions, its errors.

The library is found at $PTXGEN_LIBRARY, else beside this package (where
tools/python_install.sh puts it), and loaded at the first call that needs
it, so that `import ptxgen` works everywhere and a missing library is a
ptxgen.Error saying where it was looked for.
"""
import ctypes
import os
import reprlib
import threading

LIBRARY_ENV = "PTXGEN_LIBRARY"

# ptxgenStatus_t, in the header's order.
STATUS_NAMES = (
    "PTXGEN_STATUS_SUCCESS",
    "PTXGEN_STATUS_INVALID_VALUE",
    "PTXGEN_STATUS_NOT_SUPPORTED",
    "PTXGEN_STATUS_NO_DEVICE",
    "PTXGEN_STATUS_ARCH_MISMATCH",
    "PTXGEN_STATUS_ALLOC_FAILED",
    "PTXGEN_STATUS_EXECUTION_FAILED",
    "PTXGEN_STATUS_INTERNAL_ERROR",
)
INVALID_VALUE = "PTXGEN_STATUS_INVALID_VALUE"
NO_LIBRARY = "PTXGEN_STATUS_NO_LIBRARY"  # Python's own: no library loaded


class Error(Exception):
    """A refusal or failure of ptxgen: `status` is the ptxgenStatus_t's name
    ("PTXGEN_STATUS_INVALID_VALUE", ...), `message` the library's message,
    which names the rule that was broken."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status
        self.message = message


# The header's enumerations: Python's names for their values.
DATA_TYPES = {"f16": 0, "bf16": 1, "f32": 2, "e4m3": 3, "e5m2": 4, "tf32": 5, "s8": 6,
              "u8": 7, "s32": 8}
MAJORS = {"k": 0, "mn": 1}
BIASES = {None: 0, "m": 1, "n": 2}
ACTIVATIONS = {None: 0, "relu": 1, "gelu": 2, "gelu_tanh": 3, "silu": 4}
# ptxgenGrouping_t: a grouped GEMM's rows per group, read on the device.
GROUPINGS = {None: 0, "contiguous": 1, "masked": 2}
# Named in refusals only: the library parses them (ptxgenGetScalingByName).
SCALING_NAMES = ("none", "tensor", "block")
# ptxgenWorkspaceMode_t's CALLER: the GEMM owns no workspace, each run is
# given one (ptxgenGemmRunWithWorkspace).
WORKSPACE_CALLER = 1
# ptxgenAttentionLayout_t: how Q, K, V and O nest rows and heads in memory.
ATTENTION_LAYOUTS = {"bshd": 0, "bhsd": 1}


class GemmProblem(ctypes.Structure):
    _fields_ = [
        ("m", ctypes.c_int64), ("n", ctypes.c_int64), ("k", ctypes.c_int64),
        ("input_type", ctypes.c_int), ("output_type", ctypes.c_int),
        ("a_major", ctypes.c_int), ("b_major", ctypes.c_int),
        ("lda", ctypes.c_int64), ("ldb", ctypes.c_int64),
        ("ldc", ctypes.c_int64), ("ldd", ctypes.c_int64),
        ("batch", ctypes.c_int64),
        ("stride_a", ctypes.c_int64), ("stride_b", ctypes.c_int64),
        ("stride_c", ctypes.c_int64), ("stride_d", ctypes.c_int64),
        ("stride_bias", ctypes.c_int64),
        ("alpha", ctypes.c_float), ("beta", ctypes.c_float),
        ("bias", ctypes.c_int), ("bias_type", ctypes.c_int),
        ("activation", ctypes.c_int),
        ("b_input_type", ctypes.c_int), ("scaling", ctypes.c_int),
        ("fast_accumulation", ctypes.c_int), ("record_amax", ctypes.c_int),
        ("grouping", ctypes.c_int), ("expected_m", ctypes.c_int64),
    ]


class GemmSpans(ctypes.Structure):
    _fields_ = [(name, ctypes.c_int64) for name in (
        "a", "b", "c", "d", "bias", "scale_a", "scale_b")]


class GemmOperands(ctypes.Structure):
    _fields_ = [(name, ctypes.c_void_p) for name in (
        "a", "b", "c", "d", "bias", "scale_a", "scale_b", "scale_d", "amax_d",
        "group_rows")]


class AttentionStrides(ctypes.Structure):
    _fields_ = [(name, ctypes.c_int64) for name in ("batch", "seq", "head")]


class AttentionProblem(ctypes.Structure):
    _fields_ = [
        ("batch", ctypes.c_int64), ("heads_q", ctypes.c_int64),
        ("heads_kv", ctypes.c_int64), ("seq_q", ctypes.c_int64),
        ("seq_k", ctypes.c_int64), ("head_dim", ctypes.c_int64),
        ("element_type", ctypes.c_int), ("causal", ctypes.c_int),
        ("scale", ctypes.c_float), ("layout", ctypes.c_int),
        ("q_stride", AttentionStrides), ("k_stride", AttentionStrides),
        ("v_stride", AttentionStrides), ("o_stride", AttentionStrides),
        ("variable_lengths", ctypes.c_int),
        ("total_q", ctypes.c_int64), ("total_k", ctypes.c_int64),
    ]


class Target(ctypes.Structure):
    _fields_ = [("sm_count", ctypes.c_int),
                ("max_shared_bytes_per_block_optin", ctypes.c_int)]


class KernelInfo(ctypes.Structure):
    _fields_ = [
        ("kernel_name", ctypes.c_char_p), ("config_name", ctypes.c_char_p),
        ("form_name", ctypes.c_char_p), ("source", ctypes.c_char_p),
        ("ptx", ctypes.c_char_p), ("cubin", ctypes.c_void_p),
        ("cubin_size", ctypes.c_size_t),
        ("registers", ctypes.c_int), ("spill_store_bytes", ctypes.c_int),
        ("spill_load_bytes", ctypes.c_int), ("stack_frame_bytes", ctypes.c_int),
        ("shared_bytes", ctypes.c_int), ("threads_per_block", ctypes.c_int),
        ("grid_x", ctypes.c_int64), ("grid_y", ctypes.c_int64),
        ("grid_z", ctypes.c_int64), ("cluster_x", ctypes.c_int),
    ]


_Status = ctypes.c_int
_Pointer = ctypes.c_void_p
# name: (restype, argtypes), as include/ptxgen/ptxgen.h declares them.
_FUNCTIONS = {
    "ptxgenGetStatusName": (ctypes.c_char_p, [_Status]),
    "ptxgenGetVersionString": (ctypes.c_char_p, []),
    "ptxgenGetScalingByName": (_Status, [ctypes.c_char_p, ctypes.POINTER(ctypes.c_int)]),
    "ptxgenCreate": (_Status, [ctypes.POINTER(_Pointer)]),
    "ptxgenDestroy": (_Status, [_Pointer]),
    "ptxgenGetLastErrorMessage": (ctypes.c_char_p, [_Pointer]),
    "ptxgenGemmProblemInit": (_Status, [ctypes.POINTER(GemmProblem), ctypes.c_int64,
                                        ctypes.c_int64, ctypes.c_int64, ctypes.c_int]),
    "ptxgenGemmGetSpans": (_Status, [_Pointer, ctypes.POINTER(GemmProblem),
                                     ctypes.POINTER(GemmSpans)]),
    "ptxgenPlanGemm": (_Status, [_Pointer, ctypes.POINTER(GemmProblem),
                                 ctypes.POINTER(Target), ctypes.POINTER(_Pointer)]),
    "ptxgenPlanGetKernelInfo": (_Status, [_Pointer, ctypes.POINTER(KernelInfo)]),
    "ptxgenPlanDestroy": (_Status, [_Pointer]),
    "ptxgenGemmPrepare": (_Status, [_Pointer, ctypes.POINTER(GemmProblem),
                                    ctypes.POINTER(_Pointer)]),
    "ptxgenGemmGetKernelInfo": (_Status, [_Pointer, ctypes.POINTER(KernelInfo)]),
    "ptxgenGemmRunOperands": (_Status, [_Pointer, _Pointer, ctypes.POINTER(GemmOperands),
                                        _Pointer]),
    "ptxgenGemmPrepareWithWorkspaceMode": (_Status, [_Pointer, ctypes.POINTER(GemmProblem),
                                                     ctypes.c_int, ctypes.POINTER(_Pointer)]),
    "ptxgenGemmGetWorkspaceSize": (_Status, [_Pointer, ctypes.POINTER(ctypes.c_size_t)]),
    "ptxgenGemmRunWithWorkspace": (_Status, [_Pointer, _Pointer, ctypes.POINTER(GemmOperands),
                                             _Pointer, ctypes.c_size_t, _Pointer]),
    "ptxgenGemmRunWithZeroedWorkspace": (_Status, [_Pointer, _Pointer,
                                                   ctypes.POINTER(GemmOperands), _Pointer,
                                                   ctypes.c_size_t, _Pointer]),
    "ptxgenStreamGetCaptureId": (_Status, [_Pointer, _Pointer,
                                           ctypes.POINTER(ctypes.c_ulonglong)]),
    "ptxgenGemmDestroy": (_Status, [_Pointer]),
    "ptxgenPlanAttention": (_Status, [_Pointer, ctypes.POINTER(AttentionProblem),
                                      ctypes.POINTER(Target), ctypes.POINTER(_Pointer)]),
    "ptxgenAttentionPrepare": (_Status, [_Pointer, ctypes.POINTER(AttentionProblem),
                                         ctypes.POINTER(_Pointer)]),
    "ptxgenAttentionRun": (_Status, [_Pointer, _Pointer, _Pointer, _Pointer, _Pointer,
                                     _Pointer, _Pointer, _Pointer, _Pointer, _Pointer]),
    "ptxgenAttentionDestroy": (_Status, [_Pointer]),
}

_lock = threading.Lock()
_loaded = None  # (ctypes.CDLL, handle) once loaded


def library_path():
    """Where the library is looked for: $PTXGEN_LIBRARY, else beside the
    package."""
    path = os.environ.get(LIBRARY_ENV)
    if not path:
        return os.path.join(os.path.dirname(os.path.abspath(__file__)), "libptxgen.so")
    # A relative path would load whatever the current folder holds.
    if not os.path.isabs(path):
        raise Error(NO_LIBRARY, (
            f"ptxgen: ${LIBRARY_ENV}={path!r} is not an absolute path; library paths "
            "must be absolute"))
    return path


_REMEDY = (f"install the package with `bash tools/python_install.sh`, or build "
           f"//lib/capi:libptxgen.so and name it in ${LIBRARY_ENV}")


def _load():
    path = library_path()
    try:
        library = ctypes.CDLL(path)
    except OSError as error:
        # The loader's text quotes the path, which may come from outside.
        raise Error(NO_LIBRARY, (
            f"ptxgen: cannot load libptxgen.so from {printable(path)} "
            f"({printable(str(error))}); {_REMEDY}")) from None
    for name, (restype, argtypes) in _FUNCTIONS.items():
        try:
            function = getattr(library, name)
        except AttributeError:
            raise Error(NO_LIBRARY, (
                f"ptxgen: {printable(path)} has no {name}: it is not a "
                f"libptxgen.so of this ptxgen (another library, or one built "
                f"before it); {_REMEDY}")) from None
        function.restype = restype
        function.argtypes = argtypes
    # One handle for the process: the library keeps each thread's message.
    handle = _Pointer()
    status = library.ptxgenCreate(ctypes.byref(handle))
    if status != 0:
        raise Error(status_name(status, library), "ptxgen: ptxgenCreate failed")
    return library, handle


def loaded():
    """(library, handle), loading the library at the first call."""
    global _loaded
    with _lock:
        if _loaded is None:
            _loaded = _load()
        return _loaded


def capture_id(cuda_stream):
    """The id of the CUDA graph capture underway on `cuda_stream`, 0 when
    none is."""
    library, handle = loaded()
    capture = ctypes.c_ulonglong()
    check(library.ptxgenStreamGetCaptureId(handle, cuda_stream, ctypes.byref(capture)))
    return capture.value


def status_name(status, library=None):
    if 0 <= status < len(STATUS_NAMES):
        return STATUS_NAMES[status]
    return (library or loaded()[0]).ptxgenGetStatusName(status).decode()


def check(status):
    """Raises the Error of a failed call made with the process's handle."""
    if status == 0:
        return
    library, handle = loaded()
    message = library.ptxgenGetLastErrorMessage(handle).decode(errors="replace")
    raise Error(status_name(status, library), message)


# How messages show a value they refuse: its repr, cut as the CLI cuts
# echoed values (64 characters), so that a hostile value is not echoed whole.
_ECHO = reprlib.Repr()
_ECHO.maxstring = _ECHO.maxother = 64


def echo(value):
    """repr(value), cut short for a message."""
    return _ECHO.repr(value)


def _printable_character(c):
    code = ord(c)
    if code < 0x20 or 0x7f <= code <= 0x9f:
        return f"\\x{code:02x}"
    if 0xdc80 <= code <= 0xdcff:  # a byte outside UTF-8, as os.environ keeps it
        return f"\\x{code - 0xdc00:02x}"
    return c


def printable(text):
    """Text from outside (a path, a loader's message) made one safe line, as
    the library's base::PrintableValue makes it: every control character,
    newlines and C1 controls included, and each byte outside UTF-8, as
    \\xNN."""
    return "".join(_printable_character(c) for c in text)


def refuse(message):
    """An argument ptxgen refuses before calling the library."""
    return Error(INVALID_VALUE, message)
