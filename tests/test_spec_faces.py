"""One spec everywhere: a search option added to ``PipelineSpec`` (a subclass with one field,
and a learned stage switched on by it) reaches the CLI, the Python API, batch files, the
service, mapping projects, ranker training and annotation (CLI, API, service, spaCy) with no
other edit (``tests/_spec_faces.py`` runs the faces in a fresh interpreter, where the subclass
stands in for the spec before any face is imported).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def test_a_new_spec_field_reaches_every_face(
    index_dir: Path, tiny_bert_path: Path, tmp_path: Path
) -> None:
    script = HERE / "_spec_faces.py"
    done = subprocess.run(
        [sys.executable, str(script), str(index_dir), str(tmp_path), str(tiny_bert_path)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert {face: set(values) for face, values in result["seen"].items()} == {
        face: {7}
        for face in (
            "cli",
            "api",
            "batch",
            "service",
            "projects",
            "annotate cli",
            "annotate api",
            "rank train",
            "annotate service",
            "annotate spacy",
        )
    }
    assert result["help"] == {
        "normalize": True,
        "eval normalize": True,
        "serve": True,
        "map init": True,
        "annotate": True,
        "rank train": True,
    }
