"""Memory stays bounded over a long run: once the replay buffer is full the process stops growing
(benchmarks/bench_memory.py measures it; this asserts its target over 100k tic-tac-toe env steps)."""
import importlib.util
import os

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.mark.slow
def test_tictactoe_memory_is_flat_once_the_buffer_is_full():
    spec = importlib.util.spec_from_file_location("bench_memory", os.path.join(REPO, "benchmarks", "bench_memory.py"))
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    result = bench.measure("tictactoe", env_steps=100_000, buffer=2000, seed=0)
    assert result["mb_per_10k"] < bench.TARGET_MB_PER_10K, result
