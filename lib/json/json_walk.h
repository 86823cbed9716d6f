// Small strict JSON walkers over json_lex for the side files the formats read (sharded
// checkpoint indexes, quantization configs, UQFF reports and configs): objects and arrays
// visited in place, no allocation. Depth follows skip_value: `depth` is the nesting
// level of the container's parent (0 for a top-level value), a container at level
// >= max_depth fails with kDepth, and callbacks receive their values at level depth + 1.
#pragma once
#include <cstdint>

#include "json/json_lex.h"

namespace tblob {
namespace json {

// Calls fn(key, cursor) for each member of the object at c.p (after whitespace), the cursor
// at the member's value; fn must consume the value (skip_value(c, depth + 1, ...) for one
// it does not want).
template <class Fn>
bool walk_object(Cursor &c, uint32_t depth, uint32_t max_depth, Fn fn) {
  skip_ws(c);
  if (c.p >= c.end || *c.p != '{') return c.fail(Err::kGrammar, c.p, "expected an object");
  if (depth + 1 >= max_depth) return c.fail(Err::kDepth, c.p, "nested too deep");
  ++c.p;
  skip_ws(c);
  if (c.p < c.end && *c.p == '}') {
    ++c.p;
    return true;
  }
  for (;;) {
    skip_ws(c);
    if (c.p >= c.end || *c.p != '"') return c.fail(Err::kGrammar, c.p, "expected a key");
    StringSlice k;
    if (!scan_string(c, &k)) return false;
    skip_ws(c);
    if (c.p >= c.end || *c.p != ':') return c.fail(Err::kGrammar, c.p, "expected ':'");
    ++c.p;
    skip_ws(c);
    if (!fn(k, c)) return false;
    skip_ws(c);
    if (c.p < c.end && *c.p == ',') {
      ++c.p;
      continue;
    }
    if (c.p < c.end && *c.p == '}') {
      ++c.p;
      return true;
    }
    return c.fail(Err::kGrammar, c.p, "expected ',' or '}'");
  }
}

// Calls fn(cursor) for each element of the array at c.p; fn must consume it.
template <class Fn>
bool walk_array(Cursor &c, uint32_t depth, uint32_t max_depth, Fn fn) {
  skip_ws(c);
  if (c.p >= c.end || *c.p != '[') return c.fail(Err::kGrammar, c.p, "expected an array");
  if (depth + 1 >= max_depth) return c.fail(Err::kDepth, c.p, "nested too deep");
  ++c.p;
  skip_ws(c);
  if (c.p < c.end && *c.p == ']') {
    ++c.p;
    return true;
  }
  for (;;) {
    skip_ws(c);
    if (!fn(c)) return false;
    skip_ws(c);
    if (c.p < c.end && *c.p == ',') {
      ++c.p;
      continue;
    }
    if (c.p < c.end && *c.p == ']') {
      ++c.p;
      return true;
    }
    return c.fail(Err::kGrammar, c.p, "expected ',' or ']'");
  }
}

inline bool string_value(Cursor &c, StringSlice *s) {
  skip_ws(c);
  if (c.p >= c.end || *c.p != '"') return c.fail(Err::kGrammar, c.p, "expected a string");
  return scan_string(c, s);
}

// An unsigned integer value; *ok false (value consumed) when it is another JSON value.
inline bool u64_value(Cursor &c, uint32_t depth, uint32_t max_depth, uint64_t *v, bool *ok) {
  skip_ws(c);
  *ok = false;
  if (c.p < c.end && (*c.p == '-' || (*c.p >= '0' && *c.p <= '9'))) {
    NumKind k;
    if (!scan_number(c, &k, v)) return false;
    *ok = k == NumKind::kUnsigned;
    return true;
  }
  return skip_value(c, depth, max_depth);
}

// true/false; anything else is consumed and leaves *ok false.
inline bool bool_value(Cursor &c, uint32_t depth, uint32_t max_depth, bool *v, bool *ok) {
  skip_ws(c);
  *ok = false;
  if (c.p < c.end && *c.p == 't') {
    if (!scan_literal(c, "true", 4)) return false;
    *v = true;
    *ok = true;
    return true;
  }
  if (c.p < c.end && *c.p == 'f') {
    if (!scan_literal(c, "false", 5)) return false;
    *v = false;
    *ok = true;
    return true;
  }
  return skip_value(c, depth, max_depth);
}

// The whole buffer must be one value followed only by whitespace.
inline bool at_end(Cursor &c) {
  skip_ws(c);
  if (c.p != c.end) return c.fail(Err::kGrammar, c.p, "trailing characters");
  return true;
}

}  // namespace json
}  // namespace tblob
