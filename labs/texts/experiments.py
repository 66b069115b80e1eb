TEXTS = {
    "title": {"en": "Experiments", "zh": "实验对比"},
    "summary": {
        "en": "Compare tracked runs from MLflow.",
        "zh": "对比 MLflow 中记录的运行。",
    },
    "intro": {
        "en": "Every training run and sweep — from the Training page or the command line — is an MLflow run. "
              "This page reads them back from the tracking store and compares them: throughput and efficiency "
              "against the device count D for each implementation of the step (`pmap`, `shard_map`, `jit`), "
              "and the loss curves.",
        "zh": "每一次训练和扫描——无论来自“训练实战”页还是命令行——都是一个 MLflow 运行。本页从跟踪存储中读回这些运行并加以"
              "比较：每种训练步实现方式（`pmap`、`shard_map`、`jit`）的吞吐量和扩展效率随设备数 D 的变化，以及损失曲线。",
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
    "w.impl": {"en": "Implementation", "zh": "实现方式"},
    "w.impl.all": {"en": "all implementations", "zh": "全部实现方式"},
    "w.impl.pmap": {"en": "pmap (legacy)", "zh": "pmap（旧式）"},
    "w.impl.shard_map": {"en": "shard_map", "zh": "shard_map"},
    "w.impl.jit": {"en": "jit with shardings", "zh": "jit 加分片"},
    "impl.legacy": {
        "en": "Runs recorded before the implementation became a setting have no `impl` param: they were all "
              "{legacy} runs, so they count as {legacy} here. A sweep that compares implementations "
              "(`--impl all`) has one parent run that lists them all and one child run per implementation and D.",
        "zh": "在“实现方式”成为设置之前记录的运行没有 `impl` 参数：它们当时都是 {legacy} 运行，因此这里按 {legacy} 计。"
              "比较多种实现方式的扫描（`--impl all`）有一个列出全部实现方式的父运行，以及每种实现方式、每个 D 各一个子运行。",
    },
    "w.throughput": {"en": "Throughput shown", "zh": "显示的吞吐量"},
    "w.throughput.steady_throughput": {"en": "steady", "zh": "稳态"},
    "w.throughput.throughput": {"en": "end to end", "zh": "端到端"},
    "count": {
        "en": "{runs} training runs shown, and {sweeps} sweep parents: a parent only sums up its own runs, so no "
              "comparison here (charts, loss curves, MLflow's comparison) counts it.",
        "zh": "显示 {runs} 个训练运行，另有 {sweeps} 个扫描父运行：父运行只汇总它自己的子运行，因此这里的任何比较"
              "（图表、损失曲线、MLflow 中的比较）都不计入它。",
    },
    "diverged": {
        "en": "{runs} of these runs diverged: their loss stopped being a finite number at the step shown under "
              "“diverged at step”, the run stopped there and ended FAILED. A smaller learning rate trains them.",
        "zh": "其中 {runs} 个运行发散了：它们的损失在“发散于第几步”所示的那一步不再是有限的数，运行就此停止并以 FAILED "
              "结束。用更小的学习率即可训练。",
    },
    "filtered_empty": {"en": "No run matches these filters.", "zh": "没有符合筛选条件的运行。"},
    "scaling.heading": {"en": "Throughput and efficiency against D, by implementation",
                        "zh": "各实现方式的吞吐量与扩展效率随 D 的变化"},
    "scaling.steady_throughput": {"en": "Steady throughput", "zh": "稳态吞吐量"},
    "scaling.throughput": {"en": "Throughput, end to end", "zh": "吞吐量，端到端"},
    "scaling.efficiency": {"en": "Efficiency E(D) = S(D) / D (dashed: ideal)", "zh": "扩展效率 E(D) = S(D) / D（虚线：理想）"},
    "scaling.none": {"en": "No finished training run with a throughput among these runs.", "zh": "这些运行中没有已完成且带吞吐量的训练运行。"},
    "scaling.note": {
        "en": "Each point is one finished run, coloured by implementation and shaped by model, global batch and "
              "scaling mode; each line joins the medians of one implementation and group at each D. S(D) of a run "
              "is its steady throughput over that of a one-device run of the same implementation measured in the "
              "same process.",
        "zh": "每个点是一次已完成的运行，颜色表示实现方式，形状表示模型、全局批次和扩展方式；每条折线连接同一实现方式、"
              "同一组在各 D 下的中位数。每次运行的 S(D) 是其稳态吞吐量与同一进程中测得的、同一实现方式的单设备运行"
              "稳态吞吐量之比。",
    },
    "axis.steady_throughput": {"en": "steady throughput (samples/s)", "zh": "稳态吞吐量（样本/秒）"},
    "axis.throughput": {"en": "throughput, end to end (samples/s)", "zh": "吞吐量，端到端（样本/秒）"},
    "axis.impl": {"en": "implementation", "zh": "实现方式"},
    "axis.efficiency": {"en": "efficiency E(D)", "zh": "扩展效率 E(D)"},
    "axis.group": {"en": "model · batch · scaling", "zh": "模型 · 批次 · 扩展方式"},
    "axis.step": {"en": "step", "zh": "步"},
    "axis.loss": {"en": "loss", "zh": "损失"},
    "axis.run": {"en": "run", "zh": "运行"},
    "impl.heading": {"en": "The implementations side by side", "zh": "各实现方式并列比较"},
    "impl.metric": {"en": "Each implementation's column: {metric}.", "zh": "每种实现方式一列：{metric}。"},
    "impl.single": {
        "en": "These runs use one implementation. Train the same settings with another one (the Training page's "
              "implementation choice), or sweep every implementation at every D from a shell with "
              "`python -m pmap_core sweep --impl all`, to compare them here.",
        "zh": "这些运行只用了一种实现方式。用另一种实现方式训练同样的设置（“训练实战”页的实现方式选项），或在命令行用 "
              "`python -m pmap_core sweep --impl all` 在每个 D 上扫描全部实现方式，即可在此比较。",
    },
    "impl.note": {
        "en": "One row per model, global batch, scaling mode and D; each implementation's column is the median of "
              "its runs. The three run the same arithmetic and the same all-reduce of the gradients, so a gap "
              "between them is dispatch and compiled-program overhead, not a different algorithm (only runs of the "
              "plain replicated SGD step, `sgd · dp`, are compared: the sharded strategies run in jit alone). "
              "The last column "
              "is {default}'s median over the fastest's: {default}, the Training page's default, is within "
              "{tolerance}% of the fastest where it is at least {threshold:.2f}.",
        "zh": "每行对应一种模型、全局批次、扩展方式和 D；每种实现方式一列，为其各次运行的中位数。三种实现方式做的是同样的"
              "运算和同样的梯度全归约，因此它们之间的差距来自派发和编译后程序的开销，而不是算法不同（只比较普通复制参数 SGD "
              "训练步 `sgd · dp` 的运行：分片策略只在 jit 中运行）。最后一列是 {default} "
              "的中位数与最快者之比：{default} 是“训练实战”页的默认实现方式，该比值不低于 {threshold:.2f} 时，"
              "它与最快者相差在 {tolerance}% 以内。",
    },
    "impl.mlflow": {
        "en": "In MLflow's own UI, compare the same runs by grouping them by the param `impl`; the parent run of a "
              "sweep with `--impl all` logs `by_D/pmap/steady_throughput`, `by_D/shard_map/steady_throughput` and "
              "`by_D/jit/steady_throughput` (and the same for `throughput`, `scaling_ratio`, `efficiency`) with D as "
              "the step: its metric charts are these curves against D, under names no training run has.",
        "zh": "在 MLflow 自带的界面中，按参数 `impl` 分组即可比较同样的运行；用 `--impl all` 扫描时，其父运行以 D 为步记录 "
              "`by_D/pmap/steady_throughput`、`by_D/shard_map/steady_throughput` 和 `by_D/jit/steady_throughput`"
              "（`throughput`、`scaling_ratio`、`efficiency` 同理）：它的指标图就是这些随 D 变化的曲线，"
              "用的是训练运行没有的名称。",
    },
    "loss.heading": {"en": "Loss curves", "zh": "损失曲线"},
    "loss.choose": {"en": "Runs to overlay", "zh": "要叠加比较的运行"},
    "loss.none": {"en": "Choose one or more runs to see their loss curves.", "zh": "请选择一个或多个运行以查看损失曲线。"},
    "loss.empty": {"en": "The chosen runs logged no loss values.", "zh": "所选运行没有记录损失值。"},
    "col.run_name": {"en": "run", "zh": "运行"},
    "col.diverged_at_step": {"en": "diverged at step", "zh": "发散于第几步"},
    "col.status": {"en": "status", "zh": "状态"},
    "col.start_time": {"en": "started", "zh": "开始时间"},
    "col.model": {"en": "model", "zh": "模型"},
    "col.impl": {"en": "implementation", "zh": "实现方式"},
    "col.setup": {"en": "optimizer · strategy", "zh": "优化器 · 策略"},
    "col.fastest": {"en": "fastest", "zh": "最快"},
    "col.runs": {"en": "runs", "zh": "运行数"},
    "col.default_share": {"en": "{default} / fastest", "zh": "{default} / 最快"},
    "col.devices": {"en": "devices D", "zh": "设备数 D"},
    "col.num_processes": {"en": "processes P", "zh": "进程数 P"},
    "col.global_batch": {"en": "global batch B", "zh": "全局批次 B"},
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
