"""MuZero and Gumbel MuZero: a learned model searched in latent space."""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np
import torch
import torch.nn.functional as F
from easydict import EasyDict

from lzlite.model.support import scalar_to_support
from lzlite.policy.base import Policy
from lzlite.registry import POLICY_REGISTRY

__all__ = ["MuZeroPolicy", "GumbelMuZeroPolicy"]


def _scale_gradient(x: torch.Tensor, scale: float) -> torch.Tensor:
    """Identity forward; gradient multiplied by ``scale`` (MuZero's 0.5 on the dynamics path)."""
    return x * scale + x.detach() * (1.0 - scale)


@POLICY_REGISTRY.register("muzero")
class MuZeroPolicy(Policy):
    """MuZero (Schrittwieser et al., 2020): PUCT search over a learned latent model.

    Loss over K unrolled steps: categorical value and reward (when the model is categorical), policy
    cross-entropy against the search's policy target, optional latent consistency (EfficientZero).
    """

    entry = "train_muzero"
    model_classes = {"conv": "MuZeroModel", "mlp": "MuZeroModelMLP"}

    @classmethod
    def default_config(cls) -> EasyDict:
        cfg = super().default_config()
        # > 0: the collector records the reward every legal action would have given (board envs: does it win at
        # once?) and each unrolled latent also learns the reward of one more action, a winning one half the time
        # there is one, else a random legal one (an lzlite extension: MuZero's reward head sees only played moves)
        cfg.action_reward_loss_weight = 0.0
        # 2: also the opponent's replies one move off the played line: the collector records [1 + A, A] rewards per
        # step (VectorEnv.reply_rewards) and each unrolled latent also unrolls a random safe move (one that hands
        # the opponent a win half the time there is one) and learns the reward of a reply after it (a winning
        # one half the time): the situation a search must read to avoid handing a win. Two more dynamics steps
        cfg.action_reward_depth = 1
        # > 0 (needs action_reward_loss_weight > 0 and a board env): the latent after that extra move (at depth 2
        # the safe move, at depth 1 the extra one) also learns the value and policy the TARGET network's
        # representation gives the real position after it (value 0 where the move ends the game), from the
        # observations the env's ``next_observations`` rule builds. The search values positions after moves
        # never played through such latents; without this their value and prior get no training signal
        cfg.action_value_loss_weight = 0.0
        # True (with action_value_loss_weight > 0): at each sampled position the latents after EVERY legal move learn
        # that value and policy too (the children a search at that root values first); A more dynamics and
        # prediction passes per sampled position
        cfg.action_value_all_moves = False
        # 'all': every unrolled position of a row gets the action-reward (and action-value) loss's extra moves, K x
        # the extra dynamics steps; 'one': one unrolled position per row, uniform among the valid ones, its loss
        # scaled by their number (the same expected loss; ~2x faster learner steps at depth 2 with the action-value
        # loss, K=5, docs/benchmarks.md, but on Connect Four it learnt less per minute: docs/results.md, session 22)
        cfg.action_reward_positions = "all"
        # > 0: each latent the dynamics make for a real position (the unrolled line's, and the action-value loss's
        # where that is on) is pulled toward the representation of that position's observation (squared error
        # relative to the target's mean square; the representation's output is the target, without gradient), so
        # the learned model searches latents the prediction heads were trained on (an lzlite extension;
        # EfficientZero's consistency loss, ssl_loss_weight, compares projections by cosine, leaving the scale free).
        # On Connect Four it closed the child-value gap and slowed the heads (docs/results.md, session 19)
        cfg.latent_match_loss_weight = 0.0
        # True: the match trains the dynamics alone: each matched latent is made again by one more dynamics step from
        # its detached input latent, so no match gradient reaches the representation (or earlier dynamics steps)
        cfg.latent_match_dynamics_only = False
        # > 0 (needs model.observation_decoder=True): every latent of a real position (the root's, each unrolled one's,
        # and each latent the action-value loss trains) is decoded back into that position's observation by a linear
        # decoder, binary cross-entropy per observation entry (observations in [0, 1]: board planes). The target is
        # the observation itself, not another network's output, so it cannot pull the representation toward a moving
        # target as the latent match does; it makes the dynamics carry the board (Visualizing MuZero Models, de Vries
        # et al. 2021; UniZero's latent_recon_loss). An lzlite extension, off by default
        cfg.obs_recon_loss_weight = 0.0
        # the weight of the sampled (root) position's value loss; None: value_loss_weight, the unrolled positions'.
        # AlphaZero weighs its one value loss 1 where MuZero weighs each of its K + 1 terms 0.25; a larger root weight
        # gives the representation and prediction heads AlphaZero's share of value gradient without the unrolled terms
        cfg.root_value_loss_weight = None
        return cfg

    @property
    def wants_next_observations(self) -> bool:
        """True when the loss needs the env's ``next_observations`` rule (set ``self.next_observations``)."""
        return self.cfg.action_value_loss_weight > 0

    @property
    def wants_obs_unroll(self) -> bool:
        """True when the loss reads the observations at the unrolled positions (``Batch.obs_unroll``)."""
        cfg = self.cfg
        return (cfg.ssl_loss_weight > 0 or cfg.action_value_loss_weight > 0 or cfg.latent_match_loss_weight > 0
                or cfg.obs_recon_loss_weight > 0)

    @property
    def wants_action_rewards(self) -> bool:
        """True when the collector should record per-action rewards (``GameSegment.append(action_reward=)``)."""
        return self.cfg.action_reward_loss_weight > 0

    def record_action_rewards(self, venv: Any, idx: np.ndarray) -> np.ndarray:
        """What the collector stores as ``action_reward`` for games ``idx``: [n, A] at depth 1, [n, 1 + A, A] at 2."""
        return venv.action_rewards(idx) if self.cfg.action_reward_depth == 1 else venv.reply_rewards(idx)

    def __init__(self, cfg: EasyDict, model: Optional[torch.nn.Module] = None, value_sign: float = -1.0) -> None:
        super().__init__(cfg, model=model, value_sign=value_sign)
        if cfg.action_reward_depth not in (1, 2):
            raise ValueError(f"policy.action_reward_depth must be 1 (the mover's moves) or 2 (also the opponent's "
                             f"replies after them), got {cfg.action_reward_depth!r}")
        if cfg.action_reward_positions not in ("all", "one"):
            raise ValueError(f"policy.action_reward_positions must be 'all' (every unrolled position) or 'one' (one "
                             f"per row, chosen at random), got {cfg.action_reward_positions!r}")
        if cfg.action_value_loss_weight > 0 and not cfg.action_reward_loss_weight > 0:
            raise ValueError(f"policy.action_value_loss_weight={cfg.action_value_loss_weight} trains the latent after the "
                             f"action-reward loss's extra move: set action_reward_loss_weight > 0 too")
        if cfg.action_value_all_moves and not cfg.action_value_loss_weight > 0:
            raise ValueError("policy.action_value_all_moves=True extends the action-value loss to every legal move: "
                             "set action_value_loss_weight > 0 too")
        #: the env's rule ``(obs [N, ...], actions [N]) -> (obs after [N, ...], legal after [N, A])`` (build_components
        #: sets it from the env class when ``wants_next_observations``)
        self.next_observations: Optional[Callable[[torch.Tensor, torch.Tensor], Tuple[torch.Tensor, torch.Tensor]]] = None
        self._recon_checked = False  # whether the observations' range was checked for the reconstruction loss
        if cfg.ssl_loss_weight > 0 and not getattr(self.model, "self_supervised_learning_loss", False):
            raise ValueError(f"policy.ssl_loss_weight={cfg.ssl_loss_weight} needs the model's projection heads: "
                             f"set policy.model.self_supervised_learning_loss=True (or ssl_loss_weight=0)")
        if cfg.obs_recon_loss_weight > 0 and getattr(self._unwrap(self.model), "decoder", None) is None:
            raise ValueError(f"policy.obs_recon_loss_weight={cfg.obs_recon_loss_weight} needs the model's observation "
                             f"decoder: set policy.model.observation_decoder=True (or obs_recon_loss_weight=0)")

    def _hook_make_adapter(self, model: torch.nn.Module, venv: Any) -> Any:
        return self._latent_adapter(model)

    def _latent_adapter(self, model: torch.nn.Module) -> Any:
        from lzlite.mcts.adapters import LatentModelAdapter

        return LatentModelAdapter(model, model.value_to_scalar, model.to_scalar, self.device)

    def _hook_root_input(self, venv: Any, idx: np.ndarray) -> Any:
        return self.to_tensor(venv.observe()[idx])

    def reanalyze_fn(self) -> Optional[Callable[[np.ndarray, np.ndarray], Tuple[np.ndarray, Optional[np.ndarray]]]]:
        """Root values and policy targets of stored positions searched again with the target model.

        MuZero Reanalyse: no root noise, the stored legal masks at the root.
        """
        adapter = self._latent_adapter(self.target_model)
        rng = np.random.default_rng(0)

        def fn(obs: np.ndarray, legal_mask: np.ndarray) -> Tuple[np.ndarray, Optional[np.ndarray]]:
            out = self._search_roots(adapter, self.to_tensor(obs), legal_mask, rng, add_noise=False)
            return out.root_value.astype(np.float32), self.policy_target(out)

        return fn

    def _hook_target_value(self, obs: torch.Tensor) -> torch.Tensor:
        return self.target_model.value_to_scalar(self.target_model.initial_inference(obs).value)

    def _value_loss(self, head: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        """[B] loss of the value head's output against scalar targets [B]."""
        if self._unwrap(self.model).tanh_value:
            return (head.float().view(-1) - target) ** 2
        return self._reward_loss(head, target)

    def _reward_loss(self, head: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        """[B] loss of the reward head's output (categorical: cross-entropy against the two-hot target; scalar:
        squared error) against scalar targets [B]."""
        model = self._unwrap(self.model)
        if model.categorical_distribution:
            t = scalar_to_support(target, model.support_scale, model.support_transform)
            return -(t * F.log_softmax(head, dim=-1)).sum(-1)
        return (head.view(-1) - target) ** 2

    def _hook_loss(self, batch: Any) -> Tuple[torch.Tensor, Dict[str, float], Optional[np.ndarray]]:
        cfg = self.cfg
        model = self._unwrap(self.model)
        obs = self.to_tensor(batch.obs)
        actions = self.to_tensor(batch.actions, torch.int64)  # [Bt, K]
        t_reward = self.to_tensor(batch.target_reward)  # [Bt, K]
        t_value = self.to_tensor(batch.target_value)  # [Bt, K+1]
        t_policy = self.to_tensor(batch.target_policy)  # [Bt, K+1, A]
        mask = self.to_tensor(batch.mask_unroll)  # [Bt, K+1]
        weights = self.to_tensor(batch.weights)
        K = actions.shape[1]

        out = self.model.initial_inference(obs)
        latent = out.latent_state
        root_value_loss = self._value_loss(out.value, t_value[:, 0])
        value_loss = torch.zeros_like(root_value_loss)  # the unrolled positions'
        policy_loss = -(t_policy[:, 0] * F.log_softmax(out.policy_logits, dim=-1)).sum(-1)
        reward_loss = torch.zeros_like(value_loss)
        ssl_loss = torch.zeros_like(value_loss)
        pred_root_value = model.value_to_scalar(out.value).detach()
        use_ssl = cfg.ssl_loss_weight > 0 and getattr(batch, "obs_unroll", None) is not None
        plan = self._action_reward_plan(batch, K) if cfg.action_reward_loss_weight > 0 else None
        if plan is not None and cfg.action_value_loss_weight > 0:
            plan["obs"] = [obs] + [self.to_tensor(batch.obs_unroll[:, k]) for k in range(K - 1)]
        action_reward_loss = torch.zeros_like(value_loss)
        action_value_loss = torch.zeros_like(value_loss)
        match_loss = torch.zeros_like(value_loss)
        recon_loss = self._obs_recon(model, latent, obs)
        one_position = plan is not None and cfg.action_reward_positions == "one"
        unrolled = []  # the latents of positions t..t+K-1, for the one-position action-reward loss
        for k in range(1, K + 1):
            latent = _scale_gradient(latent, 0.5)
            if k == 1 and plan is not None and "obs" in plan and cfg.action_value_all_moves:
                av_loss, av_match, av_recon = self._all_moves_value_loss(model, latent, plan, batch)
                action_value_loss = action_value_loss + av_loss
                match_loss = match_loss + av_match
                recon_loss = recon_loss + av_recon
            if one_position:
                unrolled.append(latent)
            elif plan is not None:  # rewards of moves off the played line, from the latent of position t+k-1
                ar_loss, av_loss, av_match, av_recon = self._action_reward_step(model, latent, plan, k - 1)
                action_reward_loss = action_reward_loss + mask[:, k - 1] * ar_loss
                action_value_loss = action_value_loss + mask[:, k - 1] * av_loss
                match_loss = match_loss + mask[:, k - 1] * av_match
                recon_loss = recon_loss + mask[:, k - 1] * av_recon
            out = self.model.recurrent_inference(latent, actions[:, k - 1])
            if cfg.latent_match_loss_weight > 0:
                match = self._latent_match(model, out.latent_state, batch.obs_unroll[:, k - 1],
                                           source=(latent, actions[:, k - 1]))
                match_loss = match_loss + mask[:, k] * match
            if cfg.obs_recon_loss_weight > 0:  # the move into position t+k was real: its observation is stored
                recon_loss = recon_loss + mask[:, k - 1] * self._obs_recon(model, out.latent_state,
                                                                           batch.obs_unroll[:, k - 1])
            latent = out.latent_state
            value_loss = value_loss + self._value_loss(out.value, t_value[:, k])
            reward_loss = reward_loss + self._reward_loss(out.reward, t_reward[:, k - 1])
            policy_loss = policy_loss + mask[:, k] * -(t_policy[:, k] * F.log_softmax(out.policy_logits, dim=-1)).sum(-1)
            if use_ssl:
                with torch.no_grad():
                    target_latent = self.target_model.initial_inference(self.to_tensor(batch.obs_unroll[:, k - 1])).latent_state
                    target_proj = self.target_model.project(target_latent, with_grad=False)
                proj = model.project(latent, with_grad=True)
                ssl_loss = ssl_loss - mask[:, k] * F.cosine_similarity(proj, target_proj, dim=-1)
        if one_position:
            ar_loss, av_loss, av_match, av_recon = self._one_position_step(model, unrolled, plan, mask[:, :K])
            action_reward_loss, action_value_loss = action_reward_loss + ar_loss, action_value_loss + av_loss
            match_loss, recon_loss = match_loss + av_match, recon_loss + av_recon
        root_weight = cfg.value_loss_weight if cfg.root_value_loss_weight is None else cfg.root_value_loss_weight
        total = (root_weight * root_value_loss + cfg.value_loss_weight * value_loss + cfg.policy_loss_weight * policy_loss
                 + cfg.reward_loss_weight * reward_loss + cfg.ssl_loss_weight * ssl_loss
                 + cfg.action_reward_loss_weight * action_reward_loss + cfg.action_value_loss_weight * action_value_loss
                 + cfg.latent_match_loss_weight * match_loss + cfg.obs_recon_loss_weight * recon_loss)
        loss = (weights * total).mean()
        stats = dict(value_loss=(root_value_loss + value_loss).mean().item(),
                     root_value_loss=root_value_loss.mean().item(), policy_loss=policy_loss.mean().item(),
                     reward_loss=reward_loss.mean().item(), ssl_loss=ssl_loss.mean().item(),
                     action_reward_loss=action_reward_loss.mean().item(),
                     action_value_loss=action_value_loss.mean().item(), latent_match_loss=match_loss.mean().item(),
                     obs_recon_loss=recon_loss.mean().item(),
                     pred_value=float(pred_root_value.mean()), target_value=float(t_value[:, 0].mean()))
        priorities = (pred_root_value - t_value[:, 0]).abs().cpu().numpy() + 1e-6
        return loss, stats, priorities

    def _action_reward_plan(self, batch: Any, K: int) -> Dict[str, torch.Tensor]:
        """The moves whose real rewards the loss trains, per row and unrolled position (see action_reward_depth):
        'target' (the batch's target_action_reward on the device), 'extra' [Bt, K]; at depth 2 also 'move',
        'reply' [Bt, K] and 'has_move' (1.0 where a move that does not win at once exists)."""
        t = getattr(batch, "target_action_reward", None)
        depth = int(self.cfg.action_reward_depth)
        if t is None or t.ndim - 2 != depth:
            raise ValueError(
                f"policy.action_reward_loss_weight > 0 with action_reward_depth={depth}, but the batch's "
                f"target_action_reward is {'missing' if t is None else f'of shape {t.shape}'}: the buffer's segments "
                f"were collected without per-action rewards of that depth"
            )
        # drawn on the CPU from torch's seeded generator (saved in checkpoints, so --resume stays exact)
        t = torch.as_tensor(t)
        legal = torch.as_tensor(batch.legal_mask[:, :K])
        first = t if depth == 1 else t[:, :, 0]
        plan = dict(extra=self._extra_actions(first, legal))
        if depth == 2:
            safe = legal & (first == 0)  # moves that do not win (end the game) at once
            handing = t[:, :, 1:].ne(0).any(-1).float()  # [Bt, K, A]: after b the opponent can win at once
            move = self._extra_actions(handing, safe)
            A = t.shape[-1]
            replies = t[:, :, 1:].gather(2, move[:, :, None, None].expand(-1, -1, 1, A)).squeeze(2)  # [Bt, K, A]
            plan.update(move=move, reply=self._extra_actions(replies, legal), has_move=safe.any(-1).float())
        out = {k: v.to(self.device) for k, v in plan.items()}
        out["target"] = self.to_tensor(t)
        return out

    def _latent_match(self, model: torch.nn.Module, latent: torch.Tensor, obs: Any,
                      source: Tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        """[Bt] squared error between dynamics latents and the representation of the real positions ``obs`` (the
        target, without gradient), relative to the target's mean square; zeros unless latent_match_loss_weight > 0.
        ``source``: (input latent, action) the dynamics made ``latent`` from, stepped again from the detached input
        under latent_match_dynamics_only."""
        if not self.cfg.latent_match_loss_weight > 0:
            return latent.new_zeros(latent.shape[0])
        if self.cfg.latent_match_dynamics_only:
            latent, _ = model.dynamics_step(source[0].detach(), source[1])
        with torch.no_grad():
            real = model.representation_step(obs if isinstance(obs, torch.Tensor) else self.to_tensor(obs)).float()
            scale = real.pow(2).flatten(1).mean(1).clamp(min=1e-6)
        # relative to the target's mean square, so one weight means the same for latents of any scale
        return (latent.float() - real).pow(2).flatten(1).mean(1) / scale

    def _obs_recon(self, model: torch.nn.Module, latent: torch.Tensor, obs: Any) -> torch.Tensor:
        """[Bt] binary cross-entropy of the decoded ``latent`` against the observations ``obs`` it stands for, mean
        over the observation's entries; zeros unless obs_recon_loss_weight > 0."""
        if not self.cfg.obs_recon_loss_weight > 0:
            return latent.new_zeros(latent.shape[0], dtype=torch.float32)
        target = (obs if isinstance(obs, torch.Tensor) else self.to_tensor(obs)).float()
        if not self._recon_checked:  # once: a sync, and the observations' range does not change
            if target.numel() and (float(target.min()) < 0 or float(target.max()) > 1):
                raise ValueError(f"policy.obs_recon_loss_weight > 0 learns observations entry by entry with binary "
                                 f"cross-entropy, so they must lie in [0, 1] (board planes); got values in "
                                 f"[{float(target.min()):g}, {float(target.max()):g}]")
            self._recon_checked = True
        logits = model.decode_observation(latent).float()
        return F.binary_cross_entropy_with_logits(logits, target.reshape(logits.shape),
                                                  reduction="none").flatten(1).mean(1)

    def _action_reward_step(self, model: torch.nn.Module, latent: torch.Tensor, plan: Dict[str, torch.Tensor],
                            k: int) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """[Bt] reward loss of the planned moves from ``latent`` (unrolled position t+k), and [Bt] value + policy
        loss, latent-match loss and reconstruction loss of the latent after the first of them (zeros unless
        action_value_loss_weight > 0)."""
        t = plan["target"]
        extra = plan["extra"][:, k]
        first = t[:, k] if t.dim() == 3 else t[:, k, 0]
        after_extra, reward = model.dynamics_step(latent, extra)
        loss = self._reward_loss(reward, first.gather(1, extra[:, None]).squeeze(1))
        value_loss = match = recon = torch.zeros_like(loss)
        if t.dim() == 4:
            move, reply = plan["move"][:, k], plan["reply"][:, k]
            after, _ = model.dynamics_step(latent, move)
            _, reply_reward = model.dynamics_step(_scale_gradient(after, 0.5), reply)
            target = t[torch.arange(t.shape[0], device=t.device), k, 1 + move, reply]
            loss = loss + plan["has_move"][:, k] * self._reward_loss(reply_reward, target)
            if "obs" in plan:
                value_loss, match, recon = self._action_value_step(model, latent, after, plan["obs"][k], move, first)
                value_loss, match, recon = (plan["has_move"][:, k] * x for x in (value_loss, match, recon))
        elif "obs" in plan:
            value_loss, match, recon = self._action_value_step(model, latent, after_extra, plan["obs"][k], extra, first)
        return loss, value_loss, match, recon

    def _one_position_step(self, model: torch.nn.Module, unrolled: List[torch.Tensor], plan: Dict[str, Any],
                           mask: torch.Tensor) -> Tuple[torch.Tensor, ...]:
        """``_action_reward_step`` at one unrolled position per row (``unrolled``: the K latents of positions t..t+K-1,
        ``mask`` [Bt, K] which of them are real), chosen uniformly among the real ones; each loss is scaled by their
        number, so its expectation is the sum over positions that action_reward_positions='all' trains."""
        n = mask.sum(-1)
        # drawn on the CPU from torch's seeded generator, as the extra moves are
        pick = torch.multinomial((mask.cpu() > 0).float(), 1).squeeze(1).to(mask.device)
        rows = torch.arange(mask.shape[0], device=mask.device)
        latent = torch.stack(unrolled)[pick, rows]
        one = {key: (value[rows, pick][:, None] if isinstance(value, torch.Tensor) else value)
               for key, value in plan.items() if key != "obs"}
        if "obs" in plan:
            one["obs"] = [torch.stack(plan["obs"])[pick, rows]]
        return tuple(n * loss for loss in self._action_reward_step(model, latent, one, 0))

    def _all_moves_value_loss(self, model: torch.nn.Module, latent: torch.Tensor, plan: Dict[str, torch.Tensor],
                              batch: Any) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """[Bt] means over the legal moves at the sampled positions of the action-value loss, the latent-match loss and
        the reconstruction loss of the latent after each (``latent``: the representation of the sampled observations)."""
        legal = self.to_tensor(batch.legal_mask[:, 0], torch.bool)  # [Bt, A]
        t = plan["target"]
        first = t[:, 0] if t.dim() == 3 else t[:, 0, 0]  # [Bt, A] reward of each move
        rows, moves = legal.nonzero(as_tuple=True)
        before = latent[rows]
        after, _ = model.dynamics_step(before, moves)
        n = legal.sum(-1).clamp(min=1)

        def per_row(x: torch.Tensor) -> torch.Tensor:
            return torch.zeros(legal.shape[0], dtype=x.dtype, device=x.device).index_add_(0, rows, x) / n.to(x.dtype)

        losses = self._action_value_step(model, before, after, plan["obs"][0][rows], moves, first[rows])
        return tuple(per_row(x) for x in losses)

    def _action_value_step(self, model: torch.nn.Module, latent: torch.Tensor, after: torch.Tensor, obs: torch.Tensor,
                           move: torch.Tensor, first_rewards: torch.Tensor) -> Tuple[torch.Tensor, ...]:
        """[Bt] value + policy loss of ``after`` (the dynamics' latent after ``move`` from ``latent``, the latent of
        observation ``obs``) against the target network's initial inference on the real position after it (value 0
        and no policy loss where it ends the game), and [Bt] its latent-match and reconstruction losses against the
        real position."""
        if self.next_observations is None:
            raise ValueError("policy.action_value_loss_weight > 0 needs the env's next_observations rule: "
                             "build the policy through lzlite.entry (build_components) with a board env")
        with torch.no_grad():
            obs_after, legal_after = self.next_observations(obs, move)
            target = self.target_model.initial_inference(obs_after)
            terminal = (first_rewards.gather(1, move[:, None]).squeeze(1) != 0) | ~legal_after.any(-1)
            t_value = self.target_model.value_to_scalar(target.value).float().masked_fill(terminal, 0.0)
            t_policy = F.softmax(target.policy_logits.float().masked_fill(~legal_after, -1e9), dim=-1)
        policy_logits, value = model.prediction_step(after)
        policy_loss = -(t_policy * F.log_softmax(policy_logits, dim=-1)).sum(-1)
        loss = self._value_loss(value, t_value) + (~terminal).float() * policy_loss
        return (loss, self._latent_match(model, after, obs_after, source=(latent, move)),
                self._obs_recon(model, after, obs_after))

    @staticmethod
    def _extra_actions(action_reward: torch.Tensor, legal: torch.Tensor) -> torch.Tensor:
        """[Bt, K] int64: per unrolled position, half the time a rewarding legal action (uniform among them) when
        there is one, otherwise a uniformly random legal one (any action where nothing is legal: its loss is masked)."""
        legal = legal.float()
        legal = torch.where(legal.sum(-1, keepdim=True) > 0, legal, torch.ones_like(legal))
        win = legal * (action_reward != 0).float()
        n_win = win.sum(-1, keepdim=True)
        uniform = legal / legal.sum(-1, keepdim=True)
        weights = torch.where(n_win > 0, 0.5 * uniform + 0.5 * win / n_win.clamp(min=1), uniform)
        return torch.multinomial(weights.flatten(0, 1), 1).view(weights.shape[:2])


@POLICY_REGISTRY.register("gumbel_muzero")
class GumbelMuZeroPolicy(MuZeroPolicy):
    """Gumbel MuZero (Danihelka et al., 2022): Gumbel root + sequential halving, improved-policy targets."""

    @classmethod
    def default_config(cls) -> EasyDict:
        cfg = super().default_config()
        cfg.search_rule = "gumbel"  # Gumbel-top-k sampling and sequential halving at the root
        return cfg

    def _hook_policy_target(self, out: Any) -> np.ndarray:
        return out.improved_policy  # softmax(logits + sigma(completed Q)): the paper's policy target
