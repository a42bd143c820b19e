"""A JupyterLab server of a test's or a benchmark's own: headless, on 127.0.0.1, always stopped.

Shared by the browser tests (tests/test_browser.py, test_page.py, test_site.py) and the
benchmarks (bench/viewer_latency.py), which import it as `bench.lab_server` with the
checkout on sys.path (`python -m pytest`, `python -m bench.run` from the checkout do that).

    with lab_server.running(root_dir, state_dir) as lab:
        page.goto(lab.url("lab/tree/lesson.ipynb"))

The server runs on this interpreter (`sys.executable`), so its kernels import the
same torch, `capture` and `widgets` as the tests. Everything Jupyter would write
to the home folder (config, data, runtime files, IPython profile, JupyterLab
settings and workspaces) goes to `state_dir`, and the three offline flags stop its
PyPI and news look-ups. JupyterLab saves widget state in the notebooks it saves
(`saveState`), as a learner's notebook would keep a viewer. Leaving the `with` block
stops the server and its kernels, however the block ends.

`lab.execute("x.ipynb", code)` runs code in the kernel of an open notebook, over the
server's kernel websocket (as a second client beside the page), and returns what it
printed: tests read a widget's Python side that way, or keep the kernel busy.

Other notebook hosts (tests/test_hosts.py), stopped the same way:

    with lab_server.running_notebook(root_dir, state_dir) as nb:     # Jupyter Notebook 7
        page.goto(nb.url("notebooks/x.ipynb"))
    with lab_server.running_marimo(app_py, state_dir) as mo:         # `marimo run`, no token
        page.goto(mo.base)
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
START_TIMEOUT = 60.0     # seconds; a warm start takes about 1.5 s
PORT_ATTEMPTS = 3        # another process may take the free port before the server binds it


@dataclass
class Lab:
    """A running server: where it listens, its token, and the process we started."""

    base: str                  # http://127.0.0.1:PORT/
    token: str
    process: subprocess.Popen
    log: Path

    def url(self, path: str) -> str:
        """A page of the server, e.g. `lab/tree/x.ipynb`, with the token in the query."""
        sep = "&" if "?" in path else "?"
        return f"{self.base}{path}{sep}token={self.token}"

    def api(self, path: str, method: str = "GET", timeout: float = 5.0) -> dict:
        """Call the REST API (`api/status`, ...) with the token; the decoded JSON reply."""
        req = urllib.request.Request(self.base + path, method=method, data=b"" if method == "POST" else None,
                                     headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(req, timeout=timeout) as reply:
            body = reply.read()
        return json.loads(body) if body else {}

    def session(self, path: str) -> dict:
        """The server's session of an open notebook (its `kernel` holds the kernel's id)."""
        for session in self.api("api/sessions"):
            if session.get("path", "").endswith(path):
                return session
        raise LookupError(f"no session for {path}: is the notebook open in the page?")

    def delete(self, path: str) -> None:
        """DELETE on the REST API (`api/sessions/<id>` shuts its kernel down)."""
        req = urllib.request.Request(self.base + path, method="DELETE",
                                     headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(req, timeout=30):
            pass

    def execute(self, notebook: str, code: str, timeout: float = 60.0) -> str:
        """Run `code` in the notebook's kernel; its stdout. Raises if the code raised."""
        kernel = self.session(notebook)["kernel"]["id"]
        # A thread of its own: the caller may be inside an event loop (Playwright's sync API).
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            return pool.submit(asyncio.run, _execute(self, kernel, code, timeout)).result()

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"


async def _execute(lab: Lab, kernel: str, code: str, timeout: float) -> str:
    from tornado.httpclient import HTTPRequest
    from tornado.websocket import websocket_connect

    url = lab.base.replace("http", "ws", 1) + f"api/kernels/{kernel}/channels?token={lab.token}"
    ws = await websocket_connect(HTTPRequest(url, headers={"Authorization": f"token {lab.token}"}))
    try:
        msg_id = uuid.uuid4().hex
        ws.write_message(json.dumps({
            "header": {"msg_id": msg_id, "msg_type": "execute_request", "username": "test",
                       "session": uuid.uuid4().hex, "version": "5.3", "date": ""},
            "parent_header": {}, "metadata": {}, "channel": "shell",
            "content": {"code": code, "silent": False, "store_history": False,
                        "user_expressions": {}, "allow_stdin": False, "stop_on_error": True},
        }))
        out, error, replied, idle = [], None, False, False
        deadline = time.monotonic() + timeout
        while not (replied and idle):
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"the kernel did not finish {code[:60]!r} within {timeout:.0f} s")
            raw = await asyncio.wait_for(ws.read_message(), left)
            if raw is None:
                raise ConnectionError("the kernel's websocket closed")
            msg = json.loads(raw)
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            kind, content = msg["header"]["msg_type"], msg["content"]
            if kind == "stream" and content.get("name") == "stdout":
                out.append(content["text"])
            elif kind == "error":
                error = f"{content['ename']}: {content['evalue']}"
            elif kind == "execute_reply":
                replied = True
            elif kind == "status" and content.get("execution_state") == "idle":
                idle = True
        if error:
            raise RuntimeError(f"the kernel raised {error} running {code[:60]!r}")
        return "".join(out)
    finally:
        ws.close()


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _environment(state_dir: Path) -> dict[str, str]:
    env = dict(os.environ)
    dirs = {
        "JUPYTER_CONFIG_DIR": "config",
        "JUPYTER_DATA_DIR": "data",
        "JUPYTER_RUNTIME_DIR": "runtime",
        "IPYTHONDIR": "ipython",
        "JUPYTERLAB_SETTINGS_DIR": "lab-settings",
        "JUPYTERLAB_WORKSPACES_DIR": "lab-workspaces",
    }
    for var, name in dirs.items():
        path = state_dir / name
        path.mkdir(parents=True, exist_ok=True)
        env[var] = str(path)
    # Kernels import this checkout's packages even where it was not pip-installed.
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    env["JUPYTER_PLATFORM_DIRS"] = "1"
    env["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"
    return env


def _write_kernelspec(state_dir: Path) -> None:
    """A `python3` kernel on this interpreter, found before any installed one."""
    spec = state_dir / "data" / "kernels" / "python3"
    spec.mkdir(parents=True, exist_ok=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (ipykernel)",
        "language": "python",
    }))


