"""Shared fixtures for the zoo tests: every game in zoo.GAME_NAMES and its reference."""
from __future__ import annotations

import pytest

import zoo
from zoo_helpers import REFERENCES


@pytest.fixture(params=zoo.GAME_NAMES)
def name(request) -> str:
    """Each registered game's name (a new game is picked up automatically)."""
    return request.param


@pytest.fixture
def game(name):
    return zoo.make_batch_game(name)


@pytest.fixture
def reference(name):
    return REFERENCES[name]
