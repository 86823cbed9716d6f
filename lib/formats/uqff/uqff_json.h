// Small strict JSON walkers over json_lex for the UQFF assets (uqff_report.json,
// config.json): objects and arrays visited in place, no allocation.
#pragma once
#include <cstdint>

#include "json/json_lex.h"

namespace tblob {
namespace uqff {
namespace js {

using json::Cursor;
using json::StringSlice;

// Calls fn(key, cursor) for each member of the object at c.p; fn must consume the value
// (or call skip). depth is the object's own nesting level.
template <class Fn>
bool walk_object(Cursor &c, uint32_t depth, uint32_t max_depth, Fn fn) {
  json::skip_ws(c);
  if (c.p >= c.end || *c.p != '{') return c.fail(json::Err::kGrammar, c.p, "expected an object");
  if (depth >= max_depth) return c.fail(json::Err::kDepth, c.p, "nested too deep");
  ++c.p;
  json::skip_ws(c);
  if (c.p < c.end && *c.p == '}') {
    ++c.p;
    return true;
  }
  for (;;) {
    json::skip_ws(c);
    if (c.p >= c.end || *c.p != '"') return c.fail(json::Err::kGrammar, c.p, "expected a key");
    StringSlice k;
    if (!json::scan_string(c, &k)) return false;
    json::skip_ws(c);
    if (c.p >= c.end || *c.p != ':') return c.fail(json::Err::kGrammar, c.p, "expected ':'");
    ++c.p;
    json::skip_ws(c);
    if (!fn(k, c)) return false;
    json::skip_ws(c);
    if (c.p < c.end && *c.p == ',') {
      ++c.p;
      continue;
    }
    if (c.p < c.end && *c.p == '}') {
      ++c.p;
      return true;
    }
    return c.fail(json::Err::kGrammar, c.p, "expected ',' or '}'");
  }
}

// Calls fn(cursor) for each element of the array at c.p; fn must consume it.
template <class Fn>
bool walk_array(Cursor &c, uint32_t depth, uint32_t max_depth, Fn fn) {
  json::skip_ws(c);
  if (c.p >= c.end || *c.p != '[') return c.fail(json::Err::kGrammar, c.p, "expected an array");
  if (depth >= max_depth) return c.fail(json::Err::kDepth, c.p, "nested too deep");
  ++c.p;
  json::skip_ws(c);
  if (c.p < c.end && *c.p == ']') {
    ++c.p;
    return true;
  }
  for (;;) {
    json::skip_ws(c);
    if (!fn(c)) return false;
    json::skip_ws(c);
    if (c.p < c.end && *c.p == ',') {
      ++c.p;
      continue;
    }
    if (c.p < c.end && *c.p == ']') {
      ++c.p;
      return true;
    }
    return c.fail(json::Err::kGrammar, c.p, "expected ',' or ']'");
  }
}

inline bool skip(Cursor &c, uint32_t depth, uint32_t max_depth) { return json::skip_value(c, depth, max_depth); }

inline bool string_value(Cursor &c, StringSlice *s) {
  json::skip_ws(c);
  if (c.p >= c.end || *c.p != '"') return c.fail(json::Err::kGrammar, c.p, "expected a string");
  return json::scan_string(c, s);
}

// An unsigned integer value; *ok false (value consumed) when it is another JSON value.
inline bool u64_value(Cursor &c, uint32_t depth, uint32_t max_depth, uint64_t *v, bool *ok) {
  json::skip_ws(c);
  *ok = false;
  if (c.p < c.end && (*c.p == '-' || (*c.p >= '0' && *c.p <= '9'))) {
    json::NumKind k;
    if (!json::scan_number(c, &k, v)) return false;
    *ok = k == json::NumKind::kUnsigned;
    return true;
  }
  return json::skip_value(c, depth, max_depth);
}

// true/false; anything else is consumed and leaves *ok false.
inline bool bool_value(Cursor &c, uint32_t depth, uint32_t max_depth, bool *v, bool *ok) {
  json::skip_ws(c);
  *ok = false;
  if (c.p < c.end && *c.p == 't') {
    if (!json::scan_literal(c, "true", 4)) return false;
    *v = true;
    *ok = true;
    return true;
  }
  if (c.p < c.end && *c.p == 'f') {
    if (!json::scan_literal(c, "false", 5)) return false;
    *v = false;
    *ok = true;
    return true;
  }
  return json::skip_value(c, depth, max_depth);
}

// The whole buffer must be one value followed only by whitespace.
inline bool at_end(Cursor &c) {
  json::skip_ws(c);
  if (c.p != c.end) return c.fail(json::Err::kGrammar, c.p, "trailing characters");
  return true;
}

}  // namespace js
}  // namespace uqff
}  // namespace tblob
