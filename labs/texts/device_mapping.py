TEXTS = {
    "title": {"en": "Device mapping", "zh": "设备映射"},
    "summary": {
        "en": "See your devices and how the leading axis becomes the device axis.",
        "zh": "查看设备清单，观察前导维度如何变成设备轴。",
    },
}
