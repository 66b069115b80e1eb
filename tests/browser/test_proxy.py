"""The proxy DEPLOY.md gives, run for real: Debian's nginx with `deploy/nginx.conf` (TLS, the app under
/pmap-lab/) in front of two `streamlit run` processes, and Chromium going through it: pages, a
training run, the share panel's link (it carries /pmap-lab/ and opens the same lab), and a reconnect
through the other process once the one holding the session stops."""

from __future__ import annotations

import contextlib
import os
import pathlib
import secrets
import shutil
import ssl
import subprocess
import time
import urllib.request
from urllib.parse import parse_qsl, urlsplit

import browser_support as bs
import psutil
import pytest

from tests.support import ROOT, free_port, new_tracking_store, start_python

NGINX = os.environ.get("PMAP_LAB_NGINX", "/usr/sbin/nginx")
OPENSSL = shutil.which("openssl") or "/usr/bin/openssl"
CONF = ROOT / "deploy" / "nginx.conf"
BASE_PATH = "pmap-lab"  # the `location` of deploy/nginx.conf and the app's server.baseUrlPath
COOKIE_SECRET = secrets.token_hex(16)  # the same in both processes, as DEPLOY.md says


def proxy_missing_reason() -> str | None:
    for program, package in ((NGINX, "nginx"), (OPENSSL, "openssl")):
        if not os.access(program, os.X_OK):
            return f"{program} not found (apt-get install {package})"
    return bs.chromium_missing_reason()


_missing = proxy_missing_reason()
if _missing and not bs.in_ci():
    pytest.skip(f"proxy test skipped: {_missing}", allow_module_level=True)


# --- the configuration DEPLOY.md gives, with this test's ports ----------------------------------

# What the test changes in deploy/nginx.conf, as exact text: each must appear once, so a reworded
# configuration fails here instead of quietly running something else.
def rendered_conf(app_ports: tuple[int, int], proxy_port: int, cert: pathlib.Path, key: pathlib.Path) -> str:
    text = CONF.read_text()
    for old, new in (
        ("server 127.0.0.1:8501;", f"server 127.0.0.1:{app_ports[0]};"),
        ("server 127.0.0.1:8502;", f"server 127.0.0.1:{app_ports[1]};"),
        ("listen 443 ssl;", f"listen 127.0.0.1:{proxy_port} ssl;"),
        ("/etc/ssl/certs/pmap-lab.pem;", f"{cert};"),
        ("/etc/ssl/private/pmap-lab.key;", f"{key};"),
    ):
        assert text.count(old) == 1, f"deploy/nginx.conf should hold {old!r} once"
        text = text.replace(old, new)
    return text


