// The shared parts of the command line; see CommandLine.h.
#include "server/CommandLine.h"

#include "server/PythonDiscovery.h"

#include <cmath>
#include <cstdlib>
#include <iostream>

namespace stitch::server::cli {
namespace {

// The number `text` spells, whole; nullopt when it spells none.
std::optional<double> readNumber(const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(v)) return std::nullopt;
  return v;
}

[[noreturn]] void bad(const std::string& name, const std::string& what, const std::string& text) {
  throw UsageError(name + " takes " + what + ", not " + (text.empty() ? "an empty value" : text));
}

int whole(const std::string& name, const std::string& text, const char* what, long min) {
  const auto v = readNumber(text);
  if (!v || *v != std::floor(*v) || *v < static_cast<double>(min) || std::abs(*v) > 2147483647.0) bad(name, what, text);
  return static_cast<int>(*v);
}

// The command that was chosen ("stitchcuda optimize"), or the program's name before one was.
std::string commandName(const CLI::App& app) {
  std::string name = app.get_name();
  for (const CLI::App* at = &app; !at->get_subcommands().empty();) {
    at = at->get_subcommands().front();
    name += " " + at->get_name();
  }
  return name;
}

std::string oneLine(std::string text) {
  for (char& c : text)
    if (c == '\n' || c == '\r') c = ' ';
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

// What a CLI11 error says, in the words the host uses, after the name of the command it concerns.
std::pair<std::string, std::string> describe(const CLI::ParseError& e, const CLI::App& app) {
  const std::string what = e.what();
  if (dynamic_cast<const CLI::ExtrasError*>(&e)) {
    // Before the command (the program's own) or in it; the first is named.
    const auto before = app.remaining(false);
    const auto left = before.empty() ? app.remaining(true) : before;
    const std::string first = left.empty() ? "" : left.front();
    const std::string command = before.empty() ? commandName(app) : app.get_name();
    if (!first.empty() && first[0] == '-') {
      const std::string option = "unknown option " + first.substr(0, first.find('='));
      if (!before.empty() && !app.get_subcommands().empty())
        return {command, option + " (a command's options go after the command)"};
      return {command, option + " (" + command + " --help lists them)"};
    }
    if (app.get_subcommands().empty()) return {command, "unknown command " + first + " (" + command + " --help lists them)"};
    return {command, "unexpected argument " + first};
  }
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&e)) {
    // "--out: 1 required DIR missing": the option was last, with nothing after it.
    const auto colon = what.find(": ");
    if (colon != std::string::npos && what.find(" required ", colon) != std::string::npos &&
        what.size() >= 8 && what.compare(what.size() - 8, 8, " missing") == 0)
      return {commandName(app), what.substr(0, colon) + " takes a value"};
  }
  return {commandName(app), what};
}

// The help's layout: "Usage: stitchcuda optimize [OPTIONS] FILE" (a command's positional is never
// optional, though the parser checks it after the options, so that an unknown option is named first).
class HelpFormatter : public CLI::Formatter {
public:
  HelpFormatter() {
    label("SUBCOMMAND", "COMMAND");
    column_width(32);
  }
  std::string make_option_usage(const CLI::Option* opt) const override { return make_option_name(opt, true); }
};

}  // namespace

void configureApp(CLI::App& app, const std::string& version) {
  app.formatter(std::make_shared<HelpFormatter>());
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.require_subcommand(0, 1);
  app.set_version_flag("--version", version, "print the version and exit");
  app.set_help_flag("-h,--help", "print this help and exit");
}

double anyNumber(const std::string& name, const std::string& text) {
  const auto v = readNumber(text);
  if (!v) bad(name, "a number", text);
  return *v;
}

double nonNegativeNumber(const std::string& name, const std::string& text) {
  const double v = anyNumber(name, text);
  if (v < 0) bad(name, "a number >= 0", text);
  return v;
}

double positiveNumber(const std::string& name, const std::string& text) {
  const auto v = readNumber(text);
  if (!v || *v <= 0) bad(name, "a positive number", text);
  return *v;
}

int wholeNumber(const std::string& name, const std::string& text) {
  return whole(name, text, "a whole number", -2147483647L);
}

int nonNegativeWholeNumber(const std::string& name, const std::string& text) {
  return whole(name, text, "a whole number >= 0", 0);
}

