"""The Python samples (samples/python/) run as their docstrings say; the
one that needs a GPU at least compiles here, and the Llama MLP sample runs
where PyTorch and a Hopper GPU are, skipping (as it says) elsewhere."""
import pathlib
import subprocess
import sys

import pytest

SAMPLES = pathlib.Path(__file__).resolve().parents[2] / "samples" / "python"


def test_plan_and_inspect_runs_without_a_gpu():
    run = subprocess.run([sys.executable, str(SAMPLES / "plan_and_inspect.py")],
                         capture_output=True, text=True, check=True)
    assert "computes  bf16.km->f32+bias_n.f32+gelu" in run.stdout
    assert "float epilogue_value(" in run.stdout
    assert "refused (PTXGEN_STATUS_INVALID_VALUE): ptxgenPlanGemm: GEMM: k=4100" in run.stdout


def test_gemm_torch_compiles():
    source = (SAMPLES / "gemm_torch.py").read_text()
    compile(source, "gemm_torch.py", "exec")


def test_llama_mlp_agrees_with_torch_or_says_why_it_skipped():
    run = subprocess.run([sys.executable, str(SAMPLES / "llama_mlp.py")],
                         capture_output=True, text=True, check=True)
    if run.stdout.startswith("skipped: "):
        pytest.skip(f"llama_mlp.py {run.stdout.strip()}")
    for mode in ("eager", "torch.compile", "CUDA graph"):
        assert mode in run.stdout
    assert "every ptxgen block agrees with torch" in run.stdout, run.stdout
