"""Make the reducer's real-log corpus: run the real tools on small broken projects, keep their output.

    python tests/bundled/reducer/corpus/make_corpus.py --python /tmp/corpus/venv/bin/python \
        --node-bin /tmp/corpus/js/node_modules/.bin

Every ``<name>.log`` is what the tool printed (stdout and stderr together, as the bash tool sees
them), every ``<name>.json`` what the tool's own machine-readable output says failed: junit XML
(pytest), the result object (unittest), ``--output json`` (mypy), ``--output-format json`` (ruff),
a format string (flake8), ``--json`` (jest, vitest), the compiler API (tsc), ``-f json`` (eslint),
``-json`` (go test), libtest's JSON (cargo test), ``--message-format json`` (cargo build),
``-fdiagnostics-format=json`` (gcc) and caret-free diagnostics (clang). The extractor tests check the
receipts against these, never against the extractors' own reading of the logs. See README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
WORK = Path("/tmp/tau-corpus")
ENV = {**os.environ, "NO_COLOR": "1", "PYTHONDONTWRITEBYTECODE": "1", "GOFLAGS": "-count=1"}
for _name in ("FORCE_COLOR", "RUST_BACKTRACE", "PYTEST_ADDOPTS"):
    ENV.pop(_name, None)

PY_FILES = {
    "shop/__init__.py": "",
    "shop/cart.py": '''"""A tiny shopping cart with a few bugs."""

from dataclasses import dataclass, field


@dataclass
class Item:
    name: str
    price: float
    quantity: int = 1


@dataclass
class Cart:
    items: list[Item] = field(default_factory=list)

    def add(self, item: Item) -> None:
        self.items.append(item)

    def total(self) -> float:
        return sum(item.price for item in self.items)  # bug: ignores quantity

    def discount(self, percent: int) -> float:
        if percent > 100:
            raise ValueError(f"discount above 100%: {percent}")
        return self.total() * (1 - percent / 100)

    def find(self, name: str) -> Item:
        return {item.name: item for item in self.items}[name]
''',
    "shop/tax.py": """RATES = {"DE": 0.19, "FR": 0.2, "US": 0.07}


def rate(country: str) -> float:
    return RATES[country.lower()]  # bug: keys are upper-case


def with_tax(amount: float, country: str) -> float:
    return round(amount * (1 + rate(country)), 2)
""",
    "tests/__init__.py": "",
    "tests/test_cart.py": """import pytest

from shop.cart import Cart, Item


@pytest.fixture
def cart():
    c = Cart()
    c.add(Item("apple", 0.5, quantity=4))
    c.add(Item("pear", 0.75))
    return c


def test_total_counts_quantity(cart):
    assert cart.total() == 2.75


def test_add_appends(cart):
    cart.add(Item("plum", 1.0))
    assert len(cart.items) == 3


@pytest.mark.parametrize("percent,expected", [(0, 2.75), (10, 2.475), (100, 0.0)])
def test_discount(cart, percent, expected):
    assert cart.discount(percent) == pytest.approx(expected)


def test_discount_rejects_too_much(cart):
    with pytest.raises(ValueError, match="above 100"):
        cart.discount(150)


def test_find_missing_item(cart):
    assert cart.find("kiwi").price == 1.0


def test_names(cart):
    assert [item.name for item in cart.items] == ["apple", "pear", "banana"]
""",
    "tests/test_tax.py": """import warnings

import pytest

from shop.tax import rate, with_tax


@pytest.fixture
def broken_fixture():
    raise RuntimeError("database is not reachable")


def test_rate_de():
    assert rate("DE") == 0.19


def test_with_tax_us():
    assert with_tax(100.0, "US") == 107.0


def test_uses_broken_fixture(broken_fixture):
    assert broken_fixture


def test_warns():
    warnings.warn("rates table is deprecated", DeprecationWarning)
    assert True


@pytest.mark.skip(reason="not ready")
def test_skipped():
    pass


