"""`python -m lzlite.webui` refuses bad options in one line, and `--build` says what is missing; `python -m lzlite.entry
--redis` sets logger.redis_url (a bad URL is the config's one-line error)."""
import os
import sys

import pytest

from lzlite.entry.__main__ import main as entry_main
from lzlite.webui.__main__ import build_ui, main

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.mark.parametrize("argv, message", [
    (["--port", "0"], "--port must be in 1..65535"),
    (["--port", "70000"], "--port must be in 1..65535"),
    (["--redis", "localhost:6379"], "--redis must be a Redis URL"),
])
def test_bad_options_are_one_line_and_exit_2(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_missing_extra_is_named(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "uvicorn", None)
    assert main([]) == 2
    assert "pip install -e '.[webui]'" in capsys.readouterr().err


def test_build_without_npm_or_sources_says_so(monkeypatch, tmp_path):
    monkeypatch.setattr("shutil.which", lambda name: None)
    with pytest.raises(RuntimeError, match="npm is not installed"):
        build_ui(str(tmp_path))
    monkeypatch.setattr("shutil.which", lambda name: "/usr/bin/npm")
    with pytest.raises(RuntimeError, match="no web UI sources"):
        build_ui(str(tmp_path))


def test_entry_redis_flag_reaches_the_config(capsys):
    cfg = os.path.join(REPO, "zoo", "tictactoe", "config.py")
    assert entry_main(["--cfg", cfg, "--redis", "localhost:6379", "--max-env-step", "1"]) == 2
    assert "main_config.logger.redis_url' must be a Redis URL" in capsys.readouterr().err
