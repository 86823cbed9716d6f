// GGML block dequantization through the public entry point (tblob_ggml_dequantize, UQFF's C
// API): gguf-py fixtures (tests/data/ggml) and statuses. The kernels themselves, every set
// against the scalar reference and the fixtures, are tested without any container in
// tests/dequant/test_ggml_kernels.cpp (suite `dequant`, also run under qemu-aarch64).
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "dequant/ggml/ggml.h"
#include "tensorblob.h"

namespace g = tblob::ggml;

namespace {

std::string data_dir() { return std::string(TBLOB_UQFF_DATA_DIR) + "/../ggml/"; }

std::string slurp(const std::string &p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The public entry point (the process's active GGML set) equals gguf.quants.dequantize.
TEST(Ggml, PublicEntryPointMatchesGguf) {
  std::ifstream m(data_dir() + "MANIFEST");
  std::string line;
  int seen = 0;
  while (std::getline(m, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    uint32_t id;
    std::string name;
    uint64_t nb, elements;
    ls >> id >> name >> nb >> elements;
    const std::string blocks = slurp(data_dir() + name + ".blocks");
    const std::string want = slurp(data_dir() + name + ".f32");
    ASSERT_EQ(want.size(), elements * 4) << name;
    std::vector<float> got(elements);
    tblob_diag d = TBLOB_DIAG_INIT;
    ASSERT_EQ(tblob_ggml_dequantize(id, blocks.data(), blocks.size(), elements, TBLOB_DTYPE_F32, got.data(),
                                    elements * 4, &d),
              TBLOB_OK)
        << name << ": " << d.message;
    EXPECT_EQ(std::memcmp(got.data(), want.data(), want.size()), 0) << name << " " << tblob_ggml_kernel_name();
    ++seen;
  }
  EXPECT_GE(seen, 24);
}

TEST(Ggml, Statuses) {
  const std::string q40(18 * 2, '\0');
  std::vector<float> out(64);
  tblob_diag d = TBLOB_DIAG_INIT;
  EXPECT_EQ(tblob_ggml_dequantize(g::kTypeQ4_0, q40.data(), q40.size(), 64, TBLOB_DTYPE_F32, out.data(), 8, &d),
            TBLOB_E_BUFFER_TOO_SMALL);
  EXPECT_NE(std::strstr(d.message, "256"), nullptr) << d.message;
  EXPECT_EQ(tblob_ggml_dequantize(4, q40.data(), q40.size(), 64, TBLOB_DTYPE_F32, out.data(), 256, &d),
            TBLOB_E_UNSUPPORTED);
  EXPECT_EQ(tblob_ggml_dequantize(g::kTypeQ4_0, q40.data(), q40.size() - 1, 64, TBLOB_DTYPE_F32, out.data(), 256, &d),
            TBLOB_E_TENSOR_SIZE);
  EXPECT_EQ(tblob_ggml_dequantize(g::kTypeQ4_0, q40.data(), q40.size(), 64, TBLOB_DTYPE_F32, out.data(), 256, &d), TBLOB_OK);
  const std::string kn = tblob_ggml_kernel_name();
  EXPECT_TRUE(kn == "scalar" || kn == "avx2" || kn == "neon") << kn;
}

}  // namespace
