"""The Train click's walk through the core, printed (harness/train_click_walk.py says what it counts).

    .venv/bin/python -m benchmarks.train_click_walk
"""

from harness.train_click_walk import main

if __name__ == "__main__":
    main()
