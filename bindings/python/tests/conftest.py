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