def _write_settings(state_dir: Path) -> None:
    """JupyterLab user settings: never ask about (or fetch) news, never check for updates;
    save widget state in saved notebooks."""
    folder = state_dir / "lab-settings" / "@jupyterlab" / "apputils-extension"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    widgets = state_dir / "lab-settings" / "@jupyter-widgets" / "jupyterlab-manager"
    widgets.mkdir(parents=True, exist_ok=True)
    (widgets / "plugin.jupyterlab-settings").write_text(json.dumps({"saveState": True}))


def _command(root_dir: Path, port: int, token: str) -> list[str]:
    cmd = [
        sys.executable, "-m", "jupyterlab", "--no-browser",
        "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root_dir}",
        # Offline: no extension manager look-ups on PyPI, no news, no update checks.
        "--LabApp.extension_manager=readonly", "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")   # refused otherwise
    return cmd


def _wait_ready(lab: Lab, deadline: float) -> bool:
    """True once `api/status` answers; False if the process died first."""
    while time.monotonic() < deadline:
        if lab.process.poll() is not None:
            return False
        try:
            lab.api("api/status", timeout=2)
            return True
        except (urllib.error.URLError, ConnectionError, OSError, ValueError):
            time.sleep(0.1)
    raise TimeoutError(f"JupyterLab did not answer on {lab.base} within {START_TIMEOUT:.0f} s; "
                       f"its log ends with:\n{lab.log_tail()}")


def stop(lab: Lab) -> None:
    """Ask the server to shut down (it stops its kernels), then make sure of it by its PID."""
    if lab.process.poll() is None:
        with contextlib.suppress(Exception):
            lab.api("api/shutdown", method="POST", timeout=5)
        try:
            lab.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
    # The server leads its own process group (start_new_session): this reaches the
    # kernels it started, and nothing else.
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if lab.process.poll() is not None:
            break
        with contextlib.suppress(ProcessLookupError):
            os.killpg(lab.process.pid, sig)
        try:
            lab.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            continue
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(lab.process.pid, signal.SIGKILL)  # kernels left behind by a killed server


@contextlib.contextmanager
def running(root_dir: Path, state_dir: Path) -> Iterator[Lab]:
    """Start JupyterLab on `root_dir`, keeping its state in `state_dir`; stop it on exit."""
    env = _environment(state_dir)
    _write_kernelspec(state_dir)
    _write_settings(state_dir)
    token = secrets.token_hex(16)
    failures = []
    for attempt in range(PORT_ATTEMPTS):
        port = _free_port()
        log = state_dir / f"server-{attempt}.log"
        with open(log, "wb") as out:
            process = subprocess.Popen(_command(root_dir, port, token), cwd=root_dir, env=env,
                                       stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                       start_new_session=True)
        lab = Lab(base=f"http://127.0.0.1:{port}/", token=token, process=process, log=log)
        try:
            ready = _wait_ready(lab, time.monotonic() + START_TIMEOUT)
        except BaseException:
            stop(lab)
            raise
        if ready:
            break
        stop(lab)
        failures.append(lab.log_tail())
        if "already in use" not in failures[-1]:
            raise RuntimeError(f"JupyterLab exited before it was ready; its log ends with:\n{failures[-1]}")
    else:
        raise RuntimeError(f"JupyterLab found no free port in {PORT_ATTEMPTS} attempts; "
                           f"the last log ends with:\n{failures[-1]}")
    try:
        yield lab
    finally:
        stop(lab)


# -- Chromium, for every browser test ------------------------------------------------------

