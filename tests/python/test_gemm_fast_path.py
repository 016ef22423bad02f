"""ptxgen.gemm's fast path, without a GPU or torch: a call whose signature
(each array's type, device, element type, shape, strides, read-only flag and
address alignment; which arrays are given; every option) was run before
skips plan_call and launches what that call prepared with this call's
addresses; any change of the signature plans again, so a hit accepts only
what plan_call accepts. GEMMs of torch and CuPy arrays are prepared once per
device, each run given its workspace from the array library's allocator on
the run's stream; those of other arrays own theirs, one per stream.

The library's device half is faked (FakeLibrary: a prepare refuses what
ptxgenGemmGetSpans refuses, a run is recorded); torch and CuPy are fake
modules (FakeTorch, FakeCupy) of what ptxgen calls of them.
"""
import contextlib
import ctypes
import sys
import types
import weakref

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import ptxgen
from ptxgen import _arrays, _gemm, _library
from test_gemm_arguments import BASE, FakeCudaArray, transposed
from test_gemm_dlpack import FakeDLPackArray

CALLER = _library.WORKSPACE_CALLER


class FakeLibrary:
    """libptxgen.so with the device's half faked. A prepare refuses what
    ptxgenGemmGetSpans refuses (the problem's rules, which need no device)
    and records its workspace mode (None: ptxgenGemmPrepare's) and problem;
    a run records its GEMM's problem, operands, workspace (and whether it
    was given as zeroed) and stream, calls on_run (if set) and returns
    `status`."""

    def __init__(self, real, workspace_bytes=0):
        self._real = real
        self.workspace_bytes = workspace_bytes
        self.prepares = []  # (mode, problem as a dict)
        self.runs = []
        self.on_run = None
        self.status = 0
        self.capture_ids = {}  # stream: the id of the capture underway on it
        self._problems = {}  # GEMM address: its problem

    def __getattr__(self, name):
        return getattr(self._real, name)

    def _prepare(self, handle, problem, mode, gemm):
        status = self._real.ptxgenGemmGetSpans(handle, problem,
                                               ctypes.byref(_library.GemmSpans()))
        if status == 0:
            gemm._obj.value = 0x6E0000 + 16 * len(self.prepares)
            fields = problem._obj
            self._problems[gemm._obj.value] = {name: getattr(fields, name)
                                               for name, _ in fields._fields_}
            self.prepares.append((mode, self._problems[gemm._obj.value]))
        return status

    def ptxgenGemmPrepare(self, handle, problem, gemm):
        return self._prepare(handle, problem, None, gemm)

    def ptxgenGemmPrepareWithWorkspaceMode(self, handle, problem, mode, gemm):
        return self._prepare(handle, problem, mode, gemm)

    def ptxgenGemmGetWorkspaceSize(self, gemm, size):
        size._obj.value = self.workspace_bytes
        return 0

    def _run(self, gemm, operands, workspace, size, stream, zeroed=False):
        fields = operands._obj
        run = {"problem": self._problems[gemm.value], "stream": stream,
               "workspace": workspace, "workspace_bytes": size, "zeroed": zeroed,
               **{name: getattr(fields, name) for name, _ in fields._fields_}}
        self.runs.append(run)
        if self.on_run:
            self.on_run(run)
        return self.status

    def ptxgenGemmRunOperands(self, handle, gemm, operands, stream):
        return self._run(gemm, operands, "owned", None, stream)

    def ptxgenGemmRunWithWorkspace(self, handle, gemm, operands, workspace, size, stream):
        return self._run(gemm, operands, workspace, size, stream)

    def ptxgenGemmRunWithZeroedWorkspace(self, handle, gemm, operands, workspace, size,
                                         stream):
        return self._run(gemm, operands, workspace, size, stream, zeroed=True)

    def ptxgenStreamGetCaptureId(self, handle, stream, capture):
        capture._obj.value = self.capture_ids.get(stream, 0)
        return 0

    def ptxgenGemmDestroy(self, gemm):
        return 0


class FakeDtype:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"torch.{self.name}"


