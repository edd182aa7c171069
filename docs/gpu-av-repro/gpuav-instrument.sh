#!/bin/sh
# gpuav-instrument.sh MODE IN.spv OUT.spv
# Runs on IN.spv the SPIRV-Tools passes that GPU-assisted validation of
# Vulkan-ValidationLayers 1.3.239 runs in GpuAssisted::InstrumentShader
# (layers/gpu_validation.cpp), linked against Debian 12's SPIRV-Tools 2023.1
# static libraries (apt install spirv-tools g++). MODE:
#   layer          InstBindlessCheckPass(7, id, di, di, oob, oob) + AggressiveDCE(true)
#                  + InstBuffAddrCheckPass(7, id)   (what the layer hands the driver)
#   bindless | adce | buffaddr | bindless+adce | adce+buffaddr   (subsets)
# Env: INSTR_SHADER_ID (default 0: the layer numbers modules 0, 1, ... per
# device), INSTR_NO_OOB=1 (khronos_validation.gpuav_buffer_oob = false),
# INSTR_DESC_INDEXING=1 (descriptor indexing features enabled).
# Descriptor set 7 = maxBoundDescriptorSets - 1 on lavapipe.
set -eu
tool=${GPUAV_INSTR_TOOL:-/tmp/gpuav-instrument}
if [ ! -x "$tool" ]; then
  cat > "$tool.cpp" <<'CPP'
#include <spirv-tools/optimizer.hpp>
#include <spirv-tools/libspirv.hpp>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>
using namespace spvtools;
int main(int argc, char** argv) {
  if (argc != 4) { std::cerr << "usage: instr MODE in out\n"; return 2; }
  std::string mode = argv[1];
  std::ifstream f(argv[2], std::ios::binary);
  std::vector<char> b((std::istreambuf_iterator<char>(f)), {});
  std::vector<uint32_t> in(b.size() / 4);
  memcpy(in.data(), b.data(), in.size() * 4);
  Optimizer opt(SPV_ENV_VULKAN_1_3);
  opt.SetMessageConsumer([](spv_message_level_t l, const char*, const spv_position_t& p, const char* m) {
    std::cerr << "spirv-opt msg level " << l << " at " << p.index << ": " << m << "\n";
  });
  uint32_t shader_id = getenv("INSTR_SHADER_ID") ? atoi(getenv("INSTR_SHADER_ID")) : 0;
  bool oob = getenv("INSTR_NO_OOB") == nullptr;       // khronos_validation.gpuav_buffer_oob (default true)
  bool di = getenv("INSTR_DESC_INDEXING") != nullptr; // descriptor_indexing (false: the tests enable none of it)
  if (mode == "layer" || mode == "bindless" || mode == "bindless+adce")
    opt.RegisterPass(CreateInstBindlessCheckPass(7, shader_id, di, di, oob, oob));
  if (mode == "layer" || mode == "adce" || mode == "bindless+adce" || mode == "adce+buffaddr")
    opt.RegisterPass(CreateAggressiveDCEPass(true));
  if (mode == "layer" || mode == "buffaddr" || mode == "adce+buffaddr")
    opt.RegisterPass(CreateInstBuffAddrCheckPass(7, shader_id));
  OptimizerOptions oo;
  oo.set_run_validator(true);
  ValidatorOptions vo;
  vo.SetScalarBlockLayout(true);
  oo.set_validator_options(vo);
  std::vector<uint32_t> out;
  if (!opt.Run(in.data(), in.size(), &out, oo)) { std::cerr << "optimizer failed\n"; return 1; }
  std::ofstream o(argv[3], std::ios::binary);
  o.write((const char*)out.data(), out.size() * 4);
  return 0;
}
CPP
  g++ -O1 -std=c++17 -o "$tool" "$tool.cpp" -lSPIRV-Tools-opt -lSPIRV-Tools
fi
exec "$tool" "$@"
