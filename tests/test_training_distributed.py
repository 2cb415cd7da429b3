"""torchrun with 2 CPU processes (gloo): ranks stay identical and match the designed update.

By design (see termnorm.training.distributed) rank r draws micro-batch shard r of each step
and DDP averages gradients, so 2 ranks × 1 micro-batch must train the same model as one
process with 2 accumulated micro-batches (shards 0 and 1).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

SCRIPT = textwrap.dedent(
    """
    import sys
    from pathlib import Path

    import torch

    sys.path.insert(0, {tests!r})
    from conftest import make_tiny_kg
    from termnorm.training import TrainConfig, Trainer
    from termnorm.training.distributed import cleanup, init_distributed

    torch.set_num_threads(1)
    out, accum = Path(sys.argv[1]), int(sys.argv[2])
    info = init_distributed("cpu")
    config = TrainConfig.from_dict(dict(
        base_model={base!r}, out=str(out), steps=6, k=8, m=2, lr=1e-3, warmup=1,
        max_length=16, device="cpu", precision="fp32", hard_refresh=3, log_every=1,
        freeze_embeddings=False, freeze_layers=0,
        checkpoint_every=0, grad_accum=accum, seed=5,
    ))
    trainer = Trainer(config, kg=make_tiny_kg(), dist_info=info)
    trainer.train()
    torch.save(trainer.model.state_dict(), out.parent / f"{{out.name}}-rank{{info.rank}}.pt")
    cleanup(info)
    """
)


@pytest.mark.slow
def test_two_ranks_train_like_two_accumulated_micro_batches(
    tiny_bert_path: Path, tmp_path: Path
) -> None:
    torchrun = shutil.which("torchrun")
    if torchrun is None:
        pytest.skip("torchrun not on PATH")
    tests = str(Path(__file__).resolve().parent)
    script = tmp_path / "run.py"
    script.write_text(SCRIPT.format(tests=tests, base=str(tiny_bert_path)))
    ddp = subprocess.run(
        [
            torchrun,
            "--standalone",
            "--nproc_per_node",
            "2",
            str(script),
            str(tmp_path / "ddp"),
            "1",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert ddp.returncode == 0, ddp.stderr[-3000:]
    single = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "single"), "2"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert single.returncode == 0, single.stderr[-3000:]
    rank0 = torch.load(tmp_path / "ddp-rank0.pt")
    rank1 = torch.load(tmp_path / "ddp-rank1.pt")
    one = torch.load(tmp_path / "single-rank0.pt")
    base = torch.load(tmp_path / "single-rank0.pt")  # keys
    moved = 0
    for name in base:
        torch.testing.assert_close(rank0[name], rank1[name], rtol=0, atol=0)
        torch.testing.assert_close(rank0[name], one[name], rtol=1e-4, atol=1e-5)
        moved += int(rank0[name].dtype.is_floating_point)
    assert moved > 0
    assert (tmp_path / "ddp" / "model.safetensors").is_file()
