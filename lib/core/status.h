// Internal status handling: tblob_status values plus a diagnostic writer that never
// allocates. Functions return Status; the C API copies it into the caller's tblob_diag.
#pragma once
#include <cstdint>
#include "tensorblob.h"
#include "core/name_text.h"

namespace tblob {

using Status = tblob_status;

// The text and family of a status number, from core/status_list.def (status_text.cpp). Any
// int is accepted: a C caller may pass a number outside the enum.
bool status_known(int s);           // in the list
const char *status_name(int s);     // "TBLOB_E_JSON"; "TBLOB_E_UNKNOWN_STATUS" if not listed
const char *status_message(int s);  // one line; "unknown status" if not listed
uint32_t status_family(int s);      // tblob_family; TBLOB_FAMILY_UNKNOWN if not listed
const char *family_name(uint32_t family);  // "io", "format", ...; nullptr past the enum

// Where an error happened. Kept by value; the message is formatted into the caller's
// diag only, never stored.
struct Diag {
  tblob_diag *out = nullptr;  // may be null: then only the status travels

  // Records an error (first one wins) and returns it, so callers can `return d.fail(...)`.
  // fmt is printf-style; %.*s with a length is how tensor names are printed.
  Status fail(Status s, uint64_t offset, int64_t tensor, const char *fmt, ...) const
      __attribute__((format(printf, 5, 6)));
  Status fail_plain(Status s) const;
  // Inline: every entry point calls it, including the lookups that cost a few dozen
  // instructions in all.
  void reset() const {
    if (!out || out->struct_size < sizeof(tblob_diag)) return;
    out->status = TBLOB_OK;
    out->offset = TBLOB_NO_OFFSET;
    out->tensor_index = -1;
    out->message[0] = '\0';
  }
};

// Writes a possibly-long name, truncated with "..." to fit diagnostics.
// Returns the number of bytes of name to print (for %.*s) and sets *ellipsis.
int clip_name(size_t name_len, const char **ellipsis);

// A name as a message shows it: its first 96 bytes with every control byte escaped (\0, \t,
// \n, \r, \xHH) and a backslash doubled, then "..." when clipped, so a NUL inside a name cannot
// end the message early and two different names never print alike. Print with
// "%.*s%s", len, text, ell (ell is kept empty for the callers written that way).
struct ShownName {
  char text[96 * 4 + 4];
  int len = 0;
  const char *ell = "";
  ShownName(const void *name, size_t name_len);
};
// The two arguments of a "%.*s" already in a format string, showing a name by that rule (the
// temporaries live until the end of the call).
#define TBLOB_NAME_ARGS(p, n) ::tblob::ShownName((p), (n)).len, ::tblob::ShownName((p), (n)).text

}  // namespace tblob
