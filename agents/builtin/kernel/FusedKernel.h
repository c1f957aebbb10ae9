// One generated kernel as the coder sees it: an iteration space, the values computed over it
// (loads, constants, elementwise functions, reductions or one scan over one contiguous range of
// dims, pooling windows), the tensors it reads and the ones it writes. KernelBuilder lowers ATen
// nodes into it.
#pragma once

#include "agents/ir/GraphIR.h"

#include <cstdint>
#include <string>
#include <vector>

namespace stitch::agents::builtin {

// ArgIndex: the int64 index (within the reduced range, row-major) that an ArgMax/ArgMin reduction
// chose; Pool: a max/avg window over a strided input; Scan: an inclusive scan along the kernel's
// scanned dim; Concat: a concatenation of external tensors, the element of the one piece whose
// range along the concatenated dim holds the element's coordinate; Triangle: triu/tril, args[0]
// where the element's (row, col) — the iteration dims of its last two dims — keep col - row >=
// params[0] (params[1] = 1, upper) or <= params[0] (params[1] = 0, lower), else zero; Pad:
// constant padding, the Input value args[0] (read with its offset shifted back by the padding)
// where the element lies inside the padded tensor, params[0] elsewhere; Gather: a row of a table
// chosen by an index (embedding, `table[index]`): the Input value args[0] read through its strides
// for the row's own dims, plus the int64 value args[1] (a negative one counted from the end of the
// params[0] rows) times the table's row stride params[1].
// The type the generated kernels compute floating point values in and read and write floating
// point tensors as: the one place the float32 assumption is written (KernelBuilder refuses any
// other floating point tensor by comparing with it).
inline constexpr DType kComputeType = DType::Float32;

enum class ValueOp { Input, Constant, Unary, Binary, Select, Reduce, ArgIndex, Pool, Scan, Concat, Triangle, Pad, Gather };
enum class ReduceKind { Sum, Max, Min, Prod, ArgMax, ArgMin };

// A pooling window over the trailing `kernel.size()` dims of a window input (its own strides,
// same rank as the output; the leading dims map one to one). PyTorch's semantics: padding never
// wins a max, NaN does; the avg divisor follows count_include_pad and divisor_override.
// With `weights` set it is a depthwise convolution instead: the window's sum of input times the
// output channel's weights (padding contributes zero).
// With a `prologue`, the elements are computed where the window reads them instead of loaded: the
// elementwise producer of the pooled tensor (a convolution's bias and activation), whose result
// is then never written. Its values have the kernel's form: Input values read window inputs at
// the element's coordinates, Unary/Binary/Select values combine earlier ones, the last is the
// element. The Pool value's `input` is then -1.
struct KernelValue;
struct PoolSpec {
  bool max = true;
  int weights = -1;                    // kernel input holding [C, 1, k...] weights, or -1: pooling
  std::vector<int64_t> weightStrides;  // the weights' strides: channel, then one per window dim
  std::vector<int64_t> inSize;  // the input's spatial sizes
  std::vector<int64_t> kernel, stride, padding, dilation;
  bool countIncludePad = true;
  int64_t divisorOverride = 0;  // 0: none
  std::vector<KernelValue> prologue;
  // The iteration dims the window slides over, in order, where they are not the trailing ones (a
  // channels-last iteration order, MemoryFormat.h), and the channel's dim (the weights' row).
  std::vector<int> windowDims;
  int channelDim = 1;
  bool operator==(const PoolSpec&) const;  // defined where KernelValue is complete
};

struct KernelValue {
  ValueOp op = ValueOp::Constant;
  std::string fn;               // Unary/Binary: the kernel function, by its registry name (ops::findFn)
  std::vector<int> args;        // operand value indices
  std::vector<double> params;   // Constant: {value}; Unary/Binary: function parameters (alpha, ...)
  int input = -1;               // Input: index into FusedKernel::inputs
  ReduceKind reduce = ReduceKind::Sum;  // Reduce and Scan (Sum or Prod)
  std::vector<int> dimMap;      // for each of the value's own dims: the iteration dim, or -1 (size 1)
  bool integer = false;         // an int64 value (an ArgIndex or a view of one)
  PoolSpec pool;                // Pool: the window; `input` is the window input
  // Concat: `args` are Input values, one per piece, each read with its offset shifted back by the
  // piece's start, so that it is indexed by the concatenation's own coordinates; piece i holds
  // coordinates [ends[i-1], ends[i]) along iteration dim `concatDim`. Only the chosen piece is
  // loaded: another piece's load at that coordinate would fall outside it.
  int concatDim = -1;
  std::vector<int64_t> concatEnds;
  // Pad: per dim of the value, the padding before it and the padded tensor's size along it.
  std::vector<int64_t> padBefore, padInner;
  bool operator==(const KernelValue&) const = default;
};

struct KernelInput {
  std::string tensorId;          // the tensor the ABI passes (a graph input, parameter or buffer)
  std::vector<int64_t> strides;  // per iteration dim, in elements; 0 where the input broadcasts
  int64_t offset = 0;            // elements from the tensor's data pointer (views with an offset)
  bool linear = false;           // offset + linear iteration index: eligible for 16-byte loads
  Named<DType> dtype = kComputeType;  // kComputeType, bool (read as 0/1) or int64
  bool window = false;           // read by a Pool value through its own strides, not per element
  bool operator==(const KernelInput&) const = default;
};

// A tensor the kernel writes, element (or row) i of `shape` in row-major order at `tensorId`'s
// data + offset + Σ coordinate·stride. Contiguous (no strides) unless the tensor is a piece of a
// concatenation: its producer then writes it straight into its slice of the concatenation's
// result, `tensorId` being that result.
struct KernelOutput {
  std::string tensorId;
  int value = -1;
  bool perRow = false;  // written once per reduced row rather than once per element
  std::vector<int64_t> shape;
  Named<DType> dtype = kComputeType;  // kComputeType, int64 (indices) or bool
  std::vector<int64_t> strides;   // per dim of `shape`, in elements; empty: contiguous
  int64_t offset = 0;             // elements from the tensor's data pointer
  bool strided() const { return !strides.empty(); }
  // 16-byte stores stay whole: four consecutive elements (from an index that is a multiple of 4)
  // are consecutive and 16-byte aligned in the tensor, given an aligned data pointer.
  bool vectorStores() const;
  bool operator==(const KernelOutput&) const = default;
};

struct FusedKernel {
  std::vector<int64_t> shape;  // the iteration space
  int reduceBegin = -1;        // reduced (or scanned) iteration dims [reduceBegin, reduceEnd); -1: elementwise
  int reduceEnd = -1;
  bool scan = false;           // the range is scanned (one Scan value), not reduced
  std::vector<KernelValue> values;
  std::vector<KernelInput> inputs;
  std::vector<KernelOutput> outputs;
  std::vector<int> nodeIds;
  // The batch as a run-time parameter (RuntimeRows.h): dim 0 of `shape` is this many times the
  // rows a call is given; 0 where the kernel's shape is fixed.
  int64_t perRow = 0;

  bool operator==(const FusedKernel&) const = default;
  bool reduces() const { return reduceBegin >= 0 && !scan; }
  bool scans() const { return reduceBegin >= 0 && scan; }
  int64_t numel() const;
  int64_t outer() const;    // product of the dims before the reduced range
  int64_t reduced() const;  // product of the reduced dims
  int64_t inner() const;    // product of the dims after it
  bool variesOverReduced(int value) const;
};

}  // namespace stitch::agents::builtin
