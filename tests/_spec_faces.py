"""Run in a fresh interpreter by ``test_spec_faces.py``: a new search option added in one place
(a ``PipelineSpec`` subclass with one field, and a learned stage switched on by it) must reach
every face with no other edit.

The subclass replaces ``termnorm.search.spec.PipelineSpec`` before any face is imported, as a
new field in ``search/spec.py`` would be seen. The stage records, per face, the value it was
built with; the script prints the record as JSON on its last line.

The dummy stage sits before the ranker, so ``termnorm rank train`` recalls its training
candidates through it as ``build(spec)`` would.

Usage: ``python tests/_spec_faces.py INDEX_DIR WORK_DIR BERT_DIR`` (the index's model)
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import termnorm.search.spec as spec_module
from termnorm.registry import Entry
from termnorm.search.spec import PipelineSpec, option

SEEN: dict[str, list[Any]] = {}


@dataclass(frozen=True)
class DummySpec(PipelineSpec):
    """The spec with one more option, as a new field of ``search/spec.py`` would be."""

    dummy: int | None = option(None, "A dummy stage's setting (test only).", min=1)


spec_module.PipelineSpec = DummySpec  # type: ignore[misc]


class _Recording:
    """The dummy stage: the matcher it wraps, recording the stage's setting per face at every
    search (a built matcher is cached and reused across faces, so building is not enough)."""

    def __init__(self, inner: Any, artifact: Any) -> None:
        self.inner, self.artifact = inner, artifact

    def _seen(self) -> None:
        SEEN.setdefault(os.environ["FACE"], []).append(self.artifact)

    def normalize_rows(self, texts: Any, k: int = 5) -> Any:
        self._seen()
        return self.inner.normalize_rows(texts, k)

    def normalize_batch(self, texts: Any, k: int = 5) -> Any:
        self._seen()
        return self.inner.normalize_batch(texts, k)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def _dummy_stage(spec: Any, matcher: Any, space: Any, artifact: Any) -> Any:
    return _Recording(matcher, artifact)


def _main(args: list[str]) -> str:
    from termnorm.cli.main import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
        main(args)
    return out.getvalue()


def run(index: Path, work: Path, bert: Path) -> dict[str, Any]:
    from termnorm.search import stages

    # one registration, before the ranker (rank train recalls through it)
    stages.STAGES.add(Entry("dummy", _dummy_stage, facts={"field": "dummy"}), before="ranker")
    import termnorm

    os.environ["FACE"] = "cli"
    _main(["normalize", "heart attack", "--index", str(index), "--dummy", "7", "--json"])
    os.environ["FACE"] = "api"
    termnorm.normalize("heart attack", index=index, dummy=7)  # type: ignore[call-arg]
    os.environ["FACE"] = "batch"
    source, output = work / "in.tsv", work / "out.tsv"
    source.write_text("term\nheart attack\nasthma\n", encoding="utf-8")
    termnorm.normalize_file(source, output, index=index, dummy=7)  # type: ignore[call-arg]
    os.environ["TERMNORM_CACHE"] = str(work / "cache")  # the compiled dictionaries go there
    os.environ["FACE"] = "service"
    from fastapi.testclient import TestClient

    from _serve_fixtures import wait_ready  # imported here: after the spec is replaced
    from termnorm.serve.app import create_app

    app = create_app(spec=DummySpec(index=index, dummy=7))
    with TestClient(app, base_url="http://127.0.0.1") as client:
        wait_ready(client)  # the index loads in the background; a slow CI machine sees 'loading'
        answer = client.post("/v1/normalize", json={"texts": ["heart attack"]})
        assert answer.status_code == 200, answer.text
        os.environ["FACE"] = "annotate service"
        document = {"id": "1", "text": "Denies heart attack."}
        answer = client.post("/v1/annotate", json={"documents": [document]})
        assert answer.status_code == 200, answer.text
    os.environ["FACE"] = "projects"
    codes, db = work / "codes.csv", work / "p.termnorm.db"
    codes.write_text("code,name\nL1,heart attack\nL2,asthma\n", encoding="utf-8")
    _main(
        [
            *("map", "init", "p", "--source", str(codes), "--code-column", "code"),
            *("--text-column", "name", "--index", str(index), "--dummy", "7", "--db", str(db)),
        ]
    )
    _main(["map", "run", "p", "--db", str(db)])
    os.environ["FACE"] = "annotate cli"
    _main(["annotate", "Denies heart attack.", "--index", str(index), "--dummy", "7"])
    os.environ["FACE"] = "annotate api"
    termnorm.annotate("Denies heart attack.", index=index, dummy=7)
    os.environ["FACE"] = "rank train"
    mentions = work / "train.tsv"
    mentions.write_text("T:0001\theart attacks\nT:0002\thigh pressure\nT:0003\tdiabetic\n")
    _main(
        [
            *("rank", "train", "--index", str(index), "--mentions", str(mentions)),
            *("--format", "tsv", "--plain", "--model", str(bert), "--k-c", "2", "--folds", "2"),
            *("--max-length", "16", "--holdout", "0", "--epochs", "1", "--dummy", "7"),
            *("--out", str(work / "ranker"), "--json"),
        ]
    )
    os.environ["FACE"] = "annotate spacy"
    import spacy

    import termnorm.integrations.spacy_component  # what the entry point imports

    nlp = spacy.blank("en")
    nlp.add_pipe("termnorm", config={"index": str(index), "dummy": 7})
    nlp("Denies heart attack.")
    helps = {
        face: "--dummy" in _main([*command, "--help"])
        for face, command in {
            "normalize": ["normalize"],
            "eval normalize": ["eval", "normalize"],
            "serve": ["serve"],
            "map init": ["map", "init"],
            "annotate": ["annotate"],
            "rank train": ["rank", "train"],
        }.items()
    }
    return {"seen": SEEN, "help": helps}


if __name__ == "__main__":
    result = run(Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]))
    print(json.dumps(result))
