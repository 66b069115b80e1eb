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

# Each section's labs in reading order: (script, icon). A lab's link is its script name with dashes.
_SECTIONS = {
    "section.concepts": (("basics", "🍱"), ("device_mapping", "🗺️"), ("collectives", "🔁"),
                         ("manual_parallelism", "✋"), ("jit_composition", "🧩")),
    "section.training": (("training", "🏋️"), ("migration", "🔀"), ("sharded_dp", "🧱"), ("mesh_2d", "🧮"),
                         ("pipeline", "⛓️"), ("activation_memory", "💾"), ("context_parallel", "📜"),
                         ("expert_parallel", "🧠"),
                         ("multiprocess", "🌐"), ("experiments", "📊"), ("comm_benchmark", "📡"), ("plan", "🧭")),
    "section.practice": (("demo", "▶️"), ("mistakes", "🪤"), ("interview", "🎓"), ("applications", "🌍")),
    "section.classroom": (("worksheet", "📝"), ("class_view", "🧑‍🏫")),
}

LABS = [Lab(script, script.replace("_", "-"), icon, section)
        for section, labs in _SECTIONS.items() for script, icon in labs]


def script_path(lab: Lab) -> str:
    return f"labs/{lab.script}.py"
