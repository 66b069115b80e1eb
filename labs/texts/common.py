TEXTS = {
    "section.start": {"en": "Start", "zh": "开始"},
    "section.concepts": {"en": "Concepts", "zh": "概念"},
    "section.training": {"en": "Training", "zh": "训练"},
    "section.practice": {"en": "Practice", "zh": "实践"},
    "section.classroom": {"en": "Classroom", "zh": "课堂"},
    "yes": {"en": "yes", "zh": "是"},
    "no": {"en": "no", "zh": "否"},
    "show_code": {"en": "Show the code", "zh": "查看代码"},
    "queued": {
        "en": "Queued behind the heavy work of other sessions (training, sweeps, benchmarks) — waiting ahead of "
              "you: {ahead}, running: {running}, at most {slots} at once on this server. Yours starts by itself as "
              "soon as a slot frees up; leaving the page gives up your place.",
        "zh": "排队中，前面是其他会话的繁重任务（训练、扫描、基准测试）——你前面等待的会话：{ahead} 个，正在运行："
              "{running} 个，本服务器同时最多运行 {slots} 个。一有空位，你的任务就会自动开始；离开本页即放弃排队。",
    },
    "error.tracking_uri": {
        "en": "This tracking store cannot be used; whoever runs this server should check MLFLOW_TRACKING_URI.",
        "zh": "无法使用此跟踪存储；请本服务器的管理员检查 MLFLOW_TRACKING_URI。",
    },
    "url_value_ignored": {
        "en": "The link's value {value} for `{name}` is not allowed here, so the default is used.",
        "zh": "链接中 `{name}` 的值 {value} 不在允许范围内，已改用默认值。",
    },
    "runtime.title": {"en": "Device runtime", "zh": "设备运行时"},
    "versions.running": {
        "en": "Running JAX {jax} (jaxlib {jaxlib}) on Python {python}. The lab was verified on JAX {verified_jax} "
              "and Python {verified_python}.",
        "zh": "正在运行 JAX {jax}（jaxlib {jaxlib}），Python {python}。本实验室在 JAX {verified_jax}、"
              "Python {verified_python} 上验证过。",
    },
    "versions.other_minor": {
        "en": "This server runs JAX {jax}; the lab's statements were checked on JAX {verified}. Where the two "
              "releases differ, a sentence on this page may not hold here.",
        "zh": "本服务器运行的是 JAX {jax}；本实验室的说法是在 JAX {verified} 上核对的。两个版本行为不同之处，"
              "本页的某句话在这里可能不成立。",
    },
    "runtime.body": {
        "en": "- JAX **{jax}**, backend **{backend}**\n- device kind **{kind}**, **{devices}** devices\n"
              "- simulated: **{simulated}**\n- physical CPU cores: **{cores}**",
        "zh": "- JAX **{jax}**，后端 **{backend}**\n- 设备类型 **{kind}**，共 **{devices}** 台设备\n"
              "- 模拟设备：**{simulated}**\n- 物理 CPU 核数：**{cores}**",
    },
    "runtime.simulated_note": {
        "en": "These devices are simulated on the CPU and share its {cores} cores.",
        "zh": "这些设备由 CPU 模拟，共享它的 {cores} 个核。",
    },
    "hardware_note.simulated": {
        "en": "Hardware note: the {devices} devices here are simulated on a CPU with {cores} physical cores. "
              "They share those cores, so D devices can never run more than min(D, {cores})× faster than one. "
              "This is not GPU scaling.",
        "zh": "硬件说明：这里的 {devices} 台设备是在 {cores} 个物理核的 CPU 上模拟的。它们共享这些核，"
              "因此 D 台设备最多比 1 台快 min(D, {cores}) 倍。这不是 GPU 上的扩展效果。",
    },
    "hardware_note.real": {
        "en": "Hardware note: {devices} real {kind} devices; the ideal speedup of D devices is D×.",
        "zh": "硬件说明：{devices} 台真实的 {kind} 设备；D 台设备的理想加速比为 D 倍。",
    },
    "error.unexpected": {
        "en": "Something went wrong while running this lab ({kind}, error id {error_id}). The server is fine; "
              "try other settings. If it happens again, tell the people who run this site the error id.",
        "zh": "运行本实验时出错（{kind}，错误编号 {error_id}）。服务器运行正常，请换一组设置再试。"
              "如果再次出现，请把错误编号告诉本站的维护者。",
    },
    "error.export_sharded_state": {
        "en": "The training lab's export covers the replicated SGD step (optimizer sgd, strategy dp, no accumulation, "
              "float32 gradients); export the sharded_dp lab for Adam, the ZeRO strategies, accumulation, bfloat16 "
              "gradients or mixed precision.",
        "zh": "训练实验的导出只支持复制式 SGD 训练步（优化器 sgd、策略 dp、不做梯度累积、float32 梯度）；"
              "Adam、各 ZeRO 策略、梯度累积、bfloat16 梯度或混合精度，请导出 sharded_dp 实验。",
    },
    "error.unknown_lab": {
        "en": "There is no exportable lab {lab}; choose one of {options}.",
        "zh": "没有可导出的实验 {lab}；请从 {options} 中选择。",
    },
    "error.unknown_language": {
        "en": "A notebook's explanations are in one of {options}; got {value}.",
        "zh": "notebook 的说明文字只能是 {options} 之一；收到的是 {value}。",
    },
    "error.unknown_setting": {
        "en": "The {lab} lab has no setting {names}; it has {options}.",
        "zh": "{lab} 实验没有设置 {names}；它的设置有 {options}。",
    },
    "error.bad_launch_command": {
        "en": "launch runs a train command (launch … train …), got {value}.",
        "zh": "launch 只运行 train 命令（launch … train …），收到的是 {value}。",
    },
    "error.not_whole_number": {
        "en": "`{name}` must be a whole number (got `{value}`).",
        "zh": "`{name}` 必须是整数（收到 `{value}`）。",
    },
    "error.not_a_number": {
        "en": "`{name}` must be a finite number (got `{value}`).",
        "zh": "`{name}` 必须是有限的数（收到 `{value}`）。",
    },
    "error.out_of_range": {
        "en": "`{name}` must be between {low} and {high} (got {value}).",
        "zh": "`{name}` 必须在 {low} 到 {high} 之间（收到 {value}）。",
    },
    "error.diverged": {
        "en": "Training diverged at step {step} of {steps}: from that step on the loss was no longer a finite number, "
              "so the run stopped there. Gradient descent is stable only while η is below 2 / the loss's steepest "
              "curvature; above it, every step overshoots the minimum by more than the last. Reduce the learning "
              "rate η ({learning_rate:g} now), for example to {suggested:g}.",
        "zh": "训练在第 {step} / {steps} 步发散：从这一步起损失不再是有限的数，因此运行在此停止。只有当 η 小于 2 / 损失"
              "最陡方向的曲率时，梯度下降才稳定；超过这个界限，每一步都比上一步更远地冲过最小值。请降低学习率 η"
              "（当前为 {learning_rate:g}），例如改为 {suggested:g}。",
    },
    "error.too_many_devices": {
        "en": "You asked for {devices} devices, but this runtime has only {available}.",
        "zh": "你请求了 {devices} 台设备，但当前运行时只有 {available} 台。",
    },
    "error.too_large": {
        "en": "`{name}` would hold {count:,} values, over this deployment's limit of {limit:,}. Choose smaller sizes.",
        "zh": "`{name}` 将包含 {count:,} 个数值，超过本部署的上限 {limit:,}。请选择更小的规模。",
    },
    "error.mesh_needs_tensor": {
        "en": "A model axis of {model} devices is a data × model mesh: it trains with impl tensor, not {impl}.",
        "zh": "{model} 台设备的模型轴构成数据 × 模型网格，需要用 tensor 实现训练，而不是 {impl}。",
    },
    "error.tensor_needs_mlp_sgd": {
        "en": "The tensor implementation splits the MLP's weights and trains with SGD in float32 (strategy dp or "
              "zero3, no accumulation); got model {model}, optimizer {optimizer}, strategy {strategy}.",
        "zh": "tensor 实现切分 MLP 的权重，并以 float32 的 SGD 训练（策略 dp 或 zero3，不做梯度累积）；"
              "收到的是模型 {model}、优化器 {optimizer}、策略 {strategy}。",
    },
    "error.mesh_devices": {
        "en": "The mesh data={data},model={model} uses {mesh} devices, not {devices}.",
        "zh": "网格 data={data},model={model} 使用 {mesh} 台设备，而不是 {devices} 台。",
    },
    "error.mesh_not_divisible": {
        "en": "The {axis} axis ({count} devices) must divide {name} ({size}).",
        "zh": "{axis} 轴（{count} 台设备）必须能整除 {name}（{size}）。",
    },
    "error.unknown_schedule": {
        "en": "The schedule must be one of {options}; got {value!r}.",
        "zh": "流水线排程必须是 {options} 之一；收到的是 {value!r}。",
    },
    "error.layers_need_replicated": {
        "en": "{layers} layers train with impl pmap, shard_map or jit (SGD, float32), or pipeline; got impl {impl!r}.",
        "zh": "{layers} 层的模型用 pmap、shard_map 或 jit 实现（SGD，float32）或 pipeline 实现训练；"
              "收到的实现是 {impl!r}。",
    },
    "error.stages_need_pipeline": {
        "en": "Pipeline stages, micro-batches and a schedule need impl pipeline; got impl {impl!r}.",
        "zh": "流水线阶段、微批次和排程需要 pipeline 实现；收到的实现是 {impl!r}。",
    },
    "error.pipeline_needs_mlp_sgd": {
        "en": "The pipeline implementation splits the MLP's layers and trains with SGD in float32 (strategy dp, no "
              "accumulation); got model {model}, optimizer {optimizer}, strategy {strategy}.",
        "zh": "pipeline 实现切分 MLP 的层，并以 float32 的 SGD 训练（策略 dp，不做梯度累积）；"
              "收到的是模型 {model}、优化器 {optimizer}、策略 {strategy}。",
    },
    "error.pipeline_devices": {
        "en": "The pipeline runs one stage per device, D/P pipelines side by side: {stages} stages need a "
              "multiple of {stages} devices, got {devices}.",
        "zh": "流水线每台设备运行一个阶段，D/P 条流水线并排运行：{stages} 个阶段需要 {stages} 的倍数台设备，"
              "收到的是 {devices} 台。",
    },
    "error.layers_not_divisible": {
        "en": "{layers} layers do not split evenly into {stages} stages.",
        "zh": "{layers} 层无法平均分到 {stages} 个阶段。",
    },
    "error.microbatches_not_divisible": {
        "en": "The global batch {batch} does not split into {microbatches} micro-batches of equal size; "
              "try {suggestion}.",
        "zh": "全局批次 {batch} 无法分成 {microbatches} 个大小相同的微批次；可以试试 {suggestion}。",
    },
    "error.no_mesh_shapes": {
        "en": "A prediction needs at least one data × model shape; none was given.",
        "zh": "预测至少需要一个 data × model 网格形状，但没有给出任何形状。",
    },
    "error.meshes_alone": {
        "en": "`--meshes` trains every shape of one D with impl tensor; leave out {option}.",
        "zh": "`--meshes` 以 tensor 实现训练同一 D 的每种网格形状；请去掉 {option}。",
    },
    "share.title": {"en": "Share this lab", "zh": "分享本实验"},
    "share.body": {
        "en": "The link below opens this lab with the settings it shows now. Tick **lock** to show a setting "
              "without letting it change, **hide** to leave it out of the page (its value still applies).",
        "zh": "下面的链接会以当前显示的设置打开本实验。勾选 **锁定** 则显示该设置但不允许修改，勾选 **隐藏** 则页面上不显示它"
              "（它的值仍然生效）。",
    },
    "share.no_settings": {
        "en": "This page has no settings to fix: the link opens it in the language shown now.",
        "zh": "本页没有可固定的设置：链接会以当前语言打开它。",
    },
    "share.lock": {"en": "lock", "zh": "锁定"},
    "share.hide": {"en": "hide", "zh": "隐藏"},
    "share.unknown": {
        "en": "This link locks or hides settings this page does not show now, so they are ignored: {names}",
        "zh": "此链接锁定或隐藏了本页当前没有显示的设置，因此已忽略：{names}",
    },
    "export.button": {"en": "Export as a Python script", "zh": "导出为 Python 脚本"},
    "export.help": {
        "en": "A standalone script (only jax and numpy) that prints the numbers this lab shows with the current "
              "settings; run it in a notebook or on a machine with real GPUs.",
        "zh": "一个独立脚本（只需 jax 和 numpy），用当前设置打印本实验显示的数值；可在 notebook 中运行，"
              "也可在有真实 GPU 的机器上运行。",
    },
    "export.notebook": {"en": "Export as a Jupyter notebook", "zh": "导出为 Jupyter notebook"},
    "export.notebook.help": {
        "en": "The same code as a notebook, with this lab's explanations in the page's language; it runs on "
              "simulated CPU devices, or on a GPU or TPU runtime (Colab) when that has enough devices.",
        "zh": "同样的代码，做成 notebook，并附上本实验的说明（使用页面当前的语言）；它在模拟的 CPU 设备上运行，"
              "若 GPU 或 TPU 运行时（Colab）的设备足够多，则在它们上运行。",
    },
    # Links into MLflow's own UI (labs/ui/tracking.py), on every page that shows a run.
    "mlflow.open_run": {"en": "Open in MLflow", "zh": "在 MLflow 中打开"},
    "mlflow.column": {"en": "MLflow", "zh": "MLflow"},
    "mlflow.compare_sweep": {
        "en": "Compare its {runs} runs in MLflow",
        "zh": "在 MLflow 中比较它的 {runs} 个运行",
    },
    "mlflow.open_experiment": {"en": "All runs in MLflow", "zh": "在 MLflow 中查看全部运行"},
    "mlflow.compare_shown": {
        "en": "Compare the {runs} runs shown in MLflow",
        "zh": "在 MLflow 中比较这里显示的 {runs} 个运行",
    },
    "mlflow.compare_newest": {
        "en": "Compare the newest {runs} runs shown in MLflow",
        "zh": "在 MLflow 中比较这里显示的最新 {runs} 个运行",
    },
    "mlflow.needs_ui": {
        "en": "MLflow's own UI opens in its Model-training view; it must be running (the command is on the "
              "Experiments page).",
        "zh": "链接在 MLflow 自带界面的“模型训练”（Model training）视图中打开；该界面须已启动（启动命令见“实验对比”页）。",
    },
    "mlflow.bad_setting": {
        "en": "No links to MLflow's UI: the setting {name} is not a plain http(s) address without a password.",
        "zh": "没有指向 MLflow 界面的链接：设置 {name} 不是不带密码的普通 http(s) 地址。",
    },
    "mlflow.fallback": {
        "en": "This run is in the fallback store, which MLflow's UI for this server does not show. Open it with:",
        "zh": "这个运行在备用存储中，本服务器的 MLflow 界面不显示它。可用以下命令打开：",
    },
}