def compact(shape):
    strides, step = [], 1
    for size in reversed(shape):
        strides.insert(0, step)
        step *= size
    return tuple(strides)


class FakeTensor:
    """What ptxgen reads of a torch tensor, over no memory."""
    __module__ = "torch"

    def __init__(self, shape, dtype, strides=None, device=0, address=BASE):
        self.shape = tuple(shape)
        self._strides = compact(shape) if strides is None else tuple(strides)
        self.dtype = dtype
        self._device = device  # None: the CPU
        self._address = address

    @property
    def is_cuda(self):
        return self._device is not None

    @property
    def device(self):
        if self._device is None:
            return types.SimpleNamespace(type="cpu", index=None)
        return types.SimpleNamespace(type="cuda", index=self._device)

    def get_device(self):
        return -1 if self._device is None else self._device

    def data_ptr(self):
        return self._address

    def zero_(self):
        """Recorded in its allocation's record (FakeTorch.allocate)."""
        self.allocation["zeroed_on_stream"] = self.stream_of_zeroing()
        return self

    def stride(self):
        return self._strides

    def t(self):
        return FakeTensor(self.shape[::-1], self.dtype, self._strides[::-1], self._device,
                          self._address)


class FakeStream:
    """A torch.Stream, as torch.compile's traced code passes streams."""
    __module__ = "torch"

    def __init__(self, stream_id, kind="cuda"):
        self.stream_id, self.device_index, self.device_type = stream_id, 0, 1
        self.device = types.SimpleNamespace(type=kind, index=0)


@contextlib.contextmanager
def swapped(mapping, key, value):
    """mapping[key] is value inside, what it was again after: the fakes'
    current device and stream, as the libraries' context managers set them."""
    previous, mapping[key] = mapping[key], value
    try:
        yield
    finally:
        mapping[key] = previous


class FakeTorch:
    """A torch module of the calls ptxgen makes, over no device: current
    devices and streams are numbers set as torch sets them; allocations
    are recorded, each with the device and stream current then, and their
    addresses (512-byte aligned) are `live` until the tensor is freed.
    private=False leaves out the private calls Inductor uses."""

    DTYPES = ("float16", "bfloat16", "float32", "float8_e4m3fn", "float8_e5m2", "int8",
              "uint8", "int32")

    def __init__(self, private=True):
        self.device = 0
        self.streams = {}  # device: its current stream, 0 (the default) unless set
        self.capturing = False  # whether the current stream is capturing
        self.allocations = []
        self.live = set()
        self._next = 0x7E0000000000
        torch = self.module = types.ModuleType("torch")
        for name in self.DTYPES:
            setattr(torch, name, FakeDtype(name))
        torch.device = lambda kind, index=None: types.SimpleNamespace(type=kind, index=index)
        torch.empty = lambda shape, dtype, device: self.allocate(
            shape, compact(shape), dtype, device.index)
        torch.cuda = types.SimpleNamespace(
            device=self.on_device, current_device=lambda: self.device,
            current_stream=lambda device: types.SimpleNamespace(
                cuda_stream=self.streams.get(device, 0)),
            Stream=lambda stream_id, device_index, device_type: types.SimpleNamespace(
                cuda_stream=0x5000 + stream_id),
            ExternalStream=lambda handle, device: types.SimpleNamespace(cuda_stream=handle),
            stream=self.on_stream, is_current_stream_capturing=lambda: self.capturing)
        torch.compiler = types.SimpleNamespace(is_compiling=lambda: False)
        torch._C = types.SimpleNamespace()
        if private:
            torch._C._cuda_getDevice = lambda: self.device
            torch._C._cuda_getCurrentRawStream = lambda device: self.streams.get(device, 0)
            torch._C._cuda_isCurrentStreamCapturing = lambda: self.capturing
            torch._C._dynamo = types.SimpleNamespace(guards=types.SimpleNamespace(
                _empty_strided_cuda=lambda shape, strides, dtype: self.allocate(
                    shape, strides, dtype, self.device)))

    def allocate(self, shape, strides, dtype, device):
        self._next += 512 * 1024
        tensor = FakeTensor(shape, dtype, strides, device, self._next)
        tensor.allocation = {"shape": tuple(shape), "dtype": dtype.name, "device": device,
                             "current_device": self.device,
                             "stream": self.streams.get(device, 0), "zeroed_on_stream": None}
        tensor.stream_of_zeroing = lambda: self.streams.get(device, 0)
        self.allocations.append(tensor.allocation)
        self.live.add(self._next)
        weakref.finalize(tensor, self.live.discard, self._next)
        return tensor

    def on_device(self, device):
        return swapped(self.__dict__, "device", device)

    def on_stream(self, stream):
        self.streams.setdefault(self.device, 0)
        return swapped(self.streams, self.device, stream.cuda_stream)

    def tensor(self, *shape, dtype="bfloat16", **keywords):
        return FakeTensor(shape, getattr(self.module, dtype), **keywords)


