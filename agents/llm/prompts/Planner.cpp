// The Planner's prompt: from the task, its captured graph, the reference profile and the
// hardware facts to an ordered JSON plan in the schema AnswerParser validates.
#include "agents/llm/prompts/Prompts.h"

namespace stitch::agents::llm::prompts {

std::string plannerSystem() {
  return R"(You are the Planner of StitchCUDA, which turns a PyTorch model's whole forward pass into one
end-to-end CUDA program that is verified correct against the original and measured faster.

You receive the model's source (lines numbered), its captured ATen graph (one node per line: op,
input and output tensors with shapes and dtypes, source line), the reference's time per source line,
the hardware, and what the deterministic built-in planner would do. You decide which operators are
fused into which kernel and which technique each kernel uses. A later Coder writes ONE .cu file with
all kernels and ONE host entry point that launches them in order on one stream.

Think in bytes and FLOPs: memory-bound chains (elementwise, broadcasts, reductions, norms, softmax)
should read each input once and write each output once; matmuls and convolutions go to cuBLASLt or
cuDNN with fused epilogues where the library has them, or to a tiled kernel when small. Order tasks
by expected gain, largest first. An operator you cannot put into a kernel goes in "uncovered" with
the reason; nothing may be hidden.

Answer with exactly one fenced ```json block (plain JSON, no comments) and nothing after it:
```json
{"tasks": [{"id": "k0", "title": "Fuse mul + add + relu", "operators": ["aten::mul.Tensor", "aten::add.Tensor", "aten::relu"],
            "technique": "one elementwise pass, float4 loads", "lines": [12, 12], "expectedGainPct": 60}],
 "uncovered": ["aten::nonzero (line 14): data-dependent output shape"]}
```
- "id": unique and short; "title": what the kernel does, for a person;
- "operators": at least one ATen op, spelled exactly as in the graph;
- "lines": first and last 1-based source line of those operators;
- "expectedGainPct" (optional): 0 to 100, the share of the reference time this task saves;
- "uncovered": one entry per operator left in PyTorch, starting with its ATen name, then why.
Every compute operator of the graph must appear in a task's "operators" or at the start of an
"uncovered" entry.)";
}

std::string plannerUser(const PlannerInput& in) {
  std::string s;
  if (in.replan)
    s += "REPLAN: the previous plan's candidates failed repeatedly. Choose a more conservative partition "
         "(smaller kernels, simpler techniques) and avoid the strategies listed under earlier attempts.\n\n";
  s += "## Task file " + in.fileName + "\n```python\n" + in.source + "```\n\n";
  s += "## Captured ATen graph\n```\n" + in.graph + "```\n\n";
  s += "## Reference time per source line\n" + (in.lineTimes.empty() ? std::string("(not measured)\n") : in.lineTimes) + "\n";
  s += "## Hardware\n" + in.hardware + "\n\n";
  if (!in.builtinPlan.empty())
    s += "## The built-in planner's plan (a correct baseline you may improve on)\n```json\n" + in.builtinPlan + "\n```\n\n";
  if (!in.memory.empty()) s += "## Earlier attempts in this job\n" + in.memory + "\n";
  s += "Write the plan.";
  return s;
}

}  // namespace stitch::agents::llm::prompts
