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
from transformers import AutoModel

SCRIPT = textwrap.dedent(
    """
    import sys
    from pathlib import Path

    import torch

    sys.path.insert(0, {tests!r})
    from conftest import make_tiny_kg
    from termnorm.training import TrainConfig, build_trainer
    from termnorm.training.distributed import cleanup, init_distributed

    torch.set_num_threads(1)
    out, accum, loss = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    info = init_distributed("cpu")
    config = TrainConfig.from_dict(dict(
        base_model={base!r}, out=str(out), steps=6, k=8, m=2, lr=1e-3, warmup=1,
        max_length=16, device="cpu", precision="fp32", hard_refresh=3, log_every=1,
        freeze_embeddings=False, freeze_layers=0,
        checkpoint_every=0, grad_accum=accum, seed=5, loss=loss, synonym_share=0.5,
    ))
    trainer = build_trainer(config, make_tiny_kg(), dist_info=info)
    trainer.train()
    torch.save(trainer.module.state_dict(), out.parent / f"{{out.name}}-rank{{info.rank}}.pt")
    cleanup(info)
    """
)


@pytest.mark.slow
@pytest.mark.parametrize("loss", ["coder", "transe"])  # matrix head; data-derived λ_rel
def test_two_ranks_train_like_two_accumulated_micro_batches(
    tiny_bert_path: Path, tmp_path: Path, loss: str
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
            loss,
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert ddp.returncode == 0, ddp.stderr[-3000:]
    single = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "single"), "2", loss],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert single.returncode == 0, single.stderr[-3000:]
    rank0 = torch.load(tmp_path / "ddp-rank0.pt")
    rank1 = torch.load(tmp_path / "ddp-rank1.pt")
    one = torch.load(tmp_path / "single-rank0.pt")
    init = AutoModel.from_pretrained(str(tiny_bert_path)).state_dict()
    assert rank0.keys() == one.keys()
    moved = 0
    for name in one:
        torch.testing.assert_close(rank0[name], rank1[name], rtol=0, atol=0)
        torch.testing.assert_close(rank0[name], one[name], rtol=1e-4, atol=1e-5)
        start = init.get(name.removeprefix("model."))
        moved += int(start is not None and not torch.equal(start, one[name]))
    assert moved > 10  # the encoder really trained
    w = one["objective.relation.head.weight"]  # matrices start at I, translations at 0
    assert not torch.equal(w, torch.eye(32).expand_as(w) if w.dim() == 3 else torch.zeros_like(w))
    assert (tmp_path / "ddp" / "model.safetensors").is_file()


@pytest.mark.parametrize("device", ["cuda", "cuda:1"])
def test_a_cuda_device_without_a_gpu_is_refused_naming_the_way_out(
    device: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from termnorm.training.distributed import init_distributed

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    with pytest.raises(ValueError, match=rf"--device {device}: torch .* sees no CUDA GPU.*cpu"):
        init_distributed(device)
    assert init_distributed("cpu").device == torch.device("cpu")
    assert init_distributed(None).device == torch.device("cpu")  # the default follows the GPU
