"""A graceful stop: SIGINT / SIGTERM set a flag that the training loop reads between moves and learner steps.

The loop then writes ``ckpt/last.pt`` (the state ``--resume`` continues exactly) and raises
:class:`TrainingStopped`; ``python -m lzlite.entry`` turns that into one line and exit code 128 + signal
(130 for SIGINT, 143 for SIGTERM). Killing the process outright (SIGKILL) still loses at most the steps
since the last checkpoint, and never a checkpoint (they are written atomically).
"""
from __future__ import annotations

import signal
import threading
import time
from typing import Any, Dict, Optional

__all__ = ["StopSignal", "TrainingStopped"]

# A repeat within this many seconds is the same stop delivered twice (Ctrl-C under torchrun reaches a rank
# from the terminal and again from torchrun's agent), not a request to stop at once.
_REPEAT_GRACE_S = 1.0


class TrainingStopped(KeyboardInterrupt):
    """Raised by ``train`` after a signal stopped it and its checkpoint was written.

    A KeyboardInterrupt, so code that handles Ctrl-C already handles it and ``except Exception`` does not
    swallow it.

    Attributes:
        signal_number: the signal that stopped the run (``signal.SIGINT`` / ``signal.SIGTERM``).
        checkpoint: path of the ``last.pt`` written (None on DDP ranks other than 0, which write none).
        env_steps / train_iter: the counters stored in it.
    """

    def __init__(self, signal_number: int, checkpoint: Optional[str], env_steps: int, train_iter: int) -> None:
        self.signal_number = int(signal_number)
        self.checkpoint = checkpoint
        self.env_steps = int(env_steps)
        self.train_iter = int(train_iter)
        super().__init__(f"stopped by {signal.Signals(self.signal_number).name} at env step {env_steps}, "
                         f"learner step {train_iter}; checkpoint: {checkpoint}")

    @property
    def exit_code(self) -> int:
        """The shell's code for a process ended by this signal: 128 + its number."""
        return 128 + self.signal_number


class StopSignal:
    """While entered, SIGINT and SIGTERM request a stop instead of ending the process.

    ``requested()`` is the flag the loop polls (a plain attribute read: cheap enough to call before every
    move). A second signal more than a second after the first stops at once (KeyboardInterrupt, no
    checkpoint). Leaving restores the handlers that were installed before. Outside the main thread
    Python cannot install handlers: the object then does nothing and signals act as they did.
    """

    signals = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.signal_number: Optional[int] = None
        self._first_at = 0.0
        self._previous: Dict[int, Any] = {}

    def requested(self) -> bool:
        return self.signal_number is not None

    def _handle(self, signum: int, frame: Any) -> None:
        # No output here: the handler can interrupt a write to stderr (the progress bar), and a second
        # write into the same buffer would fail.
        if self.signal_number is None:
            self.signal_number, self._first_at = signum, time.monotonic()
        elif time.monotonic() - self._first_at > _REPEAT_GRACE_S:
            raise KeyboardInterrupt  # asked twice: stop now, the checkpoint being written is not waited for

    def __enter__(self) -> "StopSignal":
        if threading.current_thread() is threading.main_thread():
            for s in self.signals:
                self._previous[s] = signal.signal(s, self._handle)
        return self

    def __exit__(self, *exc: Any) -> None:
        for s, handler in self._previous.items():
            signal.signal(s, signal.SIG_DFL if handler is None else handler)  # None: one installed outside Python
        self._previous.clear()