class FakeCupyArray(FakeCudaArray):
    """A CuPy array: the interface, its device and its data pointer."""
    __module__ = "cupy"

    def __init__(self, shape, typestr="<f2", device=0, address=BASE, **keywords):
        super().__init__(shape, typestr, **keywords)
        interface = self.__cuda_array_interface__
        interface["data"] = (address, interface["data"][1])
        self.device = types.SimpleNamespace(id=device)
        self.data = types.SimpleNamespace(ptr=address)


class FakeCupy:
    """A cupy module of the calls ptxgen makes, as FakeTorch is torch's."""

    TYPESTRS = {"float16": "<f2", "float32": "<f4", "int8": "|i1", "int32": "<i4",
                "uint8": "|u1"}

    def __init__(self):
        self.device = 0
        self.stream = 0x100
        self.allocations = []
        cupy = self.module = types.ModuleType("cupy")
        cupy.empty = self.empty
        cupy.cuda = types.SimpleNamespace(
            Device=self.on_device, runtime=types.SimpleNamespace(getDevice=lambda: self.device),
            get_current_stream=lambda: types.SimpleNamespace(ptr=self.stream),
            ExternalStream=self.on_stream)

    def empty(self, shape, dtype):
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        self.allocations.append({"shape": shape, "dtype": dtype, "device": self.device,
                                 "stream": self.stream})
        return FakeCupyArray(shape, self.TYPESTRS[dtype], self.device,
                             0x7D0000000000 + 4096 * len(self.allocations))

    def on_device(self, device):
        return swapped(self.__dict__, "device", device)

    def on_stream(self, handle):
        return swapped(self.__dict__, "stream", handle)


def clear_caches():
    _gemm._fast.clear()
    _gemm._cache.clear()
    _arrays._apis.clear()


@pytest.fixture
def library(monkeypatch):
    """The FakeLibrary in the library's place, ptxgen's caches empty, and
    plan_call's calls counted (library.planned)."""
    real, handle = _library.loaded()
    fake = FakeLibrary(real)
    monkeypatch.setattr(_library, "_loaded", (fake, handle))
    fake.planned = 0
    plan_call = _gemm.plan_call

    def counted(*arguments, **keywords):
        fake.planned += 1
        return plan_call(*arguments, **keywords)

    monkeypatch.setattr(_gemm, "plan_call", counted)
    clear_caches()
    yield fake
    clear_caches()


@pytest.fixture
def torch(monkeypatch):
    fake = FakeTorch()
    monkeypatch.setitem(sys.modules, "torch", fake.module)
    return fake


@pytest.fixture
def cupy(monkeypatch):
    fake = FakeCupy()
    monkeypatch.setitem(sys.modules, "cupy", fake.module)
    return fake


def operands(address=BASE, **a_keywords):
    """a [256,512] f16, b = w.t() of a [256,512] w, out [256,256] f16."""
    return (FakeCudaArray((256, 512), offset=address - BASE, **a_keywords),
            transposed(512, 256), FakeCudaArray((256, 256), offset=0x100000))


