"""End-to-end tests: the extension in a real code-server, driven by Chromium through Playwright.

They need code-server and the built .vsix, which scripts/e2e.sh installs and builds before it runs
them (it sets MSMAP_E2E_CODE_SERVER and MSMAP_E2E_VSIX). Without those variables, as in the plain
`pytest` run, this folder is not collected: run `bash scripts/e2e.sh` instead.

One code-server and one browser page serve the whole session; code-server runs in its own process
group, which is stopped when the session ends, whatever happened. A failing test leaves a screenshot
in tests/e2e/artifacts/.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from collections.abc import Iterator

import pytest

from kb.query import KB
from tests.e2e.expected import Expected
from tests.e2e.workbench import Workbench

HERE = Path(__file__).resolve().parent
ARTIFACTS = HERE / "artifacts"
WORKSPACE_FILES = HERE / "workspace"
CODE_SERVER = os.environ.get("MSMAP_E2E_CODE_SERVER", "")
VSIX = os.environ.get("MSMAP_E2E_VSIX", "")
# Copies of train.py the fix tests change, made before code-server starts (Quick Open finds them).
COPIES = {
    "test_quick_fix_applies_msmaps_fix_and_the_file_parses": "quick_fix.py",
    "test_fix_all_from_the_command_palette": "fix_all.py",
    "test_migrate_this_file_from_the_command_palette": "migrate.py",
}
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-dev-shm-usage"]

if not (CODE_SERVER and VSIX):
    collect_ignore_glob = ["test_*.py"]


def pytest_report_header(config) -> str:
    if CODE_SERVER and VSIX:
        return f"e2e: {CODE_SERVER} with {VSIX}"
    return "e2e: tests/e2e not collected (run `bash scripts/e2e.sh`)"


def user_settings(msmap: Path) -> dict:
    """The user's settings.json: msmap's server command, and a quiet workbench (no welcome page,
    tips, updates or recommendations) so that nothing covers what the tests look at."""
    return {
        "msmap.server.command": [str(msmap), "lsp"],
        "workbench.startupEditor": "none",
        "workbench.tips.enabled": False,
        "workbench.enableExperiments": False,
        "workbench.editor.enablePreview": False,
        "workbench.welcomePage.walkthroughs.openOnInstall": False,
        "security.workspace.trust.enabled": False,
        "telemetry.telemetryLevel": "off",
        "update.mode": "none",
        "extensions.autoCheckUpdates": False,
        "extensions.autoUpdate": False,
        "extensions.ignoreRecommendations": True,
        "chat.disableAIFeatures": True,
        "git.enabled": False,
        "editor.minimap.enabled": False,
        "editor.fontFamily": "DejaVu Sans Mono",
        "editor.fontSize": 14,
        "editor.hover.delay": 200,
        "files.autoSave": "off",
        "window.restoreWindows": "none",
    }


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_healthy(url: str, process: subprocess.Popen, log: Path, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"code-server exited with code {process.returncode}; see {log}")
        try:
            with urllib.request.urlopen(url + "healthz", timeout=2) as answer:
                if answer.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.2)  # polling a server that is starting: there is nothing on a page to wait on yet
    raise RuntimeError(f"code-server did not answer at {url} within {timeout:.0f} s; see {log}")


def stop_group(process: subprocess.Popen) -> None:
    """Stop code-server's process group (its extension host and msmap's server are in it too)."""
    try:
        os.killpg(process.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait(timeout=10)


class CodeServer:
    def __init__(self, url: str, process: subprocess.Popen, workspace: Path, settings_file: Path, log: Path,
                 db: Path):
        self.url, self.process, self.workspace, self.settings_file, self.log = url, process, workspace, settings_file, log
        self.db = db
        self.base_settings = json.loads(settings_file.read_text())

    def settings(self, **changes: object) -> dict:
        """The user settings the session started with, plus ``changes``."""
        return {**self.base_settings, **changes}

    def server_pids(self) -> list[int]:
        """Process ids of msmap's language servers started by this code-server (its process group)."""
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                if os.getpgid(int(entry.name)) != self.process.pid:
                    continue
                argv = (entry / "cmdline").read_bytes().split(b"\0")
            except (OSError, ProcessLookupError):
                continue
            if b"lsp" in argv and any(part.endswith(b"msmap") for part in argv):
                found.append(int(entry.name))
        return found


@pytest.fixture(scope="session")
def code_server(tmp_path_factory) -> Iterator[CodeServer]:
    root = tmp_path_factory.mktemp("code-server")
    user_data, extensions, workspace = root / "user-data", root / "extensions", root / "workspace"
    shutil.copytree(WORKSPACE_FILES, workspace)
    for copy in COPIES.values():
        shutil.copy(WORKSPACE_FILES / "train.py", workspace / copy)
    env = dict(os.environ)
    env["XDG_CONFIG_HOME"] = str(root / "config")  # code-server writes a default config.yaml there
    env["XDG_DATA_HOME"] = str(root / "data")
    env["MSMAP_DB"] = str(KB.open(db=Path(os.environ.get("MSMAP_DB") or root / "kb.sqlite")).path)
    common = [CODE_SERVER, "--user-data-dir", str(user_data), "--extensions-dir", str(extensions)]
    installed = subprocess.run([*common, "--install-extension", VSIX], env=env, capture_output=True, text=True, check=False,
                               timeout=120)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    settings_file = user_data / "User" / "settings.json"
    settings_file.parent.mkdir(parents=True, exist_ok=True)
    msmap = Path(sys.executable).parent / "msmap"
    assert msmap.exists(), f"{msmap} is missing: install msmap in the test environment (pip install -e .)"
    settings_file.write_text(json.dumps(user_settings(msmap), indent=2))

    port = free_port()
    ARTIFACTS.mkdir(exist_ok=True)
    log = ARTIFACTS / "code-server.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            [*common, "--auth", "none", "--bind-addr", f"127.0.0.1:{port}", "--disable-workspace-trust",
             "--disable-telemetry", "--disable-update-check", "--disable-getting-started-override", str(workspace)],
            env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    pgid_file = os.environ.get("MSMAP_E2E_PGID_FILE")
    if pgid_file:
        Path(pgid_file).write_text(str(process.pid))
    try:
        url = f"http://127.0.0.1:{port}/"
        wait_healthy(url, process, log)
        yield CodeServer(url, process, workspace, settings_file, log, Path(env["MSMAP_DB"]))
    finally:
        stop_group(process)
        if pgid_file:
            Path(pgid_file).unlink(missing_ok=True)


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture(scope="session")
def workbench(code_server, browser) -> Iterator[Workbench]:
    """The workbench of code-server's window on the test workspace, loaded once."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000},
                                  permissions=["clipboard-read", "clipboard-write"])
    page = context.new_page()
    bench = Workbench(page, code_server.url)
    try:
        bench.load()
        yield bench
    finally:
        page.close()


@pytest.fixture(scope="session")
def expected(code_server) -> Expected:
    """What msmap's engine finds, computed in this process from the server's knowledge base."""
    return Expected(code_server.db)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A failing test leaves tests/e2e/artifacts/<test>.png: the page as the failure left it
    (taken here, before the test's fixtures close anything)."""
    outcome = yield
    report = outcome.get_result()
    if report.when in ("setup", "call") and report.failed:
        bench = None
        for value in getattr(item, "funcargs", {}).values():
            if isinstance(value, Workbench):
                bench = value
        if bench is not None:
            bench.page.screenshot(path=str(ARTIFACTS / f"{item.name}.png"))
