"""ctypes declarations of include/tensorblob.h and the loader of the shared library.

Only this module knows struct layouts and signatures. ctypes was chosen because it needs no
compiler at install or import time and CDLL releases the GIL around every foreign call.
"""
from __future__ import annotations

import ctypes
import os
import sys
from ctypes import (POINTER, Structure, c_char, c_char_p, c_float, c_int, c_int32, c_int64,
                    c_size_t, c_uint32, c_uint64, c_void_p)
from pathlib import Path
from typing import Optional, Type, TypeVar

u32, u64, i32, i64 = c_uint32, c_uint64, c_int32, c_int64

NO_OFFSET = 0xFFFFFFFFFFFFFFFF
ALL_ROWS = 0xFFFFFFFFFFFFFFFF
DIAG_MESSAGE_BYTES = 256


class Diag(Structure):
    _fields_ = [("struct_size", u32), ("status", i32), ("offset", u64), ("tensor_index", i64),
                ("message", c_char * DIAG_MESSAGE_BYTES)]


class OpenOptions(Structure):
    _fields_ = [("struct_size", u32), ("mode", u32), ("max_header_bytes", u64),
                ("max_tensors", u64), ("max_name_bytes", u64), ("max_rank", u32),
                ("max_json_depth", u32), ("max_files", u32), ("flags", u32),
                ("allocator", c_void_p)]


class TensorInfo(Structure):
    _fields_ = [("struct_size", u32), ("dtype", u32), ("name", c_void_p), ("name_len", c_size_t),
                ("shape", POINTER(u64)), ("rank", u32), ("file_index", u32),
                ("data_offset", u64), ("data_length", u64), ("file_offset", u64),
                ("element_count", u64), ("logical_shape", POINTER(u64)),
                ("logical_elements", u64), ("logical_rank", u32), ("quant_scheme", u32),
                ("quant_flags", u32), ("reserved", u32)]


class QuantInfo(Structure):
    _fields_ = [("struct_size", u32), ("scheme", u32), ("flags", u32), ("source", u32),
                ("bits", u32), ("group_size", u32), ("scale_dtype", u32), ("bias_dtype", u32),
                ("special", u32), ("global_scale_mode", u32), ("shape", POINTER(u64)),
                ("rank", u32), ("status", i32), ("rows", u64), ("cols", u64),
                ("weight_index", i64), ("scale_index", i64), ("bias_index", i64),
                ("global_scale_index", i64)]


class UqffLayerInfo(Structure):
    _fields_ = [("struct_size", u32), ("family", u32), ("label", c_char_p), ("ggml_type", u32),
                ("bits", u32), ("group_size", u32), ("weight_dtype", u32), ("scale_dtype", u32),
                ("shard", u32), ("shard_span", u32), ("has_bias", u32), ("experts", u64),
                ("rows", u64), ("cols", u64), ("stored_bytes", u64)]


class Slm1OpenOptions(Structure):
    _fields_ = [("struct_size", u32), ("reserved", u32),
                ("required_names", POINTER(c_char_p)), ("required_name_lens", POINTER(c_size_t)),
                ("required_name_count", c_size_t)]


class Slm1TensorInfo(Structure):
    _fields_ = [("struct_size", u32), ("dtype", u32), ("name_hash", u64), ("rank", u32),
                ("block_size", u32), ("dims", u64 * 4), ("rows", u64), ("cols", u64),
                ("byte_offset", u64), ("byte_length", u64), ("scale_offset", u64),
                ("scale_length", u64), ("payload", c_void_p), ("scales", c_void_p),
                ("entry_offset", u64), ("name_listed", u32), ("reserved", u32)]


class StoreOptions(Structure):
    _fields_ = [("struct_size", u32), ("flags", u32), ("max_manifest_bytes", u64),
                ("max_config_bytes", u64), ("allocator", c_void_p)]


