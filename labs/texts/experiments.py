TEXTS = {
    "title": {"en": "Experiments", "zh": "实验对比"},
    "summary": {
        "en": "Compare tracked runs from MLflow.",
        "zh": "对比 MLflow 中记录的运行。",
    },
}
