"""The headless command line: `python -m pmap_core <command> …` (`commands.main`)."""