class StoreEntry(Structure):
    _fields_ = [("struct_size", u32), ("status", i32), ("name", c_void_p), ("name_len", c_size_t),
                ("short_name", c_void_p), ("short_name_len", c_size_t),
                ("manifest_id", c_void_p), ("manifest_id_len", c_size_t),
                ("manifest_bytes", u64), ("total_bytes", u64), ("layer_count", u64),
                ("tensor_layer_count", u64), ("modified_unix", i64), ("message", c_char_p)]


class StoreOpenOptions(Structure):
    _fields_ = [("struct_size", u32), ("flags", u32), ("open", POINTER(OpenOptions)),
                ("component", c_char_p), ("component_len", c_size_t),
                ("part", u32), ("reserved", u32), ("part_index", u64)]


class VerifyProgress(Structure):
    _fields_ = [("struct_size", u32), ("reserved", u32), ("blobs_total", u64),
                ("blobs_done", u64), ("bytes_total", u64), ("bytes_done", u64)]


class BlobResult(Structure):
    _fields_ = [("struct_size", u32), ("status", i32), ("digest", c_void_p),
                ("digest_len", c_size_t), ("actual_digest", c_void_p),
                ("actual_digest_len", c_size_t), ("expected_size", u64), ("actual_size", u64),
                ("path", c_void_p), ("path_len", c_size_t), ("message", c_char_p)]


STORE_ENTRY_FN = ctypes.CFUNCTYPE(c_int, c_void_p, POINTER(StoreEntry))
VERIFY_PROGRESS_FN = ctypes.CFUNCTYPE(c_int, c_void_p, POINTER(VerifyProgress))
BLOB_RESULT_FN = ctypes.CFUNCTYPE(c_int, c_void_p, POINTER(BlobResult))


# Byte sources: the library reads a model through these callbacks (_core._open_fileobj).
READ_FN = ctypes.CFUNCTYPE(c_int64, c_void_p, c_uint64, c_void_p, c_size_t)
CLOSE_FN = ctypes.CFUNCTYPE(None, c_void_p)


class ByteSource(Structure):
    pass


OPEN_SIBLING_FN = ctypes.CFUNCTYPE(c_int32, c_void_p, c_void_p, c_size_t, POINTER(ByteSource))
ByteSource._fields_ = [("struct_size", u32), ("flags", u32), ("size", u64), ("read", READ_FN),
                       ("open_sibling", OPEN_SIBLING_FN), ("close", CLOSE_FN),
                       ("user", c_void_p), ("name", c_char_p)]
SOURCE_SIZE_UNKNOWN = 0xFFFFFFFFFFFFFFFF


class VerifyOptions(Structure):
    _fields_ = [("struct_size", u32), ("threads", u32), ("progress", VERIFY_PROGRESS_FN),
                ("progress_user", c_void_p), ("on_blob", BLOB_RESULT_FN),
                ("on_blob_user", c_void_p), ("flags", u32), ("reserved", u32)]


class DequantOptions(Structure):
    _fields_ = [("struct_size", u32), ("threads", u32), ("piece_bytes", u64), ("stores", u32),
                ("reserved", u32)]


class QuantDesc(Structure):
    _fields_ = [("struct_size", u32), ("scheme", u32), ("bits", u32), ("group_size", u32),
                ("scale_dtype", u32), ("bias_dtype", u32), ("special", u32),
                ("global_scale_mode", u32), ("rows", u64), ("cols", u64),
                ("data", c_void_p), ("data_bytes", u64), ("scales", c_void_p),
                ("scales_bytes", u64), ("biases", c_void_p), ("biases_bytes", u64),
                ("global_scale", c_void_p), ("global_scale_bytes", u64)]


class QuantizeOptions(Structure):
    _fields_ = [("struct_size", u32), ("threads", u32), ("importance", POINTER(c_float)),
                ("importance_count", u64), ("reserved", u32 * 2)]


# tblob_dequant_options.stores
STORES = {"auto": 0, "stream": 1, "cache": 2}


class VerifySummary(Structure):
    _fields_ = [("struct_size", u32), ("threads_used", u32), ("manifests", u64),
                ("manifests_bad", u64), ("blobs", u64), ("blobs_bad", u64),
                ("bytes_hashed", u64)]


