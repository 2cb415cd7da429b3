"""The config that ``termnorm train`` resolves from its flags and ``--config`` file, one
invocation per objective, equals the one pinned in ``fixtures/train_configs.json`` (written
before the config was split into shared settings and one section per objective); a flat
``training_config.json`` of that shape reads back unchanged."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from _cli import run_main
from termnorm import api
from termnorm.training import TrainConfig, TrainResult

EXPECTED = Path(__file__).parent / "fixtures" / "train_configs.json"

INVOCATIONS: dict[str, str] = {
    "defaults": "",
    "coder+sty": "--loss coder+sty --k 16 --m 4 --rel-weight 0.5 --sty-weight 0.2 "
    "--no-hard-negatives --relation-lr 1e-3",
    "transe-margin": "--loss transe-margin --transe-margin 2 --synonym-share 0.5 "
    "--lang-balanced --hard-refresh 100 --hard-cluster 3",
    "ms-v2-prototype": "--loss ms-v2 --ms-lam-pos 0.8 --batches prototype --prototypes 2 "
    "--corpus c.txt --corpus-format text --max-length 32",
    "ms-v3": "--loss ms-v3 --kge {kg} --train-data od --mentions a.tsv --domain-share 0.25",
    "triplet": "--loss triplet --train-data od --mentions a.tsv --mentions b.tsv "
    "--od-ratio 0.5 --texts-per-concept 3 --k 32 --warmup 0",
    "mtcg": "--objective mtcg --mentions m.tsv --negatives keyword --keywords {kg}/kg.json "
    "--mention-batch 8 --implication-class-weights none --triplet-margin 0.5",
    "kge-inject": "--loss kge-inject --kge {kg} --corpus c.txt --inject-layer 2 "
    "--mlm-probability 0.2 --passages-per-batch 3",
    "config-file": "--config {tmp}/cfg.json --lr 1e-4 --wise-alpha 0.5",
    "distill": "--loss distill --distill-with ms --distill-weight 0.5 --distill-pairs 16 "
    "--lang-balanced",
}


def _resolved(
    args: list[str],
    kg: Path,
    tmp: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> dict[str, Any]:
    """The flat dict of the config ``termnorm train ARGS`` hands to ``termnorm.train``, its
    paths written as ``{kg}``/``{tmp}``."""
    seen: list[TrainConfig] = []

    def fake_train(config: TrainConfig, resume: bool = False) -> TrainResult:
        seen.append(config)
        return TrainResult(Path(str(config.out)), 0)

    monkeypatch.setattr(api, "train", fake_train)
    words = [w.format(kg=kg, tmp=tmp) for w in args]
    code, _, err = run_main(["train", "--kg", str(kg), "--out", str(tmp / "m"), *words], capsys)
    assert code == 0, err
    (config,) = seen
    config.validate()
    text = json.dumps(config.to_dict()).replace(str(kg), "{kg}").replace(str(tmp), "{tmp}")
    resolved: dict[str, Any] = json.loads(text)
    return resolved


@pytest.mark.parametrize("name", sorted(INVOCATIONS))
def test_each_objectives_invocation_resolves_to_the_pinned_config(
    name: str,
    tiny_kg_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cfg = {"steps": 3, "loss": "ms", "lr": 0.5, "hard_max_concepts": 5, "negatives": "tfidf"}
    (tmp_path / "cfg.json").write_text(json.dumps(cfg))
    resolved = _resolved(INVOCATIONS[name].split(), tiny_kg_dir, tmp_path, capsys, monkeypatch)
    assert resolved == json.loads(EXPECTED.read_text())[name]


def test_a_saved_flat_training_config_reads_back_unchanged() -> None:
    for name, saved in json.loads(EXPECTED.read_text()).items():
        again = json.dumps(TrainConfig.from_dict(saved).to_dict())  # tuples as lists
        assert json.loads(again) == saved, name


def test_the_paper_settings_are_unchanged() -> None:
    paper = TrainConfig.paper(out="m").to_dict()
    defaults = TrainConfig().to_dict()
    changed = {k: v for k, v in paper.items() if defaults[k] != v}
    assert changed == {
        "out": "m",
        "loss": "coder",
        "k": 128,
        "m": 8,
        "lr": 2e-5,
        "steps": 100_000,
        "warmup": 10_000,
        "grad_accum": 8,
        "max_length": 32,
        "synonym_share": 0.0,
        "hard_negatives": False,
        "freeze_layers": 0,
        "freeze_embeddings": False,
        "weight_decay": 0.0,
    }
    assert set(paper) == set(defaults) and len(defaults) == 79


def test_flat_keys_land_in_their_objectives_section() -> None:
    config = TrainConfig.from_dict({"m": 4, "negatives": "tfidf", "inject_layer": 2, "k": 16})
    assert (config.k, config.sampler.m, config.injection.inject_layer) == (16, 4, 2)
    assert (
        config.mtcg.negatives.value == "tfidf" and config.get("negatives") is config.mtcg.negatives
    )
    with pytest.raises(ValueError, match=r"unknown TrainConfig key.s. negative .*negatives"):
        TrainConfig.from_dict({"negative": "tfidf"})


def test_each_section_checks_its_own_rules_for_its_objective() -> None:
    keyword = {"negatives": "keyword", "mention_batch": 0}
    TrainConfig.from_dict({"loss": "ms", **keyword}).validate()  # not read by the MS loss
    with pytest.raises(ValueError, match="--mention-batch must be at least 1"):
        TrainConfig.from_dict({"loss": "mtcg", **keyword}).validate()
    with pytest.raises(ValueError, match="--negatives keyword needs --keywords FILE"):
        TrainConfig.from_dict({"loss": "mtcg", "negatives": "keyword"}).validate()
    TrainConfig.from_dict({"hard_refresh": 0, "hard_negatives": False}).validate()
    with pytest.raises(ValueError, match="--hard-refresh must be at least 1"):
        TrainConfig.from_dict({"hard_refresh": 0}).validate()
    with pytest.raises(ValueError, match=r"--synonym-share must be in \[0, 1\]"):
        TrainConfig.from_dict({"synonym_share": 1.5}).validate()
    with pytest.raises(ValueError, match=r"--mlm-probability must be in \(0, 1\)"):
        TrainConfig.from_dict(
            {"loss": "kge-inject", "kge": "k", "corpus": ["c"], "mlm_probability": 1.0}
        ).validate()


def test_a_resume_names_changed_settings_but_not_runtime_ones(tmp_path: Path) -> None:
    saved = TrainConfig.from_dict({"kg": tmp_path / "kg", "m": 2}).to_dict()
    same_place = TrainConfig.from_dict({**saved, "kg": str(tmp_path / "x" / ".." / "kg")})
    assert same_place.changed_from(saved) == []
    moved = TrainConfig.from_dict({**saved, "m": 4, "negatives": "tree", "steps": 9, "threads": 2})
    assert moved.changed_from(saved) == [
        "m (checkpoint: 2, now: 4)",
        "negatives (checkpoint: 'online', now: 'tree')",
    ]


def test_the_settings_load_without_torch() -> None:
    """The CLI generates ``termnorm train``'s flags from them at every start-up."""
    code = "import sys, termnorm.training.config; print('torch' in sys.modules)"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[1] / "src")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.stdout.strip() == "False", out.stderr
