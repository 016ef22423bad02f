"""What ptxgen would run for a fused GEMM on an H200, planned here without a
GPU: the configuration it picks, what ptxas reports, the epilogue it
generated, the PTX. Run it after installing the package:

    bash tools/python_install.sh && python3 samples/python/plan_and_inspect.py
"""
import re

import ptxgen

# D = gelu(A @ B + bias): A [4096, 4096] bf16, B stored [k, n] (MN-major, as
# torch.matmul's right operand), D in f32, one bias value per column.
plan = ptxgen.plan(m=4096, n=4096, k=4096, dtype="bf16", b_major="mn",
                   out_dtype="f32", bias="n", activation="gelu")

print(f"kernel {plan.kernel_name}")
print(f"  computes  {plan.form}")
print(f"  config    {plan.config}   (ptxgen gemm --config='...' takes this name)")
print(f"  grid      {plan.grid[0]} CTAs on the H200's 132 SMs, clusters of {plan.grid[3]}")
for name, value in plan.resources.items():
    print(f"  {name:18} {value}")

# The epilogue is generated from the problem: one function per value.
epilogue = re.search(r"__device__[^\n]*float epilogue_value\(.*?\n}\n", plan.source, re.S)
print("\nthe generated epilogue:\n" + epilogue.group(0))

# NVRTC's PTX: the wgmma instructions of the main loop.
wgmma = [line.split()[0] for line in plan.ptx.splitlines() if "wgmma.mma_async" in line]
print(f"{len(wgmma)} wgmma in the PTX: {sorted(set(wgmma))}\n")

# Another device: a part with half the SMs.
print("on 66 SMs:", ptxgen.plan(m=4096, n=4096, k=4096, sms=66).config)

# Refusals name the rule that was broken.
try:
    ptxgen.plan(m=4096, n=4096, k=4100)
except ptxgen.Error as error:
    print(f"refused ({error.status}): {error}")
