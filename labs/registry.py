"""The labs of pmap-lab, in reading order. The router and the home page read this list."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Lab:
    script: str  # file under labs/, also the name of its text module
    url_path: str  # the readable part of the link: …/collectives?op=psum
    icon: str  # emoji: Material icons need a CDN a closed network lacks
    section: str  # a key of common texts: section.*


HOME = Lab("home", "", "🏠", "section.start")

LABS = [
    Lab("basics", "basics", "🍱", "section.concepts"),
    Lab("device_mapping", "device-mapping", "🗺️", "section.concepts"),
    Lab("collectives", "collectives", "🔁", "section.concepts"),
    Lab("manual_parallelism", "manual-parallelism", "✋", "section.concepts"),
    Lab("jit_composition", "jit-composition", "🧩", "section.concepts"),
    Lab("training", "training", "🏋️", "section.training"),
    Lab("experiments", "experiments", "📊", "section.training"),
    Lab("comm_benchmark", "comm-benchmark", "📡", "section.training"),
    Lab("demo", "demo", "▶️", "section.practice"),
    Lab("mistakes", "mistakes", "🪤", "section.practice"),
    Lab("interview", "interview", "🎓", "section.practice"),
    Lab("applications", "applications", "🌍", "section.practice"),
]


def script_path(lab: Lab) -> str:
    return f"labs/{lab.script}.py"
