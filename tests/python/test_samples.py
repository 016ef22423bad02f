"""The Python samples (samples/python/) run as their docstrings say; the
one that needs a GPU at least compiles here."""
import pathlib
import subprocess
import sys

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
