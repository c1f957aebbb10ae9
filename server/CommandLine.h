// The host's one command-line parser (CLI11): `main.cpp` builds one CLI::App with a subcommand per
// command; each command adds its own options (HeadlessOptimize, HeadlessVerify, ScoreCommand,
// BenchCommand), and the options several commands share are defined here once. Every option takes
// `--name value` and `--name=value`; `--help` on any command prints its options (exit 0); an unknown
// option or a bad value is exit 2 with one line naming it.
#pragma once

#include "protocol/StitchTypes.h"
#include "server/Config.h"
#include "server/Logger.h"

#include <CLI/CLI.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace stitch::server::cli {

// A bad value or a wrong combination of options: its message is the whole line said (after
// "stitchcuda COMMAND: "), and the command exits 2.
class UsageError : public CLI::ParseError {
public:
  explicit UsageError(std::string message) : CLI::ParseError("UsageError", std::move(message), 2) {}
};

// The host's settings that the command line sets, whatever the command.
struct CommonOptions {
  HostConfig config;
  std::optional<std::string> logFile;
  LogLevel logLevel = LogLevel::Info;
};

// Which of the shared options a command takes.
enum Shared : unsigned {
  kLogging = 1,       // --log FILE, --log-level L
  kPython = 2,        // --python PYTHON, --load-timeout SECONDS
  kJobs = 4,          // --jobs-dir DIR, --ncu-runs N
  kLlm = 8,           // --api-key-env VAR, --llm-*
  kTransitions = 16,  // --record-transitions DIR
  kAllShared = kLogging | kPython | kJobs | kLlm | kTransitions,
};
void addSharedOptions(CLI::App& command, CommonOptions& common, unsigned which);
// The LLM options' names (--api-key-env and the --llm-* options).
const std::vector<std::string>& llmOptionNames();

// The job's options: `optimize` takes them, `bench` checks them the same way and passes them on to
// each of its optimize runs.
struct JobOptions {
  std::string brain = "builtin";
  std::optional<std::string> model;
  std::optional<std::string> baseUrl;
  std::vector<std::string> allowPrecision;
  std::string precision = "eager";
  std::string layout = "auto";
  protocol::Budget budget;
};
void addJobOptions(CLI::App& command, JobOptions& job);
const std::vector<std::string>& jobOptionNames();

// --atol A, --rtol R: the verifier's tolerances (optimize and verify).
void addToleranceOptions(CLI::App& command, std::optional<double>& atol, std::optional<double>& rtol);
// --allow-precision P (repeatable) and --precision M, checked as a job checks them.
CLI::Option* addAllowPrecision(CLI::App& command, std::vector<std::string>& allowed);
// `mode`: a std::string (with its default) or a std::optional<std::string> (unset: the job's default).
template <class Text>
CLI::Option* addPrecision(CLI::App& command, Text& mode);

// Reads an option's text; each throws UsageError "NAME takes ..., not TEXT".
double anyNumber(const std::string& name, const std::string& text);
double nonNegativeNumber(const std::string& name, const std::string& text);
double positiveNumber(const std::string& name, const std::string& text);
int wholeNumber(const std::string& name, const std::string& text);
int nonNegativeWholeNumber(const std::string& name, const std::string& text);
int positiveWholeNumber(const std::string& name, const std::string& text);
// `text` itself when it is one of `choices`; the message lists them.
std::string oneOf(const std::string& name, const std::string& text, const std::vector<std::string>& choices);

// An option with a value, read by `read(name, text)` at each occurrence; the last one is kept.
template <class T, class Read>
CLI::Option* addValue(CLI::App& command, const std::string& name, T& target, Read read, const std::string& help,
                      const std::string& valueName) {
  return command.add_option(name)->description(help)->type_name(valueName)->each([&target, read, name](const std::string& text) {
    target = read(name, text);
  });
}
// An option with a text value, kept as given (the last occurrence); `target` a std::string or a
// std::optional<std::string>.
template <class Text>
CLI::Option* addText(CLI::App& command, const std::string& name, Text& target, const std::string& help,
                     const std::string& valueName) {
  return addValue(command, name, target, [](const std::string&, const std::string& text) { return text; }, help, valueName);
}
// A repeatable option: every occurrence's value, read by `read` (nullptr: as given), in order.
CLI::Option* addList(CLI::App& command, const std::string& name, std::vector<std::string>& target,
                     std::function<std::string(const std::string&, const std::string&)> read, const std::string& help,
                     const std::string& valueName);

// What each occurrence of the options `names` said, as `--name value` pairs (for passing them on).
std::vector<std::string> givenValues(const CLI::App& command, const std::vector<std::string>& names);

// Sets up the program's App before its commands are added: the help's layout (positionals are always
// needed), a repeated option keeps its last value, one command at most, and --version.
void configureApp(CLI::App& app, const std::string& version);

// Parses the whole command line. nullopt: run the command chosen; otherwise the exit status, after
// printing the help (0), the version (0), or one line naming what is wrong (2).
std::optional<int> parse(CLI::App& app, int argc, char** argv);

}  // namespace stitch::server::cli
