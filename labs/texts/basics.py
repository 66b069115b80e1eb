TEXTS = {
    "title": {"en": "Parallel basics", "zh": "并行基础"},
    "summary": {
        "en": "Cut a batch into D shards and check that the parallel result equals one device's.",
        "zh": "把一个批次切成 D 个分片，并验证并行结果与单设备结果一致。",
    },
}
