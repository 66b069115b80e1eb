"""Every entry of the mistakes page run on this process's device count (PMAP_LAB_DEVICES): prints one JSON
line, {entry: whether its claim holds, whether the mistake and the fix raised, its kind, the kind shown and
the kind the page states here, whether it differs here, the mistake's text}.

Run by tests/system/test_pitfalls_devices.py at 1, 2 and 3 devices, one process each."""

import json

import pmap_core  # noqa: F401 - fixes the device count from PMAP_LAB_DEVICES
from pmap_core.practice import pitfalls
from pmap_core.practice.pitfalls import entries


def main() -> None:
    runs = {i: pitfalls.run_pitfall(i) for i in pitfalls.pitfall_ids()}
    print(json.dumps({i: {"claim": r.claim_holds, "raised": r.mistake.raised, "kind": r.kind,
                          "fix_raised": r.fix.raised, "differs_here": entries.differs_here(i),
                          "mistake": r.mistake.as_text()[:300], "kind_shown": r.kind_shown,
                          "kind_here": entries.kind_here(i)}
                      for i, r in runs.items()}))


if __name__ == "__main__":
    main()
