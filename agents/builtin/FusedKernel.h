// One generated kernel as the coder sees it: an iteration space, the values computed over it
// (loads, constants, elementwise functions, reductions over one contiguous range of dims), the
// tensors it reads and the ones it writes. KernelBuilder lowers ATen nodes into it.
#pragma once

#include "agents/builtin/GraphIR.h"

#include <cstdint>
#include <string>
#include <vector>

namespace stitch::agents::builtin {

enum class ValueOp { Input, Constant, Unary, Binary, Select, Reduce };
enum class ReduceKind { Sum, Max, Min, Prod };

struct KernelValue {
  ValueOp op = ValueOp::Constant;
  std::string fn;               // Unary/Binary: the emitter's function name ("gelu", "add", "gt", ...)
  std::vector<int> args;        // operand value indices
  std::vector<double> params;   // Constant: {value}; Unary/Binary: function parameters (alpha, ...)
  int input = -1;               // Input: index into FusedKernel::inputs
  ReduceKind reduce = ReduceKind::Sum;
  std::vector<int> dimMap;      // for each of the value's own dims: the iteration dim, or -1 (size 1)
};

struct KernelInput {
  std::string tensorId;          // the tensor the ABI passes (a graph input, parameter or buffer)
  std::vector<int64_t> strides;  // per iteration dim, in elements; 0 where the input broadcasts
  int64_t offset = 0;            // elements from the tensor's data pointer (views with an offset)
  bool linear = false;           // offset + linear iteration index: eligible for 16-byte loads
};

struct KernelOutput {
  std::string tensorId;
  int value = -1;
  bool perRow = false;  // written once per reduced row rather than once per element
  std::vector<int64_t> shape;
};

struct FusedKernel {
  std::vector<int64_t> shape;  // the iteration space
  int reduceBegin = -1;        // reduced iteration dims [reduceBegin, reduceEnd); -1: elementwise
  int reduceEnd = -1;
  std::vector<KernelValue> values;
  std::vector<KernelInput> inputs;
  std::vector<KernelOutput> outputs;
  std::vector<int> nodeIds;

  bool reduces() const { return reduceBegin >= 0; }
  int64_t numel() const;
  int64_t outer() const;    // product of the dims before the reduced range
  int64_t reduced() const;  // product of the reduced dims
  int64_t inner() const;    // product of the dims after it
  bool variesOverReduced(int value) const;
};

}  // namespace stitch::agents::builtin