CHROMIUM = Path("/usr/bin/chromium")  # Debian's; `playwright install` cannot download here
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@contextlib.contextmanager
def chromium() -> Iterator:
    """Debian's Chromium driven by Playwright; skips (with what to do) when either is missing."""
    import pytest

    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} not found: ./lab test installs it (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api",
                                   reason="playwright is not installed (pip install -e .[dev])")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def run_all(page) -> None:
    """JupyterLab's Run menu, Run All Cells; once more if no cell has started within a few
    seconds (a click can land while the menu is still opening)."""
    started = ("[...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')]"
               ".some(p => /\\[(\\*|\\d+)\\]/.test(p.textContent))")
    for attempt in range(2):
        page.get_by_role("menuitem", name="Run", exact=True).click()
        page.locator("[data-command='runmenu:run-all']").click()
        try:
            page.wait_for_function(f"() => {started}", timeout=15_000)
            return
        except Exception:
            if attempt:
                raise
            page.keyboard.press("Escape")   # a menu left open


# -- other notebook hosts: Jupyter Notebook 7 and marimo (tests/test_hosts.py) --------------

def _notebook_command(root_dir: Path, port: int, token: str) -> list[str]:
    cmd = [
        sys.executable, "-m", "notebook", "--no-browser",
        "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root_dir}",
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")
    return cmd


def _marimo_command(app: Path, port: int) -> list[str]:
    # `marimo run`: the app read-only, as a reader gets it; token-less, on 127.0.0.1 only.
    return [sys.executable, "-m", "marimo", "run", str(app), "--headless", "--no-token",
            "--host", "127.0.0.1", "--port", str(port), "--no-sandbox", "--no-check"]


def _disable_extensions(state_dir: Path, names: tuple[str, ...]) -> None:
    """Front-end extensions the page must not load (what `jupyter labextension disable`
    writes), in the server's own config folder."""
    folder = state_dir / "config" / "labconfig"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "page_config.json").write_text(
        json.dumps({"disabledExtensions": {name: True for name in names}}))


@contextlib.contextmanager
def _serving(name: str, command, cwd: Path, state_dir: Path, env: dict[str, str],
             token: str, ready_path: str) -> Iterator[Lab]:
    """Start `command(port)` in its own process group, on a free port (another if taken),
    wait until GET `ready_path` answers; stop it on exit."""
    failures = []
    for attempt in range(PORT_ATTEMPTS):
        port = _free_port()
        log = state_dir / f"{name}-{attempt}.log"
        with open(log, "wb") as out:
            process = subprocess.Popen(command(port), cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                       stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        server = Lab(base=f"http://127.0.0.1:{port}/", token=token, process=process, log=log)
        try:
            ready = _wait_for(server, ready_path, time.monotonic() + START_TIMEOUT)
        except BaseException:
            stop(server)
            raise
        if ready:
            break
        stop(server)
        failures.append(server.log_tail())
        if "already in use" not in failures[-1] and "in use" not in failures[-1]:
            raise RuntimeError(f"{name} exited before it was ready; its log ends with:\n{failures[-1]}")
    else:
        raise RuntimeError(f"{name} found no free port in {PORT_ATTEMPTS} attempts; "
                           f"the last log ends with:\n{failures[-1]}")
    try:
        yield server
    finally:
        stop(server)


def _wait_for(server: Lab, path: str, deadline: float) -> bool:
    """True once GET `path` answers; False if the process died first."""
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            return False
        try:
            req = urllib.request.Request(server.base + path,
                                         headers={"Authorization": f"token {server.token}"})
            with urllib.request.urlopen(req, timeout=2):
                return True
        except (urllib.error.URLError, ConnectionError, OSError, ValueError):
            time.sleep(0.1)
    raise TimeoutError(f"{server.base} did not answer within {START_TIMEOUT:.0f} s; "
                       f"its log ends with:\n{server.log_tail()}")


@contextlib.contextmanager
def running_notebook(root_dir: Path, state_dir: Path,
                     disabled: tuple[str, ...] = ()) -> Iterator[Lab]:
    """Start Jupyter Notebook 7 on `root_dir` (`lab.url("notebooks/x.ipynb")` opens one),
    state in `state_dir` as for `running`; `disabled` names front-end extensions it must
    not load (e.g. "@jupyter-widgets/jupyterlab-manager"). Stopped on exit."""
    env = _environment(state_dir)
    _write_kernelspec(state_dir)
    if disabled:
        _disable_extensions(state_dir, disabled)
    token = secrets.token_hex(16)
    with _serving("notebook", lambda port: _notebook_command(root_dir, port, token), root_dir,
                  state_dir, env, token, "api/status") as server:
        yield server


@contextlib.contextmanager
def running_marimo(app: Path, state_dir: Path) -> Iterator[Lab]:
    """Serve the marimo app `app` with `marimo run` (its page is `lab.base`); its kernel runs
    on this interpreter with the checkout importable. Stopped on exit."""
    env = _environment(state_dir)
    env["MARIMO_SKIP_UPDATE_CHECK"] = "1"        # no look-up on PyPI
    env["XDG_CONFIG_HOME"] = str(state_dir / "config")   # marimo's settings, not the home folder's
    env["XDG_STATE_HOME"] = str(state_dir / "state")
    env["XDG_CACHE_HOME"] = str(state_dir / "cache")
    with _serving("marimo", lambda port: _marimo_command(app, port), app.parent, state_dir, env,
                  "", "health") as server:
        yield server
