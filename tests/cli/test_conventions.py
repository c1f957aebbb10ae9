"""Every command's command line, parsed by the host's one CLI11 parser: `--help` on each command names its
options and exits 0; `--name=value` and `--name value` alike; an unknown option, a bad value or a missing
value exits 2 with one line that names it; the shared options (host, logging, LLM) are the same on every
command. Runs on this CPU machine; needs the host binary in STITCHCUDA_BIN."""
from __future__ import annotations

import json
import subprocess
import sys
import unittest

from tests.cli import BIN, REPO, stitchcuda

HOST = ("--python", "--load-timeout", "--jobs-dir", "--ncu-runs", "--log", "--log-level")
SHARED = HOST + ("--api-key-env", "--llm-token-budget", "--llm-usd-budget", "--llm-price", "--llm-max-tokens",
                 "--llm-temperature", "--llm-timeout", "--llm-attempts", "--llm-stream")
JOB = ("--brain", "--model", "--base-url", "--allow-precision", "--precision", "--layout", "--iterations",
       "--wall-seconds")
OPTIONS = {
    "serve": ("--input-style", "--input-mirror", "--record-transitions") + SHARED,
    "optimize": ("FILE", "--out", "--kernels-folder", "--json", "--atol", "--rtol", "--gpu", "--record-transitions")
                + JOB + SHARED,
    "verify": ("--reference", "--candidate", "--json", "--atol", "--rtol", "--trials", "--allow-precision",
               "--precision", "--no-timing", "--kernelbench", "--seed") + HOST,
    "score": ("--reference", "--candidate", "--verdict", "--previous", "--feedback", "--previous-verdict", "--plan", "--profile",
              "--allow-precision", "--precision", "--json", "--batch", "--jobs", "--out", "--table", "--gpus", "--weight",
              "--judge", "--judge-model", "--judge-base-url") + SHARED,
    "bench": ("DIR", "--out", "--timeout", "--no-gpu", "--gpus", "--resume", "--deadline", "--every", "--slice", "--jobs",
              "--expect", "--write-expect") + JOB + SHARED,
    "serve-reward": ("--port", "--host", "--gpus", "--jobs", "--queue", "--max-body", "--token-env", "--root") + HOST,
}
TASK = "tests/harness/fixtures/small_elementwise.py"
CANDIDATE = "tests/harness/honest/elementwise_chain"
# A command line each command accepts as far as its parser goes (a task, a suite, both files for verify).
VALID = {
    "serve": (),
    "optimize": ("examples/mlp.py",),
    "verify": ("--reference", TASK, "--candidate", CANDIDATE),
    "score": ("--reference", TASK, "--candidate", CANDIDATE),
    "bench": ("tests/fixtures/tasks",),
    "serve-reward": ("--port", "0"),
}


class CliTestCase(unittest.TestCase):
    def assertUsageError(self, done: subprocess.CompletedProcess, *named: str) -> None:
        """Exit 2, nothing on stdout, and one line on stderr that names each of `named`."""
        context = f"stdout: {done.stdout!r}\nstderr: {done.stderr!r}"
        self.assertEqual(done.returncode, 2, context)
        self.assertEqual(done.stdout, "", context)
        lines = done.stderr.splitlines()
        self.assertEqual(len(lines), 1, context)
        for name in named:
            self.assertIn(name, lines[0], context)


@unittest.skipUnless(BIN, "set STITCHCUDA_BIN to the stitchcuda binary")
class HelpTest(CliTestCase):
    def test_help_on_every_command_names_its_options_and_exits_zero(self) -> None:
        for command, options in OPTIONS.items():
            for flag in ("--help", "-h"):
                with self.subTest(command=command, flag=flag):
                    done = stitchcuda(command, flag)
                    self.assertEqual(done.returncode, 0, done.stderr)
                    self.assertEqual(done.stderr, "")
                    self.assertIn(f"stitchcuda {command}", done.stdout)
                    for option in options:
                        self.assertIn(option, done.stdout)

    def test_help_after_other_options_still_prints_the_help(self) -> None:
        done = stitchcuda("optimize", "examples/mlp.py", "--atol", "1e-3", "--help")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("--kernels-folder", done.stdout)

    def test_the_program_lists_its_commands_and_its_version(self) -> None:
        done = subprocess.run([BIN, "--help"], capture_output=True, text=True, timeout=60, cwd=REPO)
        self.assertEqual(done.returncode, 0, done.stderr)
        for command in OPTIONS:
            self.assertIn(command, done.stdout)
        done = subprocess.run([BIN, "--version"], capture_output=True, text=True, timeout=60, cwd=REPO)
        self.assertEqual((done.returncode, done.stdout), (0, "stitchcuda 0.1.0\n"))
        done = subprocess.run([BIN], capture_output=True, text=True, timeout=60, cwd=REPO)
        self.assertEqual(done.returncode, 2)
        self.assertIn("serve", done.stdout)