D = POINTER(Diag)
M = c_void_p  # tblob_model*
S = c_void_p  # tblob_store*
ST = i32

# name -> (restype, argtypes). The diag argument is always last.
_SIGNATURES = {
    "tblob_version": (u32, []),
    "tblob_version_string": (c_char_p, []),
    "tblob_status_name": (c_char_p, [i32]),
    "tblob_status_message": (c_char_p, [i32]),
    "tblob_status_family": (u32, [i32]),
    "tblob_family_name": (c_char_p, [u32]),
    "tblob_features": (POINTER(c_char_p), [POINTER(c_size_t)]),
    "tblob_dtype_name": (c_char_p, [u32]),
    "tblob_dtype_bits": (u32, [u32]),
    "tblob_format_name": (c_char_p, [u32]),
    "tblob_quant_scheme_name": (c_char_p, [u32]),
    "tblob_kernel_active": (c_char_p, []),
    "tblob_model_open": (ST, [c_char_p, POINTER(OpenOptions), POINTER(M), D]),
    "tblob_model_open_memory": (ST, [c_void_p, c_size_t, POINTER(OpenOptions), POINTER(M), D]),
    "tblob_slm1_open_path": (ST, [c_char_p, POINTER(OpenOptions), POINTER(Slm1OpenOptions),
                                  POINTER(M), D]),
    "tblob_slm1_open_memory": (ST, [c_void_p, c_size_t, POINTER(OpenOptions),
                                    POINTER(Slm1OpenOptions), POINTER(M), D]),
    "tblob_model_close": (None, [M]),
    "tblob_model_format": (u32, [M]),
    "tblob_model_tensor_count": (u64, [M]),
    "tblob_model_file_count": (u32, [M]),
    "tblob_tensor_at": (ST, [M, u64, POINTER(TensorInfo), D]),
    "tblob_tensor_find": (ST, [M, c_char_p, c_size_t, POINTER(u64), D]),
    "tblob_tensor_data": (ST, [M, u64, POINTER(c_void_p), POINTER(u64), D]),
    "tblob_metadata_count": (u64, [M]),
    "tblob_tensor_dequantize": (ST, [M, u64, u32, u64, u64, c_void_p, c_size_t, D]),
    "tblob_tensor_quant_info": (ST, [M, u64, POINTER(QuantInfo), D]),
    "tblob_uqff_layer_info_at": (ST, [M, u64, POINTER(UqffLayerInfo), D]),
    "tblob_slm1_tensor_at": (ST, [M, u64, POINTER(Slm1TensorInfo), D]),
    "tblob_store_open": (ST, [c_char_p, POINTER(StoreOptions), POINTER(S), D]),
    "tblob_store_close": (None, [S]),
    "tblob_store_list": (ST, [S, STORE_ENTRY_FN, c_void_p, D]),
    "tblob_store_open_model": (ST, [S, c_char_p, c_size_t, POINTER(StoreOpenOptions),
                                    POINTER(M), D]),
    "tblob_store_verify": (ST, [S, c_char_p, c_size_t, POINTER(VerifyOptions),
                                POINTER(VerifySummary), D]),
}

_SIGNATURES.update({
    "tblob_model_file_path": (ST, [M, u32, POINTER(c_void_p), POINTER(c_size_t), D]),
    "tblob_metadata_at": (ST, [M, u64, POINTER(c_void_p), POINTER(c_size_t), POINTER(c_void_p),
                               POINTER(c_size_t), D]),
    "tblob_tensors_at": (ST, [M, u64, u64, POINTER(TensorInfo), c_size_t, D]),
    "tblob_tensor_dequant_size": (ST, [M, u64, u32, u64, u64, POINTER(u64), D]),
    "tblob_model_open_source": (ST, [POINTER(ByteSource), POINTER(OpenOptions), POINTER(M), D]),
    "tblob_tensor_read": (ST, [M, u64, u64, c_void_p, c_size_t, D]),
    "tblob_tensor_dequantize_opts": (ST, [M, u64, u32, u64, u64, c_void_p, c_size_t,
                                          POINTER(DequantOptions), D]),
    "tblob_quant_size": (ST, [POINTER(QuantDesc), D]),
    "tblob_quant_quantize": (ST, [POINTER(QuantDesc), u32, c_void_p, c_size_t,
                                  POINTER(QuantizeOptions), D]),
    "tblob_ggml_row_size": (ST, [u32, u64, POINTER(u64), D]),
    "tblob_ggml_quantize": (ST, [u32, u32, c_void_p, c_size_t, u64, u64, POINTER(c_float),
                                 c_void_p, c_size_t, POINTER(QuantizeOptions), D]),
})

