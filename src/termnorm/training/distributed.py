"""Multi-process training with torchrun + ``DistributedDataParallel`` (gloo on CPU, nccl on GPU).

Run the same ``termnorm train`` command under ``torchrun``::

    torchrun --nproc_per_node 4 --no-python termnorm train --kg KG --out MODEL ...

torchrun sets ``RANK``, ``LOCAL_RANK`` and ``WORLD_SIZE``; :func:`init_distributed` reads them,
joins the process group and pins each rank to ``cuda:LOCAL_RANK`` (or the CPU). What each
rank does, by design:

* every rank draws its own batch of the same step: shard ``rank · accum + micro`` of the
  counter-based sampler, so N ranks × A accumulation steps see exactly the micro-batches a
  single process with N·A accumulation steps would see (the effective batch is N·A·2k terms);
* DDP averages the gradients, so all ranks apply the same update and hold identical
  parameters (checked by ``tests/test_training_distributed.py``);
* every rank recomputes the hard-negative neighbour table itself (same weights → same table,
  no communication), and rank 0 alone logs, evaluates and writes checkpoints and the output;
  the others wait at a barrier.

Without torchrun (``WORLD_SIZE`` unset or 1) everything runs in one process and these
helpers are no-ops.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field

import torch
import torch.distributed as dist

logger = logging.getLogger(__name__)

__all__ = ["DistInfo", "barrier", "cleanup", "init_distributed"]


@dataclass(frozen=True)
class DistInfo:
    """This process's place in the job."""

    rank: int = 0
    world_size: int = 1
    local_rank: int = 0
    device: torch.device = field(default_factory=lambda: torch.device("cpu"))

    @property
    def enabled(self) -> bool:
        """True under torchrun with more than one process."""
        return self.world_size > 1

    @property
    def is_main(self) -> bool:
        """Rank 0 (logs, evaluates, writes files)."""
        return self.rank == 0


def init_distributed(device: str | None = None) -> DistInfo:
    """Join the torchrun process group when there is one; choose this rank's device.

    Raises:
        ValueError: a CUDA ``device`` where torch sees no GPU, or one GPU named for every
            torchrun process.
    """
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    local = int(os.environ.get("LOCAL_RANK", "0"))
    want_cuda = (device or ("cuda" if torch.cuda.is_available() else "cpu")).startswith("cuda")
    if want_cuda and not torch.cuda.is_available():
        raise ValueError(
            f"--device {device}: torch {torch.__version__} sees no CUDA GPU here; use --device "
            "cpu, or leave --device out (cuda where a GPU is visible, else cpu)"
        )
    if world > 1:
        if want_cuda and device in (None, "cuda"):
            dev = torch.device("cuda", local)
        elif want_cuda:
            raise ValueError(
                f"--device {device} would put all {world} torchrun processes on one GPU; "
                "pass --device cuda (each process takes GPU LOCAL_RANK) and choose the GPUs "
                "with CUDA_VISIBLE_DEVICES"
            )
        else:
            dev = torch.device(device or "cpu")
        if dev.type == "cuda":
            torch.cuda.set_device(dev)
        if not dist.is_initialized():
            dist.init_process_group(backend="nccl" if dev.type == "cuda" else "gloo")
        logger.info("rank %d/%d on %s", rank, world, dev)
        return DistInfo(rank, world, local, dev)
    dev = torch.device(device) if device else torch.device("cuda" if want_cuda else "cpu")
    return DistInfo(0, 1, 0, dev)


def barrier(info: DistInfo) -> None:
    """Wait for every rank (no-op in one process)."""
    if info.enabled and dist.is_initialized():
        dist.barrier()


def cleanup(info: DistInfo) -> None:
    """Leave the process group."""
    if info.enabled and dist.is_initialized():
        dist.destroy_process_group()
