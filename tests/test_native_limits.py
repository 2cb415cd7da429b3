"""The native code on a query's path, at and just past each cap: the tokenizer (Rust), ONNX
Runtime and its int8 kernels, the int8 pre-scan and faiss answer or refuse; none ends the
process.

Each query text is a hostile shape (one unbroken token, emoji, combining marks, CJK, a bidi
override, NUL characters) at the query cap (``max_chars``: the tokenizer then truncates to
the encoder's ``max_length``) and one character past it (refused before any native code, in
the row's error); ``k`` is the service's largest (``--max-k``, 100), past the index's size.
A lone surrogate, which the tokenizer refuses with a ``TypeError`` for the whole batch, is
that row's error. The calls run in a fresh interpreter, so that a crash is an exit code here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from termnorm import api
from termnorm.search.query import DEFAULT_MAX_CHARS

SRC = Path(__file__).resolve().parents[1] / "src"
SHAPES = ["words", "token", "emoji", "combining", "cjk", "bidi", "nul"]

AUDIT = """
import json, sys
from termnorm.search.build import build, search_space
from termnorm.search.spec import PipelineSpec

exact, faiss_flat, faiss_hnsw, cap = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
SURROGATE = ["asthma \\ud800 attack", "asthma"]
bodies = {
    "words": "chest pain and heart attack " * cap,
    "token": "x" * cap,
    "emoji": "\\U0001F600\\u200d" * cap,
    "combining": "e\\u0301\\u0302" * cap,
    "cjk": "\\u7532\\u72b6\\u817a" * cap,
    "bidi": "\\u202e" + "asthma " * cap,
    "nul": "a\\x00" * cap,
}
# each ends in a letter, so that stripping leaves its length: cap, then cap + 1
texts = [body[: cap - 1] + "x" for body in bodies.values()]
texts += [body[:cap] + "x" for body in bodies.values()]
report = {}
for runtime in ("torch", "onnx", "onnx-int8"):
    space = search_space(exact, runtime)
    space.prepare()  # the int8 pre-scan, as the service builds it before it is ready
    matcher = build(PipelineSpec(index=exact, runtime=runtime), space)
    rows = [matcher.normalize_rows([text], 100)[0] for text in texts]  # single queries
    rows += matcher.normalize_rows(texts, 100)  # one batch
    report[runtime] = [[len(r.candidates), r.error is not None] for r in rows]
    # a lone surrogate (JSON's "\\ud800"), which the tokenizer refuses with a TypeError
    report[runtime + " surrogate"] = [r.error for r in matcher.normalize_rows(SURROGATE, 5)]
for name, index in (("faiss-flat", faiss_flat), ("faiss-hnsw", faiss_hnsw)):
    rows = build(PipelineSpec(index=index)).normalize_rows(texts, 100)
    report[name] = [[len(r.candidates), r.error is not None] for r in rows]
print(json.dumps(report))
"""


@pytest.fixture(scope="module")
def indexes(tiny_bert_path: Path, tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    pytest.importorskip("faiss")
    pytest.importorskip("onnxruntime")
    from conftest import make_tiny_kg

    root = tmp_path_factory.mktemp("native_limits")
    kg = make_tiny_kg().save(root / "kg", card={"sources": [{"format": "fixture"}]})
    backends = ("exact", "faiss-flat", "faiss-hnsw")
    for b in backends:
        api.build_index(kg, model=tiny_bert_path, out=root / b, backend=b, show_progress=False)
    return [root / b for b in backends]


def test_every_native_stage_answers_at_its_cap_and_refuses_past_it(
    indexes: list[Path], tmp_path: Path
) -> None:
    env = {**os.environ, "PYTHONPATH": str(SRC), "TERMNORM_CACHE": str(tmp_path / "cache")}
    env["OMP_NUM_THREADS"] = "1"
    args = [*map(str, indexes), str(DEFAULT_MAX_CHARS)]
    done = subprocess.run(
        [sys.executable, "-c", AUDIT, *args], capture_output=True, text=True, env=env, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]  # a crash would be -11 (SIGSEGV)
    report = json.loads(done.stdout.splitlines()[-1])
    at_cap = [[10, False]] * len(SHAPES)  # all 10 concepts: k = 100 is past the index's size
    past_cap = [[0, True]] * len(SHAPES)  # refused in the row's error ("input too long")
    surrogate = "not valid Unicode text: a lone surrogate U+D800 at character 7; give UTF-8 text"
    for runtime in ("torch", "onnx", "onnx-int8"):
        assert report[runtime] == (at_cap + past_cap) * 2, runtime
        assert report[f"{runtime} surrogate"] == [surrogate, None], runtime
    for backend in ("faiss-flat", "faiss-hnsw"):
        assert report[backend] == at_cap + past_cap, backend
