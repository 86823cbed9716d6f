// The K-quant row quantizers' entries of the table (quant_table.cpp), as X(ggml type id,
// function): filled in by the K-quant files; empty until they exist.
#pragma once

#define TBLOB_GGML_QUANT_KQUANT_TYPES(X)