# Typed metadata, kernel choice, store import and gc (issue 29's "jobs in the library").
class MetadataValue(Structure):
    _fields_ = [("struct_size", u32), ("value_type", u32), ("index", u64), ("key", c_void_p),
                ("key_len", c_size_t), ("uint_value", u64), ("int_value", i64),
                ("float_value", ctypes.c_double), ("string", c_void_p), ("string_len", c_size_t),
                ("element_type", u32), ("reserved", u32), ("count", u64), ("data", c_void_p),
                ("data_bytes", u64)]


METADATA_STRING_FN = ctypes.CFUNCTYPE(c_int, c_void_p, c_uint64, c_void_p, c_size_t)


class ImportProgress(Structure):
    _fields_ = [("struct_size", u32), ("reserved", u32), ("tensors_total", u64),
                ("tensors_done", u64), ("bytes_total", u64), ("bytes_done", u64)]


IMPORT_PROGRESS_FN = ctypes.CFUNCTYPE(c_int, c_void_p, POINTER(ImportProgress))


class ImportOptions(Structure):
    _fields_ = [("struct_size", u32), ("flags", u32), ("open", POINTER(OpenOptions)),
                ("progress", IMPORT_PROGRESS_FN), ("progress_user", c_void_p)]


class ImportResult(Structure):
    _fields_ = [("struct_size", u32), ("manifest_written", u32), ("layers", u64),
                ("tensors", u64), ("blobs_written", u64), ("blobs_reused", u64),
                ("bytes_written", u64)]


class GcEntry(Structure):
    _fields_ = [("struct_size", u32), ("kind", u32), ("file_name", c_void_p),
                ("file_name_len", c_size_t), ("size", u64), ("removed", i32), ("reserved", u32)]


GC_FN = ctypes.CFUNCTYPE(c_int, c_void_p, POINTER(GcEntry))


class GcOptions(Structure):
    _fields_ = [("struct_size", u32), ("flags", u32), ("on_entry", GC_FN), ("user", c_void_p),
                ("min_age_seconds", i64)]


class GcResult(Structure):
    _fields_ = [("struct_size", u32), ("reserved", u32), ("manifests", u64),
                ("referenced_blobs", u64), ("listed_files", u64), ("listed_bytes", u64),
                ("removed_files", u64), ("removed_bytes", u64)]


_SIGNATURES.update({
    "tblob_metadata_typed_count": (u64, [M]),
    "tblob_metadata_typed_at": (ST, [M, u64, POINTER(MetadataValue), D]),
    "tblob_metadata_typed_find": (ST, [M, c_char_p, c_size_t, POINTER(MetadataValue), D]),
    "tblob_metadata_array_get": (ST, [M, u64, u64, u64, c_void_p, c_size_t, D]),
    "tblob_metadata_array_strings": (ST, [M, u64, u64, u64, c_void_p, METADATA_STRING_FN,
                                          c_void_p, D]),
    "tblob_kernel_set": (ST, [c_char_p, D]),
    "tblob_ggml_kernel_name": (c_char_p, []),
    "tblob_store_import": (ST, [S, c_char_p, c_size_t, c_char_p, POINTER(ImportOptions),
                                POINTER(ImportResult), D]),
    "tblob_store_gc": (ST, [S, POINTER(GcOptions), POINTER(GcResult), D]),
})