@pytest.mark.xfail(reason="known rounding issue")
def test_known_bad():
    assert round(0.1 + 0.2, 20) == 0.3


def test_long_dict():
    got = {"country": "DE", "rate": 0.19, "currency": "EUR", "items": [1, 2, 3]}
    assert got == {"country": "DE", "rate": 0.2, "currency": "EUR", "items": [1, 2, 4]}
""",
    "tests/test_ok.py": """import pytest


@pytest.mark.parametrize("n", range(40))
def test_square_is_nonnegative(n):
    assert n * n >= 0
""",
}

COLLECT_ERROR = {
    "tests/test_broken_import.py": "from shop.missing import nothing\n\n\ndef test_never():\n    assert nothing\n",
    "tests/test_syntax.py": "def test_bad(:\n    pass\n",
}

MANY_FAILURES = {
    "tests/test_many.py": """import pytest

from shop.tax import with_tax


@pytest.mark.parametrize("amount", range(60))
def test_with_tax_de(amount):
    assert with_tax(float(amount), "DE") == round(amount * 1.19, 2)
""",
}

UNITTEST_FILES = {
    "inventory/__init__.py": "",
    "inventory/stock.py": """class Stock:
    def __init__(self):
        self.counts = {}

    def add(self, sku, n):
        self.counts[sku] = self.counts.get(sku, 0) + n

    def remove(self, sku, n):
        self.counts[sku] -= n + 1  # bug: removes one too many

    def level(self, sku):
        return self.counts[sku]
""",
    "tests/__init__.py": "",
    "tests/test_stock.py": """import unittest

from inventory.stock import Stock


class TestStock(unittest.TestCase):
    def setUp(self):
        self.stock = Stock()
        self.stock.add("A1", 10)

    def test_add(self):
        self.stock.add("A1", 5)
        self.assertEqual(self.stock.level("A1"), 15)

    def test_remove(self):
        self.stock.remove("A1", 3)
        self.assertEqual(self.stock.level("A1"), 7)

    def test_unknown_level(self):
        self.assertEqual(self.stock.level("B2"), 0)

    def test_names(self):
        self.assertListEqual(sorted(self.stock.counts), ["A1", "B2"])

    @unittest.skip("later")
    def test_later(self):
        pass


class TestReport(unittest.TestCase):
    def test_truthy(self):
        self.assertTrue(Stock().counts, "a new stock should not be empty")

    def test_many(self):
        for n in range(3):
            with self.subTest(n=n):
                self.assertLess(n, 2)
""",
}

MYPY_FILES = {
    "typed/__init__.py": "",
    "typed/models.py": """from dataclasses import dataclass


@dataclass
class User:
    name: str
    age: int


def make_user(name: str, age: str) -> User:
    return User(name, age)


def greeting(user: User) -> int:
    return "hello " + user.name
""",
    "typed/service.py": """from typed.models import User, make_user


def oldest(users: list[User]) -> User:
    return max(users, key=lambda u: u.age).nme


def load() -> list[User]:
    users = [make_user("ada", 36)]
    users.append("bob")
    return users
""",
}

LINT_FILES = {
    "lintme/__init__.py": "",
    "lintme/util.py": """import os, sys
import json


def unused_arg(a, b):
    x = 1
    return a == None


def shadow(list):
    l = [i for i in list]
    return l
""",
    "lintme/other.py": """from os.path import *


def f():
    try:
        pass
    except:
        pass
    return undefined_name
""",
}

JEST_FILES = {
    "package.json": json.dumps({"name": "jsdemo", "version": "1.0.0", "private": True}),
    "src/math.js": """function add(a, b) {
  return a - b; // bug
}
function divide(a, b) {
  if (b === 0) throw new Error("division by zero");
  return a / b;
}
module.exports = { add, divide };
""",
    "src/math.test.js": """const { add, divide } = require("./math");

