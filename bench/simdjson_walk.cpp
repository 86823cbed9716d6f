// The whole-process baseline for bench/whole_process.sh: read a safetensors file's header
// and walk it with simdjson on-demand (bench/simdjson_walk.h), printing only a checksum.
//
//   simdjson_walk FILE
//
// Reads the 8-byte length and the N header bytes (not the data region), as a reader that
// only wants the table does. Exit status 1 on any error.
#include <cstdio>
#include <cstdint>

#include "simdjson_walk.h"

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: simdjson_walk FILE\n");
    return 2;
  }
  FILE *f = std::fopen(argv[1], "rb");
  if (!f) {
    std::perror(argv[1]);
    return 1;
  }
  unsigned char len8[8];
  if (std::fread(len8, 1, 8, f) != 8) {
    std::fprintf(stderr, "%s: shorter than 8 bytes\n", argv[1]);
    return 1;
  }
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | len8[i];
  if (n > 100000000) {
    std::fprintf(stderr, "%s: header length %llu above the format cap\n", argv[1],
                 static_cast<unsigned long long>(n));
    return 1;
  }
  simdjson::padded_string json(static_cast<size_t>(n));
  if (std::fread(json.data(), 1, n, f) != n) {
    std::fprintf(stderr, "%s: header truncated\n", argv[1]);
    return 1;
  }
  std::fclose(f);
  try {
    simdjson::ondemand::parser parser;
    const uint64_t sum = bench::simdjson_walk(parser, json);
    std::printf("%llu\n", static_cast<unsigned long long>(sum));
  } catch (const simdjson::simdjson_error &e) {
    std::fprintf(stderr, "%s: %s\n", argv[1], e.what());
    return 1;
  }
  return 0;
}
