"""binder/ builds the lessons on mybinder.org: checked here without Docker or network.

repo2docker checks the layout and writes the Dockerfile but neither checks package names
nor runs postBuild, so those are checked one by one.
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BINDER = ROOT / "binder"
TORCH_VERSION = "2.13.0"
CPU_INDEX = "https://download.pytorch.org/whl/cpu"


def _repo2docker() -> str | None:
    """The repo2docker command of this environment, else one on PATH."""
    beside = Path(sys.executable).with_name("jupyter-repo2docker")
    return str(beside) if beside.exists() else shutil.which("jupyter-repo2docker")


def _requirement_lines() -> list[str]:
    """binder/requirements.txt as pip reads it: comments and blank lines dropped."""
    lines = []
    for raw in (BINDER / "requirements.txt").read_text().splitlines():
        line = re.sub(r"(^|\s)#.*", "", raw).strip()
        if line:
            lines.append(line)
    return lines


def _project_name(line: str) -> str:
    """The distribution a requirement line names ('' for options such as --index-url)."""
    if line.startswith("-"):
        return ""
    return re.split(r"[<>=!~\[;@ ]", line, maxsplit=1)[0].strip().lower()


def test_binder_folder_has_what_repo2docker_reads():
    assert BINDER.is_dir()
    for name in ("runtime.txt", "apt.txt", "requirements.txt"):
        assert (BINDER / name).is_file(), f"binder/{name} is missing"
    assert (BINDER / "runtime.txt").read_text().strip() == "python-3.11"


@pytest.mark.skipif(_repo2docker() is None, reason="jupyter-repo2docker is not installed (pip install -e .[dev])")
def test_repo2docker_writes_a_dockerfile_with_python_311_graphviz_and_our_files(tmp_path):
    # A path that does not exist is taken for a remote repository and fetched: never that.
    assert (ROOT / "binder").is_dir()
    run = subprocess.run(
        [_repo2docker(), "--no-build", "--debug", str(ROOT)],
        cwd=tmp_path,  # it looks for its own config in the working folder
        capture_output=True,
        text=True,
        timeout=120,
    )
    out = run.stdout + run.stderr
    assert run.returncode == 0, out
    # "Building conda environment for python=3.11"; the lock file name says it escaped.
    assert re.search(r"python=3\.11|py-2d3-2e11", out), out
    assert re.search(r"apt-get install [^\n]*graphviz", out), out
    assert 'pip install --no-cache-dir -r "binder/requirements.txt"' in out, out
    assert "./binder/postBuild" in out, out
    # `-e .` in requirements: the pip step must run after the whole repository is copied.
    copy_all = out.index("COPY --chown=0:0 src/ ${REPO_DIR}/")
    assert out.index('-r "binder/requirements.txt"') > copy_all, out


def test_requirements_pin_the_cpu_build_of_torch():
    lines = _requirement_lines()
    options = " ".join(line for line in lines if line.startswith("-"))
    cpu_index_named = CPU_INDEX in options
    cpu_index_only = re.search(rf"(--index-url|-i)[ =]{re.escape(CPU_INDEX)}", options) is not None
    torch_lines = [line for line in lines if _project_name(line) == "torch"]
    assert torch_lines, "binder/requirements.txt must install torch"
    assert cpu_index_named, f"the PyTorch CPU index ({CPU_INDEX}) is not named"
    for line in torch_lines:
        pin = line.replace(" ", "")
        # PyPI's default Linux torch is the multi-GB CUDA build. `+cpu` exists only on the
        # CPU index; a plain pin is safe only when that index is the only one.
        assert pin == f"torch=={TORCH_VERSION}+cpu" or (pin == f"torch=={TORCH_VERSION}" and cpu_index_only), line
    # Another torch-family package would drag in the CUDA build again.
    for line in lines:
        if _project_name(line) in {"torchvision", "torchaudio"}:
            assert "+cpu" in line, line


def test_requirements_install_this_project_from_the_repository_root():
    # repo2docker runs `pip install -r binder/requirements.txt` in the repository root and
    # pip reads a relative path from the working folder, not from the file's folder.
    lines = _requirement_lines()
    assert "-e ." in lines or "." in lines, lines
    assert not any(line.endswith("..") for line in lines), lines


def test_apt_packages_exist_in_debian():
    if shutil.which("apt-cache") is None:
        pytest.skip("apt-cache is not available to look the names up")
    names = [n for n in (BINDER / "apt.txt").read_text().split() if not n.startswith("#")]
    assert "graphviz" in names
    for name in names:
        show = subprocess.run(["apt-cache", "show", name], capture_output=True, text=True, timeout=60)
        assert show.returncode == 0, f"apt-cache show {name}: {show.stderr.strip()}"


def test_postbuild_is_executable_bash():
    post_build = BINDER / "postBuild"
    if not post_build.exists():
        pytest.skip("no binder/postBuild")
    assert os.access(post_build, os.X_OK), "binder/postBuild must be executable"
    check = subprocess.run(["bash", "-n", str(post_build)], capture_output=True, text=True, timeout=30)
    assert check.returncode == 0, check.stderr


def test_postbuild_makes_the_start_page_the_landing_page(tmp_path):
    post_build = BINDER / "postBuild"
    if not post_build.exists():
        pytest.skip("no binder/postBuild")
    home = tmp_path / "home"
    home.mkdir()
    run = subprocess.run(
        ["bash", str(post_build)],
        cwd=ROOT,
        env={"HOME": str(home), "PATH": os.environ["PATH"]},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    config = (home / ".jupyter" / "jupyter_server_config.py").read_text()
    assert "/lab/tree/notebooks/START.ipynb" in config
    compile(config, "jupyter_server_config.py", "exec")
