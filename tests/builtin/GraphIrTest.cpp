// The graph's vocabularies (agents/ir/IrTypes.h): dtype, role and node kind are read once by
// parseGraph into enums, and a name outside them is refused there, naming the field and the name.
#include "agents/ir/GraphIR.h"

#include <gtest/gtest.h>

using namespace stitch::agents::ir;

namespace {

nlohmann::json graphWith(const std::string& dtype, const std::string& role, const std::string& kind) {
  return nlohmann::json::parse(R"({"schema": "stitchcuda.graph/1", "inputs": ["x"], "outputs": ["y"],
      "tensors": [{"id": "x", "shape": [4], "strides": [1], "dtype": ")" + dtype + R"(", "role": ")" + role + R"("},
                  {"id": "y", "shape": [4], "strides": [1], "dtype": "float32", "role": "intermediate", "producer": 1}],
      "nodes": [{"id": 1, "op": "aten::relu", "kind": ")" + kind + R"(",
                 "inputs": [{"name": "self", "tensor": "x"}], "outputs": ["y"]}]})");
}

}  // namespace

TEST(GraphIr, ReadsDtypeRoleAndKindAsEnums) {
  auto g = parseGraph(graphWith("bfloat16", "parameter", "inplace"));
  ASSERT_TRUE(g.ok()) << g.error().message;
  const TensorInfo* x = g.value().tensor("x");
  EXPECT_EQ(x->dtype.value(), DType::BFloat16);
  EXPECT_EQ(x->role.value(), Role::Parameter);
  EXPECT_EQ(g.value().nodes.at(0).kind.value(), NodeKind::Inplace);
  EXPECT_EQ(x->elementBytes(), 2);
  EXPECT_EQ("dtype=torch." + x->dtype, "dtype=torch.bfloat16");  // reads back as PyTorch's name
}

TEST(GraphIr, RefusesAnUnknownDtypeRoleOrKindByName) {
  auto dtype = parseGraph(graphWith("float33", "input", "compute"));
  ASSERT_FALSE(dtype.ok());
  EXPECT_NE(dtype.error().message.find("unknown dtype 'float33'"), std::string::npos) << dtype.error().message;
  auto role = parseGraph(graphWith("float32", "weight", "compute"));
  ASSERT_FALSE(role.ok());
  EXPECT_NE(role.error().message.find("unknown role 'weight'"), std::string::npos) << role.error().message;
  auto kind = parseGraph(graphWith("float32", "input", "fused"));
  ASSERT_FALSE(kind.ok());
  EXPECT_NE(kind.error().message.find("unknown kind 'fused'"), std::string::npos) << kind.error().message;
}

// A name written in code is checked like a captured one: a misspelt one throws instead of
// comparing unequal for ever.
TEST(GraphIr, AMisspeltNameInCodeThrows) {
  TensorInfo t;
  t.role = "buffer";
  EXPECT_TRUE(t.role == Role::Buffer);
  EXPECT_TRUE(t.role == "buffer");
  EXPECT_THROW((void)(t.role == "bufer"), std::invalid_argument);
  EXPECT_THROW((void)(t.dtype != "float"), std::invalid_argument);
}
