"""The proxy DEPLOY.md gives, run for real: Debian's nginx with `deploy/nginx.conf` (TLS, the app under
/pmap-lab/) in front of two `streamlit run` processes, and Chromium going through it: pages, a
training run, the share panel's link (it carries /pmap-lab/ and opens the same lab), and a reconnect
through the other process once the one holding the session stops.

The browser reaches the proxy by a host name on a port that is not 443 (`https://pmap-lab.test:<port>`,
the name mapped to 127.0.0.1 inside Chromium), as a visitor reaches a deployment: Streamlit accepts any
port of 127.0.0.1 and localhost whatever Host says, so only a name shows whether the proxy passes the
address the browser used (an origin with its port) on to the app."""

from __future__ import annotations

import base64
import contextlib
import os
import pathlib
import secrets
import shlex
import shutil
import signal
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
import warnings
from urllib.parse import parse_qsl, urlsplit

import psutil
import pytest

from harness import browser as bs
from harness.processes import ROOT, free_port, new_tracking_store, start_python

NGINX = os.environ.get("PMAP_LAB_NGINX", "/usr/sbin/nginx")
OPENSSL = shutil.which("openssl") or "/usr/bin/openssl"
CONF = ROOT / "deploy" / "nginx.conf"
BASE_PATH = "pmap-lab"  # the `location` of deploy/nginx.conf and the app's server.baseUrlPath
COOKIE_SECRET = secrets.token_hex(16)  # the same in both processes, as DEPLOY.md says
MLFLOW_USER, MLFLOW_PASSWORD = "teacher", secrets.token_urlsafe(12)  # the proxy's password for MLflow
MLFLOW_UNIT = ROOT / "deploy" / "mlflow.service"
HOST = "pmap-lab.test"  # the proxy's name for the browser (RFC 2606 keeps .test for tests)


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
def rendered_conf(app_ports: tuple[int, int], proxy_port: int, cert: pathlib.Path, key: pathlib.Path,
                  http_port: int, mlflow_port: int, htpasswd: pathlib.Path) -> str:
    text = CONF.read_text()
    for old, new in (
        ("server 127.0.0.1:8501;", f"server 127.0.0.1:{app_ports[0]};"),
        ("server 127.0.0.1:8502;", f"server 127.0.0.1:{app_ports[1]};"),
        ("listen 443 ssl;", f"listen 127.0.0.1:{proxy_port} ssl;"),
        ("listen 80;", f"listen 127.0.0.1:{http_port};"),
        ("/etc/ssl/certs/pmap-lab.pem;", f"{cert};"),
        ("/etc/ssl/private/pmap-lab.key;", f"{key};"),
        ("proxy_pass http://127.0.0.1:5000;", f"proxy_pass http://127.0.0.1:{mlflow_port};"),
        ("/etc/nginx/pmap-lab-mlflow.htpasswd;", f"{htpasswd};"),
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

    def __init__(self, folder: pathlib.Path, port: int | None = None):
        self.port = port or free_port()
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


def start_nginx(folder: pathlib.Path, app_ports: tuple[int, int], mlflow_port: int | None = None,
                http_port: int | None = None, port: int | None = None) -> tuple[subprocess.Popen, int]:
    """nginx with deploy/nginx.conf on `port` (a free one by default; and plain http on `http_port`), MLflow
    behind it on `mlflow_port` with the password MLFLOW_PASSWORD for MLFLOW_USER; returns it and its https port."""
    folder.mkdir()
    cert, key = folder / "proxy.pem", folder / "proxy.key"
    subprocess.run([OPENSSL, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", f"/CN={HOST}", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True, timeout=60)
    hashed = subprocess.run([OPENSSL, "passwd", "-apr1", MLFLOW_PASSWORD], check=True, capture_output=True,
                            text=True, timeout=60).stdout.strip()
    htpasswd = folder / "mlflow.htpasswd"  # what `htpasswd -c` writes
    htpasswd.write_text(f"{MLFLOW_USER}:{hashed}\n")
    port = port or free_port()
    site = folder / "pmap-lab.conf"
    site.write_text(rendered_conf(app_ports, port, cert, key, http_port or free_port(), mlflow_port or free_port(),
                                  htpasswd))
    conf = folder / "nginx.conf"
    conf.write_text(main_conf(folder, site))
    checked = subprocess.run([NGINX, "-t", "-p", str(folder), "-e", str(folder / "error.log"), "-c", str(conf)],
                             capture_output=True, text=True, timeout=30)
    assert checked.returncode == 0, checked.stderr
    process = subprocess.Popen([NGINX, "-p", str(folder), "-e", str(folder / "error.log"), "-c", str(conf)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return process, port


def named(port: int) -> str:
    """The proxy's address for the browser: a host name, and a port that is not 443."""
    return f"https://{HOST}:{port}"


@pytest.fixture(scope="module")
def browser():
    """Chromium that finds HOST at 127.0.0.1 (the host's own resolver is left alone)."""
    launched = bs.shared_browser().browser_type.launch(
        executable_path=bs.CHROMIUM, headless=True,
        args=[*bs.CHROMIUM_ARGS, f"--host-resolver-rules=MAP {HOST} 127.0.0.1"])
    yield launched
    launched.close()


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


def _fail_over(page, apps: list[App]) -> App:
    """Stop the running app that holds the page's session; wait until the page is connected to another and
    drawn. Returns the stopped app."""
    deadline = time.monotonic() + 30
    while not any(app.holds_a_websocket() for app in apps) and time.monotonic() < deadline:
        time.sleep(0.2)
    holding = [app for app in apps if app.holds_a_websocket()]
    assert len(holding) == 1, "the page's session should live in exactly one process"
    holding[0].stop()
    others = [app for app in apps if app.process.poll() is None]
    deadline = time.monotonic() + 120
    while not any(app.holds_a_websocket() for app in others) and time.monotonic() < deadline:
        time.sleep(0.3)
    assert any(app.holds_a_websocket() for app in others), "no reconnect to another process:\n" + "\n".join(
        app.log_tail() for app in others)
    page.wait_for_selector('[data-testid="stApp"][data-test-connection-state="CONNECTED"]', timeout=120_000)
    bs.wait_ready(page, timeout_ms=120_000)
    return holding[0]


def test_the_app_through_nginx_under_a_sub_path(tmp_path, browser):
    if _missing:
        pytest.fail(f"CI=true but the proxy test cannot run: {_missing}")

    apps: list[App] = []
    nginx = None
    context = None
    try:
        apps = [App(tmp_path / "app-a"), App(tmp_path / "app-b")]
        nginx, port = start_nginx(tmp_path / "nginx", (apps[0].port, apps[1].port))
        for app in apps:  # each process through the proxy: the one ip_hash picks now answers for both
            wait_healthy(f"http://127.0.0.1:{app.port}/{BASE_PATH}/", [app.process])
        wait_healthy(f"https://127.0.0.1:{port}/{BASE_PATH}/", [nginx])
        base = f"{named(port)}/{BASE_PATH}/"
        context = browser.new_context(viewport=bs.VIEWPORT, ignore_https_errors=True)
        page = context.new_page()

        # Pages: the home page (its address without the last slash too), then a lab by the sidebar's
        # link, which stays under /pmap-lab/.
        bs.open_app_page(page, base.rstrip("/") + "?lang=zh")
        assert urlsplit(page.url).path == f"/{BASE_PATH}/", page.url
        assert dict(parse_qsl(urlsplit(page.url).query)).get("lang") == "zh", page.url
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

        # A failover: the process holding the session stops; the page comes back through the other.
        holding = _fail_over(page, apps)
        # The first change after it counts: the page sends it with its first rerun on the other process,
        # whose new session must not replace it with the link's old value (labs.ui.links).
        seed = _box(page, "collectives.seed").locator("input")
        seed.fill("7")
        seed.press("Enter")
        page.wait_for_function("new URLSearchParams(location.search).get('seed') === '7'", timeout=60_000)
        bs.wait_ready(page, timeout_ms=120_000)
        # And back, the stopped process started again: the first change, the language, counts too.
        apps.append(App(tmp_path / "app-a-again", port=holding.port))
        wait_healthy(f"http://127.0.0.1:{holding.port}/{BASE_PATH}/", [apps[-1].process])
        _fail_over(page, apps)
        page.locator('[data-testid="stSidebar"] [data-testid="stRadio"] label').filter(has_text="中文").click()
        page.wait_for_function("new URLSearchParams(location.search).get('lang') === 'zh'", timeout=60_000)
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


# --- MLflow behind the proxy ------------------------------------------------------------------


def mlflow_environment() -> dict[str, str]:
    """deploy/mlflow.service's Environment= settings."""
    lines = [line.removeprefix("Environment=") for line in MLFLOW_UNIT.read_text().splitlines()
             if line.startswith("Environment=")]
    return dict(line.split("=", 1) for line in lines)


def mlflow_execstart(store: str, port: int, proxy_port: int) -> list[str]:
    """deploy/mlflow.service's ExecStart, run by this interpreter's MLflow on `store` and `port`; nginx passes
    the visitor's host name, here HOST for the browser and 127.0.0.1 for this test's own requests, and the
    browser's pages send their origin, the proxy's address on `proxy_port` (each change must appear once, as in
    rendered_conf)."""
    (line,) = [line for line in MLFLOW_UNIT.read_text().splitlines() if line.startswith("ExecStart=")]
    command = line.removeprefix("ExecStart=")
    for old, new in (("/srv/pmap-lab/venv/bin/mlflow ", f"{sys.executable} -m mlflow "),
                     ("postgresql+psycopg2://pmaplab@127.0.0.1:5432/mlflow", store),
                     ("--port 5000", f"--port {port}"),
                     ("pmap-lab.example.edu,127.0.0.1:5000", f"{HOST},127.0.0.1,127.0.0.1:{port}"),
                     ("--cors-allowed-origins https://pmap-lab.example.edu",
                      f"--cors-allowed-origins {named(proxy_port)}")):
        assert command.count(old) == 1, f"deploy/mlflow.service's ExecStart should hold {old!r} once"
        command = command.replace(old, new)
    return shlex.split(command)


def _status(url: str, password: str | None = None) -> tuple[int, str | None]:
    """The status of GET `url` through the proxy (its certificate not checked), redirects not followed, and
    the Location it gave."""
    unverified = ssl.create_default_context()
    unverified.check_hostname, unverified.verify_mode = False, ssl.CERT_NONE

    class Stay(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    opener = urllib.request.build_opener(Stay, urllib.request.HTTPSHandler(context=unverified))
    request = urllib.request.Request(url)
    if password is not None:
        request.add_header("Authorization", "Basic " + base64.b64encode(f"{MLFLOW_USER}:{password}".encode()).decode())
    try:
        with opener.open(request, timeout=30) as reply:
            return reply.status, reply.headers.get("Location")
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Location")


def test_mlflow_and_the_redirects_through_nginx(tmp_path, monkeypatch, browser):
    """deploy/mlflow.service's server (under /mlflow/, --static-prefix) behind deploy/nginx.conf: a password
    guards it, a run written through the proxy opens from the app's "Open in MLflow" link (the proxy's
    address, the Model-training view) in Chromium, and http and / redirect to the app."""
    if _missing:
        pytest.fail(f"CI=true but the proxy test cannot run: {_missing}")
    from mlflow.tracking import MlflowClient
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    from pmap_core.tracking import experiment_link, mlflow_ui_url, run_link
    from pmap_core.tracking.mlflow_backend import Tracker

    port, http_port, proxy_port = free_port(), free_port(), free_port()
    mlflow = start_python(mlflow_execstart(new_tracking_store(tmp_path / "mlflow.db"), port, proxy_port)[1:],
                          cwd=tmp_path,
                          env=mlflow_environment(),
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    nginx = None
    context = None
    try:
        nginx, proxy_port = start_nginx(tmp_path / "nginx", (free_port(), free_port()), mlflow_port=port,
                                        http_port=http_port, port=proxy_port)
        proxy = f"https://127.0.0.1:{proxy_port}"  # this test's own requests; the browser uses the name
        deadline = time.monotonic() + 300  # 20-40 s here, more under load
        while _status(f"{proxy}/mlflow/health", MLFLOW_PASSWORD)[0] != 200:
            assert mlflow.poll() is None and time.monotonic() < deadline, "mlflow server did not answer /mlflow/health"
            time.sleep(0.5)

        assert _status(f"http://127.0.0.1:{http_port}/pmap-lab/collectives?op=psum") == (
            301, "https://127.0.0.1/pmap-lab/collectives?op=psum")
        assert _status(f"{proxy}/") == (302, "/pmap-lab/")  # no host: the browser keeps its address and port
        assert _status(f"{proxy}/pmap-lab?lang=zh") == (301, "/pmap-lab/?lang=zh")
        assert _status(f"{proxy}/mlflow/")[0] == 401 and _status(f"{proxy}/mlflow/", "wrong")[0] == 401
        assert _status(f"{proxy}/mlflow/", MLFLOW_PASSWORD)[0] == 200

        # A student's run through the proxy, with the password (MLflow sends it as basic authentication).
        monkeypatch.setenv("MLFLOW_TRACKING_INSECURE_TLS", "true")  # the test's own certificate
        authenticated = proxy.replace("https://", f"https://{MLFLOW_USER}:{MLFLOW_PASSWORD}@") + "/mlflow"
        tracker = Tracker(authenticated, fallback_uri=new_tracking_store(tmp_path / "fallback.db"))
        with tracker.run("proxied-run", {"devices": 2}) as run_id:
            tracker.log_series(run_id, "loss", [1.0, 0.5, 0.25])
        assert tracker.fell_back_to is None, tracker.fallback_reason
        experiment = MlflowClient(authenticated).get_run(run_id).info.experiment_id

        monkeypatch.setenv("PMAP_LAB_MLFLOW_UI_URL", f"{named(proxy_port)}/mlflow")
        link = run_link(mlflow_ui_url(authenticated), experiment, run_id)
        assert link == (f"{named(proxy_port)}/mlflow/#/experiments/{experiment}/runs/{run_id}"
                        "?workflowType=machine_learning")
        context = browser.new_context(
            viewport=bs.VIEWPORT, ignore_https_errors=True,
            http_credentials={"username": MLFLOW_USER, "password": MLFLOW_PASSWORD})
        page = context.new_page()
        trouble: list[str] = []  # what the browser met on the way, for the message if the run never shows
        page.on("console", lambda message: trouble.append(f"console {message.type}: {message.text[:300]}")
                if message.type in ("error", "warning") else None)
        page.on("requestfailed", lambda request: trouble.append(f"failed {request.url}: {request.failure}"))
        page.on("response", lambda reply: trouble.append(f"HTTP {reply.status} {reply.url}")
                if reply.status >= 400 else None)
        page.goto(link)

        def run_drawn(where: str = "run") -> str | None:
            """None once MLflow's UI shows the run; else what the page and the browser showed instead."""
            try:
                page.get_by_text("proxied-run").first.wait_for(timeout=90_000)
                return None
            except PlaywrightTimeout:
                shot = bs.save_screenshot(page, f"proxy-mlflow-{where}-missing")
                body = page.locator("body").inner_text()[:1500]
                return f"MLflow's UI did not show the run at {page.url} ({shot}). Page text: {body!r}\n" + "\n".join(
                    trouble[-40:])

        missing = run_drawn()
        if missing is not None:  # seen once on a loaded CI machine, never here: say what the page showed, then reload
            warnings.warn(missing, stacklevel=1)
            trouble.clear()
            page.reload()
            missing = run_drawn()
        assert missing is None, missing
        shot = bs.save_screenshot(page, "proxy-mlflow-run")
        assert urlsplit(page.url).path == "/mlflow/", (page.url, shot)
        assert "workflowType=machine_learning" in page.url, (page.url, shot)

        # The experiment's runs: the UI searches them with a POST, which MLflow refuses from a page whose origin
        # (the proxy's name and port) its --cors-allowed-origins does not list.
        trouble.clear()
        page.goto(experiment_link(mlflow_ui_url(authenticated), experiment))
        missing = run_drawn("experiment")
        assert missing is None, missing
        assert not [line for line in trouble if line.startswith("HTTP 403")], trouble
    finally:
        if context is not None:
            context.close()
        if nginx is not None:
            stop_process(nginx)
        if mlflow.poll() is None:
            os.killpg(mlflow.pid, signal.SIGTERM)
            mlflow.wait(timeout=30)
