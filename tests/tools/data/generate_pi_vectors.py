"""Regenerate the pi 1.6 vectors in this folder (needs node and pi 1.6 installed, see the brief).

    PI_DIST=/tmp/realpi/node_modules/@earendil-works python tests/tools/data/generate_pi_vectors.py

Random inputs (fixed seeds) are run through pi's own compiled modules (``edit-diff.js`` of
pi-coding-agent, ``validation.js`` of pi-ai); the JSON files record inputs and pi's outputs.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2] / "src"))

from tau.tools.bash import PARAMETERS as BASH  # noqa: E402
from tau.tools.edit import PARAMETERS as EDIT  # noqa: E402
from tau.tools.read import PARAMETERS as READ  # noqa: E402

DIST = os.environ.get("PI_DIST", "/tmp/realpi/node_modules/@earendil-works")

EDIT_ORACLE = """
import { applyEditsToNormalizedContent, generateEditDiff, normalizeToLF, applyReplacementsToOriginal }
  from "%s/pi-coding-agent/dist/core/tools/edit-diff.js";
import { readFileSync } from "fs";
const out = [];
for (const c of JSON.parse(readFileSync(0, "utf-8"))) {
  try {
    const bom = c.content.startsWith("\\uFEFF") ? "\\uFEFF" : "";
    const content = bom ? c.content.slice(1) : c.content;
    const norm = normalizeToLF(content);
    const r = applyEditsToNormalizedContent(norm, c.edits, c.path);
    const details = generateEditDiff(c.path, r.baseContent, r.newContent, r.replacements);
    const written = bom + (content === norm ? r.newContent : applyReplacementsToOriginal(content, r.replacements));
    out.push({ ...c, details, written });
  } catch (e) { out.push({ ...c, error: e.message }); }
}
console.log(JSON.stringify(out));
"""

VALIDATION_ORACLE = """
import { validateToolArguments } from "%s/pi-ai/dist/utils/validation.js";
import { readFileSync } from "fs";
const out = [];
for (const c of JSON.parse(readFileSync(0, "utf-8"))) {
  try { out.push({ ...c, value: validateToolArguments({ name: c.name, parameters: c.schema }, { name: c.name, arguments: c.args }) }); }
  catch (e) { out.push({ ...c, error: e.message }); }
}
console.log(JSON.stringify(out));
"""

WORDS = [
    "a",
    "b",
    "foo",
    "bar",
    "  x",
    "y  ",
    "\u201cq\u201d",
    "\u2018s\u2019",
    "\u2014",
    "z\u00a0w",
    "",
    "\uff46\uff55",
]

OTHER = {
    "type": "object",
    "required": ["a"],
    "properties": {
        "a": {"type": "integer", "minimum": 1, "maximum": 10},
        "b": {"type": "array", "items": {"type": "string", "minLength": 2}},
        "c": {"type": "boolean"},
        "d": {"type": "string", "enum": ["x", "y", "z"]},
        "e": {"anyOf": [{"type": "number"}, {"type": "null"}]},
        "f": {"type": ["string", "null"]},
        "g": {"type": "object", "properties": {"k": {"const": "v"}}, "additionalProperties": False},
        "h": {
            "oneOf": [
                {
                    "type": "object",
                    "properties": {"kind": {"const": "a"}, "n": {"type": "number"}},
                    "required": ["kind", "n"],
                },
                {
                    "type": "object",
                    "properties": {"kind": {"const": "b"}, "s": {"type": "string"}},
                    "required": ["kind", "s"],
                },
            ]
        },
        "i": {
            "type": "array",
            "items": {"type": "number"},
            "minItems": 1,
            "maxItems": 2,
            "uniqueItems": True,
        },
        "j": {"type": "string", "pattern": "^[a-z]+$", "maxLength": 4},
        "k": {"$ref": "#/$defs/pos"},
        "l": {"type": "number", "exclusiveMinimum": 0, "multipleOf": 0.5},
    },
    "$defs": {"pos": {"type": "integer", "minimum": 0}},
}

VALUES = [
    None,
    True,
    False,
    0,
    1,
    2,
    -1,
    3.5,
    "3",
    "3.5",
    " 4 ",
    "",
    "true",
    "false",
    "TRUE",
    "0",
    "abc",
    "0x10",
    "1e2",
    "12n",
    "7.9",
    [],
    ["a"],
    ["ab", "cd"],
    [1, 2],
    [1, 1],
    {},
    {"k": "v"},
    {"k": "w"},
    {"kind": "a", "n": "5"},
    {"kind": "b"},
    {"kind": "c"},
    {"oldText": "a", "newText": "b"},
    [{"oldText": "a", "newText": "b"}],
    [{"oldText": 1}],
    "x",
    "null",
    "Infinity",
]


def run_node(script: str, cases: list) -> list:
    done = subprocess.run(
        ["node", "--input-type=module", "-e", script % DIST],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


def random_text(rng: random.Random, lines: int) -> str:
    body = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 3))) for _ in range(lines)]
    sep = rng.choice(["\n", "\n", "\r\n", "\r"])
    text = sep.join(body) + (sep if rng.random() < 0.5 else "")
    return ("\ufeff" + text) if rng.random() < 0.1 else text


def edit_cases(rng: random.Random, count: int) -> list:
    cases = []
    for _ in range(count):
        content = random_text(rng, rng.randint(0, 45))
        flat = content.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
        edits = []
        for _ in range(rng.randint(1, 3)):
            if flat and rng.random() < 0.85:
                start = rng.randint(0, len(flat) - 1)
                old = flat[start : start + rng.randint(1, 30)]
                if rng.random() < 0.3:
                    old = (
                        old.replace("\u201c", '"')
                        .replace("\u201d", '"')
                        .replace("\u2014", "-")
                        .replace("\u00a0", " ")
                    )
            else:
                old = rng.choice([*WORDS, "nope"])
            new = random_text(rng, rng.randint(0, 3)) if rng.random() < 0.7 else old
            edits.append({"oldText": old, "newText": new})
        cases.append({"content": content, "edits": edits, "path": "f.txt"})
    return cases


def validation_cases(rng: random.Random, count: int) -> list:
    schemas = [("read", READ), ("bash", BASH), ("edit", EDIT), ("x", OTHER)]
    cases = []
    for _ in range(count):
        name, schema = rng.choice(schemas)
        keys = [*schema["properties"], "extra"]
        args = {key: rng.choice(VALUES) for key in rng.sample(keys, rng.randint(0, len(keys)))}
        cases.append({"name": name, "schema": schema, "args": args})
    return cases


def main() -> None:
    rng = random.Random(20261130)
    (HERE / "pi_edit_vectors.json").write_text(
        json.dumps(run_node(EDIT_ORACLE, edit_cases(rng, 300)), ensure_ascii=False)
    )
    results = run_node(VALIDATION_ORACLE, validation_cases(rng, 400))
    schemas = {case["name"]: case.pop("schema") for case in results}
    vectors = {"schemas": schemas, "cases": results}
    (HERE / "pi_validation_vectors.json").write_text(json.dumps(vectors, ensure_ascii=False))


if __name__ == "__main__":
    main()