describe("add", () => {
  test("adds two numbers", () => {
    expect(add(2, 3)).toBe(5);
  });
  test("adds negatives", () => {
    expect(add(-2, -3)).toBe(-5);
  });
});

describe("divide", () => {
  test("divides", () => {
    expect(divide(6, 3)).toBe(2);
  });
  test("throws on zero", () => {
    expect(divide(1, 0)).toBe(Infinity);
  });
  test("returns an object", () => {
    expect({ a: 1, b: [1, 2] }).toEqual({ a: 1, b: [1, 3] });
  });
});
""",
    "src/other.test.js": """test("passes", () => {
  expect(1 + 1).toBe(2);
});
""",
}

VITEST_FILES = {
    "package.json": json.dumps({"name": "vdemo", "version": "1.0.0", "private": True, "type": "module"}),
    "src/strings.js": """export function shout(s) {
  return s.toUpperCase() + "!!"; // bug: one ! too many
}
export function words(s) {
  return s.split(" ");
}
""",
    "src/strings.test.js": """import { describe, expect, test } from "vitest";
import { shout, words } from "./strings.js";

describe("shout", () => {
  test("adds one bang", () => {
    expect(shout("hi")).toBe("HI!");
  });
  test("keeps empty", () => {
    expect(shout("")).toBe("!");
  });
});

test("splits words", () => {
  expect(words("a  b")).toEqual(["a", "b"]);
});

test("ok", () => {
  expect(words("a b")).toEqual(["a", "b"]);
});
""",
}

TSC_FILES = {
    "tsconfig.json": json.dumps(
        {
            "compilerOptions": {"strict": True, "noEmit": True, "target": "ES2022", "module": "commonjs"},
            "include": ["src"],
        }
    ),
    "src/index.ts": """import { Order, total } from "./order";

const order: Order = { id: 1, lines: [{ sku: "A", qty: "2", price: 3 }] };
console.log(total(order).toFixed(2));
const n: number = "five";
""",
    "src/order.ts": """export interface Line { sku: string; qty: number; price: number }
export interface Order { id: number; lines: Line[] }

export function total(order: Order): number {
  return order.lines.reduce((sum, line) => sum + line.qty * line.prise, 0);
}

export function first(order: Order): Line {
  return order.lines[0].sku;
}
""",
}

ESLINT_FILES = {
    "package.json": json.dumps({"name": "edemo", "version": "1.0.0", "private": True, "type": "module"}),
    "eslint.config.js": """import js from "@eslint/js";
export default [js.configs.recommended, { languageOptions: { globals: { console: "readonly" } } }];
""",
    "src/app.js": """const unused = 1;
function greet(name) {
  if (name == undefined) {
    return "hello " + nme;
  }
  return "hello " + name;
}
greet("x");
""",
    "src/util.js": """export function loop() {
  for (let i = 0; i < 10; i--) {
    debugger;
  }
  const x = 1;
  x = 2;
}
""",
}

GO_FILES = {
    "go.mod": "module example.com/bank\n\ngo 1.19\n",
    "account/account.go": """package account

import "errors"

type Account struct{ Balance int }

func (a *Account) Withdraw(n int) error {
	if n > a.Balance+100 { // bug: allows overdraft
		return errors.New("insufficient funds")
	}
	a.Balance -= n
	return nil
}
""",
    "account/account_test.go": """package account

import "testing"

func TestWithdraw(t *testing.T) {
	a := &Account{Balance: 50}
	if err := a.Withdraw(80); err == nil {
		t.Errorf("Withdraw(80) on 50: want an error, got nil (balance %d)", a.Balance)
	}
}

func TestDeposit(t *testing.T) {
	a := &Account{Balance: 10}
	a.Balance += 5
	if a.Balance != 15 {
		t.Fatal("deposit lost")
	}
}