@unittest.skipUnless(BIN, "set STITCHCUDA_BIN to the stitchcuda binary")
class UsageErrorTest(CliTestCase):
    def test_an_unknown_option_names_itself_on_every_command(self) -> None:
        for command, valid in VALID.items():
            for unknown in (("--frobnicate",), ("--frobnicate=3",), ("--frobnicate", "3")):
                with self.subTest(command=command, unknown=unknown):
                    done = stitchcuda(command, *valid, *unknown)
                    self.assertUsageError(done, "unknown option --frobnicate")
                    self.assertNotIn("=3", done.stderr)

    def test_an_unknown_command_or_a_second_file_is_named(self) -> None:
        done = subprocess.run([BIN, "frobnicate"], capture_output=True, text=True, timeout=60, cwd=REPO)
        self.assertUsageError(done, "unknown command frobnicate")
        self.assertUsageError(stitchcuda("optimize", "examples/mlp.py", "examples/elementwise_chain.py"),
                              "unexpected argument examples/elementwise_chain.py")

    def test_a_missing_value_is_a_usage_error_naming_the_option(self) -> None:
        cases = [("serve", "--input-mirror"), ("optimize", "--out"), ("optimize", "--atol"), ("verify", "--atol"),
                 ("verify", "--trials"), ("score", "--weight"), ("score", "--out"), ("bench", "--timeout"),
                 ("bench", "--slice")] + [(command, option) for command in VALID for option in ("--python", "--log-level")]
        for command, option in cases:
            with self.subTest(command=command, option=option):
                self.assertUsageError(stitchcuda(command, *VALID[command], option), f"{option} takes a value")

    def test_a_missing_required_argument_is_a_usage_error(self) -> None:
        self.assertUsageError(stitchcuda("optimize", "--json"), "which file?")
        self.assertUsageError(stitchcuda("verify", "--reference", TASK), "--candidate")
        self.assertUsageError(stitchcuda("verify", "--candidate", CANDIDATE), "--reference")
        self.assertUsageError(stitchcuda("score", "--reference", TASK), "--candidate")
        self.assertUsageError(stitchcuda("score", "--batch", "rows.jsonl"), "--out")
        self.assertUsageError(stitchcuda("bench", "--gpus", "2"), "which suite?")
        self.assertUsageError(stitchcuda("serve-reward", "--gpus", "2"), "--port P is required")
        self.assertUsageError(stitchcuda("serve-reward", "--port", "0", "--host", "0.0.0.0"), "--token-env")

    def test_a_bad_value_is_a_usage_error_naming_the_option_and_the_value(self) -> None:
        cases = {
            ("serve", "--input-style=fancy"): "--input-style takes standard or delimited, not fancy",
            ("serve", "--log-level", "loud"): "--log-level takes debug, info, warning or error, not loud",
            ("serve", "--ncu-runs=many"): "--ncu-runs takes a whole number >= 0, not many",
            ("serve", "--llm-stream", "maybe"): "--llm-stream takes on or off",
            ("serve", "--llm-token-budget=-5"): "--llm-token-budget needs a non-negative number",
            ("optimize", "examples/mlp.py", "--brain=gpt"): "--brain takes builtin, openai or anthropic, not gpt",
            ("optimize", "examples/mlp.py", "--rtol", "lots"): "--rtol takes a number, not lots",
            ("optimize", "examples/mlp.py", "--wall-seconds=0"): "--wall-seconds takes a positive number, not 0",
            ("optimize", "examples/mlp.py", "--layout", "nhwc"): "--layout takes auto, nchw or channels_last, not nhwc",
            ("verify", *VALID["verify"], "--trials", "0"): "--trials takes a positive whole number, not 0",
            ("verify", *VALID["verify"], "--seed=1.5"): "--seed takes a whole number, not 1.5",
            ("verify", *VALID["verify"], "--allow-precision", "fp8"): "--allow-precision takes tf32, fp16 or bf16, not fp8",
            ("verify", *VALID["verify"], "--rtol=-1"): "--rtol takes a number >= 0, not -1",
            ("score", *VALID["score"], "--gpus", "0"): "--gpus takes a positive whole number, not 0",
            ("score", *VALID["score"], "--weight=speed"): "--weight takes NAME=NUMBER, not speed",
            ("score", *VALID["score"], "--judge", "gemini"): "--judge takes openai or anthropic, not gemini",
            ("score", *VALID["score"], "--precision=tf32"): "--precision takes eager or fp32, not tf32",
            ("bench", "tests/fixtures/tasks", "--gpus=two"): "--gpus takes a positive whole number, not two",
            ("bench", "tests/fixtures/tasks", "--deadline", "-1"): "--deadline takes a positive number, not -1",
            ("bench", "tests/fixtures/tasks", "--no-gpu", "--slice=3/2"): "--slice takes N/M with 1 <= N <= M, not 3/2",
            ("bench", "tests/fixtures/tasks", "--no-gpu", "--every", "0"): "--every takes a positive whole number, not 0",
            ("serve-reward", "--port", "70000"): "--port takes a port from 0 to 65535, not 70000",
            ("serve-reward", "--port=0", "--queue", "-1"): "--queue takes a whole number >= 0, not -1",
            ("serve-reward", "--port=0", "--gpus", "2", "--jobs", "2"): "--gpus and --jobs",
        }
        for args, message in cases.items():
            with self.subTest(args=args):
                self.assertUsageError(stitchcuda(*args), message)

    def test_bench_options_of_the_other_run_are_refused(self) -> None:
        suite = VALID["bench"]
        self.assertUsageError(stitchcuda("bench", *suite, "--every", "2"), "--every", "--no-gpu")
        self.assertUsageError(stitchcuda("bench", *suite, "--no-gpu", "--gpus=2"), "--gpus", "--no-gpu")
        self.assertUsageError(stitchcuda("bench", *suite, "--no-gpu", "--brain", "openai"), "--brain", "--no-gpu")
        self.assertUsageError(stitchcuda("bench", *suite, "--no-gpu", "--every=2", "--slice=1/2"), "--every", "--slice")
        self.assertUsageError(stitchcuda("bench", *suite, "--record-transitions", "t"), "--record-transitions")

    def test_options_a_command_has_no_use_for_are_refused(self) -> None:
        verify, score = VALID["verify"], VALID["score"]
        self.assertUsageError(stitchcuda("verify", *verify, "--llm-timeout", "3"), "--llm-timeout")
        self.assertUsageError(stitchcuda("verify", *verify, "--record-transitions", "t"), "--record-transitions")
        self.assertUsageError(stitchcuda("score", *score, "--record-transitions", "t"), "--record-transitions")


