"""The language server's cache of the code attrs and cattrs generate (lsp_server/code_cache.py): the code it hands
back is the code the built-in would compile in the asking module, a start reuses what the previous one saved, and a
cache file it cannot use only means compiling afresh."""

from __future__ import annotations

import marshal
import os
import subprocess
import sys

import pytest
from lsp_helpers import frame, read_frame

from reuselens.lsp_server import code_cache

SOURCE = "def f(x: undefined_name):\n    return x * 2\n"


class Module:
    """A module's namespace as future_flags reads it."""


def test_cached_code_runs_as_the_built_in_compiles_it_in_the_asking_module(tmp_path):
    import __future__

    cache = code_cache.CodeCache(tmp_path / "c.marshal")
    lazy = Module()
    lazy.annotations = __future__.annotations  # what `from __future__ import annotations` binds
    # WHEN a module with postponed annotations and one without compile the same source through the cache
    with_future = cache.compiler(code_cache.future_flags(lazy))("def f(x: undefined_name): return x", "<g>", "exec")
    plain = cache.compiler(code_cache.future_flags(Module()))(SOURCE, "<g>", "exec")
    # THEN each gets what the built-in gives there: an annotation kept as text, or evaluated (and failing) at def
    namespace: dict = {}
    exec(with_future, namespace)
    assert namespace["f"].__annotations__ == {"x": "undefined_name"}
    with pytest.raises(NameError):
        exec(plain, {})
    assert code_cache.future_flags(lazy) == __future__.annotations.compiler_flag


def test_a_saved_cache_answers_the_next_process_without_compiling(tmp_path, monkeypatch):
    path = tmp_path / "reuselens" / "generated-code.marshal"
    first = code_cache.CodeCache(path)
    compiled = first.compiler(0)(SOURCE.replace("undefined_name", "int"), "<attrs generated f>", "exec")
    assert first.stale
    first.save()
    assert path.is_file() and not first.stale
    # WHEN another process asks for the same source
    second = code_cache.CodeCache(path)
    monkeypatch.setattr(code_cache, "compile", lambda *a, **k: pytest.fail("compiled again"), raising=False)
    again = second.compiler(0)(SOURCE.replace("undefined_name", "int"), "<attrs generated f>", "exec")
    # THEN the code comes from the file, equal to what was compiled
    assert again == compiled
    namespace: dict = {}
    exec(again, namespace)
    assert namespace["f"](21) == 42
    # AND asking with other flags, options or bytes compiles as the built-in (nothing cached for those)
    monkeypatch.undo()
    ast_tree = second.compiler(0)("x = 1", "<s>", "exec", 0x400)  # ast.PyCF_ONLY_AST
    assert type(ast_tree).__name__ == "Module"
    assert second.compiler(0)(b"y = 2", "<s>", "exec").co_names == ("y",)


def test_save_keeps_only_the_code_this_process_used(tmp_path):
    path = tmp_path / "generated-code.marshal"
    old = code_cache.CodeCache(path)
    old.compiler(0)("a = 1", "<old library version>", "exec")
    old.compiler(0)("b = 2", "<current>", "exec")
    old.save()
    # WHEN a later process uses one of the two entries only
    new = code_cache.CodeCache(path)
    new.compiler(0)("b = 2", "<current>", "exec")
    assert new.stale  # the file holds code nobody asked for
    new.save()
    # THEN the file keeps that one
    _, _, _, codes = marshal.loads(path.read_bytes())
    assert len(codes) == 1
    assert not code_cache.CodeCache(path).compiler(0)("b = 2", "<current>", "exec").co_names == ()


@pytest.mark.parametrize(
    "content",
    [
        b"not marshal at all",
        marshal.dumps(("reuselens-generated-code", 999, b"\x00\x00\r\n", {})),
        marshal.dumps(("something-else", 1, b"", {})),
        marshal.dumps(["a list"]),
    ],
    ids=["damaged", "other-version", "other-format", "other-shape"],
)
def test_a_cache_file_it_cannot_use_is_compiled_afresh_and_replaced(tmp_path, content):
    path = tmp_path / "generated-code.marshal"
    path.write_bytes(content)
    cache = code_cache.CodeCache(path)
    code = cache.compiler(0)("z = 3", "<s>", "exec")
    cache.save()
    assert marshal.loads(path.read_bytes())[:2] == ("reuselens-generated-code", 1)
    assert code_cache.CodeCache(path).compiler(0)("z = 3", "<s>", "exec") == code


@pytest.mark.skipif(os.getuid() != 0, reason="making a file another user owns needs root")
def test_a_cache_file_another_user_owns_is_never_loaded(tmp_path):
    path = tmp_path / "generated-code.marshal"
    planted = code_cache.CodeCache(path)
    planted.compiler(0)("v = 5", "<s>", "exec")
    planted.save()
    os.chown(path, 12345, 12345)
    # WHEN the server's cache finds the file owned by someone else
    fresh = code_cache.CodeCache(path)
    fresh.compiler(0)("v = 5", "<s>", "exec")
    # THEN it compiles afresh instead of running that code
    assert fresh.new_code == 1


def test_an_unwritable_cache_folder_leaves_the_server_as_it_was(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    cache = code_cache.CodeCache(blocker / "reuselens" / "generated-code.marshal")
    cache.compiler(0)("w = 4", "<s>", "exec")
    cache.save()  # a folder under a file cannot be made: logged, not raised
    assert not (blocker / "reuselens").exists()


def test_the_server_saves_its_start_ups_generated_code_and_the_next_start_finds_it(tmp_path):
    cache_home = tmp_path / "cache"
    env = {**os.environ, "XDG_CACHE_HOME": str(cache_home)}

    def session() -> None:
        server = subprocess.Popen(
            [sys.executable, "-m", "reuselens.lsp_server"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        start = {"processId": os.getpid(), "capabilities": {}, "rootUri": tmp_path.as_uri()}
        for message in (
            {"id": 1, "method": "initialize", "params": start},
            {"method": "initialized", "params": {}},
            {"id": 2, "method": "shutdown"},
        ):
            server.stdin.write(frame({"jsonrpc": "2.0", **message}))
        server.stdin.flush()
        while read_frame(server.stdout).get("id") != 2:
            pass
        server.stdin.write(frame({"jsonrpc": "2.0", "method": "exit"}))
        server.stdin.flush()
        assert server.wait(timeout=30) == 0

    path = cache_home / "reuselens" / "generated-code.marshal"
    # WHEN the server starts, is initialised and exits, twice
    session()
    _, _, _, first = marshal.loads(path.read_bytes())
    session()
    _, _, _, second = marshal.loads(path.read_bytes())
    # THEN the first start saved the code of the LSP types (hundreds of classes), and the second found it: it
    # compiled only the few methods attrs writes differently in every process (one cattrs class's, in attrs 26)
    assert len(first) > 500
    assert len(set(second) - set(first)) <= 5
    assert len(second) == len(first)
