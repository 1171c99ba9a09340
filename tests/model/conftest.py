"""Model tests run single-threaded: tiny convs are slower with intra-op threads on a shared CPU."""
import pytest
import torch


@pytest.fixture(autouse=True)
def _single_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
