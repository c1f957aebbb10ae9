// Each family file's entries, collected by OpRegistry.cpp; nothing else includes this.
#pragma once

#include "agents/builtin/ops/OpDef.h"

namespace stitch::agents::builtin::ops {

struct Registry {
  std::vector<OpDef> ops;
  std::vector<KernelFn> fns;
  // An operator that is also the kernel function of its name, without parameters.
  OpDef& simple(const std::string& name, Family family, std::function<std::string(const Operands&)> cuda);
  void fn(const std::string& name, std::function<std::string(const Operands&)> cuda) {
    fns.push_back({name, std::move(cuda)});
  }
};

void addUnaryOps(Registry& r);
void addBinaryOps(Registry& r);
void addReductionOps(Registry& r);
void addNormalizationOps(Registry& r);
void addFillOps(Registry& r);
void addLibraryOps(Registry& r);
void addViewOps(Registry& r);
void addCoordinateOps(Registry& r);
void addCompositeOps(Registry& r);

}  // namespace stitch::agents::builtin::ops
