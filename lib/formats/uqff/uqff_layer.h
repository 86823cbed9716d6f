// One UQFF layer: its entries (grouped by key over every shard), the structural check that
// mirrors `mistralrs uqff verify` (the entry set must be exactly its family's), and the
// family checks that tie the stored sizes to the logical shape.
#pragma once
#include <cstdarg>
#include <cstddef>
#include <cstdint>

#include "table/model.h"
#include "formats/uqff/uqff_row.h"

namespace tblob {
namespace uqff {

constexpr uint32_t kMaxLayerRank = 8;

// Problems of one report entry (layers keep the first kMaxProblems, counting the rest).
class ProblemList {
 public:
  void add(Severity sev, Status st, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
  void vadd(Severity sev, Status st, const char *fmt, va_list ap);
  uint32_t count() const { return n_; }
  uint32_t errors() const { return errors_; }
  uint32_t warnings() const { return warnings_; }
  uint32_t dropped() const { return dropped_; }
  const Problem *items() const { return p_; }
  const Problem *first_error() const;

 private:
  Problem p_[kMaxProblems];
  uint32_t n_ = 0, errors_ = 0, warnings_ = 0, dropped_ = 0;
};

struct Group {
  const char *key = nullptr;
  size_t key_len = 0;
  const TensorDesc *e[kSufCount] = {};
  uint32_t mask = 0;
  const TensorDesc *unknown[4] = {};
  uint32_t n_unknown = 0;
};

struct Resolved {
  LayerInfo info;
  uint32_t rank = 0;
  uint64_t dims[kMaxLayerRank] = {};
  const TensorDesc *weight = nullptr;  // null when the layer has no `.weight`
  const TensorDesc *bias = nullptr;
};

const uint8_t *entry_data(const tblob_model *m, const TensorDesc &t);

// Checks one key's entries. True when the layer is usable (problems may still hold
// warnings); false with at least one error otherwise. `out` is filled as far as known.
bool resolve_layer(const tblob_model *m, const Group &g, Resolved *out, ProblemList *probs);

}  // namespace uqff
}  // namespace tblob