int positiveWholeNumber(const std::string& name, const std::string& text) {
  return whole(name, text, "a positive whole number", 1);
}

std::string oneOf(const std::string& name, const std::string& text, const std::vector<std::string>& choices) {
  for (const auto& c : choices)
    if (text == c) return text;
  std::string list;
  for (std::size_t i = 0; i < choices.size(); ++i)
    list += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + choices[i];
  bad(name, list, text);
}

CLI::Option* addList(CLI::App& command, const std::string& name, std::vector<std::string>& target,
                     std::function<std::string(const std::string&, const std::string&)> read, const std::string& help,
                     const std::string& valueName) {
  // One value per occurrence (a FILE after it stays the command's), every occurrence kept.
  return command.add_option(name)
      ->description(help)
      ->type_name(valueName)
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->each([&target, read, name](const std::string& text) { target.push_back(read ? read(name, text) : text); });
}

std::vector<std::string> givenValues(const CLI::App& command, const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const auto& name : names)
    if (const CLI::Option* o = command.get_option_no_throw(name))
      for (const auto& value : o->results()) out.insert(out.end(), {name, value});
  return out;
}

const std::vector<std::string>& llmOptionNames() {
  static const std::vector<std::string> names = {"--api-key-env",   "--llm-token-budget", "--llm-usd-budget",
                                                 "--llm-price",     "--llm-max-tokens",   "--llm-temperature",
                                                 "--llm-timeout",   "--llm-attempts",     "--llm-stream"};
  return names;
}

void addSharedOptions(CLI::App& command, CommonOptions& common, unsigned which) {
  const std::string host = "Host options";
  if (which & kPython)
    addText(command, "--python", common.config.python, kPythonRule, "PYTHON")
        ->group(host);
  if (which & kJobs) {
    addValue(command, "--jobs-dir", common.config.jobsDir,
             [](const std::string&, const std::string& text) { return std::filesystem::path(text); },
             "one folder per job: its log, task snapshot and outputs (default under $XDG_STATE_HOME)", "DIR")
        ->group(host);
    addValue(command, "--ncu-runs", common.config.ncuRuns, nonNegativeWholeNumber,
             "Nsight Compute runs per job (0: kernel metrics from the trace only)", "N")
        ->group(host);
  }
  if (which & kPython)
    addValue(command, "--load-timeout", common.config.loadTimeoutSeconds, positiveNumber,
             "the most each stage of the model's own code may take: importing it, __init__, get_inputs, a forward "
             "(default 120); past it the job stops, naming the stage and the model's line",
             "SECONDS")
        ->group(host);
  if (which & kTransitions)
    addValue(command, "--record-transitions", common.config.recordTransitions,
             [](const std::string&, const std::string& text) { return std::optional<std::filesystem::path>(text); },
             "write each CODE/REFINE step with its rubric reward to DIR/JOB.transitions.jsonl (protocol/TRANSITIONS.md)",
             "DIR")
        ->group(host);
  if (which & kLogging) {
    addText(command, "--log", common.logFile, "the host's log, also to this file", "FILE")->group(host);
    addValue(command, "--log-level", common.logLevel,
             [](const std::string& name, const std::string& text) {
               LogLevel level = LogLevel::Info;
               parseLogLevel(oneOf(name, text, {"debug", "info", "warning", "error"}), level);
               return level;
             },
             "debug, info (default), warning or error", "L")
        ->group(host);
  }
  if (which & kLlm) {
    static const std::vector<std::pair<std::string, std::string>> kHelp = {
        {"VAR", "the environment variable holding the API key (default STITCHCUDA_API_KEY, then OPENAI_API_KEY or "
                "ANTHROPIC_API_KEY); the key itself is never read from the command line"},
        {"N", "the job's token budget"},
        {"USD", "the job's budget in USD (with --llm-price)"},
        {"IN,OUT", "USD per million input and output tokens"},
        {"N", "the most tokens an answer may have"},
        {"T", "the sampling temperature"},
        {"SECONDS", "the most one call may take"},
        {"N", "attempts per call"},
        {"on|off", "stream answers (default on)"}};
    const auto& names = llmOptionNames();
    // score asks a model only as its --judge; the other commands through --brain.
    const std::string group = command.get_name() == "score" ? "LLM options (--judge)" : "LLM options (--brain openai|anthropic)";
    for (std::size_t i = 0; i < names.size(); ++i)
      command.add_option(names[i])
          ->description(kHelp[i].second)
          ->type_name(kHelp[i].first)
          ->group(group)
          ->each([&config = common.config, name = names[i]](const std::string& text) {
            std::string error;
            if (!config.applyLlmOption(name, text, error) || !error.empty())
              throw UsageError(error.empty() ? "unknown option " + name : error);
          });
  }
}

