"""No secrets in the repository: no secrets.toml, and no file git tracks holds a key, token or password."""

from __future__ import annotations

import re
import subprocess

from harness.processes import ROOT

SECRET_PATTERNS = [
    r"AKIA[0-9A-Z]{16}", r"-----BEGIN [A-Z ]*PRIVATE KEY-----", r"ghp_[A-Za-z0-9]{36}", r"sk-[A-Za-z0-9]{32,}",
    r"xox[baprs]-[A-Za-z0-9-]{10,}", r"(?i)(password|passwd|secret|token)\s*=\s*['\"][^'\"\s]{8,}['\"]",
]


def test_no_secrets_in_the_repository():
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True).stdout.split()
    assert ".streamlit/secrets.toml" not in tracked, "secrets.toml must never be committed"
    hits = []
    for name in tracked:
        path = ROOT / name
        if not path.is_file() or path.stat().st_size > 1_000_000:
            continue
        text = path.read_text(errors="ignore")
        hits += [f"{name}: {m.group(0)[:12]}…" for pattern in SECRET_PATTERNS for m in re.finditer(pattern, text)]
    assert not hits, hits