def test_a_repeated_signature_is_planned_once_and_run_with_each_calls_addresses(library):
    for address in (BASE, BASE + 0x4000, BASE + 0x8000):
        a, b, out = operands(address)
        assert ptxgen.gemm(a, b, out=out) is out
    assert library.planned == 1
    assert len(library.prepares) == 1
    assert [run["a"] for run in library.runs] == [BASE, BASE + 0x4000, BASE + 0x8000]
    assert {run["d"] for run in library.runs} == {BASE + 0x100000}
    assert library.runs[0]["problem"] == library.runs[2]["problem"]


def square(**keywords):
    """gemm's arguments of a 256 x 256 x 512 f16 GEMM with a bias of 256
    (along m or n) and c, each changed by `keywords`."""
    arguments = dict(a=FakeCudaArray((256, 512)), b=transposed(512, 256),
                     out=FakeCudaArray((256, 256)), bias=FakeCudaArray((256,), "<f4"),
                     c=FakeCudaArray((256, 256), offset=0x200000))
    arguments.update(keywords)
    return arguments


CHANGES = {
    "a's strides (a padded row)": dict(a=FakeCudaArray((256, 512), strides=(520, 1))),
    "a's layout (MN-major)": dict(a=transposed(256, 512)),
    "a's shape": dict(a=FakeCudaArray((128, 512)), out=FakeCudaArray((128, 256)),
                      c=FakeCudaArray((128, 256))),
    "out's type": dict(out=FakeCudaArray((256, 256), "<f4"), c=FakeCudaArray((256, 256), "<f4")),
    "the bias's type": dict(bias=FakeCudaArray((256,))),
    "a's alignment": dict(a=FakeCudaArray((256, 512), offset=8)),
    "a read-only a": dict(a=FakeCudaArray((256, 512), readonly=True)),
    "c given": dict(c=None, beta=0.0),
    "no bias": dict(bias=None),
    "bias_along": dict(bias_along="m"),
    "activation": dict(activation="relu"),
    "alpha": dict(alpha=2.0),
    "alpha's type": dict(alpha=1),
    "beta": dict(beta=0.5),
    "beta's sign": dict(beta=-0.0),
    "out_dtype": dict(out_dtype="f16"),
    "scaling": dict(scaling="none"),
}


@pytest.mark.parametrize("change", CHANGES.values(), ids=CHANGES.keys())
def test_any_change_of_the_signature_plans_again(library, change):
    ptxgen.gemm(**square(beta=0.0 if "beta" in change else 1.0))
    ptxgen.gemm(**square(beta=0.0 if "beta" in change else 1.0))
    assert library.planned == 1
    base = square(beta=0.0 if "beta" in change else 1.0)
    ptxgen.gemm(**{**base, **change})
    assert library.planned == 2


def test_tf32_and_float32_are_different_signatures(library):
    a, b, out = FakeCudaArray((64, 256), "<f4"), transposed(256, 64, typestr="<f4"), \
        FakeCudaArray((64, 64), "<f4")
    ptxgen.gemm(a, b, out=out, dtype="tf32")
    with pytest.raises(ptxgen.Error):  # f32 inputs are no type the library multiplies
        ptxgen.gemm(a, b, out=out)
    assert library.planned == 2
    assert library.runs[0]["problem"]["input_type"] == _library.DATA_TYPES["tf32"]


def test_a_misaligned_or_null_address_plans_again_and_null_is_refused(library):
    a, b, out = operands()
    ptxgen.gemm(a, b, out=out)
    ptxgen.gemm(FakeCudaArray((256, 512), offset=2), b, out=out)  # the library's to refuse
    assert library.planned == 2
    assert library.runs[-1]["a"] == BASE + 2
    null = FakeCudaArray((256, 512))
    null.__cuda_array_interface__["data"] = (0, False)
    with pytest.raises(ptxgen.Error, match="a has elements but its address is 0"):
        ptxgen.gemm(null, b, out=out)
    assert len(library.runs) == 2


