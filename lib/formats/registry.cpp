// The format registry: one line per format (its build option decides whether it is here).
// Order is detection order: path claims, then probes on the first bytes, then the table
// claims after a safetensors scan; the base container comes last.
#include "formats/registry.h"

#include <cstring>

#include "formats/safetensors/safetensors.h"
#include "tblob_config.h"
#if TBLOB_HAVE_OLLAMA
#include "formats/ollama/ollama.h"
#endif
#if TBLOB_HAVE_UQFF
#include "formats/uqff/uqff.h"
#endif
#if TBLOB_HAVE_SLM1
#include "formats/slm1/dequant.h"
#endif
#if TBLOB_HAVE_GGUF
#include "formats/gguf/gguf.h"
#endif

namespace tblob {
namespace {

const FormatOps *const kRegistry[] = {
#if TBLOB_HAVE_OLLAMA
    &ollama::kFormat,
#endif
#if TBLOB_HAVE_UQFF
    &uqff::kFormat,
#endif
#if TBLOB_HAVE_SLM1
    &slm1::kFormat,
#endif
#if TBLOB_HAVE_GGUF
    &gguf::kFormat,
#endif
    &safetensors::kShardedFormat,
    &safetensors::kFormat,
};

// Magics of the optional formats, for the message when one is left out of the build.
struct Magic {
  const char bytes[5];
  const char *name;
  bool built;
  uint32_t inputs;  // the inputs detection would offer it
};
constexpr Magic kMagics[] = {
    {"GGUF", "GGUF", TBLOB_HAVE_GGUF != 0, kInputPath | kInputMemory | kInputSource},
    {"SLM1", "SLM1", TBLOB_HAVE_SLM1 != 0, kInputPath | kInputSource},
};

}  // namespace

const FormatOps *const *format_registry(size_t *count) {
  *count = sizeof(kRegistry) / sizeof(kRegistry[0]);
  return kRegistry;
}

Status left_out_format(const uint8_t *head, size_t len, OpenInput input, const Diag &diag) {
  for (const Magic &mg : kMagics)
    if (!mg.built && (mg.inputs & input) && len >= 4 && std::memcmp(head, mg.bytes, 4) == 0)
      return diag.fail(TBLOB_E_FEATURE_DISABLED, 0, -1, "a %s file, and this build has no %s support", mg.name,
                       mg.name);
  return TBLOB_OK;
}

}  // namespace tblob
