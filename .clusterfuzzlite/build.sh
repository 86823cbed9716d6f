#!/bin/bash -eu
# ClusterFuzzLite / OSS-Fuzz entry point: dependencies first (installed into /usr/local with
# the fuzzing compilers and flags), then every harness by fuzz/oss-fuzz-build.sh.

# simdjson as a static library built with $CXX $CXXFLAGS (libc++ under OSS-Fuzz).
cmake -S "$SRC/simdjson" -B "$WORK/simdjson-build" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" -DCMAKE_CXX_FLAGS="$CXXFLAGS" \
  -DBUILD_SHARED_LIBS=OFF -DSIMDJSON_DEVELOPER_MODE=OFF -DCMAKE_INSTALL_PREFIX=/usr/local
cmake --build "$WORK/simdjson-build" -j"$(nproc)"
cmake --install "$WORK/simdjson-build"

bash "$SRC/tensorblob/fuzz/oss-fuzz-build.sh"