@pytest.mark.parametrize("valid, refused, rule", [
    (dict(alpha=1), dict(alpha=True), "alpha=True is not a number"),
    (dict(fast_accum=False), dict(fast_accum=0), "fast_accum=0 is not True or False"),
    (dict(activation="relu"), dict(activation=["relu"]), "activation=['relu'] is not one of"),
    (dict(out_dtype="f16"), dict(out_dtype="F16"), "out_dtype='F16' is not one of"),
    (dict(stream=0x10), dict(stream=-1), "stream=-1 is not an address"),
    (dict(stream=0x10), dict(stream=True), "stream=True is not an integer"),
])
def test_a_value_equal_to_one_plan_call_took_is_refused_as_plan_call_refuses_it(
        library, valid, refused, rule):
    a, b, out = operands()
    ptxgen.gemm(a, b, out=out, **valid)
    with pytest.raises(ptxgen.Error, match=rule.replace("[", r"\[").replace("]", r"\]")):
        ptxgen.gemm(a, b, out=out, **refused)
    assert len(library.runs) == 1


def test_a_run_that_fails_keeps_no_signature(library):
    a, b, out = operands()
    library.status = 1
    with pytest.raises(ptxgen.Error):
        ptxgen.gemm(a, b, out=out)
    library.status = 0
    ptxgen.gemm(a, b, out=out)
    assert library.planned == 2


def test_dlpack_arrays_are_planned_and_exported_at_every_call(library):
    for _ in range(2):
        a = FakeDLPackArray((256, 512))
        b = FakeDLPackArray((512, 256), strides=(1, 512))
        out = FakeDLPackArray((256, 256))
        ptxgen.gemm(a, b, out=out)
        assert (a.streams, a.deleted, out.deleted) == ([1], 1, 1)
    assert library.planned == 2
    assert len(library.prepares) == 1  # a GEMM of the default stream


def test_arrays_of_no_library_own_a_workspace_per_stream(library):
    a, b, out = operands()
    for stream in (0x10, 0x20, 0x10):
        a.__cuda_array_interface__["stream"] = stream
        ptxgen.gemm(a, b, out=out)
    ptxgen.gemm(a, b, out=out, stream=0x30)
    assert library.planned == 1  # the stream is not part of the signature
    assert [mode for mode, _ in library.prepares] == [None, None, None]
    assert [run["stream"] for run in library.runs] == [0x10, 0x20, 0x10, 0x30]
    assert {run["workspace"] for run in library.runs} == {"owned"}


def test_the_least_recently_used_signatures_go_beyond_the_bound(library, monkeypatch):
    monkeypatch.setattr(_gemm, "_FAST_SIZE", 2)
    a, b, out = operands()

    def call(alpha):
        planned = library.planned
        ptxgen.gemm(a, b, out=out, alpha=alpha)
        return library.planned > planned  # planned: a miss

    assert [call(1.0), call(2.0), call(1.0), call(3.0)] == [True, True, False, True]
    assert len(_gemm._fast) == 2
    assert [call(1.0), call(2.0)] == [False, True]  # 2.0 was the least recent


@pytest.mark.parametrize("private", [True, False], ids=["private", "public"])
def test_torch_out_is_allocated_as_the_first_call_found_on_the_current_stream(
        library, monkeypatch, private):
    torch = FakeTorch(private)
    monkeypatch.setitem(sys.modules, "torch", torch.module)
    x, w = torch.tensor(16, 256), torch.tensor(256, 256)
    torch.streams[0] = 0xA0
    outs = [ptxgen.gemm(x, w.t()) for _ in range(3)]
    assert library.planned == 1
    assert [allocation["shape"] for allocation in torch.allocations] == [(16, 256)] * 3
    assert {allocation["dtype"] for allocation in torch.allocations} == {"bfloat16"}
    assert [run["d"] for run in library.runs] == [out.data_ptr() for out in outs]
    assert {run["stream"] for run in library.runs} == {0xA0}
    assert [(out.shape, out.stride()) for out in outs] == [((16, 256), (256, 1))] * 3


