// The LLM brain (design §9) behind the loop's Brain interface: the Planner and the Coder are
// model calls with the project's prompts, answers parsed strictly and sent back with the exact
// error a bounded number of times; a memory of attempts goes into every prompt; the built-in
// brain's plan and candidate are offered as a starting point when it can make one.
#pragma once

#include "agents/builtin/BuiltinBrain.h"
#include "agents/llm/AttemptMemory.h"
#include "agents/llm/ChatClient.h"
#include "agents/llm/LlmSettings.h"
#include "agents/llm/UsageMeter.h"

#include <memory>

namespace stitch::agents::llm {

class LlmBrain final : public loop::Brain {
public:
  // `log(level, phase, message)` reaches the job's log; `meter` outlives the brain so the job can
  // report what was spent.
  using Log = std::function<void(const std::string& level, const std::string& phase, const std::string& message)>;
  LlmBrain(const LlmSettings& settings, CancelToken cancel, Log log, std::shared_ptr<UsageMeter> meter);

  loop::BrainPlan plan(const BaselineFacts& facts, const JobRequest& request, bool replan) override;
  std::optional<loop::Draft> next(const std::optional<loop::Feedback>& last, const std::filesystem::path& dir,
                                  std::string& error) override;
  protocol::Range editRange() const override;
  std::string editText(const program::ProgramNames& program, std::optional<double> speedupEager) const override;

private:
  struct Previous {
    std::string id;
    std::string strategy;
    std::string cuda;
    std::string python;
  };

  // Asks, parses, and sends an invalid answer back with its error up to settings' answerRepairs
  // times. The parse function returns the error text, or "" when it took the answer.
  bool converse(const std::string& role, const std::string& phase, ChatRequest chat,
                const std::function<std::string(const std::string&)>& parse, std::string& error);
  std::string startingPoint();

  LlmSettings settings_;
  CancelToken cancel_;
  Log log_;
  std::shared_ptr<UsageMeter> meter_;
  ChatClient client_;
  AttemptMemory memory_;
  builtin::BuiltinBrain builtin_;
  bool builtinReady_ = false;
  std::optional<std::string> builtinStart_;  // computed once per plan

  std::filesystem::path jobDir_;
  std::string fileName_;
  std::string source_;
  std::string graph_;
  std::string planJson_;
  bool gpu_ = false;
  builtin::ForwardSource forward_;
  std::optional<Previous> previous_;
  int drafts_ = 0;
};

}  // namespace stitch::agents::llm
