"""The Train click walked from the source, following only its settings, printed
(harness/train_click_static_walk.py says what it follows and counts).

    .venv/bin/python -m benchmarks.train_click_static_walk [--registry-key pmap] [--calls]
"""

from harness.train_click_static_walk import main

if __name__ == "__main__":
    main()
