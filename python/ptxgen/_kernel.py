"""What was generated for a plan or a prepared GEMM, copied out of the
library into Python values (so nothing points into a freed plan)."""
import ctypes

from ptxgen import _library


class Kernel:
    """The generated kernel: `source` (CUDA C++), `ptx`, `cubin` (bytes),
    `kernel_name`, `config` (the configuration's name, as the command line
    takes it), `form` (what it computes), `resources` (ptxas's registers,
    spills and stack, the launch's shared memory and threads) and `grid`
    ((x, y, z, cluster_x); None for a prepared GEMM, which keeps the grid
    it planned with the driver to itself)."""

    def __init__(self, info, has_grid):
        self.kernel_name = info.kernel_name.decode()
        self.config = info.config_name.decode()
        self.form = info.form_name.decode()
        self.source = info.source.decode()
        self.ptx = info.ptx.decode()
        self.cubin = ctypes.string_at(info.cubin, info.cubin_size)
        self.resources = {
            "registers": info.registers,
            "spill_store_bytes": info.spill_store_bytes,
            "spill_load_bytes": info.spill_load_bytes,
            "stack_frame_bytes": info.stack_frame_bytes,
            "shared_bytes": info.shared_bytes,
            "threads_per_block": info.threads_per_block,
        }
        self.grid = ((info.grid_x, info.grid_y, info.grid_z, info.cluster_x)
                     if has_grid else None)

    def __repr__(self):
        return (f"<ptxgen {type(self).__name__.lower()} {self.kernel_name}: "
                f"'{self.config}', {self.resources['registers']} registers, "
                f"{self.resources['shared_bytes']} bytes of shared memory>")


def read(get_info, pointer, has_grid, kind=Kernel):
    info = _library.KernelInfo()
    _library.check(get_info(pointer, ctypes.byref(info)))
    return kind(info, has_grid)
