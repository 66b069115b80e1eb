TEXTS = {
    "title": {"en": "Applications and cost", "zh": "AI 应用场景"},
    "summary": {
        "en": "Where data parallelism is used and when communication stops it scaling.",
        "zh": "数据并行的应用场景，以及通信何时让它不再扩展。",
    },
}
