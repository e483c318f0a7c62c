"""`import attn` needs NumPy only; attn.torch fails clearly without torch."""

import subprocess
import sys

import attn

BLOCK_TORCH = "import sys; sys.modules['torch'] = None\n"


def run(code):
    return subprocess.run([sys.executable, "-c", BLOCK_TORCH + code], capture_output=True,
                          text=True, timeout=120)


def test_import_without_torch():
    done = run("import attn, numpy as np\n"
               "q = np.ones((1, 2, 1, 4))\n"
               "print(attn.sdpa(q, q, q).shape, 'torch' in sys.modules and sys.modules['torch'])\n")
    assert done.returncode == 0, done.stderr
    assert "(1, 2, 1, 4) None" in done.stdout


def test_attn_torch_without_torch_says_why():
    done = run("import attn\n"
               "try:\n"
               "    attn.torch\n"
               "except ImportError as e:\n"
               "    print('ImportError:', e)\n")
    assert done.returncode == 0, done.stderr
    assert "needs PyTorch" in done.stdout


def test_package_metadata():
    assert attn.__version__ == attn.library_version
    assert attn.simd in ("amx", "avx512-bf16", "avx512", "avx2", "neon", "scalar")
    assert attn.library_path.endswith(".so.0") or "libattn" in attn.library_path
    assert not hasattr(attn, "nothing_here")


def test_attn_transformers_without_transformers_says_why():
    done = subprocess.run(
        [sys.executable, "-c", "import sys; sys.modules['transformers'] = None\n"
         "import attn\n"
         "try:\n"
         "    attn.transformers\n"
         "except ImportError as e:\n"
         "    print('ImportError:', e)\n"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "needs Hugging Face transformers" in done.stdout or "needs PyTorch" in done.stdout
