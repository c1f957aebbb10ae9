// A captured node issued again from Python (design §8, partial candidates): the node's own ATen
// overload through `torch.ops`, with its arguments as captured. The coder uses it for the
// operators the plan leaves in PyTorch and for the views they read.
#pragma once

#include "agents/ir/GraphIR.h"

#include <functional>

namespace stitch::agents::builtin {

// The node's overload as Python: aten::add.Tensor → torch.ops.aten.add.Tensor, aten::relu →
// torch.ops.aten.relu.default.
std::string torchOpExpr(const std::string& op);

// The schema name the dispatcher reports for `op` ("aten::add_.Tensor" → "aten::add_").
std::string schemaName(const std::string& op);

// Python source from the harness with its `{device}` placeholders replaced by `device`.
std::string withDevice(std::string py, const std::string& device);

// The call's argument list. `tensorExpr` names a tensor argument in Python (or fails); a device
// argument becomes `device`.
Outcome<std::string> torchCallArgs(const Node& node, const std::function<Outcome<std::string>(const std::string&)>& tensorExpr,
                                   const std::string& device);

}  // namespace stitch::agents::builtin
