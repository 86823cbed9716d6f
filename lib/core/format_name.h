// The container format names tblob_format_name returns, for messages below the C boundary too.
#pragma once
#include <cstdint>

#include "tensorblob.h"

namespace tblob {

// nullptr for a number that is no format.
inline const char *format_name(uint32_t format) {
  switch (format) {
    case TBLOB_FORMAT_SAFETENSORS: return "safetensors";
    case TBLOB_FORMAT_SAFETENSORS_SHARDED: return "safetensors-sharded";
    case TBLOB_FORMAT_OLLAMA: return "ollama";
    case TBLOB_FORMAT_UQFF: return "uqff";
    case TBLOB_FORMAT_SLM1: return "slm1";
    case TBLOB_FORMAT_GGUF: return "gguf";
    default: return nullptr;
  }
}

}  // namespace tblob