func TestTable(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   int
		want int
	}{{"small", 1, 49}, {"all", 50, 0}, {"over", 60, 50}} {
		t.Run(tc.name, func(t *testing.T) {
			a := &Account{Balance: 50}
			_ = a.Withdraw(tc.in)
			if a.Balance != tc.want {
				t.Fatalf("balance after %d: got %d, want %d", tc.in, a.Balance, tc.want)
			}
		})
	}
}
""",
    "ledger/ledger.go": """package ledger

func Sum(xs []int) int {
	t := 0
	for _, x := range xs {
		t += x
	}
	return t
}
""",
    "ledger/ledger_test.go": """package ledger

import "testing"

func TestSum(t *testing.T) {
	if Sum([]int{1, 2, 3}) != 6 {
		t.Fatal("bad sum")
	}
}

func TestPanics(t *testing.T) {
	var m map[string]int
	m["x"] = 1
}
""",
}

GO_BUILD_FAIL = {
    "report/report.go": """package report

import "fmt"

func Line(n int) string {
	return fmt.Sprintf("%d", n) + missing
}

func Other() int {
	return "x"
}
""",
}

CARGO_FILES = {
    "Cargo.toml": '[package]\nname = "geom"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n',
    "src/lib.rs": """pub fn area(w: u32, h: u32) -> u32 {
    w * h + 1 // bug
}

pub fn parse(s: &str) -> u32 {
    s.trim().parse().unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn area_of_square() {
        assert_eq!(area(3, 3), 9);
    }

    #[test]
    fn area_of_line() {
        assert_eq!(area(1, 0), 0, "a line has no area");
    }

    #[test]
    fn parse_number() {
        assert_eq!(parse(" 42 "), 42);
    }

    #[test]
    fn parse_garbage() {
        assert_eq!(parse("x"), 0);
    }

    #[test]
    #[should_panic]
    fn should_panic_but_does_not() {
        assert!(true);
    }
}
""",
}

CARGO_BUILD_FAIL = {
    "Cargo.toml": '[package]\nname = "broken"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n',
    "src/main.rs": """fn double(x: i32) -> i32 {
    x * 2
}

fn main() {
    let s: String = double(2);
    let unused = 3;
    println!("{}", s + undefined_var);
}
""",
}

C_FILES = {
    "calc.c": """#include <stdio.h>

int add(int a, int b) {
    return a + b
}

int main(void) {
    int unused;
    char *s = 42;
    printf("%d\\n", add(1, 2, 3));
    return undefined_fn();
}
""",
    "ok.c": "int ok(void) { return 1; }\n",
    "Makefile": "CC ?= gcc\nCFLAGS = -Wall -Wextra\n\nall: ok.o calc.o\n\n%.o: %.c\n\t$(CC) $(CFLAGS) -c $< -o $@\n",
}


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def fresh(name: str, *groups: dict[str, str]) -> Path:
    root = WORK / name
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    for files in groups:
        write(root, files)
    return root


def run(cwd: Path, command: str, extra_env: dict[str, str] | None = None) -> tuple[str, int]:
    """The command's output as the bash tool gets it (``2>&1``) and its exit code."""
    done = subprocess.run(
        ["bash", "-c", f"{command} 2>&1"],
        cwd=cwd,
        env={**ENV, **(extra_env or {})},
        capture_output=True,
        text=True,
    )
    return done.stdout, done.returncode


