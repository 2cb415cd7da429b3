"""The service's response schemas for the records it returns (an annotation, a review
decision) keep their JSON shape: field names, types, required fields and descriptions as
committed in ``tests/data/golden/record_schemas.json``. Regenerate after an intended
change with ``TERMNORM_REGOLD=1 pytest tests/test_serve_record_schemas.py``."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")

from pydantic import ValidationError

from _project_fixtures import write_codes
from _serve_fixtures import serving
from termnorm.projects import init_project
from termnorm.serve.schemas import record_model

GOLDEN = Path(__file__).parent / "data" / "golden" / "record_schemas.json"
RECORDS = [  # and the request bodies that state one service's limits
    "AnnotateIn",
    "NormalizeIn",
    "SynonymPair",
    "SynonymsIn",
    "LeaseOut",
    "SynonymsOut",
    "QueueRowOut",
    "RowOut",
    "DecisionOut",
    "AnnotateOut",
    "AnnotationOut",
    "DecidedOut",
    "DocumentResult",
    "ProvenanceOut",
    "RankedConceptOut",
]


def _normalized(schema: Any) -> Any:
    """``schema`` with its ``required`` lists sorted: their order is no part of the contract."""
    if isinstance(schema, dict):
        return {
            key: sorted(value) if key == "required" else _normalized(value)
            for key, value in schema.items()
        }
    if isinstance(schema, list):
        return [_normalized(item) for item in schema]
    return schema


def test_record_schemas_keep_their_json_shape(index_dir: Path, tmp_path: Path) -> None:
    db = str(tmp_path / "labs.db")
    codes = write_codes(tmp_path / "codes.csv", [("G1", "glucose serum", "1", "")])
    init_project("labs", codes, "code", "label", db=db)
    with serving(index_dir, project="labs", project_db=db) as client:
        schemas = client.get("/openapi.json").json()["components"]["schemas"]
    found = {name: _normalized(schemas.get(name) or schemas[f"{name}-Output"]) for name in RECORDS}
    if os.environ.get("TERMNORM_REGOLD"):
        GOLDEN.write_text(json.dumps(found, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    assert found == json.loads(GOLDEN.read_text(encoding="utf-8"))


@dataclass(frozen=True)
class _Record:
    """A record."""

    code: str
    made: datetime
    note: str | None = None
    secret: str = ""


def test_record_model_follows_the_record_fields() -> None:
    model = record_model(
        _Record,
        "RecordOut",
        "The record as answered.",
        exclude={"secret"},
        types={"made": str, "total": int},
        descriptions={"note": "A note."},
    )
    schema = model.model_json_schema()
    assert list(schema["properties"]) == ["code", "made", "note", "total"]
    assert schema["required"] == ["code", "made", "note", "total"]  # defaults are not kept
    assert schema["properties"]["made"]["type"] == "string"
    assert schema["properties"]["note"]["description"] == "A note."
    assert schema["description"] == "The record as answered."
    only = record_model(_Record, "CodeOut", "Its code.", only={"code"}).model_json_schema()
    assert list(only["properties"]) == ["code"]
    with pytest.raises(ValidationError, match="total"):
        model(code="A1", made="2026-01-01", note=None)