def test_torch_gemms_are_prepared_per_device_not_per_stream(library, torch):
    x, w = torch.tensor(16, 256), torch.tensor(256, 256)
    ptxgen.gemm(x, w.t())
    torch.streams[0] = 0xC0  # a fresh stream, as a CUDA graph's capture
    ptxgen.gemm(x, w.t())
    ptxgen.gemm(x, w.t(), stream=0xD0)
    assert [mode for mode, _ in library.prepares] == [CALLER]
    assert [run["stream"] for run in library.runs] == [0, 0xC0, 0xD0]
    on_1 = torch.tensor(16, 256, device=1), torch.tensor(256, 256, device=1)
    ptxgen.gemm(on_1[0], on_1[1].t())
    assert library.planned == 2  # the device is part of the signature
    assert len(library.prepares) == 2


def test_the_current_stream_keeps_one_workspace_for_its_runs_grown_as_needed(
        library, torch):
    library.workspace_bytes = 4096
    x, w = torch.tensor(16, 256), torch.tensor(256, 256)
    torch.streams[0] = 0xA0
    for _ in range(3):
        ptxgen.gemm(x, w.t())
    library.workspace_bytes = 8192  # another GEMM's, larger
    ptxgen.gemm(torch.tensor(32, 256), w.t())
    ptxgen.gemm(x, w.t())
    workspaces = [a for a in torch.allocations if a["dtype"] == "uint8"]
    assert [(a["shape"], a["stream"]) for a in workspaces] == [((4096,), 0xA0), ((8192,), 0xA0)]
    kept = [run["workspace"] for run in library.runs]
    assert len(set(kept[:3])) == 1 and len(set(kept[3:])) == 1 and kept[0] != kept[3]
    assert kept[3] in torch.live  # kept for the stream's next runs
    # Zeroed once, on the stream, when allocated: its runs zero nothing first.
    assert [a["zeroed_on_stream"] for a in workspaces] == [0xA0, 0xA0]
    assert {run["zeroed"] for run in library.runs} == {True}


def test_another_stream_gets_a_workspace_per_run_held_while_it_is_enqueued(library, torch):
    library.workspace_bytes = 4096
    library.on_run = lambda run: run.update(held=run["workspace"] in torch.live)
    x, w = torch.tensor(16, 256), torch.tensor(256, 256)
    torch.streams[0] = 0xA0
    ptxgen.gemm(x, w.t(), stream=0xB0)
    ptxgen.gemm(x, w.t(), stream=0xB0)
    workspaces = [a for a in torch.allocations if a["dtype"] == "uint8"]
    assert [(a["shape"], a["stream"]) for a in workspaces] == [((4096,), 0xB0)] * 2
    assert [(run["workspace_bytes"], run["held"]) for run in library.runs] == [(4096, True)] * 2
    assert not {run["workspace"] for run in library.runs} & torch.live  # each freed since
    # Fresh memory each run: the library zeroes what it needs itself.
    assert {run["zeroed"] for run in library.runs} == {False}
    assert {a["zeroed_on_stream"] for a in workspaces} == {None}
    assert library.planned == 1


def test_a_capture_keeps_a_workspace_zeroed_in_it_until_a_call_outside_a_capture(
        library, torch):
    library.workspace_bytes = 4096
    x, w = torch.tensor(16, 256), torch.tensor(256, 256)
    torch.streams[0] = 0xA0
    torch.capturing = True  # a graph's capture: blocks of the graph's pool
    library.capture_ids[0xA0] = 7
    ptxgen.gemm(x, w.t())
    ptxgen.gemm(x, w.t())
    library.capture_ids[0xA0] = 8  # the next capture on the same stream
    ptxgen.gemm(x, w.t())
    workspaces = [a for a in torch.allocations if a["dtype"] == "uint8"]
    # One block per capture, zeroed in it (a memset the graph replays).
    assert [(a["shape"], a["zeroed_on_stream"]) for a in workspaces] == [((4096,), 0xA0)] * 2
    runs = library.runs
    assert runs[0]["workspace"] == runs[1]["workspace"] != runs[2]["workspace"]
    assert {run["zeroed"] for run in runs} == {True}
    assert runs[2]["workspace"] in torch.live
    torch.capturing = False
    ptxgen.gemm(x, w.t())  # outside: the captures' blocks go back to their pools
    assert runs[2]["workspace"] not in torch.live
    assert runs[3]["workspace"] in torch.live and runs[3]["zeroed"]
    assert len([a for a in torch.allocations if a["dtype"] == "uint8"]) == 3


