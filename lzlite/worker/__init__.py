"""Workers: the collectors, the evaluator and the learner (importing registers them)."""
from lzlite.worker.collector import Collector
from lzlite.worker.engine_collector import EngineCollector
from lzlite.worker.evaluator import Evaluator
from lzlite.worker.learner import Learner
from lzlite.worker.segment_collector import SegmentCollector

__all__ = ["Collector", "EngineCollector", "SegmentCollector", "Evaluator", "Learner"]
