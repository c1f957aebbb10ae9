"""The worker as the host sees it: a subprocess speaking JSON Lines; one reply per request, in
order; malformed lines get structured errors and the worker keeps serving; user prints never
reach the protocol stream."""
from __future__ import annotations

import os
import tempfile
import unittest

from tests.harness import REPO
from tests.harness.worker_client import WorkerClient


class ProtocolLoopTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.client = WorkerClient()
        cls.cache = tempfile.mkdtemp(prefix="stitch-proto-")

    @classmethod
    def tearDownClass(cls) -> None:
        cls.client.close()

    def test_hello(self) -> None:
        r = self.client.request("hello")["result"]
        self.assertIn("torch", r)
        self.assertIn("verify", r["methods"])

    def test_malformed_lines_then_still_serving(self) -> None:
        for raw, code in ((b"not json", "parse_error"), (b"[1, 2]", "invalid_request"),
                          (b'{"id": "x", "method": "hello"}', "invalid_request"),
                          (b'{"id": 9, "method": "hello", "params": 3}', "invalid_params")):
            self.client.send_raw(raw)
            reply = self.client.read_message(60)
            self.assertEqual(reply["error"]["code"], code, raw)
        self.assertIn("result", self.client.request("hello"))

    def test_unknown_method_and_missing_param(self) -> None:
        self.assertEqual(self.client.request("frobnicate")["error"]["code"], "unknown_method")
        self.assertEqual(self.client.request("loadTask", {})["error"]["code"], "invalid_params")

    def test_task_error_reply_carries_file_and_line(self) -> None:
        fd, path = tempfile.mkstemp(suffix=".py")
        with os.fdopen(fd, "w") as f:
            f.write("import torch\nprint('noise on stdout')\nclass Model(torch.nn.Module):\n"
                    "    def forward(self, x):\n        return x.nope()\n"
                    "def get_inputs():\n    return [torch.ones(2)]\n")
        self.addCleanup(os.unlink, path)
        err = self.client.request("loadTask", {"path": path})["error"]
        self.assertEqual((err["code"], err["file"], err["line"]), ("task_forward_error", path, 5))

    def test_methods_on_a_task(self) -> None:
        task = os.path.join(REPO, "examples", "mlp.py")
        self.assertEqual(self.client.request("loadTask", {"path": task})["result"]["modelClass"], "MLPBlock")
        graph = self.client.request("captureGraph", {"path": task})["result"]
        self.assertEqual(graph["schema"], "stitchcuda.graph/1")
        prof = self.client.request("profileReference", {"path": task, "iterations": 2})["result"]
        self.assertEqual(prof["lines"][0]["line"], 13)
        first = self.client.request("baseline", {"path": task, "cacheDir": self.cache, "compile": False, "timer": {"maxSeconds": 0.05}})["result"]
        second = self.client.request("baseline", {"path": task, "cacheDir": self.cache, "compile": False})["result"]
        self.assertEqual((first["cached"], second["cached"]), (False, True))
        self.assertEqual(first["eager"], second["eager"])

    def test_verify_over_the_protocol(self) -> None:
        r = self.client.request("verify", {"reference": os.path.join(REPO, "tests/harness/fixtures/small_elementwise.py"),
                                           "candidate": os.path.join(REPO, "tests/harness/adversarial/pytorch_compute.py"),
                                           "timing": False, "cacheDir": self.cache})["result"]
        self.assertFalse(r["passed"])
        self.assertIn("pytorch_compute", r["failed_checks"])


if __name__ == "__main__":
    unittest.main()