const std::vector<std::string>& jobOptionNames() {
  static const std::vector<std::string> names = {"--brain",  "--model",      "--base-url",    "--allow-precision",
                                                 "--precision", "--layout", "--iterations", "--wall-seconds"};
  return names;
}

CLI::Option* addAllowPrecision(CLI::App& command, std::vector<std::string>& allowed) {
  return addList(
      command, "--allow-precision", allowed,
      [](const std::string& name, const std::string& text) { return oneOf(name, text, {"tf32", "fp16", "bf16"}); },
      "let a call also run in this lower precision where measured faster and within tolerance (repeatable)",
      "tf32|fp16|bf16");
}

namespace {
const char* kPrecisionHelp =
    "eager (default): each library call in the precision eager PyTorch uses for it; fp32: exact fp32 everywhere";
std::string precisionMode(const std::string& name, const std::string& text) {
  return oneOf(name, text, {"eager", "fp32"});
}
}  // namespace

template <class Text>
CLI::Option* addPrecision(CLI::App& command, Text& mode) {
  return addValue(command, "--precision", mode, precisionMode, kPrecisionHelp, "eager|fp32");
}
template CLI::Option* addPrecision(CLI::App&, std::string&);
template CLI::Option* addPrecision(CLI::App&, std::optional<std::string>&);

void addJobOptions(CLI::App& command, JobOptions& job) {
  const std::string group = "Job options";
  addValue(
      command, "--brain", job.brain,
      [](const std::string& name, const std::string& text) { return oneOf(name, text, {"builtin", "openai", "anthropic"}); },
      "who plans and writes the CUDA: the built-in optimizer (default) or an LLM", "builtin|openai|anthropic")
      ->group(group);
  addText(command, "--model", job.model, "the LLM's model name", "NAME")->group(group);
  addText(command, "--base-url", job.baseUrl, "the LLM endpoint (an OpenAI-compatible /v1, or Anthropic's)", "URL")
      ->group(group);
  addAllowPrecision(command, job.allowPrecision)->group(group);
  addPrecision(command, job.precision)->group(group);
  addValue(
      command, "--layout", job.layout,
      [](const std::string& name, const std::string& text) { return oneOf(name, text, {"auto", "nchw", "channels_last"}); },
      "the memory format of convolution networks: the planner's choice (auto, default), or nchw or channels_last "
      "to measure either",
      "auto|nchw|channels_last")
      ->group(group);
  addValue(command, "--iterations", job.budget.iterations,
           [](const std::string& name, const std::string& text) { return std::optional<int>(positiveWholeNumber(name, text)); },
           "the job's budget of candidates (then the best verified one is kept)", "N")
      ->group(group);
  addValue(command, "--wall-seconds", job.budget.wallSeconds,
           [](const std::string& name, const std::string& text) { return std::optional<double>(positiveNumber(name, text)); },
           "the job's budget of time", "S")
      ->group(group);
}

void addToleranceOptions(CLI::App& command, std::optional<double>& atol, std::optional<double>& rtol) {
  auto read = [](const std::string& name, const std::string& text) {
    return std::optional<double>(nonNegativeNumber(name, text));
  };
  addValue(command, "--atol", atol, read, "the verifier's absolute tolerance (default 1e-4)", "A");
  addValue(command, "--rtol", rtol, read, "the verifier's relative tolerance (default 1e-4)", "R");
}

std::optional<int> parse(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
    return std::nullopt;
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return 0;
  } catch (const CLI::CallForAllHelp&) {
    std::cout << app.help("", CLI::AppFormatMode::All);
    return 0;
  } catch (const CLI::CallForVersion& e) {
    std::cout << e.what() << "\n";
    return 0;
  } catch (const CLI::ParseError& e) {
    const auto [command, message] = describe(e, app);
    std::cerr << command << ": " << oneLine(message) << "\n";
    return 2;
  }
}

}  // namespace stitch::server::cli