def keep(
    name: str, command: str, log: str, code: int, fmt: str, failing: list[dict[str, Any]], **more: Any
) -> None:
    (HERE / f"{name}.log").write_text(log, encoding="utf-8")
    expect = {"command": command, "exit_code": code, "format": fmt, "failing": failing, **more}
    (HERE / f"{name}.json").write_text(
        json.dumps(expect, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    print(f"{name}: exit {code}, {len(log):,} chars, {len(failing)} failing")


# -- oracles: what each tool's machine-readable output says failed ---------------------------


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


def junit_failures(path: Path) -> list[dict[str, Any]]:
    failing = []
    for case in ET.parse(path).iter("testcase"):
        for child in case:
            if child.tag not in ("failure", "error"):
                continue
            module = case.get("classname", "").replace(".", "/")
            node = f"{module}.py::{case.get('name')}" if case.get("classname") else case.get("name")
            message = child.get("message") or ""
            setup = re.match(r'failed on (?:setup|teardown) with "(.*)"$', message, re.S)
            if setup:
                message = setup.group(1)
            if message == "collection failure":  # the module is the id, the exception its last E line
                node = (case.get("classname") or case.get("name", "")).replace(".", "/") + ".py"
                message = [
                    line[1:].strip() for line in (child.text or "").splitlines() if line.startswith("E ")
                ][-1]
            failing.append({"id": node, "error": _first_line(message)})
    return failing


def pytest_corpus(python: str) -> None:
    root = fresh("py", PY_FILES)
    base = f"{python} -m pytest -p no:cacheprovider"
    report = WORK / "junit.xml"
    variants = {
        "pytest-default": "",
        "pytest-q": "-q",
        "pytest-v": "-v",
        "pytest-vv-tb-short": "-vv --tb=short tests/test_cart.py",
        "pytest-tb-line": "-q --tb=line",
        "pytest-tb-native": "--tb=native tests/test_tax.py",
        "pytest-pass-v": "-v tests/test_ok.py",
    }
    for name, args in variants.items():
        log, code = run(root, f"{base} {args}")
        run(root, f"{base} {args} --junitxml={report}")
        keep(name, f"python -m pytest {args}".strip(), log, code, "pytest", junit_failures(report))
    root = fresh("py-many", PY_FILES, MANY_FAILURES)
    log, code = run(root, f"{base} -q tests/test_many.py")
    run(root, f"{base} -q tests/test_many.py --junitxml={report}")
    keep("pytest-many", "python -m pytest -q tests/test_many.py", log, code, "pytest", junit_failures(report))
    root = fresh("py", PY_FILES)
    write(root, COLLECT_ERROR)
    log, code = run(root, f"{base} -q")
    run(root, f"{base} -q --junitxml={report}")
    failing = junit_failures(report)
    keep("pytest-collection-error", "python -m pytest -q", log, code, "pytest", failing)


UNITTEST_ORACLE = """
import json, sys, unittest
suite = unittest.defaultTestLoader.discover(".")
result = unittest.TestResult()
suite.run(result)
out = []
for test, trace in result.failures + result.errors:
    lines = trace.strip().splitlines()
    frames = [n for n, line in enumerate(lines) if line.startswith("  File ")]
    after = lines[frames[-1] + 1:] if frames else lines
    error = next(line for line in after if line and not line.startswith(" "))
    out.append({"id": test.id().split(" (")[0], "error": error})
print(json.dumps(out))
"""


def unittest_corpus(python: str) -> None:
    root = fresh("ut", UNITTEST_FILES)
    failing = json.loads(run(root, f"{python} -c '{UNITTEST_ORACLE}'")[0])
    for name, args in {"unittest": "", "unittest-v": "-v"}.items():
        log, code = run(root, f"{python} -m unittest {args}")
        keep(name, f"python -m unittest {args}".strip(), log, code, "unittest", failing)


def mypy_corpus(python: str) -> None:
    root = fresh("mypy", MYPY_FILES)
    raw, _ = run(root, f"{python} -m mypy --output json typed")
    failing = [
        {"id": f"{item['file']}:{item['line']}", "error": item["message"].splitlines()[0]}
        for item in map(json.loads, raw.splitlines())
        if item.get("severity") == "error"
    ]
    for name, args in {"mypy": "typed", "mypy-pretty": "--pretty typed"}.items():
        log, code = run(root, f"{python} -m mypy {args}")
        keep(name, f"mypy {args}", log, code, "mypy", failing)


def ruff_corpus(python: str) -> None:
    root = fresh("ruff", LINT_FILES)
    ruff = str(Path(python).with_name("ruff"))
    select = "--select E,F,W,B,E741 --no-cache"
    raw, _ = run(root, f"{ruff} check {select} --output-format json .")
    failing = [
        {
            "id": f"{item['filename'].replace(str(root) + '/', '')}:{item['location']['row']}",
            "error": item["message"],
            "code": item["code"],
        }
        for item in json.loads(raw)
    ]
    for name, args in {"ruff": "", "ruff-concise": "--output-format concise"}.items():
        log, code = run(root, f"{ruff} check {select} {args} .")
        keep(name, f"ruff check {args} .".replace("  ", " "), log, code, "ruff", failing)


def flake8_corpus(python: str) -> None:
    root = fresh("flake8", LINT_FILES)
    raw, _ = run(root, f"{python} -m flake8 --format='%(path)s|%(row)d|%(code)s|%(text)s' .")
    failing = []
    for line in raw.splitlines():
        path, row, code, text = line.split("|", 3)
        failing.append({"id": f"{path}:{row}", "error": f"{code} {text}"})
    log, code = run(root, f"{python} -m flake8 .")
    keep("flake8", "flake8 .", log, code, "flake8", failing)


def jest_corpus(node_bin: Path) -> None:
    root = fresh("jest", JEST_FILES)
    (root / "node_modules").symlink_to(node_bin.parent)
    report = WORK / "jest.json"
    run(root, f"{node_bin / 'jest'} --ci --json --outputFile={report}")
    failing = [
        {
            "id": " › ".join(result["ancestorTitles"] + [result["title"]]),
            "error": _first_line(result["failureMessages"][0]),
        }
        for suite in json.loads(report.read_text())["testResults"]
        for result in suite["assertionResults"]
        if result["status"] == "failed"
    ]
    log, code = run(root, f"{node_bin / 'jest'} --ci")
    keep("jest", "npx jest --ci", log, code, "jest", failing)


def vitest_corpus(node_bin: Path) -> None:
    root = fresh("vitest", VITEST_FILES)
    (root / "node_modules").symlink_to(node_bin.parent)
    report = WORK / "vitest.json"
    run(root, f"{node_bin / 'vitest'} run --reporter=json --outputFile={report}")
    failing = [
        {
            "id": " > ".join(result["ancestorTitles"] + [result["title"]]),
            "error": _first_line(result["failureMessages"][0]),
        }
        for suite in json.loads(report.read_text())["testResults"]
        for result in suite["assertionResults"]
        if result["status"] == "failed"
    ]
    log, code = run(root, f"{node_bin / 'vitest'} run")
    keep("vitest", "npx vitest run", log, code, "vitest", failing)


TSC_ORACLE = """
const ts = require("typescript");
const config = ts.getParsedCommandLineOfConfigFile("tsconfig.json", {}, {...ts.sys, onUnRecoverableConfigFileDiagnostic() {}});
const program = ts.createProgram(config.fileNames, config.options);
const out = ts.getPreEmitDiagnostics(program).map((d) => {
  const { line } = d.file.getLineAndCharacterOfPosition(d.start);
  const file = d.file.fileName.replace(process.cwd() + "/", "");
  return { id: `${file}:${line + 1}`, error: `error TS${d.code}: ${ts.flattenDiagnosticMessageText(d.messageText, "\\n").split("\\n")[0]}` };
});
console.log(JSON.stringify(out));
"""


def tsc_corpus(node_bin: Path, ts5_bin: Path | None) -> None:
    """tsc 5 (its compiler API is the oracle) and tsc 7, the native compiler, in both renderings."""
    root = fresh("tsc", TSC_FILES)
    if ts5_bin is not None:
        (root / "node_modules").symlink_to(ts5_bin.parent)
        (root / "oracle.js").write_text(TSC_ORACLE)
        failing = json.loads(run(root, "node oracle.js")[0])
        (root / "oracle.js").unlink()
        for name, args in {"tsc": "--noEmit", "tsc-pretty": "--noEmit --pretty"}.items():
            log, code = run(root, f"{ts5_bin / 'tsc'} {args}")
            keep(name, f"npx tsc {args}", log, code, "tsc", failing)
        (root / "node_modules").unlink()
    (root / "node_modules").symlink_to(node_bin.parent)
    log, code = run(root, f"{node_bin / 'tsc'} --noEmit --pretty")
    keep("tsc7-pretty", "npx tsc --noEmit --pretty", log, code, "tsc", failing)


def eslint_corpus(node_bin: Path) -> None:
    root = fresh("eslint", ESLINT_FILES)
    (root / "node_modules").symlink_to(node_bin.parent)
    raw, _ = run(root, f"{node_bin / 'eslint'} -f json src")
    failing = [
        {
            "id": f"{item['filePath'].replace(str(root) + '/', '')}:{message['line']}",
            "error": message["message"],
            "severity": message["severity"],
        }
        for item in json.loads(raw)
        for message in item["messages"]
    ]
    log, code = run(root, f"{node_bin / 'eslint'} src")
    keep("eslint", "npx eslint src", log, code, "eslint", failing)


def go_corpus() -> None:
    root = fresh("go", GO_FILES)
    cache = {"GOCACHE": str(WORK / "gocache"), "GOPATH": str(WORK / "gopath"), "GOTOOLCHAIN": "local"}

    def oracle() -> list[dict[str, Any]]:
        raw, _ = run(root, "go test -json ./...", cache)
        events = [json.loads(line) for line in raw.splitlines() if line.startswith("{")]
        failing = []
        for event in events:
            if event.get("Action") == "fail" and event.get("Test"):
                output = [
                    e["Output"].strip()
                    for e in events
                    if e.get("Test") == event["Test"]
                    and e.get("Action") == "output"
                    and e["Output"].strip()
                    and not e["Output"].lstrip().startswith(("=== ", "--- "))
                ]
                # a test's own message, else the panic that ended it; a parent of failed subtests has none
                error = output[0] if output else ""
                failing.append({"id": event["Test"], "error": error, "package": event["Package"]})
        return failing

    failing = oracle()
    for name, args in {"go-test": "./...", "go-test-v": "-v ./..."}.items():
        log, code = run(root, f"go test {args}", cache)
        keep(name, f"go test {args}", log, code, "go", failing)
    write(root, GO_BUILD_FAIL)
    log, code = run(root, "go test ./...", cache)
    build = [
        {"id": m.group(1), "error": m.group(2)}
        for m in re.finditer(
            r"^(report/report\.go:\d+):\d+: (.*)$",
            run(root, "go build ./report", cache)[0].replace("./", ""),
            re.M,
        )
    ]
    keep("go-build-fail", "go test ./...", log, code, "go", build)


def cargo_corpus() -> None:
    root = fresh("cargo", CARGO_FILES)
    target = {"CARGO_TARGET_DIR": str(WORK / "cargo-target"), "CARGO_TERM_COLOR": "never"}
    run(root, "cargo build --tests --offline -q", target)
    raw, _ = run(
        root,
        "cargo test --offline -q -- -Z unstable-options --format json",
        {**target, "RUSTC_BOOTSTRAP": "1"},
    )
    failing = []
    for line in raw.splitlines():
        if not line.startswith("{"):
            continue
        event = json.loads(line)
        if event.get("type") == "test" and event.get("event") == "failed":
            stdout = event.get("stdout", "")
            panic = re.search(r"panicked at [^\n]*:\n(.*)", stdout)
            error = (
                panic.group(1).strip() if panic else _first_line(stdout) or "test did not panic as expected"
            )
            failing.append({"id": event["name"], "error": error})
    log, code = run(root, "cargo test --offline", target)
    keep("cargo-test", "cargo test", log, code, "cargo", failing)
    log, code = run(root, "cargo test --offline", {**target, "RUST_BACKTRACE": "1"})
    keep("cargo-test-backtrace", "RUST_BACKTRACE=1 cargo test", log, code, "cargo", failing)
    root = fresh("cargo-broken", CARGO_BUILD_FAIL)
    raw, _ = run(root, "cargo build --offline --message-format json", target)
    errors = []
    for line in raw.splitlines():
        if not line.startswith("{"):
            continue
        event = json.loads(line)
        message = event.get("message") if event.get("reason") == "compiler-message" else None
        if message and message["level"] in ("error", "warning") and message["spans"]:
            span = next(s for s in message["spans"] if s["is_primary"])
            errors.append(
                {
                    "id": f"{span['file_name']}:{span['line_start']}",
                    "error": message["message"],
                    "level": message["level"],
                }
            )
    log, code = run(root, "cargo build --offline", target)
    keep("cargo-build-error", "cargo build", log, code, "cargo", errors)


def c_corpus() -> None:
    root = fresh("c", C_FILES)
    raw, _ = run(root, "gcc -Wall -Wextra -fdiagnostics-format=json -c calc.c -o /dev/null")
    diagnostics = json.loads(raw.splitlines()[0]) if raw.strip().startswith("[") else []
    failing = [
        {
            "id": f"{d['locations'][0]['caret']['file']}:{d['locations'][0]['caret']['line']}",
            "error": d["message"],
            "level": d["kind"],
        }
        for d in diagnostics
    ]
    log, code = run(root, "gcc -Wall -Wextra -c calc.c -o calc.o")
    keep("gcc", "gcc -Wall -Wextra -c calc.c -o calc.o", log, code, "gcc", failing)
    plain, _ = run(
        root, "clang -Wall -Wextra -fno-caret-diagnostics -fno-color-diagnostics -c calc.c -o /dev/null"
    )
    clang = [
        {"id": m.group(1), "error": m.group(3), "level": m.group(2)}
        for m in re.finditer(r"^(calc\.c:\d+):\d+: (error|warning): (.*)$", plain, re.M)
    ]
    log, code = run(root, "clang -Wall -Wextra -c calc.c -o calc.o")
    keep("clang", "clang -Wall -Wextra -c calc.c -o calc.o", log, code, "gcc", clang)
    log, code = run(root, "make")
    keep("make", "make", log, code, "make", failing, make_error="make: *** [Makefile:7: calc.o] Error 1")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--python", required=True, help="a Python with pytest, mypy, ruff and flake8 installed"
    )
    parser.add_argument(
        "--node-bin", required=True, type=Path, help="node_modules/.bin with jest, vitest, tsc, eslint"
    )
    parser.add_argument(
        "--ts5-bin", type=Path, help="node_modules/.bin with TypeScript 5 (its API is tsc's oracle)"
    )
    parser.add_argument(
        "--only",
        help="comma-separated groups: pytest,unittest,mypy,ruff,flake8,jest,vitest,tsc,eslint,go,cargo,c",
    )
    args = parser.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    groups = {
        "pytest": lambda: pytest_corpus(args.python),
        "unittest": lambda: unittest_corpus(args.python),
        "mypy": lambda: mypy_corpus(args.python),
        "ruff": lambda: ruff_corpus(args.python),
        "flake8": lambda: flake8_corpus(args.python),
        "jest": lambda: jest_corpus(args.node_bin),
        "vitest": lambda: vitest_corpus(args.node_bin),
        "tsc": lambda: tsc_corpus(args.node_bin, args.ts5_bin),
        "eslint": lambda: eslint_corpus(args.node_bin),
        "go": go_corpus,
        "cargo": cargo_corpus,
        "c": c_corpus,
    }
    chosen = args.only.split(",") if args.only else list(groups)
    for name in chosen:
        groups[name]()


if __name__ == "__main__":
    main()
