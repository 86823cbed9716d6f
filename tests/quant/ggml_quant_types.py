"""The GGML types tblob_ggml_quantize is checked on: the one list the oracle test, the fixture
generator and (through the fixtures on disk) the fixture gtest share. Add a type here when its
quantizer lands, then regenerate the fixtures (gen_ggml_quant_fixtures.py).

Each entry: (name as ggml spells it, ggml type id, block elements, block bytes, importance),
importance True when ggml's quantize_<type> uses importance weights (the others ignore them).
"""

GGML_QUANT_TYPES = [
    ("q4_0", 2, 32, 18, True),
    ("q4_1", 3, 32, 20, True),
    ("q5_0", 6, 32, 22, True),
    ("q5_1", 7, 32, 24, True),
    ("q8_0", 8, 32, 34, False),
    ("q2_K", 10, 256, 84, True),
    ("q3_K", 11, 256, 110, True),
    ("q4_K", 12, 256, 144, True),
    ("q5_K", 13, 256, 176, True),
    ("q6_K", 14, 256, 210, True),
    ("q8_K", 15, 256, 292, False),  # quantize_row_q8_K_ref (not in ggml_quantize_chunk); zero bsums in zero blocks
    ("iq4_nl", 20, 32, 18, True),
    ("iq4_xs", 23, 256, 136, True),
    ("tq1_0", 34, 256, 54, False),
    ("tq2_0", 35, 256, 66, False),
    ("mxfp4", 39, 32, 17, False),
]

# gguf-py's gguf.quants.quantize implements these (without importance weights). gguf 0.19.0
# raises NotImplementedError for Q2_K..Q6_K, IQ4_NL and IQ4_XS (it only dequantizes them).
GGUF_PY_TYPES = {"q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "tq1_0", "tq2_0", "mxfp4"}
