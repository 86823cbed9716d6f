"""Shared paths and helpers. The package is imported from ../src; the library comes from
$TENSORBLOB_LIBRARY (test.sh points it at a Meson build directory)."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
sys.path.insert(0, str(HERE.parent / "src"))


def tracked(pattern: str):
    """Files git tracks under the repository that match pattern (a checkout without git:
    the same files by glob)."""
    try:
        out = subprocess.run(["git", "-C", str(REPO), "ls-files", pattern], check=True,
                             capture_output=True, text=True).stdout.split()
        return sorted(REPO / p for p in out)
    except (OSError, subprocess.CalledProcessError):
        return sorted(REPO.glob("**/" + pattern))


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


def rel(p: Path) -> str:
    return str(p.relative_to(REPO))


def fnv1a64(data: bytes) -> int:
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", "/tmp/tblob-hypothesis")


def _feature_probe():
    """Which optional parts the loaded library was built with (a part left out answers
    TBLOB_E_FEATURE_DISABLED, -10)."""
    import ctypes
    from tensorblob import _ffi
    lib = _ffi.lib
    out = ctypes.c_void_p()
    st = lib.tblob_store_open(str(REPO / "examples" / "ollama-store" / "store").encode(), None,
                              ctypes.byref(out), None)
    lib.tblob_store_close(out)
    slm = (REPO / "tests" / "data" / "slm1" / "tiny_btok.slm").read_bytes()
    buf = ctypes.create_string_buffer(slm, len(slm))
    out2 = ctypes.c_void_p()
    st2 = lib.tblob_slm1_open_memory(buf, len(slm), None, None, ctypes.byref(out2), None)
    lib.tblob_model_close(out2)
    lib.tblob_uqff_layer_info_at.argtypes  # declared: the call below answers -10 when absent
    info = _ffi.new(_ffi.UqffLayerInfo)
    st3 = lib.tblob_uqff_layer_info_at(None, 0, ctypes.byref(info), None)
    return {"ollama": st != -10, "slm1": st2 != -10, "uqff": st3 != -10}


FEATURES = _feature_probe()


def needs(feature: str):
    """Skips a test when the library was built without that part (-D<feature>=disabled)."""
    return pytest.mark.skipif(not FEATURES[feature], reason=f"library built without {feature}")