def test_runs_of_the_torch_operators_keep_no_workspace(library, torch):
    # A compiled graph may run while torch sends allocations to a CUDA
    # graph's pool (cudagraph trees' warm-up): no block may outlive the call.
    library.workspace_bytes = 4096
    x, w = torch.tensor(16, 256), torch.tensor(256, 256)
    with _arrays.workspaces_per_run():
        ptxgen.gemm(x, w.t())
        ptxgen.gemm(x, w.t())
    assert len([a for a in torch.allocations if a["dtype"] == "uint8"]) == 2
    assert not {run["workspace"] for run in library.runs} & torch.live
    ptxgen.gemm(x, w.t())  # outside: the stream's kept block
    assert library.runs[-1]["workspace"] in torch.live
    assert [run["zeroed"] for run in library.runs] == [False, False, True]


def test_a_gemm_needing_no_workspace_runs_with_none(library, torch):
    x, w = torch.tensor(16, 256), torch.tensor(256, 256)
    ptxgen.gemm(x, w.t())
    ptxgen.gemm(x, w.t())
    assert [(run["workspace"], run["workspace_bytes"]) for run in library.runs] == [(None, 0)] * 2
    assert [a["dtype"] for a in torch.allocations] == ["bfloat16"] * 2


def test_tensors_of_another_device_run_with_it_current(library, torch):
    library.on_run = lambda run: run.update(device=torch.device)
    x, w = torch.tensor(16, 256, device=1), torch.tensor(256, 256, device=1)
    for _ in range(2):
        ptxgen.gemm(x, w.t())
    assert [run["device"] for run in library.runs] == [1, 1]
    assert [a["device"] for a in torch.allocations] == [1, 1]
    assert torch.device == 0


def test_a_torch_stream_of_torch_compile_is_run_on_its_cuda_stream(library, torch):
    x, w = torch.tensor(16, 256), torch.tensor(256, 256)
    for _ in range(2):
        ptxgen.gemm(x, w.t(), stream=FakeStream(7))
    assert [run["stream"] for run in library.runs] == [0x5007] * 2
    with pytest.raises(ptxgen.Error, match="stream is a torch.Stream of .*, not of a CUDA"):
        ptxgen.gemm(x, w.t(), stream=FakeStream(7, kind="cpu"))


def test_torch_signatures_hold_each_tensors_type_device_dtype_shape_strides_alignment(
        library, torch):
    x, w = torch.tensor(16, 256), torch.tensor(256, 256)
    changed = [
        (torch.tensor(16, 256, strides=(264, 1)), w.t()),  # strides
        (torch.tensor(16, 256, dtype="float16"), torch.tensor(256, 256, dtype="float16").t()),
        (torch.tensor(32, 256), w.t()),  # shape
        (torch.tensor(16, 256, address=BASE + 4), w.t()),  # another alignment (mod 16)
        (torch.tensor(16, 256, address=BASE + 8), w.t()),
        (x, torch.tensor(256, 256).t().t()),  # b's layout
    ]
    ptxgen.gemm(x, w.t())
    ptxgen.gemm(torch.tensor(16, 256, address=BASE + 4096), w.t())
    ptxgen.gemm(torch.tensor(16, 256, address=BASE + 32), w.t())  # 16-byte aligned too
    assert library.planned == 1
    for a, b in changed:
        ptxgen.gemm(a, b)
    assert library.planned == 1 + len(changed)
    with pytest.raises(ptxgen.Error, match="a is on .*, not on a CUDA device"):
        ptxgen.gemm(torch.tensor(16, 256, device=None), w.t())