def main_conf(folder: pathlib.Path, site: pathlib.Path) -> str:
    """nginx's own configuration around the site: everything in `folder`, in the foreground."""
    user = "user root;\n" if os.geteuid() == 0 else ""  # as root, workers would otherwise be nobody's
    temps = "".join(f"    {name}_temp_path {folder / name};\n"
                    for name in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    return (f"{user}daemon off;\nworker_processes 1;\npid {folder / 'nginx.pid'};\n"
            f"error_log {folder / 'error.log'} warn;\n"
            "events { worker_connections 256; }\n"
            f"http {{\n    access_log {folder / 'access.log'};\n{temps}    include {site};\n}}\n")


def test_deploy_md_gives_the_shipped_configuration():
    """One source: the nginx block of DEPLOY.md's proxy section is deploy/nginx.conf, word for word."""
    deploy = (ROOT / "docs" / "DEPLOY.md").read_text()
    assert "```nginx\n" + CONF.read_text() + "```" in deploy


# --- the processes --------------------------------------------------------------------------


class App:
    """`streamlit run streamlit_app.py` under /pmap-lab/ on a port of 127.0.0.1, with a store of its own."""

    def __init__(self, folder: pathlib.Path):
        self.port = free_port()
        folder.mkdir()
        self.log_path = folder / "server.log"
        env = {"MLFLOW_TRACKING_URI": new_tracking_store(folder / "mlflow.db"), "PYTHONUNBUFFERED": "1",
               "PMAP_LAB_HEAVY_JOBS": "1", "STREAMLIT_SERVER_COOKIE_SECRET": COOKIE_SECRET}
        command = ["-m", "streamlit", "run", "streamlit_app.py", "--server.port", str(self.port),
                   "--server.address", "127.0.0.1", "--server.baseUrlPath", BASE_PATH,
                   "--server.headless", "true", "--server.fileWatcherType", "none"]
        with open(self.log_path, "wb") as log:
            self.process = start_python(command, env=env, stdout=log, stderr=subprocess.STDOUT, text=False)

    def holds_a_websocket(self) -> bool:
        """Whether a connection to this server's port is open (a browser's session, through nginx)."""
        with contextlib.suppress(psutil.Error):
            return any(c.status == psutil.CONN_ESTABLISHED and c.laddr and c.laddr.port == self.port
                       for c in psutil.Process(self.process.pid).net_connections("tcp"))
        return False

    def log_tail(self) -> str:
        return self.log_path.read_text(errors="replace")[-2000:]

    def stop(self) -> None:
        stop_process(self.process)


def stop_process(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=20)


def start_nginx(folder: pathlib.Path, app_ports: tuple[int, int]) -> tuple[subprocess.Popen, str]:
    """nginx with deploy/nginx.conf on a free port; returns it and the address of the app behind it."""
    folder.mkdir()
    cert, key = folder / "proxy.pem", folder / "proxy.key"
    subprocess.run([OPENSSL, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True, timeout=60)
    port = free_port()
    site = folder / "pmap-lab.conf"
    site.write_text(rendered_conf(app_ports, port, cert, key))
    conf = folder / "nginx.conf"
    conf.write_text(main_conf(folder, site))
    checked = subprocess.run([NGINX, "-t", "-p", str(folder), "-e", str(folder / "error.log"), "-c", str(conf)],
                             capture_output=True, text=True, timeout=30)
    assert checked.returncode == 0, checked.stderr
    process = subprocess.Popen([NGINX, "-p", str(folder), "-e", str(folder / "error.log"), "-c", str(conf)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return process, f"https://127.0.0.1:{port}/{BASE_PATH}/"


def wait_healthy(url: str, processes: list[subprocess.Popen], timeout_s: float = 180) -> None:
    """Until GET <url>_stcore/health answers 200 through the proxy."""
    unverified = ssl.create_default_context()
    unverified.check_hostname, unverified.verify_mode = False, ssl.CERT_NONE
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert all(p.poll() is None for p in processes), "a server of the proxy test exited"
        try:
            with urllib.request.urlopen(url + "_stcore/health", timeout=5, context=unverified) as reply:
                if reply.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    pytest.fail(f"{url}_stcore/health did not answer within {timeout_s:.0f} s")


# --- the test --------------------------------------------------------------------------------


def _box(page, key: str):
    return page.locator(bs.MAIN).locator(".st-key-" + key.replace(".", "-"))


def _share_link(page) -> str:
    from playwright.sync_api import expect

    page.get_by_text("Share this lab").click()
    code = page.locator(bs.MAIN).locator('[data-testid="stCode"] code').last
    expect(code).to_contain_text("lang=en", timeout=30_000)
    return code.inner_text().strip()


def test_the_app_through_nginx_under_a_sub_path(tmp_path):
    if _missing:
        pytest.fail(f"CI=true but the proxy test cannot run: {_missing}")
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    apps: list[App] = []
    nginx = None
    context = None
    try:
        apps = [App(tmp_path / "app-a"), App(tmp_path / "app-b")]
        nginx, base = start_nginx(tmp_path / "nginx", (apps[0].port, apps[1].port))
        for app in apps:  # each process through the proxy: the one ip_hash picks now answers for both
            wait_healthy(f"http://127.0.0.1:{app.port}/{BASE_PATH}/", [app.process])
        wait_healthy(base, [nginx])
        context = bs.shared_browser().new_context(viewport=bs.VIEWPORT, ignore_https_errors=True)
        page = context.new_page()

        # Pages: the home page (its address without the last slash too), then a lab by the sidebar's
        # link, which stays under /pmap-lab/.
        bs.open_app_page(page, base.rstrip("/") + "?lang=zh")
        assert urlsplit(page.url).path == f"/{BASE_PATH}/", page.url
        assert dict(parse_qsl(urlsplit(page.url).query)).get("lang") == "zh", page.url
        bs.open_app_page(page, base + "?lang=en")
        assert not bs.exception_texts(page), bs.exception_texts(page)
        page.locator('[data-testid="stSidebarNav"] a[href*="collectives"]').first.click()
        bs.wait_ready(page, rerun=True)
        assert urlsplit(page.url).path == f"/{BASE_PATH}/collectives", page.url
        assert not bs.exception_texts(page), bs.exception_texts(page)

        # A training run.
        bs.open_app_page(page, base + "training?lang=en&devices=2&batch=64&steps=40")
        page.locator(".st-key-training-train button").click(no_wait_after=True)
        page.locator('[data-testid="stMetric"]').filter(has_text="Final loss").first.wait_for(timeout=180_000)
        bs.wait_ready(page, timeout_ms=180_000)
        assert not bs.exception_texts(page), bs.exception_texts(page)

        # The share panel's link: the proxy's address, /pmap-lab/ and the page, and it opens the same lab.
        bs.open_app_page(page, base + "collectives?lang=en&op=psum&devices=2&lock=devices")
        link = _share_link(page)
        parts = urlsplit(link)
        assert f"{parts.scheme}://{parts.netloc}{parts.path}" == base + "collectives", link
        assert {"op": "psum", "devices": "2", "lang": "en", "lock": "devices"}.items() \
            <= dict(parse_qsl(parts.query)).items(), link
        fresh = context.new_page()
        bs.open_app_page(fresh, link)
        shot = bs.save_screenshot(fresh, "proxy-shared-link")
        assert not bs.exception_texts(fresh), shot
        devices = _box(fresh, "collectives.devices").locator('input[type="range"]').first
        assert devices.input_value() == "2" and devices.is_disabled(), shot
        assert _box(fresh, "collectives.op").locator('[role="combobox"]').input_value().startswith("psum "), shot
        fresh.close()

        # A reconnect: the process holding the session stops; the page comes back through the other.
        deadline = time.monotonic() + 30
        while not any(app.holds_a_websocket() for app in apps) and time.monotonic() < deadline:
            time.sleep(0.2)
        holding = [app for app in apps if app.holds_a_websocket()]
        assert len(holding) == 1, "the page's session should live in exactly one process"
        other = next(app for app in apps if app is not holding[0])
        holding[0].stop()
        deadline = time.monotonic() + 120
        while not other.holds_a_websocket() and time.monotonic() < deadline:
            time.sleep(0.3)
        assert other.holds_a_websocket(), f"no reconnect to the other process:\n{other.log_tail()}"
        page.wait_for_selector('[data-testid="stApp"][data-test-connection-state="CONNECTED"]', timeout=120_000)
        bs.wait_ready(page, timeout_ms=120_000)
        seed = _box(page, "collectives.seed").locator("input")
        for _ in range(3):  # the new session answers a widget: the page reruns on the other process
            # On a loaded machine a key can land before the widget's handler is attached: type it again.
            seed.fill("7")
            seed.press("Enter")
            with contextlib.suppress(PlaywrightTimeout):
                page.wait_for_function("new URLSearchParams(location.search).get('seed') === '7'", timeout=30_000)
                break
        bs.wait_ready(page, timeout_ms=120_000)
        shot = bs.save_screenshot(page, "proxy-after-reconnect")
        assert not bs.exception_texts(page), shot
        assert dict(parse_qsl(urlsplit(page.url).query)).get("seed") == "7", page.url
        assert urlsplit(page.url).path == f"/{BASE_PATH}/collectives", page.url
    finally:
        if context is not None:
            context.close()
        for app in apps:
            app.stop()
        if nginx is not None:
            stop_process(nginx)
