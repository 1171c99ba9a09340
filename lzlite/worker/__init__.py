"""Workers: the collector, the evaluator and the learner (importing registers them)."""
from lzlite.worker.collector import Collector
from lzlite.worker.evaluator import Evaluator
from lzlite.worker.learner import Learner

__all__ = ["Collector", "Evaluator", "Learner"]
