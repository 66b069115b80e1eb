TEXTS = {
    "title": {"en": "Communication benchmark", "zh": "通信基准"},
    "summary": {
        "en": "Measure collectives and fit a latency–bandwidth model.",
        "zh": "测量集合通信并拟合延迟—带宽模型。",
    },
}
