TEXTS = {
    "title": {"en": "Collectives", "zh": "通信原语"},
    "summary": {
        "en": "Run pmean, psum, all_gather and the rest, and check them against NumPy.",
        "zh": "运行 pmean、psum、all_gather 等集合通信，并与 NumPy 对照。",
    },
}
