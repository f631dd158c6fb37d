"""The fault suite's schemathesis hooks: `ast.parse` serialised across schemathesis's worker threads (CPython
3.11's AST constructor is not safe to run in two threads at once; see `serialized`)."""
from __future__ import annotations

import ast
import importlib.util
import threading
import time
from pathlib import Path

import pytest

HOOKS = Path(__file__).resolve().parents[1] / "faults" / "schemathesis_hooks.py"


@pytest.fixture
def hooks(monkeypatch):
    """The hooks module, loaded as schemathesis loads it; ast.parse is put back after the test."""
    monkeypatch.setattr(ast, "parse", ast.parse)
    spec = importlib.util.spec_from_file_location("schemathesis_hooks_under_test", HOOKS)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_serialized_lets_one_thread_in_at_once(hooks):
    inside, most = 0, 0
    count = threading.Lock()

    def slow():
        nonlocal inside, most
        with count:
            inside += 1
            most = max(most, inside)
        time.sleep(0.005)
        with count:
            inside -= 1

    call = hooks.serialized(slow)
    threads = [threading.Thread(target=lambda: [call() for _ in range(5)]) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert most == 1


def test_serialized_is_reentrant_in_one_thread(hooks):
    @hooks.serialized
    def depth(n):
        return 0 if n == 0 else 1 + depth(n - 1)

    done = []
    t = threading.Thread(target=lambda: done.append(depth(3)), daemon=True)
    t.start()
    t.join(5)
    assert done == [3], "a nested call on the same thread deadlocked"


def test_loading_the_hooks_serialises_ast_parse(hooks):
    assert getattr(ast.parse, "serialized", False)
    assert ast.dump(ast.parse("x = 1")) == ast.dump(ast.Module(
        body=[ast.Assign(targets=[ast.Name(id="x", ctx=ast.Store())], value=ast.Constant(value=1))], type_ignores=[]))