def test_fp8_scales_and_amax_are_part_of_the_signature(library, torch):
    x = torch.tensor(16, 256, dtype="float8_e4m3fn")
    w = torch.tensor(256, 256, dtype="float8_e4m3fn")
    scale = torch.tensor(1, dtype="float32")
    amax = torch.tensor(1, dtype="float32", address=BASE + 64)
    calls = [dict(scale_a=scale, scale_b=scale), dict(scale_a=scale, scale_b=scale),
             dict(scale_a=scale, scale_b=scale, fast_accum=True),
             dict(scale_a=scale, scale_b=scale, scaling="tensor"),
             dict(scale_a=scale, scale_b=scale, amax=amax)]
    for keywords in calls:
        ptxgen.gemm(x, w.t(), **keywords)
    assert library.planned == 4
    assert [run["scale_a"] for run in library.runs] == [BASE] * 5
    assert library.runs[-1]["amax_d"] == BASE + 64
    assert (library.runs[2]["problem"]["fast_accumulation"],
            library.runs[1]["problem"]["fast_accumulation"]) == (1, 0)


def test_c_is_passed_only_when_beta_reads_it(library, torch):
    x, w = torch.tensor(16, 256), torch.tensor(256, 256)
    c = torch.tensor(16, 256, address=BASE + 0x10000)
    for beta in (0.0, 0.0, 0.5, 0.5):
        ptxgen.gemm(x, w.t(), c=c, beta=beta)
    assert [run["c"] for run in library.runs] == [None, None, BASE + 0x10000, BASE + 0x10000]
    assert library.planned == 2


def test_cupy_arrays_take_workspaces_from_cupy_on_their_device(library, cupy):
    library.workspace_bytes = 512
    library.on_run = lambda run: run.update(device=cupy.device)
    a, b = FakeCupyArray((64, 256), device=1), FakeCupyArray((256, 64), device=1)
    outs = [ptxgen.gemm(a, b) for _ in range(2)]
    assert library.planned == 1
    assert [mode for mode, _ in library.prepares] == [CALLER]
    assert [run["device"] for run in library.runs] == [1, 1]
    assert [run["d"] for run in library.runs] == [out.data.ptr for out in outs]
    assert [(x["shape"], x["dtype"], x["device"]) for x in cupy.allocations] == [
        ((64, 64), "float16", 1), ((512,), "uint8", 1)] * 2
    ptxgen.gemm(FakeCupyArray((64, 256), device=0), FakeCupyArray((256, 64), device=0))
    assert library.planned == 2  # another device


def test_without_torch_the_other_arrays_run(library, cupy, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` fails
    a, b, out = operands()
    for _ in range(2):
        ptxgen.gemm(a, b, out=out)
        ptxgen.gemm(FakeCupyArray((64, 256)), FakeCupyArray((256, 64)))
    assert library.planned == 2
    assert len(library.runs) == 4


# Options that plan_call takes or refuses, among them values equal to
# others (True == 1 == 1.0, -0.0 == 0.0) that it tells apart.
OPTIONS = {
    "alpha": st.sampled_from([1.0, 1, True, 2.0, 0.0, -0.0, "1"]),
    "beta": st.sampled_from([0.0, -0.0, 0, False, 0.5]),
    "bias_along": st.sampled_from(["n", "m", ["n"]]),
    "activation": st.sampled_from([None, "relu", "RELU"]),
    "out_dtype": st.sampled_from([None, "f16", "float16", "f32", 16]),
    "fast_accum": st.sampled_from([False, 0, True, None]),
    "scaling": st.sampled_from([None, "none", "NONE"]),
    "stream": st.sampled_from([None, 0, 0x10, -1, False]),
}


def outcome(**keywords):
    """What gemm does with square()'s arrays: the problem and stream run, or
    the refusal."""
    library = _library.loaded()[0]
    try:
        ptxgen.gemm(**square(**keywords))
    except ptxgen.Error as error:
        return "refused", str(error)
    run = library.runs[-1]
    return run["problem"], run["stream"], run["c"]


@settings(derandomize=True, database=None, max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.fixed_dictionaries({}, optional=OPTIONS), st.fixed_dictionaries({}, optional=OPTIONS))
def test_after_any_call_a_call_does_what_plan_call_alone_does(library, first, second):
    _gemm._fast.clear()
    expected = outcome(**second)
    _gemm._fast.clear()
    outcome(**first)
    assert outcome(**second) == expected
