"""The policy template every algorithm subclasses.

A policy owns the networks (online + target), turns search outputs into actions and buffer targets,
and defines the loss. Its public methods are templates that enforce the invariants every algorithm
shares (legal actions only, finite losses, shapes); subclasses override the hooks named ``_hook_*``:

- ``_hook_make_model()``: build the network from ``cfg.model``.
- ``_hook_make_adapter(model, venv)``: the search adapter (latent model, real game states, ...).
- ``_hook_root_input(venv, idx)``: what the adapter's ``initial`` takes for the roots ``idx``.
- ``_hook_policy_target(out)``: the policy target stored in the buffer for a search output.
- ``_hook_loss(batch)``: ``(loss, stats, priorities)`` for a sampled batch.

A loss that reads more than the standard targets declares it through ONE seam: ``step_fields()`` names
the per-step fields it needs at the unrolled positions (``Batch.unrolled``) and how board symmetries
transform them; ``record_step(venv, idx)`` returns the ones the collector must record at each move
(any name but ``'obs'``, the observations every segment stores).

The collector, evaluator, buffer and training loop call only the public methods and know nothing of
algorithm names (../shared/STYLE.md, principle 7).
"""
from __future__ import annotations

import copy
import dataclasses
from typing import Any, Callable, Dict, Optional, Tuple

import numpy as np
import torch
from easydict import EasyDict

from lzlite.buffer.game_segment import StepField
from lzlite.config import ConfigError, Range, above, at_least, between
from lzlite.mcts.search import search as run_search
from lzlite.mcts.types import SearchConfig
from lzlite.registry import MODEL_REGISTRY

__all__ = ["Policy", "search_config_from_policy"]


def search_config_from_policy(cfg: EasyDict, value_sign: float) -> SearchConfig:
    """The search config (lzlite.mcts) derived from a policy config section."""
    return SearchConfig(
        rule=cfg.search_rule,
        num_simulations=cfg.num_simulations,
        pb_c_base=cfg.pb_c_base,
        pb_c_init=cfg.pb_c_init,
        discount=cfg.discount_factor,
        value_sign=value_sign,
        root_dirichlet_alpha=cfg.root_dirichlet_alpha,
        root_noise_weight=cfg.root_noise_weight,
        max_num_considered_actions=cfg.max_num_considered_actions,
        gumbel_scale=cfg.gumbel_scale,
        c_visit=cfg.c_visit,
        c_scale=cfg.c_scale,
        rescale_values=cfg.rescale_values,
        backend="c" if cfg.mcts_ctree else "py",
    )


def fast_bfloat16(device: torch.device) -> bool:
    """Whether bfloat16 matmuls/convolutions run in hardware on ``device``: a CUDA GPU that supports bf16,
    or a CPU with AMX tiles or AVX512-BF16 dot products (torch's own probes; False where this torch build has
    none). Measured on an AVX512-BF16 CPU without AMX (AMD Zen 4): 1.6x faster Connect Four MuZero learner
    steps, 2.1x AlphaZero, 1.6x MuZero self-play (docs/benchmarks.md); CPUs with neither emulate bfloat16
    and run it slower than float32."""
    if device.type == "cuda":
        return bool(torch.cuda.is_bf16_supported())
    if device.type == "cpu":
        for name in ("_is_amx_tile_supported", "_is_avx512_bf16_supported"):
            probe = getattr(torch.cpu, name, None)
            if probe is not None and probe():
                return True
        return False
    return False


