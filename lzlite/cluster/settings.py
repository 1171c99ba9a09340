"""The cluster's config keys: what the learner, its actors and the supervisor read from ``policy``.

``compile_config`` composes them into every config's ``policy`` section like a collector's or a learner's keys
(one default each, ranges checked), so ``num_actors=0`` configs carry them too and stay synchronous.
"""
from __future__ import annotations

from typing import Dict, Mapping

from easydict import EasyDict

from lzlite.config import ConfigError, Range, above, at_least, between
from lzlite.registry import CLUSTER_REGISTRY

__all__ = ["ClusterSettings"]


@CLUSTER_REGISTRY.register("zmq_cluster")
class ClusterSettings:
    """Defaults, ranges and rules of the actor / learner keys (docs/distributed.md, "Actors and a learner")."""

    @staticmethod
    def default_config() -> EasyDict:
        return EasyDict(dict(
            num_actors=0,  # self-play processes started beside the learner; 0: the synchronous loop (one process)
            cluster_port=5555,  # the learner PULLs episodes on this TCP port, PUBlishes weights / control on port + 1
            publish_freq=50,  # learner steps between weights publications (a file and the PUB socket)
            max_policy_lag=2000,  # episodes whose oldest weights are more learner steps behind than this are dropped
            replay_ratio_tolerance=0.1,  # the rate limiter's band around env steps x replay_ratio, as a fraction
            rate_limit_slack=128,  # the band's least width in learner steps (an actor's collect arrives in a burst)
            ingest_queue_size=256,  # decoded episodes waiting for the learner loop (bounds the learner's memory)
            socket_hwm=64,  # messages ZeroMQ queues per socket on either side before a sender waits
            learner_timeout_s=15.0,  # an actor that hears no learner heartbeat this long stops playing and waits
            # reanalyze processes: stored positions searched again with the latest weights, their targets written back
            num_reanalyzers=0,  # reanalyze processes started beside the learner (others join: --role reanalyzer)
            reanalyze_positions_per_step=0.0,  # positions sent for reanalysis per learner step; 0: none are sent
            reanalyze_batch_positions=256,  # positions per reanalyze request
        ))

    @classmethod
    def config_ranges(cls) -> Dict[str, Range]:
        """The allowed values of the numeric keys of ``default_config`` (``lzlite/config/ranges.py``)."""
        return dict(num_actors=between(0, 256), cluster_port=between(1, 65534), publish_freq=at_least(1),
                    max_policy_lag=at_least(0), replay_ratio_tolerance=between(0, 10), rate_limit_slack=at_least(1),
                    ingest_queue_size=at_least(1), socket_hwm=at_least(1), learner_timeout_s=above(0),
                    num_reanalyzers=between(0, 64), reanalyze_positions_per_step=at_least(0),
                    reanalyze_batch_positions=at_least(1))

    @classmethod
    def check_config(cls, cfg: Mapping, path: str) -> None:
        """An asynchronous run holds the replay ratio itself (a fixed ``update_per_collect`` has no collects to
        count); reanalyzers need positions to work on."""
        if cfg.num_actors > 0 and cfg.get("update_per_collect") is not None:
            raise ConfigError(f"config key '{path}.update_per_collect'={cfg.update_per_collect} with "
                              f"{path}.num_actors={cfg.num_actors}: the learner of an actor / learner run keeps "
                              f"learner steps per env step at replay_ratio; set update_per_collect=None")
        if cfg.num_reanalyzers > 0 and cfg.reanalyze_positions_per_step <= 0:
            raise ConfigError(f"config key '{path}.num_reanalyzers'={cfg.num_reanalyzers} with "
                              f"{path}.reanalyze_positions_per_step=0: the reanalyzers would get no work; set "
                              f"reanalyze_positions_per_step > 0 (positions per learner step) or num_reanalyzers=0")
