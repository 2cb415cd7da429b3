"""Trainable relation parameters that score (head, relation, tail) term triples.

Two kinds, one per CODER term–relation–term similarity:

``matrix``  S_rel(h, r, t) = cos(M_rᵀ e_h, e_t), one l×l matrix M_r per relation label,
            initialised to the identity (so S_rel = cos(e_h, e_t) before training).
            CODER (Yuan et al., KDD 2022 / JBI 2022), section 3.3.
``transe``  S_rel(h, r, t) = −‖ê_h + r − ê_t‖₂ with one vector r per label (zero init) over
            L2-normalised term vectors ê (so the head scores exactly the vectors that the
            saved encoder outputs). CODER ablation (section 5.1, appendix A.5).

A trained head is saved beside the sentence-transformers model as::

    MODEL_DIR/relations/config.json          {"kind", "labels", "dim", "format_version"}
    MODEL_DIR/relations/weights.safetensors  {"matrices": [R, l, l]} or {"vectors": [R, l]}

and read back with :meth:`RelationHead.load`. Link-prediction evaluators use
:meth:`RelationHead.score` on vectors from ``TermEncoder.encode`` (any scale works: both kinds
are invariant to the norm of their inputs).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from enum import Enum
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from termnorm.errors import ArtifactMismatchError

__all__ = ["RELATIONS_DIR", "RelationHead", "RelationKind"]

RELATIONS_DIR = "relations"
FORMAT_VERSION = 1


class RelationKind(str, Enum):
    """Form of the term–relation–term similarity."""

    MATRIX = "matrix"
    TRANSE = "transe"


class RelationHead(nn.Module):
    """Per-relation parameters: identity-initialised matrices or zero-initialised translations.

    Args:
        labels: relation labels, in the order of their integer indices.
        dim: term vector size l.
        kind: ``matrix`` (CODER) or ``transe`` (TransE-like ablation).
    """

    def __init__(
        self, labels: Sequence[str], dim: int, kind: RelationKind | str = RelationKind.MATRIX
    ) -> None:
        super().__init__()
        self.kind = RelationKind(kind)
        self.labels = list(labels)
        self.dim = int(dim)
        self.label_index = {label: i for i, label in enumerate(self.labels)}
        n = max(1, len(self.labels))  # keep a parameter even with no label (checkpoints)
        if self.kind is RelationKind.MATRIX:
            eye = torch.eye(self.dim).expand(n, self.dim, self.dim).clone()
            self.weight = nn.Parameter(eye)  # [R, l, l]
        else:
            self.weight = nn.Parameter(torch.zeros(n, self.dim))  # [R, l]

    # ------------------------------------------------------------------ scoring
    def project(self, h: torch.Tensor, rel_idx: torch.Tensor) -> torch.Tensor:
        """Relation-transformed heads [B, l]: M_rᵀ e_h (matrix) or ê_h + r (transe)."""
        rel_idx = rel_idx.to(self.weight.device).long()
        weight = self.weight.to(h.dtype)
        if self.kind is RelationKind.MATRIX:
            # (M_rᵀ h)_j = Σ_i h_i M_r[i, j], one matmul per distinct relation of the batch
            # (gathering weight[rel_idx] would hold B l×l copies: 300 MB at B = 128, l = 768)
            out = torch.zeros_like(h)  # [B, l]
            for r in torch.unique(rel_idx).tolist():
                rows = rel_idx == r
                out = out.index_put((rows,), h[rows] @ weight[r])
            return out
        return F.normalize(h, dim=-1) + weight[rel_idx]  # [B, l]

    def score(self, h: torch.Tensor, rel_idx: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        """S_rel between each (h_b, r_b) and every tail t_n: ``[B, l], [B], [N, l] -> [B, N]``.

        Higher is better for both kinds (cosine in [−1, 1]; negative distance ≤ 0).
        """
        proj = self.project(h, rel_idx)  # [B, l]
        t = t.to(proj.dtype)
        if self.kind is RelationKind.MATRIX:
            return F.normalize(proj, dim=-1) @ F.normalize(t, dim=-1).T  # [B, N]
        # −‖p − t‖ from the differences themselves (‖p‖² + ‖t‖² − 2p·t cancels badly near 0),
        # with a clamp so the gradient at distance 0 stays finite
        diff = proj.unsqueeze(1) - F.normalize(t, dim=-1).unsqueeze(0)  # [B, N, l]
        return -(diff * diff).sum(-1).clamp_min(1e-12).sqrt()  # [B, N]

    def indices(self, labels: Sequence[str]) -> torch.Tensor:
        """Integer indices [B] of relation labels (KeyError naming the unknown label)."""
        try:
            return torch.tensor([self.label_index[label] for label in labels], dtype=torch.long)
        except KeyError as exc:
            raise KeyError(
                f"relation label {exc.args[0]!r} is not one of this head's {len(self.labels)} "
                "labels"
            ) from None

    # ------------------------------------------------------------------ persistence
    def config(self) -> dict[str, object]:
        """What :meth:`load` needs besides the weights."""
        return {
            "format_version": FORMAT_VERSION,
            "kind": self.kind.value,
            "labels": self.labels,
            "dim": self.dim,
        }

    def save(self, model_dir: str | Path) -> Path:
        """Write ``model_dir/relations/{config.json, weights.safetensors}``; return that folder."""
        from safetensors.torch import save_file

        folder = Path(model_dir) / RELATIONS_DIR
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "config.json").write_text(json.dumps(self.config(), indent=2) + "\n")
        name = "matrices" if self.kind is RelationKind.MATRIX else "vectors"
        save_file(
            {name: self.weight.detach().float().cpu().contiguous()},
            str(folder / "weights.safetensors"),
        )
        return folder

    @classmethod
    def load(cls, model_dir: str | Path, device: str | torch.device = "cpu") -> RelationHead:
        """Read the head saved beside a model by ``termnorm train``."""
        from safetensors.torch import load_file

        folder = Path(model_dir) / RELATIONS_DIR
        cfg_path = folder / "config.json"
        if not cfg_path.is_file():
            raise ArtifactMismatchError(
                f"{model_dir} has no relation head ({RELATIONS_DIR}/config.json); it was not "
                "trained with a relation loss by 'termnorm train'"
            )
        cfg = json.loads(cfg_path.read_text())
        if cfg.get("format_version") != FORMAT_VERSION:
            raise ArtifactMismatchError(
                f"{cfg_path} has format {cfg.get('format_version')}, this termnorm reads "
                f"{FORMAT_VERSION}"
            )
        head = cls(cfg["labels"], cfg["dim"], cfg["kind"])
        tensors = load_file(str(folder / "weights.safetensors"))
        name = "matrices" if head.kind is RelationKind.MATRIX else "vectors"
        if name not in tensors or tensors[name].shape != head.weight.shape:
            raise ArtifactMismatchError(
                f"{folder}/weights.safetensors does not hold {name} of shape "
                f"{tuple(head.weight.shape)}"
            )
        with torch.no_grad():
            head.weight.copy_(tensors[name])
        return head.to(device)