class Policy:
    """Base template; see the module docstring for the hooks."""

    #: default entry function for ``python -m lzlite.entry`` when the config names none
    entry: str = "train_muzero"
    #: name of the model class in MODEL_REGISTRY, per ``model.model_type``
    model_classes: Dict[str, str] = {}
    #: default collector (COLLECTOR_REGISTRY), buffer (BUFFER_REGISTRY; None: uniform or prioritized by
    #: ``use_priority``), evaluator and learner; ``create_config.<role>.type`` overrides each
    collector_type: str = "episode_collector"
    buffer_type: Optional[str] = None
    evaluator_type: str = "bot_evaluator"
    learner_type: str = "base_learner"
    #: keys of those components this algorithm fixes: not offered in its configs (a compiled config holds these
    #: values; a config may restate them, as a resolved config.py does, but not change them)
    fixed_config: Dict[str, Any] = {}

    @classmethod
    def default_config(cls) -> EasyDict:
        """The keys every policy reads (LightZero's names where LightZero has them).

        A compiled config's ``policy`` section also holds the keys of the collector, buffer, evaluator and
        learner it trains with, each declared by that component (``lzlite.config.compile_config``).
        """
        return EasyDict(dict(
            model=cls.default_model_config(),  # network config; keys of the model class (see lzlite/model)
            cuda=False,  # LightZero compatibility: True means device 'cuda' when `device` is 'auto'
            device="auto",  # 'auto' (cuda when cuda=True and available, else cpu), 'cpu', 'cuda:0', ...
            env_type="board_games",  # LightZero compatibility: the env, not this key, says who moves
            action_type="varied_action_space",  # LightZero compatibility; lzlite always uses full-space masks
            num_threads=1,  # torch intra-op threads; small board-game nets run fastest on one (0: torch's default)
            learner_dtype="float32",  # 'float32', 'bfloat16' (autocast the loss's forward, and so its backward) or
            #  'auto' (bfloat16 where it is fast: CPUs with AMX or AVX512-BF16, CUDA GPUs with bf16); 1.6-2.5x
            #  faster learner steps there (benchmarks/bench_learner.py), slower on CPUs without bf16 hardware
            search_dtype="float32",  # the search's network calls (collect, evaluation, reanalyze): 'float32',
            #  'bfloat16' (autocast) or 'auto' (as learner_dtype); 1.5-2.3x faster inference on such CPUs with
            #  channels_last (benchmarks/bench_selfplay.py --search-dtype)
            channels_last=False,  # keep conv weights NHWC: oneDNN's fast layout on CPU (pair it with 'bfloat16')
            mcts_ctree=True,  # True: the C++ search tree; False: the pure-numpy reference tree
            search_rule="puct",  # 'puct' (AlphaZero/MuZero) or 'gumbel' (Gumbel MuZero)
            num_simulations=25,  # simulations per search
            eval_num_simulations=None,  # simulations per search in evaluation (None: num_simulations)
            pb_c_base=19652.0,  # PUCT exploration base
            pb_c_init=1.25,  # PUCT exploration constant
            root_dirichlet_alpha=0.3,  # Dirichlet noise concentration at the root (collect only)
            root_noise_weight=0.25,  # weight of the Dirichlet noise in the root prior
            max_num_considered_actions=16,  # Gumbel: actions sampled at the root (m)
            gumbel_scale=1.0,  # Gumbel: scale of the Gumbel noise during collection
            c_visit=50.0,  # Gumbel: sigma(q) = (c_visit + max N) * c_scale * q
            c_scale=0.1,  # Gumbel: see c_visit; 0.1 (mctx's value_scale) lets the prior and Gumbel noise count
            rescale_values=False,  # Gumbel: min-max rescale completed Q before sigma (mctx style)
            value_bootstrap="stored",  # n-step targets bootstrap from: 'stored' (root value at collection) or
            #                  'target_network' (the target net's value, recomputed every minibatch; LightZero's way)
            fixed_temperature_value=1.0,  # action-sampling temperature in collection
            manual_temperature_decay=False,  # decay temperature 1 -> 0.5 -> 0.25 over training
            threshold_training_steps_for_final_temperature=100000,  # iters at which the decay ends
        ))

    @classmethod
    def config_ranges(cls) -> Dict[str, Range]:
        """The allowed values of the numeric keys of ``default_config`` (``lzlite/config/ranges.py``)."""
        return dict(
            num_threads=at_least(0),  # 0: torch's default
            num_simulations=at_least(1),  # both rules run from one simulation (PUCT and Gumbel, any m)
            eval_num_simulations=at_least(1),
            pb_c_base=above(0),  # the tree divides by it
            pb_c_init=at_least(0),
            root_dirichlet_alpha=above(0),  # a Dirichlet concentration
            root_noise_weight=between(0, 1),
            max_num_considered_actions=at_least(1),  # m = 1 searches one sampled action (sequential halving of one)
            gumbel_scale=at_least(0),
            c_visit=at_least(0),
            c_scale=at_least(0),
            fixed_temperature_value=at_least(0),  # 0: the most visited action
            threshold_training_steps_for_final_temperature=at_least(1),
        )

    @classmethod
    def check_config(cls, cfg: EasyDict, path: str) -> None:
        """Rules between keys of a compiled ``policy`` section that ranges cannot state (none in the base)."""

    @classmethod
    def default_model_config(cls, model_type: Optional[str] = None) -> EasyDict:
        """The model section: ``model_type`` (default: the first of ``model_classes``) and its class's keys."""
        model_type = model_type or next(iter(cls.model_classes), "conv")
        cfg = EasyDict(model_type=model_type)  # which network: one of model_classes
        if model_type in cls.model_classes:
            cfg.update(MODEL_REGISTRY.get(cls.model_classes[model_type]).default_config())
        return cfg

    def __init__(self, cfg: EasyDict, model: Optional[torch.nn.Module] = None, value_sign: float = -1.0) -> None:
        self.cfg = cfg
        self.value_sign = float(value_sign)
        self.device = self._resolve_device(cfg)
        self.model = (model if model is not None else self._hook_make_model()).to(self.device)
        self.learner_dtype = self._resolve_dtype("learner_dtype", cfg.learner_dtype)
        self.search_dtype = self._resolve_dtype("search_dtype", cfg.search_dtype)
        if cfg.channels_last:
            self.model.to(memory_format=torch.channels_last)
        self.target_model = copy.deepcopy(self.model).eval()
        for p in self.target_model.parameters():
            p.requires_grad_(False)
        if cfg.value_bootstrap not in ("stored", "target_network"):
            raise ValueError(f"policy.value_bootstrap must be 'stored' or 'target_network', got {cfg.value_bootstrap!r}")
        if cfg.value_bootstrap == "target_network" and type(self)._hook_target_value is Policy._hook_target_value:
            raise ValueError(f"policy.value_bootstrap='target_network' is not supported by {type(self).__name__} "
                             f"(it has no _hook_target_value); use 'stored'")
        self.search_cfg = search_config_from_policy(cfg, value_sign)
        self.eval_search_cfg = self.search_cfg  # mode='eval' searches (greedy play) use this one
        if cfg.get("eval_num_simulations") is not None:
            n = cfg.eval_num_simulations
            if isinstance(n, bool) or not isinstance(n, int) or n < 1:
                raise ValueError(f"policy.eval_num_simulations must be a positive int or None, got {n!r}")
            self.eval_search_cfg = dataclasses.replace(self.search_cfg, num_simulations=n)
        self._adapters: Dict[str, Any] = {}
        #: the statistics of the last evaluation of a training run (``lzlite.entry.train`` returns the policy with
        #: them, as LightZero's entry functions return theirs); empty before one
        self.final_eval: Dict[str, float] = {}

    def _resolve_dtype(self, key: str, value: Any) -> str:
        """'float32' or 'bfloat16' for a dtype key's value ('auto': bfloat16 where ``fast_bfloat16``)."""
        if value not in ("float32", "bfloat16", "auto"):
            raise ValueError(f"policy.{key} must be 'float32', 'bfloat16' or 'auto', got {value!r}")
        if value == "auto":
            return "bfloat16" if fast_bfloat16(self.device) else "float32"
        return value

    # ------------------------------------------------------------------ acting
    def act(self, venv: Any, idx: np.ndarray, rng: np.random.Generator, *, mode: str = "collect",
            temperature: float = 0.0, greedy: Optional[np.ndarray] = None, reuse_action: Optional[np.ndarray] = None,
            reuse_value: Optional[np.ndarray] = None) -> Any:
        """Search from the positions ``idx`` of a vector env and return the SearchOutput.

        Args:
            venv: the vector env (board games: a BoardVectorEnv; others: any VectorEnv).
            idx: int [B] env indices to search from (running games only).
            rng: generator for the root noise and action sampling.
            mode: 'collect' (root noise, temperature) or 'eval' (no noise, greedy).
            greedy: bool [B] or None, collect mode: roots to play their best move (``temperature_moves``;
                see ``lzlite.mcts.search.search``).
        Returns:
            SearchOutput with ``action`` int [B] (always legal).
        """
        if mode not in ("collect", "eval"):
            raise ValueError(f"mode must be 'collect' or 'eval', got {mode!r}")
        idx = np.asarray(idx, dtype=np.int64)
        self.model.eval()
        # the env, not the network, knows which actions are legal at the roots
        legal_mask = venv.legal_mask()[idx]
        collect = mode == "collect"
        out = self._search_roots(
            self.search_adapter(venv), self._hook_root_input(venv, idx), legal_mask, rng,
            search_cfg=self.search_cfg if collect else self.eval_search_cfg,
            temperature=temperature if collect else 0.0, add_noise=collect, greedy=greedy if collect else None,
            reuse_action=reuse_action, reuse_value=reuse_value,
        )
        legal = legal_mask[np.arange(len(idx)), out.action]
        if not np.all(legal):
            bad = int(np.flatnonzero(~legal)[0])
            raise RuntimeError(f"search chose illegal action {int(out.action[bad])} for env {int(idx[bad])}")
        return out

    def search_adapter(self, venv: Any) -> Any:
        """The policy's network as its search sees it on ``venv``'s game (``_hook_make_adapter``; one per game).

        ``act`` searches through it; a collector that runs the search elsewhere (the self-play engine) takes the
        network calls from it: ``net_fn`` of an ``AlphaZeroAdapter``, the model of a ``LatentModelAdapter``.
        """
        key = getattr(venv, "game_name", type(venv).__name__)  # adapters depend on the game, not the instance
        if key not in self._adapters:
            self._adapters[key] = self._hook_make_adapter(self._unwrap(self.model), venv)
        return self._adapters[key]

    def _search_roots(self, adapter: Any, root_input: Any, legal_mask: np.ndarray, rng: np.random.Generator,
                      search_cfg: Any = None, **search_kwargs: Any) -> Any:
        """One batched search from B roots (``adapter``'s initial inference of ``root_input``), legal_mask [B, A]
        applied at the roots; ``search_cfg`` defaults to the collect config; ``search_kwargs`` go to
        ``lzlite.mcts.search.search``."""
        search_cfg = search_cfg or self.search_cfg
        with torch.inference_mode(), torch.autocast(self.device.type, dtype=torch.bfloat16,
                                                    enabled=self.search_dtype == "bfloat16"):
            adapter.prepare(len(legal_mask), search_cfg.num_simulations + 1)
            root = dataclasses.replace(adapter.initial(root_input), legal_mask=np.asarray(legal_mask, bool))
            return run_search(adapter, root, search_cfg, rng, **search_kwargs)

    def policy_target(self, out: Any) -> np.ndarray:
        """The policy target [B, A] to store for a search output (a distribution over legal actions)."""
        target = np.asarray(self._hook_policy_target(out), dtype=np.float32)
        return target

    def collect_temperature(self, train_iter: int) -> float:
        """Action-sampling temperature for collection at learner step ``train_iter``."""
        if not self.cfg.manual_temperature_decay:
            return float(self.cfg.fixed_temperature_value)
        frac = train_iter / max(1, self.cfg.threshold_training_steps_for_final_temperature)
        return 1.0 if frac < 0.5 else 0.5 if frac < 0.75 else 0.25

    # ----------------------------------------------------------------- learning
    def compute_loss(self, batch: Any) -> Tuple[torch.Tensor, Dict[str, float], Optional[np.ndarray]]:
        """Loss for a sampled batch: (scalar loss tensor, stats, new priorities [Bt] or None)."""
        self.model.train()
        with torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=self.learner_dtype == "bfloat16"):
            loss, stats, priorities = self._hook_loss(batch)
        loss = loss.float()  # a loss summed in bfloat16 under autocast: backward starts from float32
        if loss.dim() != 0:
            raise RuntimeError(f"{type(self).__name__}._hook_loss must return a scalar loss, got shape {tuple(loss.shape)}")
        if not torch.isfinite(loss):
            raise FloatingPointError(f"non-finite loss {loss.item()} ({stats}); lower policy.learning_rate or check "
                                     f"the inputs")
        return loss, stats, priorities

    def update_target(self) -> None:
        """Copy the online weights into the target network."""
        self.target_model.load_state_dict(self._unwrap(self.model).state_dict())

    # ------------------------------------------------------- extra per-step records
    def step_fields(self) -> Dict[str, StepField]:
        """Per-step fields the loss reads at the unrolled positions t..t+K besides the standard targets.

        The buffer returns each as ``Batch.unrolled[name]`` [Bt, K+1, *shape] and the symmetry augmenter
        transforms it as its ``StepField`` says. ``'obs'`` names the stored observations; every other name
        is a record the collector takes from ``record_step`` at each move. Default: none.
        """
        return {}

    def record_step(self, venv: Any, idx: np.ndarray) -> Dict[str, np.ndarray]:
        """The records of ``step_fields`` (all but 'obs') for games ``idx`` of ``venv`` before their move:
        name -> [len(idx), *shape] float32. Called by the collector at every move; default: none."""
        return {}

    def after_collect(self, buffer: Any, train_iter: int) -> None:
        """Called by the training loop after each collect's segments are pushed (default: nothing)."""

    def reanalyze_fn(self) -> Optional[Any]:
        """A function (obs, legal_mask) -> (values, policies) recomputed with the target model, or None."""
        return None

    def bootstrap_fn(self) -> Optional[Callable[[np.ndarray], np.ndarray]]:
        """``value_bootstrap='target_network'``: obs [M, ...] -> the target network's values [M]; else None."""
        if self.cfg.value_bootstrap != "target_network":
            return None

        def fn(obs: np.ndarray) -> np.ndarray:
            self.target_model.eval()
            with torch.inference_mode():
                return self._hook_target_value(self.to_tensor(obs)).view(-1).float().cpu().numpy()

        return fn

    # ------------------------------------------------------------------- state
    def state_dict(self) -> Dict[str, Any]:
        return {"model": self._unwrap(self.model).state_dict(), "target_model": self.target_model.state_dict()}

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        self._unwrap(self.model).load_state_dict(state["model"])
        self.target_model.load_state_dict(state.get("target_model", state["model"]))

    # ------------------------------------------------------------------- hooks
    def _hook_make_model(self) -> torch.nn.Module:
        mcfg = dict(self.cfg.model)
        model_type = mcfg.pop("model_type")
        if model_type not in self.model_classes:
            raise ValueError(f"policy.model.model_type must be one of {sorted(self.model_classes)}, got {model_type!r}")
        cls = MODEL_REGISTRY.get(self.model_classes[model_type])
        own_keys = set(cls.default_config())
        return cls(**{k: v for k, v in mcfg.items() if k in own_keys})

    def _hook_make_adapter(self, model: torch.nn.Module, venv: Any) -> Any:
        raise NotImplementedError

    def _hook_root_input(self, venv: Any, idx: np.ndarray) -> Any:
        raise NotImplementedError

    def _hook_policy_target(self, out: Any) -> np.ndarray:
        visits = out.visit_counts.astype(np.float32)
        return visits / np.maximum(visits.sum(axis=1, keepdims=True), 1.0)

    def _hook_target_value(self, obs: torch.Tensor) -> torch.Tensor:
        """Scalar values [M] of observations under the target network (for value_bootstrap='target_network')."""
        raise NotImplementedError

    def _hook_loss(self, batch: Any) -> Tuple[torch.Tensor, Dict[str, float], Optional[np.ndarray]]:
        raise NotImplementedError

    # ----------------------------------------------------------------- helpers
    @staticmethod
    def _unwrap(model: torch.nn.Module) -> torch.nn.Module:
        return model.module if hasattr(model, "module") else model

    @staticmethod
    def _resolve_device(cfg: EasyDict) -> torch.device:
        if cfg.device == "auto":
            return torch.device("cuda" if cfg.cuda and torch.cuda.is_available() else "cpu")
        device = torch.device(cfg.device)
        if device.type == "cuda" and not torch.cuda.is_available():  # e.g. a GPU run's config.py on a laptop
            raise ConfigError(f"policy.device={cfg.device!r} asks for a CUDA GPU, but this torch "
                              f"({torch.__version__}) sees none: use device 'cpu' or 'auto' "
                              f"(on the command line: --device cpu)")
        return device

    def to_tensor(self, x: np.ndarray, dtype: torch.dtype = torch.float32) -> torch.Tensor:
        return torch.as_tensor(np.ascontiguousarray(x), dtype=dtype, device=self.device)
