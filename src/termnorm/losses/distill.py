"""Multilingual knowledge distillation: the student's vector of a text regresses onto the
frozen teacher's vector of its English name.

    L_distill = 1/|B| Σ_j ‖s(x_j) − t(en_j)‖²

where ``x_j`` is the English name ``en_j`` itself or one of its translations, ``s`` the student
and ``t`` the teacher (both pooled, un-normalised vectors). A batch of parallel pairs
(en_j, tr_j) thus gives the paper's ``‖s(en_j) − t(en_j)‖² + ‖s(tr_j) − t(en_j)‖²`` when its
two halves are summed. No hyper-parameters. Reference: Reimers & Gurevych, "Making
monolingual sentence embeddings multilingual using knowledge distillation", EMNLP 2020,
section 2 (sentence-transformers' ``MSELoss`` averages over the d dimensions as well, i.e.
this value divided by d).
"""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["DistillationLoss"]


class DistillationLoss(nn.Module):
    """Mean squared Euclidean distance between student rows and their teacher rows.

    ``forward(student [N, d], teacher [N, d]) -> scalar``; the teacher carries no gradient.
    """

    def forward(self, student: torch.Tensor, teacher: torch.Tensor) -> torch.Tensor:
        """``1/N Σ_i ‖student_i − teacher_i‖²`` in float32 (0 for an empty batch)."""
        if student.shape != teacher.shape:
            raise ValueError(
                f"student vectors {tuple(student.shape)} and teacher vectors "
                f"{tuple(teacher.shape)} differ in shape: the teacher must have the "
                "student's dimension and one row per student row"
            )
        if student.shape[0] == 0:
            return student.sum() * 0.0
        diff = student.float() - teacher.detach().float()  # [N, d]
        return diff.pow(2).sum(dim=1).mean()
