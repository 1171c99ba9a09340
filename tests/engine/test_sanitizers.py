"""The engine's C++ stress driver (tests/engine/stress_driver.cpp) under ThreadSanitizer and AddressSanitizer.

The driver runs several worker threads, per-player routes of unequal speed, the inference cache and
weights_updated() from another thread, and checks that every game finishes and no stale value is served;
a sanitizer report fails the run (halt_on_error / exitcode).
"""
import os
import shutil
import subprocess

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CXX = shutil.which("g++") or shutil.which("clang++")

SANITIZERS = {
    "thread": (["-fsanitize=thread"], {"TSAN_OPTIONS": "halt_on_error=1 exitcode=66"}),
    "address": (["-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-fno-sanitize-recover=all"],
                {"ASAN_OPTIONS": "detect_leaks=1 exitcode=66"}),
}


@pytest.mark.skipif(CXX is None, reason="needs a C++ compiler (g++ or clang++)")
@pytest.mark.parametrize("sanitizer", sorted(SANITIZERS))
def test_stress_driver_is_clean_under_sanitizer(tmp_path, sanitizer):
    flags, env = SANITIZERS[sanitizer]
    exe = str(tmp_path / f"stress_{sanitizer}")
    build = subprocess.run([CXX, "-std=c++17", "-O1", "-g", "-pthread", *flags, "-I", os.path.join(REPO, "zoo"),
                            os.path.join(HERE, "stress_driver.cpp"), "-o", exe], capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[-4000:]
    run = subprocess.run([exe], capture_output=True, text=True, env=dict(os.environ, **env), timeout=300)
    assert run.returncode == 0 and "ok" in run.stdout, (run.stdout[-2000:], run.stderr[-6000:])
    assert "WARNING" not in run.stderr and "ERROR" not in run.stderr, run.stderr[-6000:]
    for name in ("tictactoe", "connect4"):  # the driver reached the paths it stresses
        line = next(x for x in run.stdout.splitlines() if x.startswith(name))
        counts = dict(zip(line.split()[1::2], line.split()[2::2]))
        assert int(counts["hits"]) > 0 and int(counts["fires"]) > 0, line
