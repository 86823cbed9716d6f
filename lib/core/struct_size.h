// "Does the caller's struct hold this field": every public struct begins with struct_size,
// and fields appended in a later version are read or written only when the caller's struct
// is large enough to have them. The one spelling of that test.
#pragma once
#include <cstddef>
#include <type_traits>

#define TBLOB_COVERS(s, field)                                                                  \
  ((s)->struct_size >= offsetof(std::remove_cv_t<std::remove_pointer_t<decltype(s)>>, field) + \
                           sizeof((s)->field))
