"""Actors and a learner over ZeroMQ: the wire format, the learner, the actor, the supervisor (docs/distributed.md).

Importing the package registers only the cluster's config keys (``settings``); the processes' modules import
pyzmq and are imported by the entry that runs them.
"""
from lzlite.cluster.settings import ClusterSettings

__all__ = ["ClusterSettings"]
