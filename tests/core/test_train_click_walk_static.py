"""The Train click walked from the source following only its settings (`harness.train_click_static_walk`):
the calls handed the settings record, not the data, the model or the compiled program."""

import textwrap

from harness.pipeline_measure_walk import Walker
from harness.train_click_static_walk import SettingsWalker, train_click_static_walk
from harness.walks import summary

# At most 8 returns. The loop builds each program its plan chose (`programs.build_planned`), so the walk does not
# go back to the config to choose an entry again: with `programs.build`'s `resolve(spec)` on the path it made 9.
RETURNS = 8


def test_the_train_clicks_settings_come_back_to_few_files():
    calls: list[str] = []
    stops = train_click_static_walk(calls=calls)
    entered, returns = summary(stops)
    print(f"{len(stops)} stops in {len(entered)} files, {returns} returns, entries: {dict(entered)}")
    assert stops[0] == "labs/training.py"
    assert "pmap_core/train/replicated.py" in entered, calls  # the "pmap" entry builds the program
    assert not {"pmap_core/train/models.py", "pmap_core/train/transformer.py"} & set(entered), calls
    assert returns <= RETURNS, stops
    assert max(entered.values()) <= 4, entered


def write(root, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


SOURCE = {
    "pmap_core/__init__.py": "",
    "pmap_core/settings.py": """
        import dataclasses

        @dataclasses.dataclass
        class Spec:
            steps: int

        @dataclasses.dataclass
        class Config:
            steps: int = 3

            def spec(self) -> Spec:
                return Spec(self.steps)
        """,
    "pmap_core/work.py": """
        from pmap_core.settings import Config, Spec

        def count(n: int) -> int:
            return n

        def plan(first: int, config: Config) -> int:
            count(first)
            return build(config.spec())

        def build(spec: Spec) -> int:
            return count(spec.steps)
        """,
    "labs/page.py": """
        from pmap_core import work
        from pmap_core.settings import Config

        def click(config: Config) -> None:
            work.count(config.steps)
            work.plan(1, config=config)
        """,
}


def test_only_the_calls_handed_the_settings_are_followed(tmp_path):
    write(tmp_path, SOURCE)
    classes = (("pmap_core.settings", "Config"), ("pmap_core.settings", "Spec"))
    settings = SettingsWalker(("labs.page", "click"), settings_classes=classes, root=tmp_path)
    settings.walk()
    every = Walker("core", ("labs.page", "click"), root=tmp_path)
    every.walk()
    called = [line.strip() for line in settings.entered]
    assert called == ["labs/page.py:click", "pmap_core/work.py:plan", "pmap_core/settings.py:spec",
                      "pmap_core/work.py:build"], settings.entered
    assert "pmap_core/work.py:count" in [line.strip() for line in every.entered]
