TEXTS = {
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
    # The name and class code form (labs/classroom.py), shown on the Worksheet page.
    "identity.heading": {"en": "🧑‍🎓 Your name in a class (optional)", "zh": "🧑‍🎓 你在班级中的名字（可选）"},
    "identity.shown_to_classmates": {
        "en": "With a class code, your training runs and exercise results are recorded on this server under your "
              "display name and the code, and **everyone who opens the Class page with that code sees them — "
              "your classmates too**. Use a nickname if you prefer. Up to {name_max} characters for the name, and "
              "{code_min} to {code_max} for the code; capitals and full-width characters in the code do not count.",
        "zh": "填写班级代码后，你的训练运行和练习结果会以你的显示名称和该代码记录在本服务器上，"
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
