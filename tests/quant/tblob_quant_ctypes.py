"""ctypes access to tblob_ggml_quantize / tblob_ggml_row_size / tblob_kernel_set for the
GGML quantization tests."""
import ctypes

F32, F16, BF16 = 10, 6, 7


class Diag(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("status", ctypes.c_int32), ("offset", ctypes.c_uint64),
                ("tensor_index", ctypes.c_int64), ("message", ctypes.c_char * 256)]


class QuantizeOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("threads", ctypes.c_uint32),
                ("importance", ctypes.POINTER(ctypes.c_float)), ("importance_count", ctypes.c_uint64),
                ("reserved", ctypes.c_uint32 * 2)]


class Lib:
    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        L = self.lib
        L.tblob_ggml_quantize.restype = ctypes.c_int
        L.tblob_ggml_quantize.argtypes = [ctypes.c_uint32, ctypes.c_uint32, ctypes.c_void_p, ctypes.c_size_t,
                                          ctypes.c_uint64, ctypes.c_uint64, ctypes.c_void_p, ctypes.c_void_p,
                                          ctypes.c_size_t, ctypes.POINTER(QuantizeOptions), ctypes.POINTER(Diag)]
        L.tblob_ggml_row_size.restype = ctypes.c_int
        L.tblob_ggml_row_size.argtypes = [ctypes.c_uint32, ctypes.c_uint64, ctypes.POINTER(ctypes.c_uint64),
                                          ctypes.POINTER(Diag)]
        L.tblob_kernel_set.restype = ctypes.c_int
        L.tblob_kernel_set.argtypes = [ctypes.c_char_p, ctypes.POINTER(Diag)]
        L.tblob_kernel_active.restype = ctypes.c_char_p

    @staticmethod
    def diag():
        d = Diag()
        d.struct_size = ctypes.sizeof(Diag)
        return d

    def kernel_sets(self):
        """The kernel sets this host runs (tblob_kernel_set accepts them)."""
        ok = []
        for name in ("scalar", "avx2", "avx512", "neon"):
            if self.lib.tblob_kernel_set(name.encode(), None) == 0:
                ok.append(name)
        self.lib.tblob_kernel_set(None, None)
        return ok

    def set_kernels(self, name):
        d = self.diag()
        s = self.lib.tblob_kernel_set(name.encode() if name else None, ctypes.byref(d))
        if s != 0:
            raise RuntimeError(f"tblob_kernel_set({name}): {s} {d.message.decode()}")

    def row_size(self, ggml_type, cols):
        n = ctypes.c_uint64()
        d = self.diag()
        s = self.lib.tblob_ggml_row_size(ggml_type, cols, ctypes.byref(n), ctypes.byref(d))
        return s, n.value

    def quantize(self, ggml_type, src_dtype, src, rows, cols, importance=None, threads=1, misalign=0,
                 dst_bytes=None):
        """Returns (status, bytes, message). src: bytes of the input."""
        s, rs = self.row_size(ggml_type, cols)
        if s != 0:
            return s, b"", "row size"
        need = rows * rs
        n = need if dst_bytes is None else dst_bytes
        buf = ctypes.create_string_buffer(len(src) + 8)
        ctypes.memmove(ctypes.addressof(buf) + misalign, src, len(src))
        out = ctypes.create_string_buffer(n + 1)
        w = None
        keep = None
        if importance is not None:
            keep = (ctypes.c_float * len(importance)).from_buffer_copy(importance.tobytes())
            w = ctypes.cast(keep, ctypes.c_void_p)
        opt = QuantizeOptions()
        opt.struct_size = ctypes.sizeof(QuantizeOptions)
        opt.threads = threads
        d = self.diag()
        st = self.lib.tblob_ggml_quantize(ggml_type, src_dtype, ctypes.addressof(buf) + misalign, len(src), rows, cols,
                                          w, out, n, ctypes.byref(opt), ctypes.byref(d))
        return st, out.raw[:need], d.message.decode(errors="replace")
