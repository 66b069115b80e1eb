TEXTS = {
    "title": {"en": "Common mistakes", "zh": "常见误区"},
    "summary": {
        "en": "Mistakes people make with pmap, each reproduced live.",
        "zh": "pmap 的常见错误，每一个都现场复现。",
    },
}