# Every versioned struct the binding creates, with its init function (bindings cannot see the
# _INIT macros).
_INIT_FUNCS = {
    "Diag": "tblob_diag_init", "OpenOptions": "tblob_open_options_init",
    "TensorInfo": "tblob_tensor_info_init", "QuantInfo": "tblob_quant_info_init",
    "UqffLayerInfo": "tblob_uqff_layer_info_init",
    "Slm1OpenOptions": "tblob_slm1_open_options_init",
    "Slm1TensorInfo": "tblob_slm1_tensor_info_init", "StoreOptions": "tblob_store_options_init",
    "StoreOpenOptions": "tblob_store_open_options_init",
    "VerifyOptions": "tblob_verify_options_init", "VerifySummary": "tblob_verify_summary_init",
    "ByteSource": "tblob_byte_source_init", "DequantOptions": "tblob_dequant_options_init",
    "QuantDesc": "tblob_quant_desc_init", "QuantizeOptions": "tblob_quantize_options_init",
    "MetadataValue": "tblob_metadata_value_init", "ImportResult": "tblob_import_result_init",
    "ImportOptions": "tblob_import_options_init",
    "GcOptions": "tblob_gc_options_init", "GcResult": "tblob_gc_result_init",
}
for _cls, _fn in _INIT_FUNCS.items():
    _SIGNATURES[_fn] = (ST, [POINTER(globals()[_cls]), c_size_t])


def _library_names() -> list[str]:
    if sys.platform == "darwin":
        return ["libtensorblob.dylib", "libtensorblob.0.dylib"]
    if sys.platform == "win32":
        return ["tensorblob.dll", "libtensorblob.dll"]
    return ["libtensorblob.so", "libtensorblob.so.0"]


def library_path() -> str:
    """Where the shared library is loaded from: $TENSORBLOB_LIBRARY (a file, or a Meson build
    directory holding it), else the copy installed next to this package."""
    env = os.environ.get("TENSORBLOB_LIBRARY")
    here = Path(__file__).resolve().parent
    candidates: list[Path] = []
    if env:
        p = Path(env)
        candidates = [p / n for n in _library_names()] if p.is_dir() else [p]
    else:
        candidates = [here / n for n in _library_names()]
    for c in candidates:
        if c.is_file():
            return str(c)
    where = env if env else str(here)
    raise ImportError(f"tensorblob: shared library not found in {where} "
                      f"(set TENSORBLOB_LIBRARY to the library or its build directory)")


def _load() -> ctypes.CDLL:
    # CDLL (not PyDLL): every call releases the GIL while C runs.
    path = library_path()
    lib = ctypes.CDLL(path)
    missing = [n for n in _SIGNATURES if not hasattr(lib, n)]
    if missing:
        raise ImportError(f"tensorblob: {path} predates this package's API "
                          f"(missing {', '.join(missing[:3])})")
    for name, (res, args) in _SIGNATURES.items():
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args
    return lib


lib = _load()

_S = TypeVar("_S", bound=Structure)
_INIT_BY_CLASS = {globals()[c]: getattr(lib, f) for c, f in _INIT_FUNCS.items()}


def new(cls: Type[_S]) -> _S:
    """A versioned struct with the library's defaults, from its tblob_<struct>_init."""
    s = cls()
    st = _INIT_BY_CLASS[cls](ctypes.byref(s), ctypes.sizeof(cls))
    if st != 0:
        raise RuntimeError(f"{_INIT_FUNCS[cls.__name__]} returned {st}")
    return s


def text(ptr: Optional[int], length: int) -> str:
    """UTF-8 text borrowed from the library (pointer + length)."""
    if not length or not ptr:
        return ""
    return ctypes.string_at(ptr, length).decode("utf-8", "surrogateescape")


def cstr(b: Optional[bytes]) -> str:
    return b.decode("utf-8", "replace") if b else ""


__all__ = ["lib", "new", "text", "cstr", "library_path"]
