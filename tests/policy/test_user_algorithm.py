"""A user's own algorithm: subclass, register, import_names, run with `python -m lzlite.entry`.

The module and the config live in a temporary directory outside the package, as a user's would.
"""
import os
import shutil
import subprocess
import sys

import numpy as np
import torch

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(REPO, "docs", "examples")

_TINY = """
main_config["policy"].update(num_simulations=6, collector_env_num=4, n_episode=4, batch_size=16,
                             eval_episodes=2, eval_bots=["random"], eval_optimal_move_rate=False,
                             replay_buffer_size=1000)
main_config["policy"]["model"].update(num_channels=8)
"""


def test_user_policy_runs_from_its_own_directory(tmp_path):
    shutil.copy(os.path.join(EXAMPLES, "sharp_muzero.py"), tmp_path / "sharp_muzero.py")
    cfg = (open(os.path.join(EXAMPLES, "sharp_muzero_config.py")).read() + _TINY)
    (tmp_path / "my_config.py").write_text(cfg)
    run_dir = tmp_path / "run"
    r = subprocess.run([sys.executable, "-m", "lzlite.entry", "--cfg", "my_config.py", "--max-env-step", "60",
                        "--run-dir", str(run_dir)], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "training summary" in r.stdout
    resolved = (run_dir / "config.py").read_text()
    assert "'type': 'sharp_muzero'" in resolved and "'target_temperature': 0.5" in resolved
    state = torch.load(run_dir / "ckpt" / "last.pt", weights_only=True)
    assert state["counters"]["train_iter"] > 0

    # a misspelt key of the new policy is caught with the nearest valid key
    (tmp_path / "bad_config.py").write_text(cfg + "\nmain_config['policy']['target_temprature'] = 0.3\n")
    r = subprocess.run([sys.executable, "-m", "lzlite.entry", "--cfg", "bad_config.py"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "target_temperature" in r.stderr


def test_user_policy_target_is_sharpened(monkeypatch):
    monkeypatch.syspath_prepend(EXAMPLES)
    from sharp_muzero import SharpMuZeroPolicy

    class Out:
        visit_counts = np.array([[3, 1, 0, 0]], dtype=np.int32)

    policy = SharpMuZeroPolicy.__new__(SharpMuZeroPolicy)  # only the hook is exercised here
    policy.cfg = SharpMuZeroPolicy.default_config()
    target = policy.policy_target(Out())
    np.testing.assert_allclose(target, [[0.9, 0.1, 0.0, 0.0]], rtol=1e-6)  # 3^2 : 1^2
