"""Profiling-layer tests: the harness modules on the CPU (test_profile_harness.py); the C++ suite is profiling_tests."""
