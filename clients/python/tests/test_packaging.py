"""The package builds as a wheel with its subpackages and extras, and the wheel's base client
works with the standard library alone."""

import email
import subprocess
import sys
import zipfile

from conftest import HERE

PROJECT = HERE.parent


def build_wheel(directory):
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--quiet",
         "-w", str(directory), str(PROJECT)],
        check=True, capture_output=True, text=True,
    )
    [wheel] = directory.glob("fencegate-*.whl")
    return wheel


def test_the_wheel_carries_every_subpackage_and_the_extras(tmp_path):
    wheel = build_wheel(tmp_path)
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        [metadata_name] = [n for n in names if n.endswith(".dist-info/METADATA")]
        metadata = email.message_from_bytes(archive.read(metadata_name))
    for module in ("__init__.py", "client.py", "aio.py", "aio_lease.py", "errors.py", "py.typed",
                   "langgraph/__init__.py", "celery/__init__.py"):
        assert f"fencegate/{module}" in names, module
    assert not any(name.startswith(("tests/", "fencegate/tests")) for name in names)
    assert metadata["Requires-Python"] == ">=3.9"
    assert set(metadata.get_all("Provides-Extra")) == {"async", "langgraph", "celery"}
    requires = metadata.get_all("Requires-Dist")
    assert all("extra ==" in line for line in requires), "the base client depends on nothing"
    langgraph = [line for line in requires if 'extra == "langgraph"' in line]
    assert any(line.startswith("langgraph-checkpoint<5,>=4") for line in langgraph), langgraph
    assert all('python_version >= "3.10"' in line for line in langgraph), langgraph
    assert any(line.startswith("celery<6,>=5.4") for line in requires), requires
    # Both clients are the standard library only: the async extra stays, and adds nothing.
    assert not any('extra == "async"' in line for line in requires), requires
    assert not any(line.startswith("httpx") for line in requires), requires


def test_the_installed_wheel_talks_to_the_server_with_the_standard_library(tmp_path, tenant):
    wheel = build_wheel(tmp_path / "wheel")
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--quiet", "--target", str(target),
         str(wheel)],
        check=True, capture_output=True, text=True,
    )
    program = (
        "import sys; sys.modules['httpx'] = None\n"  # no HTTP package is needed
        f"sys.path.insert(0, {str(target)!r})\n"
        "import fencegate\n"
        f"assert fencegate.__file__.startswith({str(target)!r}), fencegate.__file__\n"
        f"client = fencegate.Client({tenant.server.url!r}, {tenant.worker_token!r})\n"
        "print(client.get_record('wf-w1/memory', 'summary').revision)\n"
    )
    done = subprocess.run([sys.executable, "-I", "-c", program], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "0"
