// http:// and https:// files for the CLI: a tblob_byte_source over libcurl that fetches only
// the byte ranges the library asks for (HTTP Range requests), and siblings (the shards of a
// sharded index) resolved relative to the URL. Built only with libcurl (meson -Dcurl); without
// it http_available() is false and every URL is refused with a clear message.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tensorblob.h"

namespace tbcli {

struct Args;
class JsonWriter;

// True when PATH starts with http:// or https:// (case-insensitive scheme).
bool is_url(const char *path);
// False in a build without libcurl.
bool http_available();

// Extra request headers ("Name: value") for every request of every URL opened after the call.
void http_set_headers(const std::vector<const char *> &headers);
// PEM file of the CAs that https servers' certificates are checked against, in place of
// libcurl's default store (nullptr: the default). Verification itself is never turned off.
void http_set_ca_file(const char *path);

// Opens the model at URL through a byte source: the first request (bytes 0-7) gives the size
// and proves the server answers range requests; only what the library asks is fetched.
tblob_status http_open_model(const char *url, const tblob_open_options *options, tblob_model **out,
                             tblob_diag *diag);

// Bytes of response bodies received and requests sent, by every source of this process.
struct HttpStats {
  uint64_t bytes = 0;
  uint64_t requests = 0;
};
HttpStats http_stats();
// What the server did wrong in the latest failed request ("" when nothing failed): the library
// sees only a status, so the CLI prints this beside it.
std::string http_last_error();
// `,"fetched":{"bytes":N,"requests":M}`: what was fetched since `before`.
void json_fetched(JsonWriter &w, const HttpStats &before);

// Every command that takes files calls this before opening any: applies --header and --cacert (or CURL_CA_BUNDLE) and refuses
// URLs among the first file_args arguments in a build without libcurl. Returns -1 to go on,
// else the exit code (2, after a message; with --json also an error object on stdout).
int prepare_remote(const Args &a, size_t file_args);

// tblob_model_open for a path or a URL (opened through http_open_model).
tblob_status open_model_any(const char *path, const tblob_open_options *options, tblob_model **out,
                            tblob_diag *diag);

}  // namespace tbcli
