"""The decoder Y stored by token role, and mini-batches in role coordinates (issue 16).

Rows of Y (R, M_ctx, M_out) are kept as three blocks (``Problem.token_roles``):
    Yc (R, m_c, O)     the common tokens, one block shared by every class;
    Yd (R, K, d, O)    each class's distinct tokens (rows past |G_DT(n)| are padding: zero, never trained);
    Yu (R, m_u, O)     tokens of no class (only weight decay moves them).
A class's context then lives in S = m_c + d role columns (common block, then its own distinct block), so
o = fᵀY is one bmm on Yc plus one on Yd[n], with no gather of rows and no copy of the common rows per class.
The replica axis of the blocks is in *group order* (see :class:`ReplicaGroups`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import torch

from scansnap.kinds.synthetic.science.data import Problem


@dataclass(frozen=True)
class Chunk:
    """Consecutive rows of the blocks (group order) trained together: ``parts`` lists (data stream, replicas)
    in row order.  All its replicas' batches have the same number of slots per class."""

    rows: slice
    parts: tuple[tuple[int, int], ...]


class ReplicaGroups:
    """The replica axis, regrouped so that replicas sharing a data stream are contiguous.

    Public order is pair-major (replica r = p·S + j for lr pair p and seed position j); group order is
    seed-major (i = j·P + p): seed position j's P replicas are rows j·P … (j+1)·P − 1.  ``shared=True``
    (mean field: every replica sees the same data) keeps public order as one group.
    """

    def __init__(self, n_pairs: int, seed_data: list[int], shared: bool):
        P, S = n_pairs, len(seed_data)
        self.R = P * S
        if shared:
            self.spans = [(self.R, 0)]  # (replicas, data stream) per group, in row order
            self.order = torch.arange(self.R)
        else:
            self.spans = [(P, seed_data[j]) for j in range(S)]
            self.order = torch.arange(self.R).view(P, S).T.reshape(-1)  # group row i → public replica
        self.inverse = torch.argsort(self.order)  # public replica → group row
        self.identity = bool((self.order == torch.arange(self.R)).all())

    @functools.lru_cache(maxsize=64)  # noqa: B019 (one instance per trainer, a handful of slot patterns)
    def chunks(self, slots: tuple[int, ...], chunk: int) -> list[Chunk]:
        """Runs of consecutive groups whose batches have equal slots per class (``slots`` per data stream),
        cut into chunks of at most ``chunk`` replicas.  A replica's tensors then have shapes that depend only
        on its own batch, whichever replicas share its chunk."""
        out: list[Chunk] = []
        parts: list[tuple[int, int]] = []
        row = start = 0
        size = -1
        for n, data in self.spans:
            while n:
                if parts and (slots[data] != size or row - start == chunk):
                    out.append(Chunk(slice(start, row), tuple(parts)))
                    parts, start = [], row
                take = min(n, chunk - (row - start))
                parts.append((data, take))
                size, row, n = slots[data], row + take, n - take
        out.append(Chunk(slice(start, row), tuple(parts)))
        return out

    def to_groups(self, t: torch.Tensor) -> torch.Tensor:
        """Replica axis from public to group order (``t`` itself when they agree)."""
        return t if self.identity else t.index_select(0, self.order.to(t.device))

    def to_public(self, t: torch.Tensor) -> torch.Tensor:
        """Replica axis from group to public order (``t`` itself when they agree)."""
        return t if self.identity else t.index_select(0, self.inverse.to(t.device))


@dataclass
class RoleBatch:
    """Mini-batches grouped by class in role coordinates; the leading axis is one per replica, or 1 when
    all replicas share the batch.

    logx (r, K, G, S): ln of the context counts (−∞ where 0; padding slots hold a one-token context);
    mask (r, K, G, 1): 1 for a sample, 0 for a padding slot; neg_w (r, K·G): −weight per slot (0 on padding);
    scale: every sample's weight (1/B, or 1/K in the mean field); label (K, G, 1): the slot's decoder output;
    minus_one (K, G, 1): −1, the e_n of α − e_n."""

    logx: torch.Tensor
    mask: torch.Tensor
    neg_w: torch.Tensor
    scale: float
    label: torch.Tensor
    minus_one: torch.Tensor

    @property
    def slots(self) -> int:
        return self.logx.shape[2]

    @staticmethod
    def join(batches: list[RoleBatch], counts: list[int]) -> RoleBatch:
        """One batch for consecutive replicas: ``counts[i]`` replicas see ``batches[i]`` (equal shapes)."""
        if len(batches) == 1:
            return batches[0]
        first = batches[0]

        def cat(name: str) -> torch.Tensor:
            parts = [getattr(b, name) for b in batches]
            return torch.cat([t.expand(n, *t.shape[1:]) for t, n in zip(parts, counts, strict=True)])

        return RoleBatch(cat("logx"), cat("mask"), cat("neg_w"), first.scale, first.label, first.minus_one)


