TEXTS = {
    "prediction.recorded": {"en": "Your prediction is recorded for your class.", "zh": "你的预测已记录到你的班级。"},
    "prediction.record_failed": {
        "en": "Your result is kept in this session, but your prediction could not be recorded for your class:",
        "zh": "你的结果保存在本次会话中，但你的预测无法记录到你的班级：",
    },
    "prediction.write_limited": {
        "en": "This page has recorded many checks in a short time: this one waits in your session and is recorded "
              "with your next check (one every {seconds:g} s).",
        "zh": "本页在短时间内记录了很多次核对：这一次先保存在你的会话中，随你的下一次核对一起记录（每 {seconds:g} 秒一次）。",
    },
    "title": {"en": "Class", "zh": "班级"},
    "summary": {
        "en": "For a teacher: a class's exercise results, best scaling efficiency at each D, a throughput "
              "leaderboard, and a CSV of every run.",
        "zh": "供教师使用：一个班级的练习结果、每个 D 的最佳扩展效率、吞吐量排行榜，以及所有运行的 CSV。",
    },
    "intro": {
        "en": "Students who enter a class code on the Worksheet page have their training runs and exercise "
              "results recorded in this server's MLflow store, tagged with the code and their display name. "
              "Enter the code to see the class.",
        "zh": "在练习页填写了班级代码的学生，其训练运行和练习结果会记录到本服务器的 MLflow 存储中，并带上班级代码和"
              "显示名称作为标签。输入班级代码即可查看该班级。",
    },
    "w.code": {"en": "Class code", "zh": "班级代码"},
    "code_is_the_key": {
        "en": "The class code is the class's only key: whoever knows it sees every name and result of the class, "
              "and whoever types it records into the class. Capitals and full-width characters do not count "
              "(CS101, cs101 and the same typed in full-width characters are one class). Names are not checked: two students may pick the same "
              "name, and their rows merge; blank names and names that look alike but differ (a Cyrillic А beside a "
              "Latin A) are marked in the column “name check”.",
        "zh": "班级代码是班级唯一的凭据：知道它的人都能看到这个班级的所有名字和结果，输入它的人都会记录到这个班级。"
              "代码不区分大小写和全角半角（CS101、cs101 和 ＣＳ１０１ 是同一个班级）。名字不做核对：两名学生可能取了同一个"
              "名字，他们的行会合在一起；空白的名字，以及看起来相同但实际不同的名字（例如西里尔字母 А 和拉丁字母 A），"
              "会在“名字检查”一列中标出。",
    },
    "code_too_short": {
        "en": "A class code has at least {min} characters.",
        "zh": "班级代码至少要有 {min} 个字符。",
    },
    "col.name_note": {"en": "name check", "zh": "名字检查"},
    "name.blank": {"en": "blank: no name was given", "zh": "空白：没有填写名字"},
    "name.lookalike": {
        "en": "looks like another name of the class; told apart by {letters}",
        "zh": "与本班另一个名字看起来相同；区别在于 {letters}",
    },
    "name.browsers": {
        "en": "recorded from {browsers} browsers: browser 2 and on took a name another browser used first",
        "zh": "来自 {browsers} 个浏览器的记录：第 2 个及以后的浏览器用了另一个浏览器先用的名字",
    },
    "name.lookalike_plain": {
        "en": "looks like another name of the class; this one has only plain letters",
        "zh": "与本班另一个名字看起来相同；这个名字只含普通字母",
    },
    "enter_code": {"en": "Enter a class code to see its runs.", "zh": "请输入班级代码以查看其运行。"},
    "nothing_yet": {
        "en": "No runs carry this class code yet. Students enter it on the Worksheet page, then train or answer "
              "exercises.",
        "zh": "还没有运行带有这个班级代码。学生需先在练习页填写它，然后训练或回答练习。",
    },
    "store_failed": {
        "en": "The tracking store could not be read; whoever runs this server should check it. What it said:",
        "zh": "无法读取跟踪存储，请本服务器的管理员检查。它返回的信息：",
    },
    "tracking.refused": {
        "en": "This server's tracking store cannot be used, so there is no class to show. What is wrong:",
        "zh": "本服务器的跟踪存储无法使用，因此没有班级可显示。问题如下：",
    },
    "capped.training": {
        "en": "This class has more than {limit} training runs: only the newest {limit} are shown here and in the "
              "CSV. MLflow's own UI shows them all.",
        "zh": "这个班级的训练运行超过 {limit} 个：这里和 CSV 中只显示最新的 {limit} 个。MLflow 自带的界面会显示全部。",
    },
    "capped.exercise": {
        "en": "This class has more than {limit} worksheet runs: only the newest {limit} are shown here and in the "
              "CSV. MLflow's own UI shows them all.",
        "zh": "这个班级的练习运行超过 {limit} 个：这里和 CSV 中只显示最新的 {limit} 个。MLflow 自带的界面会显示全部。",
    },
    "capped.students": {
        "en": "{count} students have more than {per} runs of a kind: only the newest {per} of each are shown here and "
              "in the CSV, so that no name's runs push the others' out. MLflow's own UI shows them all.",
        "zh": "有 {count} 名学生的某类运行超过 {per} 个：这里和 CSV 中只显示每人最新的 {per} 个，这样任何一个名字的运行都不会把"
              "其他人的挤出去。MLflow 自带的界面会显示全部。",
    },
    "refreshing": {
        "en": "This page looks for new runs and predictions every {seconds} s and redraws itself when they arrive. "
              "Its link keeps the class code (never the teacher key).",
        "zh": "本页每 {seconds} 秒查看一次新的运行和预测，有新内容时自动重绘。它的链接保留班级代码（从不包含教师密钥）。",
    },
    "students": {"en": "{students} students, {runs} rows", "zh": "{students} 名学生，{runs} 行"},
    "completion.heading": {"en": "Exercises", "zh": "练习"},
    "completion.body": {
        "en": "One row per student, one column per exercise (sheet/step): 1 answered right, 0 answered wrong, "
              "empty not answered.",
        "zh": "每名学生一行，每道练习（练习单/步骤）一列：1 表示答对，0 表示答错，空白表示未作答。",
    },
    "efficiency.heading": {"en": "Best scaling efficiency at each D", "zh": "每个 D 的最佳扩展效率"},
    "efficiency.body": {
        "en": "Each student's best efficiency E(D) = S(D) / D over their training runs, where it was measured.",
        "zh": "每名学生在其训练运行中测得的最佳扩展效率 E(D) = S(D) / D。",
    },
    "leaderboard.heading": {"en": "Throughput leaderboard", "zh": "吞吐量排行榜"},
    "leaderboard.body": {
        "en": "Best steady throughput (samples/s) per student and D, for runs with the same settings only.",
        "zh": "每名学生在每个 D 下的最佳稳态吞吐量（样本/秒），只比较设置相同的运行。",
    },
    "w.settings": {"en": "Settings (model · global batch · scaling · implementation)",
                   "zh": "设置（模型 · 全局批次 · 扩展方式 · 实现）"},
    "runs.heading": {"en": "Every row", "zh": "所有行"},
    "download": {"en": "⬇️ Download as CSV", "zh": "⬇️ 下载 CSV"},
    "none": {"en": "Nothing here yet.", "zh": "这里暂时没有内容。"},
    "plain_text_note": {
        "en": "Names and codes are what students typed; they are shown as plain text only.",
        "zh": "名称和代码是学生自己输入的，只以纯文本显示。",
    },
    "col.student": {"en": "student", "zh": "学生"},
    "col.devices": {"en": "D", "zh": "D"},
    "col.steady_throughput": {"en": "steady throughput (samples/s)", "zh": "稳态吞吐量（样本/秒）"},
    "reset_note": {
        "en": "The teacher reset this class at {when}: only what was recorded since then is shown.",
        "zh": "教师在 {when} 重置了这个班级：只显示此后记录的内容。",
    },
    "predictions.heading": {"en": "First predictions against the computed answers",
                            "zh": "第一次预测与计算出的答案对照"},
    "predictions.body": {
        "en": "Each student's first prediction at a step — the one recorded before the answer was shown to them — "
              "beside the answer the server computed. Later attempts are kept apart, in the timeline and the rows "
              "below. Per step: how many first predictions, the share within the step's tolerance of the answer, "
              "and the most common wrong one.",
        "zh": "每名学生在某一步的第一次预测（在答案向其揭晓之前记录），与服务器计算出的答案对照。之后的尝试单独保存，"
              "见下方的时间线和行。每一步列出：第一次预测的数量、落在该步容差以内的比例，以及最常见的错误预测。",
    },
    "predictions.withheld_hidden": {
        "en": "The teacher withholds the answers of some sheets: their results and predictions (right or wrong tells "
              "the answer) show only in the teacher view, and are not in the CSV.",
        "zh": "教师暂不公布部分练习单的答案：这些练习单的结果和预测（对错即透露了答案）只在教师视图中显示，也不在 CSV 中。",
    },
    "predictions.off_scale": {
        "en": "{count} first predictions lie far outside the class's spread: the axis shows {low} to {high}, and each "
              "of them is drawn at its edge as a triangle pointing the way it lies (its value in the tooltip).",
        "zh": "有 {count} 个第一次预测远在全班的分布之外：坐标轴显示 {low} 到 {high}，它们各自画在轴的边缘，用指向其所在方向的三角"
              "表示（数值见提示框）。",
    },
    "predictions.step_caption": {
        "en": "{count} first predictions, {within} within tolerance of the computed answer (the dashed rule); the "
              "most common wrong prediction was made {wrong} times.",
        "zh": "共 {count} 个第一次预测，{within} 落在计算出的答案（虚线）的容差以内；最常见的错误预测出现了 {wrong} 次。",
    },
    "predictions.rows_heading": {"en": "Every prediction", "zh": "所有预测"},
    "w.prediction_step": {"en": "Step (sheet/step)", "zh": "步骤（练习单/步骤）"},
    "col.sheet": {"en": "sheet", "zh": "练习单"},
    "col.step": {"en": "step", "zh": "步骤"},
    "col.first_predictions": {"en": "first predictions", "zh": "第一次预测数"},
    "col.within_tolerance": {"en": "within tolerance", "zh": "容差以内"},
    "col.common_wrong": {"en": "most common wrong prediction", "zh": "最常见的错误预测"},
    "col.common_wrong_count": {"en": "made by", "zh": "人数"},
    "col.answer": {"en": "computed answer", "zh": "计算出的答案"},
    "col.attempt": {"en": "attempt", "zh": "第几次尝试"},
    "col.first": {"en": "first", "zh": "第一次"},
    "col.after_answer": {"en": "made after seeing the answer", "zh": "看过答案之后"},
    "col.browser": {"en": "browser (1: the first under this name)", "zh": "浏览器（1：最先用这个名字的）"},
    "col.prediction": {"en": "prediction", "zh": "预测"},
    "axis.prediction": {"en": "prediction", "zh": "预测"},
    "axis.students": {"en": "students", "zh": "学生数"},
    "axis.time": {"en": "time (UTC)", "zh": "时间（UTC）"},
    "axis.step": {"en": "sheet/step", "zh": "练习单/步骤"},
    "legend.outcome": {"en": "outcome", "zh": "结果"},
    "legend.right": {"en": "within tolerance", "zh": "容差以内"},
    "legend.wrong": {"en": "outside tolerance", "zh": "容差以外"},
    "legend.answer": {"en": "computed answer", "zh": "计算出的答案"},
    "legend.place": {"en": "on the axis", "zh": "在轴上的位置"},
    "legend.on_scale": {"en": "on the scale", "zh": "在刻度范围内"},
    "legend.below": {"en": "below the scale", "zh": "低于刻度范围"},
    "legend.above": {"en": "above the scale", "zh": "高于刻度范围"},
    "legend.attempt": {"en": "attempt", "zh": "尝试"},
    "legend.first": {"en": "first", "zh": "第一次"},
    "legend.later": {"en": "later", "zh": "之后"},
    "timeline.heading": {"en": "Each student's predictions over time", "zh": "每名学生的预测时间线"},
    "timeline.body": {
        "en": "One row per student: a circle for a first prediction at a step, a triangle for a later attempt.",
        "zh": "每名学生一行：圆点表示某一步的第一次预测，三角表示之后的尝试。",
    },
    "teacher.not_configured": {
        "en": "Teacher controls are off on this server: whoever runs it sets a teacher key in {env} to turn them on.",
        "zh": "本服务器未开启教师控制：服务器管理员在 {env} 中设置教师密钥即可开启。",
    },
    "error.teacher_key_length": {
        "en": "pmap-lab cannot start with this teacher key: {env} must hold {low} to {high} characters, so that it "
              "cannot be guessed. Whoever runs this server sets a longer one (docs/DEPLOY.md) or unsets it.",
        "zh": "pmap-lab 无法以这个教师密钥启动：{env} 必须有 {low} 到 {high} 个字符，才不会被猜中。请服务器管理员设置"
              "更长的密钥（见 docs/DEPLOY.md），或删除这个设置。",
    },
    "teacher.key": {"en": "Teacher key", "zh": "教师密钥"},
    "teacher.wrong_key": {"en": "That is not this server's teacher key.", "zh": "这不是本服务器的教师密钥。"},
    "teacher.key_not_drawn": {
        "en": "What you type here is not drawn, not even as dots, so that the class does not see how long the key is. "
              "Spaces around a pasted key do not count.",
        "zh": "这里输入的内容不会显示，连圆点也不显示，这样全班看不出密钥有多长。粘贴的密钥首尾的空格不计。",
    },
    "teacher.open": {"en": "Open the teacher controls", "zh": "打开教师控制"},
    "teacher.close": {"en": "Close the teacher controls", "zh": "关闭教师控制"},
    "teacher.wait": {
        "en": "Too many wrong keys: try again in {seconds} s. Each further wrong key makes the wait longer, and "
              "the server logs every wrong try (where it came from, never what was typed).",
        "zh": "错误的密钥太多：请在 {seconds} 秒后再试。之后每输错一次，等待时间都会变长；服务器会记录每一次错误的尝试（来自哪里，但从不记录输入的内容）。",
    },
    "teacher.heading": {"en": "🧑‍🏫 Teacher controls", "zh": "🧑‍🏫 教师控制"},
    "teacher.body": {
        "en": "For the class with this code, on every server that shares this tracking store. Students' open "
              "Worksheet and Interview pages follow within about ten seconds, without a click.",
        "zh": "作用于使用这个代码的班级，以及共享这个跟踪存储的每台服务器。学生打开着的练习页和面试题页会在大约十秒内"
              "自动跟上，无需点击。",
    },
    "w.teacher_sheet": {"en": "Sheet", "zh": "练习单"},
    "w.withhold": {"en": "Withhold the answers and explanations of this sheet",
                   "zh": "暂不公布这张练习单的答案和解释"},
    "w.hold": {"en": "Hold the class at step", "zh": "让全班停在这一步"},
    "teacher.no_hold": {"en": "no hold: each student chooses", "zh": "不停留：每名学生自己选择"},
    "teacher.state_withheld": {
        "en": "Now: withheld. Students check their predictions but see no answer, no right or wrong, no explanation.",
        "zh": "当前：暂不公布。学生可以核对预测，但看不到答案、对错和解释。",
    },
    "teacher.state_released": {
        "en": "Now: released. Students see the answer and the explanation once they have checked a prediction.",
        "zh": "当前：已公布。学生核对预测后即可看到答案和解释。",
    },
    "teacher.save": {"en": "Save for the class", "zh": "为全班保存"},
    "teacher.stale": {
        "en": "Not saved: this sheet's controls changed since this page read them (another tab or teacher). They "
              "are shown again as they are now.",
        "zh": "未保存：自本页读取以来，这张练习单的控制已被更改（另一个标签页或另一位教师）。下面重新显示它们现在的状态。",
    },
    "teacher.store_failed": {
        "en": "The tracking store did not take the change; nothing changed for the class. What it said:",
        "zh": "跟踪存储没有接受这次更改；班级没有任何变化。它返回的信息：",
    },
    "teacher.reset_heading": {"en": "Reset the class", "zh": "重置班级"},
    "teacher.reset_body": {
        "en": "From the reset on, this page counts only what is recorded after it, and each student's next "
              "prediction at a step is a first one again. Nothing is deleted: every run stays in MLflow.",
        "zh": "重置之后，本页只统计此后记录的内容，每名学生在某一步的下一次预测重新算作第一次。不会删除任何内容："
              "所有运行都保留在 MLflow 中。",
    },
    "w.reset_sure": {"en": "Yes, reset this class", "zh": "确认重置这个班级"},
    "teacher.reset": {"en": "🔄 Reset the class", "zh": "🔄 重置班级"},
    "teacher.last_reset": {"en": "Last reset: {when}.", "zh": "上次重置：{when}。"},
    # The name and class code form (labs/classroom.py), shown on the Worksheet page.
    "identity.heading": {"en": "🧑‍🎓 Your name in a class (optional)", "zh": "🧑‍🎓 你在班级中的名字（可选）"},
    "identity.shown_to_classmates": {
        "en": "With a class code, your training runs, exercise results and predictions are recorded on this server under your "
              "display name and the code, and **everyone who opens the Class page with that code sees them — "
              "your classmates too**. Use a nickname if you prefer. Up to {name_max} characters for the name, and "
              "{code_min} to {code_max} for the code; capitals and full-width characters in the code do not count.",
        "zh": "填写班级代码后，你的训练运行、练习结果和预测会以你的显示名称和该代码记录在本服务器上，"
              "**任何用这个代码打开班级页的人都能看到——包括你的同学**。愿意的话可以使用昵称。名称最多 {name_max} 个字符，"
              "代码 {code_min} 到 {code_max} 个字符；代码不区分大小写和全角半角。",
    },
    "identity.name": {"en": "Display name", "zh": "显示名称"},
    "identity.code": {"en": "Class code", "zh": "班级代码"},
    "identity.recording": {
        "en": "Your runs and results are recorded for your class.",
        "zh": "你的运行和结果会记录到你的班级。",
    },
    "identity.code_too_short": {
        "en": "A class code has at least {min} characters: nothing is recorded for a class yet.",
        "zh": "班级代码至少要有 {min} 个字符：目前不会为班级记录任何内容。",
    },
    "identity.not_recording": {
        "en": "No class code: nothing is recorded for a class.",
        "zh": "没有班级代码：不会为班级记录任何内容。",
    },
}