@unittest.skipUnless(BIN, "set STITCHCUDA_BIN to the stitchcuda binary")
class BothFormsTest(CliTestCase):
    def test_optimize_takes_atol_as_name_value_and_as_name_then_value(self) -> None:
        # Past the options (both forms read as the same tolerance), the file is missing: a usage error
        # that says so, found before anything slow.
        for form in (("--atol=1e-3", "--rtol=1e-3"), ("--atol", "1e-3", "--rtol", "1e-3")):
            with self.subTest(form=form):
                done = stitchcuda("optimize", "no-such-model.py", *form)
                self.assertUsageError(done, "cannot read no-such-model.py: no such file")

    def test_verify_takes_atol_as_name_value_and_as_name_then_value(self) -> None:
        for form in (("--atol=1e-3", "--rtol=1e-3", "--trials=2"), ("--atol", "1e-3", "--rtol", "1e-3", "--trials", "2")):
            with self.subTest(form=form):
                done = stitchcuda("verify", "--python", sys.executable, "--log-level", "warning", *VALID["verify"],
                                  *form, "--no-timing", "--json")
                self.assertEqual(done.returncode, 4, done.stdout + done.stderr)  # a fast-path candidate, no GPU
                verdict = json.loads(done.stdout)
                self.assertEqual(verdict["tolerance"]["overrides"], {"atol": 0.001, "rtol": 0.001})

    def test_serve_takes_input_style_in_both_forms(self) -> None:
        session = "\n---\n".join([
            '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}',
            '{"jsonrpc":"2.0","id":2,"method":"shutdown"}',
            '{"jsonrpc":"2.0","method":"exit"}']) + "\n"
        for form in (("--input-style=delimited",), ("--input-style", "delimited")):
            with self.subTest(form=form):
                done = subprocess.run([BIN, "serve", *form, "--log-level", "warning"], input=session, capture_output=True,
                                      text=True, timeout=60, cwd=REPO)
                self.assertEqual(done.returncode, 0, done.stderr)
                self.assertIn('"id":2', done.stdout.replace(" ", ""))

    def test_a_repeated_option_keeps_the_last_value(self) -> None:
        done = stitchcuda("optimize", "no-such-model.py", "--gpu=first", "--gpu", "0")
        self.assertUsageError(done, "--gpu takes a device index")  # every occurrence is checked
        done = stitchcuda("optimize", "no-such-model.py", "--precision", "fp32", "--precision=eager")
        self.assertUsageError(done, "cannot read no-such-model.py: no such file")  # past both values


if __name__ == "__main__":
    unittest.main()
