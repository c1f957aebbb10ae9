"""How the worker ends when its host goes away: the reply pipe closing under a write, or SIGINT
reaching a worker started by hand, ends it at once with its own status and no traceback; and a program
the host starts through another one (ncu's target) dies with that one."""
from __future__ import annotations

import os
import signal
import subprocess
import time
import unittest

from tests.harness.worker_client import PYTHON, REPO


def start_worker() -> subprocess.Popen[bytes]:
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "harness"), PYTHONUNBUFFERED="1")
    return subprocess.Popen([PYTHON, "-m", "stitchcuda_harness", "worker"], cwd=REPO, env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


class WorkerEndingTest(unittest.TestCase):
    def test_a_closed_reply_pipe_ends_the_worker_quietly(self) -> None:
        worker = start_worker()
        assert worker.stdin and worker.stdout and worker.stderr
        worker.stdout.close()  # the host is gone
        worker.stdin.write(b'{"id": 1, "method": "frobnicate"}\n')
        worker.stdin.flush()
        status = worker.wait(timeout=60)
        err = worker.stderr.read().decode()
        worker.stdin.close()
        worker.stderr.close()
        self.assertEqual(status, 4, err)
        self.assertNotIn("Traceback", err)
        self.assertNotIn("BrokenPipeError", err)

    def test_sigint_ends_the_worker_quietly(self) -> None:
        worker = start_worker()
        assert worker.stdin and worker.stdout and worker.stderr
        worker.stdin.write(b'{"id": 1, "method": "frobnicate"}\n')  # serving: the reply says so
        worker.stdin.flush()
        self.assertIn(b"unknown_method", worker.stdout.readline())
        worker.send_signal(signal.SIGINT)
        status = worker.wait(timeout=60)
        err = worker.stderr.read().decode()
        for stream in (worker.stdin, worker.stdout, worker.stderr):
            stream.close()
        self.assertEqual(status, 130, err)
        self.assertNotIn("Traceback", err)
        self.assertNotIn("KeyboardInterrupt", err)


class ParentDeathTest(unittest.TestCase):
    def test_a_program_started_through_another_dies_with_it(self) -> None:
        # As ncu's target under ncu: the middle program (here a shell) is killed outright.
        code = ("import time; from stitchcuda_harness.parent_death import die_with_parent; die_with_parent(); "
                "print('ready', flush=True); time.sleep(60)")
        env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "harness"))
        middle = subprocess.Popen(["sh", "-c", f'"$0" -c "$1" & echo $!; wait', PYTHON, code],
                                  env=env, stdout=subprocess.PIPE)
        assert middle.stdout
        target = int(middle.stdout.readline())
        self.assertEqual(middle.stdout.readline().strip(), b"ready")
        middle.kill()
        middle.wait(timeout=30)
        middle.stdout.close()
        deadline = time.monotonic() + 10
        while _running(target) and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertFalse(_running(target), "the target outlived the program that started it")


def _running(pid: int) -> bool:
    """Alive and not a zombie waiting for its reaper."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


if __name__ == "__main__":
    unittest.main()
