"""Exceptions: one TensorblobError subclass per family of tblob_status."""
from __future__ import annotations

from typing import Any, Optional, Tuple


try:  # so that `except safetensors.SafetensorError` catches what safetensors would raise
    from safetensors import SafetensorError as _SafetensorBase
except Exception:  # noqa: BLE001  (safetensors missing or broken: a plain base)
    class _SafetensorBase(Exception):  # type: ignore[no-redef]
        pass


class SafetensorError(_SafetensorBase):  # type: ignore[misc,valid-type]
    """Raised where safetensors.safe_open raises its SafetensorError (a bad slice key, an
    unknown backend or framework); a subclass of safetensors' class when it is importable."""


class ReversedSliceError(SafetensorError, SystemError, ValueError):
    """A get_slice range whose start is past its stop. safetensors 0.8.0 has no error of its
    own for it: it raises SystemError (step 1), ValueError from numpy (most larger steps) or
    panics (PanicException, others); this class is all three of SystemError, ValueError and
    SafetensorError, so whichever of them code catches, it catches this."""


class TensorblobError(Exception):
    """An error status from the C library.

    Attributes:
        status: the status name, e.g. ``"TBLOB_E_TRAILING_BYTES"``.
        code: its pinned number (negative).
        message: the library's message naming the tensor, field and offset.
        offset: byte offset in the file or buffer, or None when none applies.
        tensor_index: index in the model's table, or None.
    """

    def __init__(self, status: str, code: int, message: str, offset: Optional[int] = None,
                 tensor_index: Optional[int] = None) -> None:
        super().__init__(f"{status}: {message}" + (f" (byte {offset})" if offset is not None else ""))
        self.status = status
        self.code = code
        self.message = message
        self.offset = offset
        self.tensor_index = tensor_index

    def __reduce__(self) -> Tuple[Any, ...]:  # picklable across processes
        return (type(self), (self.status, self.code, self.message, self.offset, self.tensor_index))


class TensorblobIOError(TensorblobError, OSError):
    """Files: open/read/mmap failed, a path that is missing, a blob or shard not on disk."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:  # OSError's __init__ reshapes args
        TensorblobError.__init__(self, *args, **kwargs)

    def __str__(self) -> str:
        return TensorblobError.__str__(self)


class FormatError(TensorblobError, ValueError):
    """The bytes break their container's rules (safetensors, manifest, UQFF, SLM1, ...)."""


class LimitError(TensorblobError, ValueError):
    """A limit of the open options (header bytes, tensors, rank, names, depth, files) was hit."""


class DigestError(TensorblobError, ValueError):
    """Content does not match its hash or size (SHA-256 blobs, SLM1 checksum, hash collisions)."""


class DequantError(TensorblobError, ValueError):
    """A quantized tensor whose descriptor cannot be decoded, or a bad output dtype/kernel."""


class NotFoundError(TensorblobError, KeyError):
    """No tensor, key or model of that name."""

    def __str__(self) -> str:
        return TensorblobError.__str__(self)


class InvalidArgumentError(TensorblobError, ValueError):
    """The call itself was wrong (a bad argument, an index or row range out of range)."""


class CancelledError(TensorblobError):
    """A callback asked the library to stop."""


class UnsupportedError(TensorblobError):
    """Valid input this build cannot handle, or a part that was compiled out."""


# The exception class of each tblob_family, by the library's name of the family: the
# library says which family a status is in (tblob_status_family), so no status numbers are
# spelled here. scripts/lists.py checks that every family of the header has a class.
_FAMILY_CLASSES = {
    "ok": TensorblobError,
    "argument": InvalidArgumentError,
    "memory": TensorblobError,
    "io": TensorblobIOError,
    "not-found": NotFoundError,
    "format": FormatError,
    "limit": LimitError,
    "digest": DigestError,
    "dequant": DequantError,
    "unsupported": UnsupportedError,
    "cancelled": CancelledError,
}


def family(code: int) -> "type[TensorblobError]":
    """The exception class for a status number (FormatError for one the library lacks)."""
    from . import _ffi  # late: _ffi loads the library

    name = _ffi.cstr(_ffi.lib.tblob_family_name(_ffi.lib.tblob_status_family(code)))
    return _FAMILY_CLASSES.get(name, FormatError)


class MissingFileError(TensorblobIOError, FileNotFoundError):
    """The path to open does not exist."""
