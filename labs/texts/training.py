TEXTS = {
    "title": {"en": "Training", "zh": "训练实战"},
    "summary": {
        "en": "Train on many devices, watch the loss, measure throughput and scaling.",
        "zh": "多设备训练，观察损失，测量吞吐量与扩展比。",
    },
}
