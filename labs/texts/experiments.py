TEXTS = {
    "title": {"en": "Experiments", "zh": "实验对比"},
    "summary": {
        "en": "Compare tracked runs from MLflow.",
        "zh": "对比 MLflow 中记录的运行。",
    },
    "intro": {
        "en": "Every training run and sweep — from the Training page or the command line — is an MLflow run. "
              "This page reads them back from the tracking store and compares them: throughput and efficiency "
              "against the device count D, and the loss curves.",
        "zh": "每一次训练和扫描——无论来自“训练实战”页还是命令行——都是一个 MLflow 运行。本页从跟踪存储中读回这些运行并加以"
              "比较：吞吐量和扩展效率随设备数 D 的变化，以及损失曲线。",
    },
    "loading": {"en": "Reading runs from the tracking store…", "zh": "正在从跟踪存储读取运行……"},
    "store.uri": {"en": "Tracking store in use:", "zh": "当前使用的跟踪存储："},
    "store.ui_command": {
        "en": "Open the same runs in MLflow's own UI with:",
        "zh": "用以下命令在 MLflow 自带的界面中打开同样的运行：",
    },
    "store.unreachable": {
        "en": "The tracking server does not answer. Start it, or point `MLFLOW_TRACKING_URI` at a "
              "reachable server or a local store such as `sqlite:///mlflow.db`. Runs trained while the server was "
              "down were written to the fallback store `{fallback}`.",
        "zh": "跟踪服务器没有响应。请启动它，或把 `MLFLOW_TRACKING_URI` 指向可访问的服务器或本地存储，"
              "例如 `sqlite:///mlflow.db`。服务器不可用期间训练的运行已写入备用存储 `{fallback}`。",
    },
    "store.locked": {
        "en": "The tracking store is locked by another process; try again in a moment. Runs trained while it "
              "stays locked are written to the fallback store `{fallback}`.",
        "zh": "跟踪存储正被另一个进程锁定，请稍后再试。锁定期间训练的运行会写入备用存储 `{fallback}`。",
    },
    "store.refused": {
        "en": "The tracking store set by `MLFLOW_TRACKING_URI` cannot be used:",
        "zh": "`MLFLOW_TRACKING_URI` 指定的跟踪存储无法使用：",
    },
    "store.unreadable": {
        "en": "The tracking store could not be read. Check that `MLFLOW_TRACKING_URI` names an MLflow store "
              "(for example `sqlite:///mlflow.db`). What failed:",
        "zh": "无法读取跟踪存储。请检查 `MLFLOW_TRACKING_URI` 是否指向 MLflow 存储（例如 `sqlite:///mlflow.db`）。"
              "失败原因：",
    },
    "empty": {
        "en": "No runs in this store yet. Press **Train** or **Scaling sweep** on the Training page, or run from a shell:",
        "zh": "该存储中还没有运行记录。请在“训练实战”页点击 **开始训练** 或 **扩展扫描**，或在命令行中运行：",
    },
    "w.model": {"en": "Model", "zh": "模型"},
    "w.model.all": {"en": "all models", "zh": "全部模型"},
    "w.model.linear": {"en": "linear regression", "zh": "线性回归"},
    "w.model.mlp": {"en": "MLP", "zh": "MLP"},
    "w.batch": {"en": "Global batch", "zh": "全局批次"},
    "w.batch.all": {"en": "all batches", "zh": "全部批次"},
    "count": {"en": "{runs} runs shown (of which {sweeps} sweep parents).", "zh": "显示 {runs} 个运行（其中 {sweeps} 个为扫描父运行）。"},
    "filtered_empty": {"en": "No run matches these filters.", "zh": "没有符合筛选条件的运行。"},
    "scaling.heading": {"en": "Steady throughput and efficiency against D", "zh": "稳态吞吐量与扩展效率随 D 的变化"},
    "scaling.throughput": {"en": "Steady throughput", "zh": "稳态吞吐量"},
    "scaling.efficiency": {"en": "Efficiency E(D) = S(D) / D (dashed: ideal)", "zh": "扩展效率 E(D) = S(D) / D（虚线：理想）"},
    "scaling.none": {"en": "No finished training run with a throughput among these runs.", "zh": "这些运行中没有已完成且带吞吐量的训练运行。"},
    "scaling.note": {
        "en": "Each point is one finished run, coloured by model, global batch and scaling mode; the line joins "
              "the medians at each D. S(D) of a run is its steady throughput over that of a one-device run measured "
              "in the same process.",
        "zh": "每个点是一次已完成的运行，颜色表示模型、全局批次和扩展方式；折线连接各 D 下的中位数。每次运行的 S(D) "
              "是其稳态吞吐量与同一进程中测得的单设备运行稳态吞吐量之比。",
    },
    "axis.throughput": {"en": "steady throughput (samples/s)", "zh": "稳态吞吐量（样本/秒）"},
    "axis.efficiency": {"en": "efficiency E(D)", "zh": "扩展效率 E(D)"},
    "axis.group": {"en": "model · batch · scaling", "zh": "模型 · 批次 · 扩展方式"},
    "axis.step": {"en": "step", "zh": "步"},
    "axis.loss": {"en": "loss", "zh": "损失"},
    "axis.run": {"en": "run", "zh": "运行"},
    "loss.heading": {"en": "Loss curves", "zh": "损失曲线"},
    "loss.choose": {"en": "Runs to overlay", "zh": "要叠加比较的运行"},
    "loss.none": {"en": "Choose one or more runs to see their loss curves.", "zh": "请选择一个或多个运行以查看损失曲线。"},
    "loss.empty": {"en": "The chosen runs logged no loss values.", "zh": "所选运行没有记录损失值。"},
    "col.run_name": {"en": "run", "zh": "运行"},
    "col.status": {"en": "status", "zh": "状态"},
    "col.start_time": {"en": "started", "zh": "开始时间"},
    "col.model": {"en": "model", "zh": "模型"},
    "col.devices": {"en": "devices D", "zh": "设备数 D"},
    "col.global_batch": {"en": "global batch B", "zh": "全局批大小 B"},
    "col.scaling": {"en": "scaling", "zh": "扩展方式"},
    "col.throughput": {"en": "throughput, end to end (samples/s)", "zh": "吞吐量，端到端（样本/秒）"},
    "col.steady_throughput": {"en": "steady throughput (samples/s)", "zh": "稳态吞吐量（样本/秒）"},
    "col.scaling_ratio": {"en": "scaling ratio S(D)", "zh": "扩展比 S(D)"},
    "col.efficiency": {"en": "efficiency E(D)", "zh": "扩展效率 E(D)"},
    "col.final_loss": {"en": "final loss", "zh": "最终损失"},
    "col.tags.backend": {"en": "backend", "zh": "后端"},
    "col.tags.simulated": {"en": "simulated", "zh": "模拟设备"},
    "col.run_id": {"en": "run id", "zh": "运行 ID"},
}