class RoleLayout:
    """Conversions between the vocabulary's token order and the role blocks, for one problem."""

    def __init__(self, problem: Problem, device: torch.device, dtype: torch.dtype):
        roles = problem.token_roles
        self.K, self.d = roles.distinct.shape
        self.mc, self.mu, self.S = len(roles.common), len(roles.unused), len(roles.common) + roles.distinct.shape[1]
        self.device, self.dtype, self.M_ctx = device, dtype, problem.M_ctx
        self.np_dtype = np.float64 if dtype == torch.float64 else np.float32
        token = np.concatenate([np.broadcast_to(roles.common, (self.K, self.mc)), roles.distinct], axis=1)  # (K, S)
        self.token = token
        col_of = np.full((self.K, problem.M_ctx), self.S)  # role column of (class, token); S = not a column
        for n in range(self.K):
            ok = token[n] >= 0
            col_of[n, token[n, ok]] = np.flatnonzero(ok)
        ids, probs = problem.support
        self.cols = np.where(probs > 0, np.take_along_axis(col_of, ids, 1), self.S)  # (K, s) support slot → column
        self.first_col = self.cols[:, 0]
        flat = problem.psi[:, None] * problem.M_ctx + np.maximum(token, 0)
        self.zidx = torch.as_tensor(flat.reshape(-1), device=device)  # (K·S,) into Zq.view(R, Q·M_ctx)
        self.common = torch.as_tensor(roles.common, device=device)
        self.unused = torch.as_tensor(roles.unused, device=device)
        mask = roles.distinct >= 0
        self.distinct_rows = torch.as_tensor(np.flatnonzero(mask.ravel()), device=device)  # valid rows of (K·d)
        self.distinct_ids = torch.as_tensor(roles.distinct[mask], device=device)
        self.labels = torch.as_tensor(problem.label_ids, device=device)
        self.per_slots: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}  # G → (label, −1) tensors (K, G, 1)
        self.block_of = np.zeros(problem.M_ctx, dtype=np.int64)  # 0 common, 1 distinct, 2 unused
        self.row_in_block = np.zeros(problem.M_ctx, dtype=np.int64)
        for b, ids in enumerate((roles.common, roles.distinct.ravel(), roles.unused)):
            ok = ids >= 0
            self.block_of[ids[ok]] = b
            self.row_in_block[ids[ok]] = np.flatnonzero(ok)

    # ----------------------------------------------------------------- parameters
    def pieces(self, replicas: int, n_out: int) -> list[tuple[int, int]]:
        """Token row ranges of about 4M values each, so that moving Y to or from the blocks never needs a
        second copy of it."""
        step = max(1, (1 << 22) // max(1, replicas * n_out))
        return [(a, min(a + step, self.M_ctx)) for a in range(0, self.M_ctx, step)]

    def _block_index(self, start: int, stop: int) -> list[tuple[int, torch.Tensor, torch.Tensor]]:
        """(block, which of the token rows start … stop−1 it holds, their rows in the block)."""
        tokens = np.arange(start, stop)
        out = []
        for b in range(3):
            sel = self.block_of[tokens] == b
            if sel.any():
                out.append((b, torch.as_tensor(sel), torch.as_tensor(self.row_in_block[tokens[sel]])))
        return out

    def write_rows(self, piece: torch.Tensor, start: int, blocks: list[torch.Tensor], rows: torch.Tensor) -> None:
        """Token rows start … of a Y, ``piece`` (n, O) (every replica) or (len(rows), n, O), into ``blocks``
        (Yc, Yd, Yu) at the replicas ``rows`` (group order)."""
        for b, sel, idx in self._block_index(start, start + piece.shape[-2]):
            flat = blocks[b].view(blocks[b].shape[0], -1, blocks[b].shape[-1])
            r, i = rows.to(flat.device), idx.to(flat.device)
            flat[r[:, None], i[None, :]] = piece[..., sel.to(piece.device), :].to(flat.device)

    def read_rows(self, out: torch.Tensor, start: int, blocks: list[torch.Tensor], rows: torch.Tensor) -> None:
        """``out`` (len(rows), n, O) ← token rows start … start+n of Y, held in ``blocks`` at the replicas ``rows``."""
        for b, sel, idx in self._block_index(start, start + out.shape[1]):
            flat = blocks[b].view(blocks[b].shape[0], -1, blocks[b].shape[-1])
            r, i = rows.to(flat.device), idx.to(flat.device)
            out[:, sel.to(out.device)] = flat[r[:, None], i[None, :]].to(out.device)

    def split(self, Y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Y (R, M_ctx, O) in token order → new blocks (Yc, Yd, Yu) (padding rows 0)."""
        R, _, n_out = Y.shape
        blocks = [Y.new_zeros(R, self.mc, n_out), Y.new_zeros(R, self.K, self.d, n_out), Y.new_zeros(R, self.mu, n_out)]
        for a, b in self.pieces(R, n_out):
            self.write_rows(Y[:, a:b], a, blocks, torch.arange(R, device=Y.device))
        return blocks[0], blocks[1], blocks[2]

    def join(
        self,
        Yc: torch.Tensor,
        Yd: torch.Tensor,
        Yu: torch.Tensor,
        rows: torch.Tensor | None = None,
        out: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Y (len(rows), M_ctx, O) in token order from the blocks' replicas ``rows`` (default all), into ``out``
        (default a new tensor)."""
        rows = torch.arange(Yc.shape[0], device=Yc.device) if rows is None else rows
        n_out = Yc.shape[-1]
        if out is None:
            out = Yc.new_empty(len(rows), self.M_ctx, n_out)
        for a, b in self.pieces(len(rows), n_out):
            self.read_rows(out[:, a:b], a, [Yc, Yd, Yu], rows)
        return out

    # ----------------------------------------------------------------- batches
    def batches(self, draws: list[tuple[np.ndarray, np.ndarray]], slots: int) -> list[RoleBatch]:
        """Mini-batches (classes (B,), support-coordinate counts (B, s)), one per data stream, grouped by class:
        slot g of class n holds its g-th sample; G = ``slots``, or the stream's largest class count if that is
        more; empty slots get weight 0.  All streams are converted in one pass."""
        U, B, K, S = len(draws), len(draws[0][0]), self.K, self.S
        classes = np.concatenate([d[0] for d in draws])
        key = classes + np.repeat(K * np.arange(U), B)  # (stream, class)
        per_class = np.bincount(key, minlength=U * K)
        G = np.maximum(slots, per_class.reshape(U, K).max(1))
        Gm = int(G.max())
        order = np.argsort(key, kind="stable")
        slot = np.empty(U * B, dtype=np.int64)
        slot[order] = np.arange(U * B) - (np.cumsum(per_class) - per_class)[key[order]]
        row = key * Gm + slot  # (stream, class, slot) flattened
        x = np.zeros((U, K, Gm, S + 1), dtype=self.np_dtype)  # column S: the support's padding slots
        x[:, np.arange(K), :, self.first_col] = 1.0  # empty slots: any valid context
        flat = (row[:, None] * (S + 1) + self.cols[classes]).ravel()
        np.put(x, flat, np.concatenate([d[1] for d in draws]).ravel())
        mask = np.zeros((U, K, Gm), dtype=self.np_dtype)
        mask.reshape(-1)[row] = 1.0
        logx, m = self.tensor(x)[..., :S].log_(), self.tensor(mask)
        return [self.make_batch(logx[i : i + 1, :, : G[i]], m[i : i + 1, :, : G[i]], 1 / B) for i in range(U)]

    def mean_field(self, P: np.ndarray) -> RoleBatch:
        """Every class once with x = P(·|n) (K, M_ctx) and weight 1/K (the T→∞ expectation over classes)."""
        x = np.where(self.token >= 0, np.take_along_axis(P, np.maximum(self.token, 0), 1), 0.0)
        logx = self.tensor(x[None, :, None, :].astype(self.np_dtype)).log_()
        return self.make_batch(logx, self.tensor(np.ones((1, self.K, 1), dtype=self.np_dtype)), 1 / self.K)

    def tensor(self, a: np.ndarray) -> torch.Tensor:
        """A fresh numpy array as a tensor on the run's device (no copy on the CPU)."""
        return torch.from_numpy(a).to(self.device)

    def make_batch(self, logx: torch.Tensor, mask: torch.Tensor, scale: float) -> RoleBatch:
        """logx (1, K, G, S), mask (1, K, G) 1 = sample, 0 = padding, scale = a sample's weight."""
        G = mask.shape[2]
        if G not in self.per_slots:
            label = self.labels.view(self.K, 1, 1).expand(self.K, G, 1).contiguous()
            self.per_slots[G] = label, torch.full((self.K, G, 1), -1.0, dtype=self.dtype, device=self.device)
        label, minus_one = self.per_slots[G]
        return RoleBatch(logx, mask.unsqueeze(-1), mask.reshape(1, -1) * -scale, scale, label, minus_one)
