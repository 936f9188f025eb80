"""The clients' methods are written out from the functions of _api.py (fencegate/_methods.py),
so a type checker sees each one's arguments and answer, on ``Client`` and ``AsyncClient`` alike."""

import importlib.util
import textwrap
from pathlib import Path

from mypy import api as mypy

PROJECT = Path(__file__).resolve().parents[1]


def load_writer():
    path = PROJECT / "scripts" / "write_client_methods.py"
    spec = importlib.util.spec_from_file_location("write_client_methods", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_written_methods_are_current():
    written = (PROJECT / "fencegate" / "_methods.py").read_text(encoding="utf-8")
    assert written == load_writer().render(), (
        "fencegate/_methods.py differs from the functions of _api.py: "
        "run `python clients/python/scripts/write_client_methods.py`"
    )


def test_a_type_checker_sees_each_method_and_its_answer(tmp_path, monkeypatch):
    # From the project, mypy finds the package and its settings (pyproject.toml) as a user would.
    monkeypatch.chdir(PROJECT)
    user = tmp_path / "user_code.py"
    user.write_text(
        textwrap.dedent(
            """\
            import asyncio

            import fencegate
            from fencegate import AsyncClientApi, ClientApi, Grant


            def blocking(client: ClientApi) -> Grant:
                return client.acquire("wf/memory", holder="w", ttl_ms=30_000)


            async def awaiting(client: AsyncClientApi) -> int:
                grant = await client.acquire("wf/memory", holder="w", ttl_ms=30_000)
                return grant.fence


            blocking(fencegate.Client("http://127.0.0.1:7420", "token"))
            asyncio.run(awaiting(fencegate.AsyncClient("http://127.0.0.1:7420", "token")))
            fencegate.Client("http://127.0.0.1:7420", "token").acquire("s", "w", ttl_ms="1s")
            blocking(fencegate.AsyncClient("http://127.0.0.1:7420", "token"))
            """
        ),
        encoding="utf-8",
    )
    report, errors, _ = mypy.run(
        [
            "--strict",
            "--no-error-summary",
            "--hide-error-context",
            "--cache-dir",
            str(tmp_path / "cache"),
            str(user),
        ]
    )
    assert errors == ""
    lines = [line for line in report.splitlines() if line.startswith(f"{user}:") and ": error:" in line]
    # Only the two mistakes: a ttl that is not a number, an AsyncClient where a Client is needed.
    assert len(lines) == 2, report
    assert lines[0].startswith(f"{user}:18:"), report
    assert '"acquire" of "BlockingMethods" has incompatible type "str"' in lines[0], report
    assert lines[1].startswith(f"{user}:19:"), report
    assert '"AsyncClient"; expected "ClientApi"' in lines[1], report
